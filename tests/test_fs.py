"""fs: each thing done to a file both ways, through the os module for a local path and through
fsspec for a URL (an S3 server on 127.0.0.1 here)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tfrecord_builder import fs

from conftest import ROOT
from support.object_store import objects


def test_local_files_never_import_fsspec(tmp_path):
    """Local paths keep the plain os path: none of these imports fsspec."""
    code = f"""
import sys
from tfrecord_builder import fs
folder = fs.resolve("out/../figures", {str(tmp_path)!r})
fs.makedirs(folder)
fs.write_whole(fs.join(folder, "a.bin"), b"abc")
with fs.open_whole(fs.join(folder, "b.bin")) as file:
    file.write(b"de")
with fs.open_stream(fs.join(folder, "a.bin")) as file:
    assert file.peek(1)[:1] == b"a" and file.read() == b"abc"
assert fs.path_or_file(fs.join(folder, "b.bin")) == fs.join(folder, "b.bin")
print(folder, "fsspec" in sys.modules)
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == [str(tmp_path / "figures"), "False"]
    assert sorted(os.listdir(tmp_path / "figures")) == ["a.bin", "b.bin"]  # no temporary left beside


def test_a_local_file_written_whole_is_left_as_it_was_when_writing_fails(tmp_path):
    path = str(tmp_path / "kept.bin")
    fs.write_whole(path, b"old")
    with pytest.raises(RuntimeError):
        with fs.open_whole(path) as file:
            file.write(b"new, half")
            raise RuntimeError("the writer failed")
    assert (open(path, "rb").read(), sorted(os.listdir(tmp_path))) == (b"old", ["kept.bin"])


@pytest.mark.parametrize("size", [0, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 3 << 20])
def test_a_local_file_is_read_whole_whatever_its_size(tmp_path, size):
    """Read in one system call below 64 KiB, on to the end above (a photo, a 12 MP photo)."""
    data = os.urandom(size)
    (tmp_path / "file").write_bytes(data)
    assert fs.read_bytes(str(tmp_path / "file")) == data


def test_reading_a_missing_file_or_a_folder_is_open_s_error(tmp_path):
    with pytest.raises(FileNotFoundError) as missing:
        fs.read_bytes(str(tmp_path / "nothing.jpg"))
    assert missing.value.filename == str(tmp_path / "nothing.jpg")
    with pytest.raises(IsADirectoryError):
        fs.read_bytes(str(tmp_path))


def test_makedirs_refuses_a_file_in_the_way(tmp_path):
    (tmp_path / "taken").write_text("")
    with pytest.raises(FileExistsError):
        fs.makedirs(str(tmp_path / "taken"))


@pytest.mark.parametrize("path, folder, expected", [
    ("a.png", "/data/t", "/data/t/a.png"),
    ("../b/./a.png", "/data/t", "/data/b/a.png"),
    ("/abs/a.png", "/data/t", "/abs/a.png"),
    ("s3://bucket/a.png", "/data/t", "s3://bucket/a.png"),
    ("a.png", "s3://bucket/t", "s3://bucket/t/a.png"),
])
def test_resolve_keeps_urls_and_absolute_paths_and_normalises_local_ones(path, folder, expected):
    assert fs.resolve(path, folder) == expected


@pytest.mark.server
def test_the_same_functions_write_and_read_objects_in_a_store(s3):
    fs.makedirs("s3://data/fs-test/figures")  # a store has no folders: nothing to make, no error
    assert fs.write_whole("s3://data/fs-test/figures/a.bin", b"abc") == "s3://data/fs-test/figures/a.bin"
    with fs.open_whole("s3://data/fs-test/b.bin") as file:
        file.write(b"de")
    with fs.open_stream("s3://data/fs-test/figures/a.bin") as file:
        assert (file.peek(1)[:1], file.read()) == (b"a", b"abc")
    opened = fs.path_or_file("s3://data/fs-test/b.bin")
    with opened as file:  # type: ignore[union-attr]
        assert file.read() == b"de"
    assert objects("fs-test") == {"figures/a.bin": b"abc", "b.bin": b"de"}
