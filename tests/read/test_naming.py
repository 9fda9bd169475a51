"""`output.naming`: the shards named as TensorFlow Datasets names them (the default,
`NAME-SPLIT.tfrecord-00000-of-00004`) or with names that end in `.tfrecord`
(`NAME-SPLIT-00000-of-00004.tfrecord`), which tools that look for `*.tfrecord` files find.

The same bytes under either name; every reader of ours follows the names the metadata lists
(tests/read/test_readers.py runs every reader on a dataset of each naming; here the rest: the
generated module, the command line, compressed shards, --resume, a plain glob and TFDS).
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.errors import DiskFullError
from tfrecord_builder.write import shards
from tfrecord_builder.write.naming import index_name, shard_name
from tfrecord_builder.tools.verify import verify

from conftest import import_module, write_spec
from support.reading import files_of as _files

ROWS = "id,word,v\n" + "".join(f"{row},w{row % 7},{row * 0.25}\n" for row in range(60))
SPEC = {"name": "named", "source": {"builder": "csv", "path": "rows.csv"}, "splits": {"train": 0.75, "test": 0.25},
        "features": {"id": {"dtype": "int64"}, "word": {"dtype": "string"}, "v": {"dtype": "float32"}},
        "output": {"shards": 3}}


def _build(folder: Path, **output) -> tb.DatasetInfo:
    spec = write_spec(folder, {**SPEC, "output": {**SPEC["output"], **output}}, {"rows.csv": ROWS})
    return tb.build(spec, output=folder / "out")


def test_shard_and_index_names_of_each_naming():
    assert shard_name("wine", "train", 0, 4) == "wine-train.tfrecord-00000-of-00004"
    assert shard_name("wine", "train", 3, 4, naming="suffix") == "wine-train-00003-of-00004.tfrecord"
    assert shard_name("wine", "train", 0, 4, "gzip", "suffix") == "wine-train-00000-of-00004.tfrecord.gz"
    assert shard_name("wine", "train", 0, 4, "zlib", "suffix") == "wine-train-00000-of-00004.tfrecord.deflate"
    assert shard_name("wine", "train", 0, 4, "gzip") == "wine-train.tfrecord-00000-of-00004.gz"
    # one index name for a shard in either naming
    assert index_name("wine-train.tfrecord-00001-of-00004") == index_name("wine-train-00001-of-00004.tfrecord") \
        == "index/wine-train-00001-of-00004.idx"


def test_the_two_namings_write_the_same_bytes_under_their_own_names(tmp_path):
    default, suffix = _build(tmp_path / "a"), _build(tmp_path / "b", naming="suffix")
    theirs, ours = _files(default.path), _files(suffix.path)
    renamed = {}
    for split in ("train", "test"):
        assert suffix.splits[split].files == [f"named-{split}-{index:05d}-of-00003.tfrecord" for index in range(3)]
        assert default.splits[split].files == [f"named-{split}.tfrecord-{index:05d}-of-00003" for index in range(3)]
        renamed.update(zip(suffix.splits[split].files, default.splits[split].files))
    metadata = {"tfrecord_builder.json", "dataset_info.json", "named_input.py"}
    assert sorted(renamed.get(name, name) for name in ours) == sorted(theirs)
    for name, data in ours.items():
        if name not in metadata:  # shards, index files (the same names), split membership
            assert data == theirs[renamed.get(name, name)], name
    # the metadata differs only in the shards' names, the naming and TFDS's filename template
    ours_info = json.loads(ours["tfrecord_builder.json"])
    theirs_info = json.loads(theirs["tfrecord_builder.json"])
    assert ours_info["spec"]["output"].pop("naming") == "suffix"
    del ours_info["spec_file"], theirs_info["spec_file"]  # (built from specs in two folders)
    assert theirs_info["spec"]["output"].pop("naming") == "tfds"
    for split in ours_info["splits"].values():
        for shard in split["shards"]:
            shard["file"] = renamed[shard["file"]]
    assert ours_info == theirs_info
    ours_tfds, theirs_tfds = json.loads(ours["dataset_info.json"]), json.loads(theirs["dataset_info.json"])
    assert {split["filepathTemplate"] for split in ours_tfds["splits"]} == {"{DATASET}-{SPLIT}-{SHARD_X_OF_Y}.{FILEFORMAT}"}
    assert {split["filepathTemplate"] for split in theirs_tfds["splits"]} == {"{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"}
    for split in ours_tfds["splits"] + theirs_tfds["splits"]:
        del split["filepathTemplate"]
    assert ours_tfds == theirs_tfds


def test_a_glob_of_tfrecord_files_finds_every_shard_and_nothing_else(tf, tmp_path):
    suffix = _build(tmp_path / "b", naming="suffix")
    shards_of = sorted(os.path.join(suffix.path, name) for split in suffix.splits.values() for name in split.files)
    assert sorted(glob.glob(os.path.join(suffix.path, "*.tfrecord"))) == shards_of
    assert sorted(tf.io.gfile.glob(os.path.join(suffix.path, "*.tfrecord*"))) == shards_of  # hidden files too
    records = list(tf.data.TFRecordDataset(tf.io.gfile.glob(os.path.join(suffix.path, "named-train-*.tfrecord"))))
    assert len(records) == suffix.splits["train"].num_examples


def test_tensorflow_datasets_reads_a_suffix_named_dataset(tf, tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets")
    suffix = _build(tmp_path / "b", naming="suffix")
    builder = tfds.builder_from_directory(suffix.path)
    for split in ("train", "test"):
        theirs = [int(example["id"]) for example in tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False))]
        assert theirs == [int(record["id"]) for record in tb.read(suffix.path, split)]


def test_compressed_shards_end_in_tfrecord_and_their_compression(tf, tmp_path):
    for compression, ending in (("gzip", ".tfrecord.gz"), ("zlib", ".tfrecord.deflate")):
        info = _build(tmp_path / compression, naming="suffix", compression=compression)
        assert all(name.endswith(ending) for name in info.splits["train"].files)
        assert not (Path(info.path) / "index").exists()
        dataset = tb.load(info.path)
        read = [int(record["id"]) for record in dataset.read("train")]
        through_tf = [int(value) for features in dataset.input_fn("train", batch_size=1, shuffle=False)
                      for value in features["id"].numpy()]
        assert read == through_tf and len(read) == info.splits["train"].num_examples
        assert int(dataset.record("train", 5)["id"]) == read[5]
        assert verify(info.path).ok


def test_the_generated_module_reads_a_moved_suffix_named_dataset(tf, tmp_path):
    suffix = _build(tmp_path / "b", naming="suffix")
    moved = tmp_path / "moved"
    shutil.copytree(suffix.path, moved)
    shutil.rmtree(tmp_path / "b" / "out")  # the folder it was built in is gone: the copy reads its own shards
    module = import_module(moved / "named_input.py")
    ids = [int(value) for features in module.input_fn("test", batch_size=4, shuffle=False)
           for value in features["id"].numpy()]
    assert ids == [int(record["id"]) for record in tb.read(moved, "test")]


def test_the_module_of_an_unfinished_copy_refuses_it_instead_of_reading_the_original(tf, tmp_path):
    """A copy with its shards but no dataset_info.json is the module's own folder, unfinished: it
    must not read the dataset where it was built instead (it recognises shards of either naming)."""
    suffix = _build(tmp_path / "b", naming="suffix")
    copy = tmp_path / "copy"
    shutil.copytree(suffix.path, copy)
    (copy / "dataset_info.json").unlink()
    module = import_module(copy / "named_input.py")
    assert module.default_data_dir() == str(copy)
    with pytest.raises(FileNotFoundError, match="not a finished named dataset"):
        module.input_fn("train")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfrecord_builder", *args], capture_output=True, text=True,
                          timeout=300)


def test_inspect_verify_report_and_diff_follow_a_suffix_named_dataset(tmp_path):
    default, suffix = _build(tmp_path / "a"), _build(tmp_path / "b", naming="suffix")
    shown = _cli("inspect", suffix.path, "--show", "1")
    assert shown.returncode == 0, shown.stderr
    first = next(iter(tb.read(suffix.path, "train")))
    assert f'example 0: {{"id": {first["id"]}, "word": "{first["word"].decode()}", "v": {float(first["v"])!r}}}' in shown.stdout
    shard = os.path.join(suffix.path, suffix.splits["test"].files[1])
    one = _cli("inspect", shard)  # a single shard
    count = suffix.splits["test"].shards[1]["num_examples"]
    assert one.returncode == 0 and one.stdout.startswith(f"{shard}: {count} records (Examples)"), one.stdout + one.stderr
    checked = _cli("verify", suffix.path)
    assert checked.returncode == 0 and checked.stdout.strip().endswith(
        "ok: 6 shards, 60 records, checksums and every record match the spec"), checked.stdout + checked.stderr
    pytest.importorskip("matplotlib")
    page = tmp_path / "report.html"
    made = _cli("report", suffix.path, "-o", str(page))
    assert made.returncode == 0, made.stderr
    for name in suffix.splits["train"].files:
        assert name in page.read_text()  # the shard table lists them
    compared = _cli("diff", default.path, suffix.path)
    assert compared.returncode == 0, compared.stderr
    assert "output.naming: tfds -> suffix" in compared.stdout and "ok: nothing over its threshold" in compared.stdout


def test_a_suffix_named_build_resumes_keeping_its_finished_shards(tmp_path, monkeypatch):
    spec = write_spec(tmp_path, {**SPEC, "output": {"shards": 3, "naming": "suffix"}}, {"rows.csv": ROWS})
    reference = tb.build(spec, output=tmp_path / "reference")
    written, original = [], shards.write_shard

    def disk_full_at_the_fourth(path, *args, **kwargs):
        written.append(os.path.basename(path))
        if len(written) == 4:
            raise OSError(28, "No space left on device", path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(shards, "write_shard", disk_full_at_the_fourth)
    with pytest.raises(DiskFullError, match="writing named-test-00000-of-00003.tfrecord; free space and run again "
                                               "with --resume"):
        tb.build(spec, output=tmp_path / "out")
    written.clear()
    monkeypatch.setattr(shards, "write_shard", lambda path, *args, **kwargs: (
        written.append(os.path.basename(path)), original(path, *args, **kwargs))[1])
    resumed = tb.build(spec, output=tmp_path / "out", resume=True)
    assert written == [f"named-test-{index:05d}-of-00003.tfrecord" for index in range(3)]  # train's three kept
    assert resumed.to_dict()["splits"] == reference.to_dict()["splits"]
    kept = {name: data for name, data in _files(resumed.path).items() if ".tfrecord" in name or name.startswith("index/")}
    assert kept == {name: data for name, data in _files(reference.path).items() if name in kept} and len(kept) == 12
    assert verify(resumed.path).ok


def test_torch_dataset_and_first_read_a_suffix_named_dataset(tf, tmp_path):
    suffix = tb.load(_build(tmp_path / "b", naming="suffix").path)
    read = list(suffix.read("train"))
    features = suffix.first("train", 5)
    assert features["id"].numpy().tolist() == [int(record["id"]) for record in read[:5]]
    torch_data = pytest.importorskip("torch.utils.data")
    dataset = suffix.torch("train")
    assert isinstance(dataset, torch_data.Dataset) and len(dataset) == len(read)
    assert np.array_equal(dataset[7]["v"], read[7]["v"])


def test_a_dataset_built_before_the_option_reads_with_its_tfds_names(tmp_path):
    """Its normalised spec has no `output.naming`: it is `tfds`, and its shards read as listed."""
    default = _build(tmp_path / "a")
    metadata = Path(default.path) / "tfrecord_builder.json"
    old = json.loads(metadata.read_text())
    del old["spec"]["output"]["naming"]
    metadata.write_text(json.dumps(old))
    dataset = tb.load(default.path)
    assert dataset.info.spec.output.naming == "tfds"
    assert [int(record["id"]) for record in dataset.read("test")] == \
           [int(record["id"]) for record in tb.read(_build(tmp_path / "b", naming="suffix").path, "test")]
    assert verify(default.path).ok
