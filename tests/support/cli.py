"""Helpers of the command-line tests: run the real CLI in a subprocess, check its one-line errors.

Nothing here mocks anything: every command is `python -m tfrecord_builder ...` (or the installed
`tfrecord-builder` script) in a child process, with files written into pytest's tmp_path.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import re
import struct
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

TIMEOUT = 600  # seconds; a command that hangs fails its test instead of the whole run (far above a busy machine's)
CONSOLE_SCRIPT = Path(sys.executable).parent / "tfrecord-builder"
SHARD_NAME = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)-(?P<split>[A-Za-z_][A-Za-z0-9_]*)"
                        r"\.tfrecord-(?P<index>\d{5})-of-(?P<count>\d{5})(?P<suffix>\.gz|\.deflate)?")


def run_cli(*args: str | os.PathLike, cwd: str | os.PathLike, script: bool = False) -> subprocess.CompletedProcess:
    """Runs `python -m tfrecord_builder ARGS` (or the console script) in `cwd`; never raises on failure."""
    command = [str(CONSOLE_SCRIPT)] if script else [sys.executable, "-m", "tfrecord_builder"]
    return subprocess.run(
        command + [os.fspath(arg) for arg in args], cwd=cwd, capture_output=True, text=True,
        encoding="utf-8", errors="replace", timeout=TIMEOUT, stdin=subprocess.DEVNULL,
    )


def show(result: subprocess.CompletedProcess) -> str:
    """The whole outcome of a command, for assertion messages."""
    return (f"\n$ {' '.join(map(str, result.args))}\nexit status {result.returncode}\n"
            f"--- stdout ---\n{result.stdout}--- stderr ---\n{result.stderr}")


def assert_ok(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, show(result)
    assert "Traceback" not in result.stderr, show(result)


@dataclass(frozen=True)
class LineOf:
    """Expects `line N` in an error, N being the (first) line of `file` that contains `text`.

    Line numbers are computed from the files the test wrote, so a case's spec can be edited
    without renumbering its expectations.
    """

    file: str
    text: str

    def pattern(self, folder: Path) -> re.Pattern:
        lines = (folder / self.file).read_bytes().split(b"\n")
        needle = self.text.encode("utf-8")
        number = next(index for index, line in enumerate(lines, start=1) if needle in line)
        return re.compile(rf"\bline {number}\b")


Expected = Union[str, re.Pattern, LineOf]


def assert_error(result: subprocess.CompletedProcess, status: int, expected: Iterable[Expected] = (),
                 folder: Path | None = None) -> str:
    """The command failed with `status` and exactly one stderr line, `error: ...`, holding `expected`.

    Plain strings must occur as they are; patterns are searched; LineOf names a line of a file
    in `folder`. Returns the error line.
    """
    assert result.returncode == status, show(result)
    assert "Traceback" not in result.stderr, show(result)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected exactly one line on stderr{show(result)}"
    line = lines[0]
    assert line.startswith("error: "), show(result)
    for item in expected:
        if isinstance(item, LineOf):
            assert folder is not None
            item = item.pattern(folder)
        if isinstance(item, re.Pattern):
            assert item.search(line), f"expected /{item.pattern}/ in the error line{show(result)}"
        else:
            assert item in line, f"expected {item!r} in the error line{show(result)}"
    return line


def write_files(folder: Path, files: Mapping[str, str | bytes]) -> None:
    """Writes each relative path's text (UTF-8, as given) or bytes under `folder`."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


def info_files(folder: Path) -> list[Path]:
    """Every dataset_info.json anywhere under `folder`."""
    return sorted(folder.rglob("dataset_info.json"))


def assert_no_dataset_info(folder: Path) -> None:
    found = info_files(folder)
    assert not found, f"a failed command left dataset_info.json behind: {found}"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_shard_bytes(path: Path) -> bytes:
    """A shard's TFRecord stream, decompressed by its suffix (.gz gzip, .deflate zlib; .zz before 0.3)."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        return gzip.decompress(raw)
    if path.name.endswith((".deflate", ".zz")):
        return zlib.decompress(raw)
    return raw


def count_records(path: Path) -> int:
    """Counts the records of a TFRecord file by its framing (length, crc, data, crc), without TensorFlow."""
    data = read_shard_bytes(path)
    count = offset = 0
    while offset < len(data):
        assert offset + 12 <= len(data), f"{path}: truncated record header at byte {offset}"
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 12 + length + 4
        assert offset <= len(data), f"{path}: truncated record at byte {offset}"
        count += 1
    return count


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `folder` (relative path -> (mtime in ns, content)), to show nothing changed."""
    return {str(path.relative_to(folder)): (path.stat().st_mtime_ns, path.read_bytes())
            for path in sorted(folder.rglob("*")) if path.is_file()}


def files_outside(folder: Path, excluded: Sequence[str] = ("out",)) -> set[str]:
    """Relative paths of the files under `folder`, except those under the `excluded` sub-folders."""
    return {str(path.relative_to(folder)) for path in folder.rglob("*")
            if path.is_file() and path.relative_to(folder).parts[0] not in excluded}
