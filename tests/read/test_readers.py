"""Every reader reads one dataset of every feature kind, with the same values: `input_fn`,
`tb.read` (no TensorFlow), `Dataset.record` (random access through the index files), TensorFlow
Datasets (`builder_from_directory`), the `tfrecord` package (with the index files, also through a
PyTorch DataLoader of several workers), NVIDIA DALI and our own torch Dataset; the dataset's shards
named in each `output.naming`.
"""
from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.codec.arrays import parse_arrays
from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.codec.tfrecord import RecordBlock, frame, read_records, stream_blocks
from tfrecord_builder.codec.wire import varint
from tfrecord_builder.read.numpy_decoding import decode_record
from tfrecord_builder.read.records import BlockDecoder, RecordReader
from tfrecord_builder.tools.verify import verify

from conftest import write_spec

NUM_ROWS = 40


def _image(seed: int, size: tuple[int, int], mode: str, fmt: str) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], len(mode)), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels.squeeze(), mode).save(buffer, fmt)
    return buffer.getvalue()


def _rows() -> tuple[str, dict[str, bytes]]:
    rows, files = [], {}
    rng = np.random.default_rng(7)
    for row in range(NUM_ROWS):
        files[f"img/{row}.jpg"] = _image(row, (8, 8), "RGB", "JPEG")
        files[f"img/{row}.png"] = _image(row, (3 + row % 4, 2 + row % 3), "RGB", "PNG")
        rows.append({
            "id": row,
            "x": float(np.float32(rng.normal())),
            "v": [float(value) for value in rng.normal(size=3).astype(np.float32)],
            "tags": [f"t{index}" for index in range(row % 3)],
            "pts": [[float(row), 0.5]] * (row % 4),
            "flag": bool(row % 2),
            "small": row % 256,
            "n": -row * 1000,
            "half": 0.5 * row,
            "dbl": float(np.float32(row / 7)),
            "word": "zwölf" if row % 5 else "",
            "cat": "abc"[row % 3],
            "num": row % 5,
            "labels": ["a", "c"][: row % 3],
            "photo": f"img/{row}.jpg",
            "icon": f"img/{row}.png",
            "raw": f"img/{row}.png",
        })
    return "".join(json.dumps(row) + "\n" for row in rows), files


KINDS = {
    "name": "kinds",
    "source": {"builder": "jsonl", "path": "rows.jsonl"},
    "splits": {"train": 0.75, "test": 0.25},
    "features": {
        "id": {"dtype": "int64"},
        "x": {"dtype": "float32"},
        "v": {"dtype": "float32", "shape": [3]},
        "tags": {"dtype": "string", "shape": [None]},
        "pts": {"dtype": "float32", "shape": [None, 2]},
        "flag": {"dtype": "bool"},
        "small": {"dtype": "uint8"},
        "n": {"dtype": "int32"},
        "half": {"dtype": "float16"},
        "dbl": {"dtype": "float64"},
        "word": {"dtype": "string", "key": "text/word"},
        "cat": {"type": "class_label", "names": ["a", "b", "c"]},
        "num": {"type": "class_label", "num_classes": 5},
        "labels": {"type": "class_label", "names": ["a", "b", "c"], "shape": [None]},
        "photo": {"type": "image", "encoding": "jpeg", "shape": [8, 8, 3]},
        "icon": {"type": "image", "encoding": "png", "shape": [None, None, 3]},
        "raw": {"type": "image", "encoding": "raw", "shape": [4, 4, 3]},
    },
    "label": "cat",
    "output": {"shards": 3},
}

SEQUENCES = {
    "name": "steps",
    "format": "sequence_example",
    "source": {"builder": "sequence_jsonl", "path": "steps.jsonl"},
    "context": {"id": {"dtype": "int64"}, "who": {"type": "class_label", "names": ["x", "y"]}},
    "sequence": {
        "tok": {"dtype": "int64"},
        "frame": {"dtype": "float32", "shape": [2]},
        "chars": {"dtype": "string", "shape": [None]},
    },
    "label": "who",
    "output": {"shards": 2},
}


def _sequence_rows() -> str:
    rows = []
    for row in range(NUM_ROWS):
        steps = 1 + row % 5
        rows.append({"id": row, "who": "xy"[row % 2], "tok": list(range(row, row + steps)),
                     "frame": [[row * 0.5, step * 0.25] for step in range(steps)],
                     "chars": [["a"] * (step % 3) for step in range(steps)]})
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(scope="module", params=["tfds", "suffix"])
def kinds(request, tmp_path_factory) -> tb.Dataset:
    """The dataset of every feature kind, its shards named in each `output.naming`: every reader
    follows either (`NAME-SPLIT.tfrecord-00000-of-00003`, `NAME-SPLIT-00000-of-00003.tfrecord`)."""
    folder = tmp_path_factory.mktemp("kinds")
    data, files = _rows()
    spec = {**KINDS, "output": {**KINDS["output"], "naming": request.param}}
    info = tb.build(write_spec(folder, spec, {"rows.jsonl": data, **files}), output=folder / "out")
    return tb.load(info.path)


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> tb.Dataset:
    folder = tmp_path_factory.mktemp("steps")
    info = tb.build(write_spec(folder, SEQUENCES, {"steps.jsonl": _sequence_rows()}), output=folder / "out")
    return tb.load(info.path)


def _same(left, right) -> bool:
    """Equal values of the same dtype (NaN equal to NaN)."""
    left, right = np.asarray(left), np.asarray(right)
    if left.dtype != right.dtype or left.shape != right.shape:
        return False
    if left.dtype.kind == "f":
        return bool(np.array_equal(left, right, equal_nan=True))
    return left.tolist() == right.tolist()


def _input_fn_records(dataset: tb.Dataset, split: str) -> list[dict]:
    """input_fn's batches of one, without the batch dimension, as NumPy (a ragged row as an array)."""
    records = []
    label = dataset.info.spec.label
    for features, labels in dataset.input_fn(split, batch_size=1, shuffle=False):
        record = {**features, label: labels}
        records.append({name: (value[0].numpy() if not hasattr(value, "to_list") else value[0].numpy())
                        for name, value in record.items()})
    return records


@pytest.mark.parametrize("split", ["train", "test"])
def test_tb_read_gives_input_fns_values_record_by_record(tf, kinds, split):
    read = list(tb.read(kinds.path, split))
    through_tf = _input_fn_records(kinds, split)
    assert len(read) == len(through_tf) == kinds.info.splits[split].num_examples
    for ours, theirs in zip(read, through_tf):
        assert list(ours) == list(kinds.info.spec.features)
        for name in ours:
            assert _same(ours[name], theirs[name]), (name, ours[name], theirs[name])
    assert isinstance(read[0]["word"], bytes) and read[0]["x"].dtype == np.float32


def test_tb_read_gives_input_fns_sequences(tf, steps):
    read = list(steps.read("train"))
    through_tf = _input_fn_records(steps, "train")
    assert len(read) == len(through_tf)
    for ours, theirs in zip(read, through_tf):
        assert set(ours) == set(theirs) == {"id", "who", "tok", "frame", "chars", "sequence_length"}
        length = int(ours["sequence_length"])
        assert ours["tok"].shape == (length,) and ours["frame"].shape == (length, 2)
        for name in ours:
            assert _same(ours[name], theirs[name]), (name, ours[name], theirs[name])


def test_record_i_is_the_ith_record_read(kinds, steps):
    for dataset in (kinds, steps):
        read = list(dataset.read("train"))
        for index in [0, 1, len(read) // 2, len(read) - 1, -1]:
            got = dataset.record("train", index)
            assert all(_same(got[name], read[index][name]) for name in got)


def test_record_past_the_end_names_the_split_and_its_count(kinds):
    count = kinds.info.splits["test"].num_examples
    with pytest.raises(IndexError, match=rf"^record {count} of split 'test': the split has {count} records$"):
        kinds.record("test", count)
    with pytest.raises(tb.UsageError, match=r"unknown split 'valid'; expected one of: train, test"):
        kinds.record("valid", 0)


def test_tensorflow_datasets_opens_the_folder_as_it_is(tf, kinds):
    tfds = pytest.importorskip("tensorflow_datasets")
    builder = tfds.builder_from_directory(kinds.path)
    features = builder.info.features
    assert features["cat"].names == ["a", "b", "c"] and features["num"].num_classes == 5
    assert builder.info.splits["train"].num_examples == kinds.info.splits["train"].num_examples
    for split in ("train", "test"):
        examples = list(tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False)))
        read = list(kinds.read(split))
        assert len(examples) == len(read)
        for theirs, ours in zip(examples, read):
            theirs = {**theirs, "word": theirs["text"]["word"]}  # a key with "/" nests, as TFDS nests it
            for name, value in ours.items():
                if name != "photo":  # a JPEG: below
                    assert _same(theirs[name], value), (name, theirs[name], value)
            # TFDS decodes JPEG with TensorFlow's default (fast) DCT; ours, the accurate one that Pillow
            # decoded with at build time: a few levels apart at most
            stored = tf.io.decode_jpeg(_stored_photo(kinds, split, int(ours["id"])))
            assert _same(theirs["photo"], stored.numpy())
            assert np.abs(theirs["photo"].astype(int) - ours["photo"]).max() <= 8
    features_and_label = next(iter(builder.as_dataset(split="test", as_supervised=True, shuffle_files=False)))
    assert set(features_and_label[0]) == set(KINDS["features"]) - {"cat", "word"} | {"text"}
    assert int(features_and_label[1]) == next(kinds.read("test"))["cat"]


def _stored_photo(dataset: tb.Dataset, split: str, wanted: int) -> bytes:
    """The JPEG bytes stored for record `wanted` (by id), read by our wire decoder."""
    for shard in dataset.info.splits[split].shards:
        with open(os.path.join(dataset.path, shard["file"]), "rb") as file:
            for record in read_records(file, shard["file"]):
                lists, _ = parse_arrays(record)
                if lists["id"][0] == wanted:
                    return lists["photo"][0]
    raise KeyError(wanted)


# TFDS opening a folder in a process where tfrecord_builder can't be imported, as on a machine
# without it: the last line of what it prints
TFDS_WITHOUT_US = """
import sys
sys.modules["tfrecord_builder"] = None  # import tfrecord_builder fails, as where it isn't installed
import tensorflow_datasets as tfds
tfds.builder_from_directory(sys.argv[1])
"""
STEPS_REASON = ("steps 1.0.0 holds tf.train.SequenceExample records, which TensorFlow Datasets does not read (it "
                "would see their sequence features as empty); read it with steps_input.py, tb.input_fn or tb.read")


def test_tensorflow_datasets_refuses_a_sequence_example_dataset_with_the_reason_without_our_package(steps):
    pytest.importorskip("tensorflow_datasets")
    run = subprocess.run([sys.executable, "-c", TFDS_WITHOUT_US, steps.path], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        f"tensorflow_datasets.core.utils.version.DatasetVariantBlockedError: {STEPS_REASON}")


def test_tensorflow_datasets_refuses_a_sequence_example_dataset_in_one_line(steps):
    tfds = pytest.importorskip("tensorflow_datasets")
    with pytest.raises(ValueError, match=f"^{re.escape(STEPS_REASON)}$"):
        tfds.builder_from_directory(steps.path)


def test_a_dataset_refused_through_our_feature_class_is_still_refused_with_the_reason(steps, tmp_path):
    """Datasets built by earlier 0.3 versions name tfrecord_builder.tfds_refusal.Unreadable in features.json."""
    tfds = pytest.importorskip("tensorflow_datasets")
    target = tmp_path / "old"
    shutil.copytree(steps.path, target)
    info = json.loads((target / "dataset_info.json").read_text())
    del info["configName"], info["isBlocked"]
    (target / "dataset_info.json").write_text(json.dumps(info))
    (target / "features.json").write_text(json.dumps(
        {"type": "tfrecord_builder.tfds_refusal.Unreadable", "content": {"reason": STEPS_REASON}, "proto_cls": ""}))
    with pytest.raises(ValueError, match=f"^{re.escape(STEPS_REASON)}$"):
        tfds.builder_from_directory(target)


def _tfrecord_description(dataset: tb.Dataset) -> dict[str, str]:
    kinds = {"int64": "int", "float32": "float", "string": "byte"}
    return {key: kinds[dtype] for feature in dataset.reading["features"].values()
            for key, (_, dtype, _) in feature["parse"].items()}


# The tfrecord package can't be imported beside TensorFlow (both register tensorflow.BytesList with
# protobuf): it runs in a process of its own, as it does for its users, who have no TensorFlow
TFRECORD_PACKAGE = """
import io, json, sys
import numpy as np
import torch.utils.data
from PIL import Image
from tfrecord.reader import tfrecord_loader
from tfrecord.torch.dataset import TFRecordDataset
files, indexes, description = json.loads(sys.argv[1])
out = {"records": [], "loader_ids": []}
def first_bytes(value):  # a bytes list as the package gives it: its first value
    value = value[0] if isinstance(value, list) else value
    return bytes(value) if isinstance(value, (bytes, bytearray)) else value.tobytes()
for shard, index in zip(files, indexes):
    for stored in tfrecord_loader(shard, index, description):
        out["records"].append({"id": stored["id"].tolist(), "x": stored["x"].tolist(), "v": stored["v"].tolist(),
                               "n": stored["n"].tolist(), "pts": stored["pts"].tolist(),
                               "word": first_bytes(stored["text/word"]).decode("utf-8"),
                               "photo": np.asarray(Image.open(io.BytesIO(first_bytes(stored["photo"])))).tolist()})
    # with the index, the package's workers split the shard: every record once (without it, twice)
    loader = torch.utils.data.DataLoader(TFRecordDataset(shard, index, {"id": "int"}), batch_size=8, num_workers=2)
    out["loader_ids"] += [value for batch in loader for value in batch["id"].reshape(-1).tolist()]
print(json.dumps(out))
"""


def test_the_tfrecord_package_reads_each_shard_with_its_index(kinds):
    if importlib.util.find_spec("tfrecord") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("the tfrecord package and torch are test dependencies (make test installs them)")
    kinds_of = {"int64": "int", "float32": "float", "string": "byte"}
    description = {key: kinds_of[dtype] for feature in kinds.reading["features"].values()
                   for key, (_, dtype, _) in feature["parse"].items()}
    arguments = json.dumps([kinds.files("train"), kinds.index_files("train"), description])
    run = subprocess.run([sys.executable, "-c", TFRECORD_PACKAGE, arguments], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    theirs = json.loads(run.stdout)
    ours = sorted(kinds.read("train"), key=lambda record: record["id"])
    assert len(theirs["records"]) == len(ours)
    # given an index, the package starts each file at a random record (and wraps around)
    for stored, decoded in zip(sorted(theirs["records"], key=lambda record: record["id"]), ours):
        assert stored["id"] == [decoded["id"]] and stored["x"] == [decoded["x"]] and stored["n"] == [decoded["n"]]
        assert stored["v"] == decoded["v"].tolist()
        assert np.array_equal(np.reshape(stored["pts"], (-1, 2)), decoded["pts"])
        assert stored["word"].encode("utf-8") == decoded["word"]  # the package keeps a list's first bytes only
        assert np.array_equal(stored["photo"], decoded["photo"])  # Pillow's pixels are ours
    assert sorted(theirs["loader_ids"]) == sorted(int(record["id"]) for record in ours)


TFRECORD_IDS = """
import json, sys
from tfrecord.reader import tfrecord_loader
files, indexes = json.loads(sys.argv[1])
print(json.dumps([int(stored["id"][0]) for shard, index in zip(files, indexes)
                  for stored in tfrecord_loader(shard, index, {"id": "int"})]))
"""


def test_the_tfrecord_package_reads_a_split_of_few_records_with_its_indexes(tmp_path):
    """5 records asked into 4 shards were 2, 1, 1, 1: the package fails on a one-record shard's index."""
    if importlib.util.find_spec("tfrecord") is None:
        pytest.skip("the tfrecord package is a test dependency (make test installs it)")
    spec = write_spec(tmp_path, {"name": "few", "source": {"builder": "csv", "path": "few.csv"}, "splits": {"train": 1.0},
                                 "features": {"id": {"dtype": "int64"}}, "output": {"shards": 4}},
                      {"few.csv": "id\n" + "".join(f"{row}\n" for row in range(5))})
    with pytest.warns(tb.BuildWarning, match="2 shards, not the 4 asked"):
        dataset = tb.load(tb.build(spec, output=tmp_path / "out").path)
    arguments = json.dumps([dataset.files("train"), dataset.index_files("train")])
    run = subprocess.run([sys.executable, "-c", TFRECORD_IDS, arguments], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert sorted(json.loads(run.stdout)) == [0, 1, 2, 3, 4]


# NVIDIA DALI's CPU pipeline (device_id=None: no GPU needed) reading the train split through our
# index files, as the recipe in docs/readers.md does; in a process of its own, as a DALI job runs
DALI_PIPELINE = """
import json, sys
from nvidia.dali import fn, pipeline_def
import nvidia.dali.tfrecord as tfrec
files, indexes, count = json.loads(sys.argv[1])

@pipeline_def(batch_size=count, num_threads=2, device_id=None)
def pipeline():
    records = fn.readers.tfrecord(path=files, index_path=indexes, name="reader",
                                  features={"photo": tfrec.FixedLenFeature((), tfrec.string, ""),
                                            "icon": tfrec.FixedLenFeature((), tfrec.string, ""),
                                            "cat": tfrec.FixedLenFeature([], tfrec.int64, -1),
                                            "id": tfrec.FixedLenFeature([], tfrec.int64, -1)})
    return (records["photo"], fn.decoders.image(records["photo"], device="cpu"),
            fn.decoders.image(records["icon"], device="cpu"), records["cat"], records["id"])

dali = pipeline()
dali.build()
photos, decoded, icons, cats, ids = dali.run()  # a batch of the split's count: one epoch
print(json.dumps({"epoch_size": dali.epoch_size("reader"), "ids": ids.as_array().tolist(),
                  "cats": cats.as_array().tolist(), "photos": [photos.at(i).tobytes().hex() for i in range(count)],
                  "decoded": [decoded.at(i).tolist() for i in range(count)],
                  "icons": [icons.at(i).tolist() for i in range(count)]}))
"""


def test_nvidia_dali_reads_the_train_split_through_the_index_files(kinds):
    if importlib.util.find_spec("nvidia") is None or importlib.util.find_spec("nvidia.dali") is None:
        pytest.skip("NVIDIA DALI is a test dependency (nvidia-dali-cuda120, Linux only)")
    count = kinds.info.splits["train"].num_examples
    arguments = json.dumps([kinds.files("train"), kinds.index_files("train"), count])
    run = subprocess.run([sys.executable, "-c", DALI_PIPELINE, arguments], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    theirs = json.loads(run.stdout)
    assert theirs["epoch_size"] == count
    ours = {int(record["id"]): record for record in kinds.read("train")}
    assert sorted(theirs["ids"]) == sorted(ours)  # every record once, in one epoch
    for place, wanted in enumerate(theirs["ids"]):
        record = ours[wanted]
        assert theirs["cats"][place] == int(record["cat"])
        assert bytes.fromhex(theirs["photos"][place]) == _stored_photo(kinds, "train", wanted)  # the stored JPEG
        # DALI's CPU decoders give Pillow's pixels, which ours are: the JPEG's and the PNG's
        assert np.array_equal(np.asarray(theirs["decoded"][place], np.uint8), record["photo"])
        assert np.array_equal(np.asarray(theirs["icons"][place], np.uint8), record["icon"])


def test_our_torch_dataset_reads_every_record_once_with_two_workers(kinds):
    torch_data = pytest.importorskip("torch.utils.data")
    expected = [int(record["id"]) for record in kinds.read("train")]
    loader = torch_data.DataLoader(kinds.torch("train"), batch_size=8, num_workers=2, shuffle=True,
                                   collate_fn=lambda records: records)
    seen = [int(record["id"]) for batch in loader for record in batch]
    assert sorted(seen) == sorted(expected)
    assert len(kinds.torch("train")) == len(expected)
    assert _same(kinds.torch("train")[3]["photo"], kinds.record("train", 3)["photo"])


def test_a_damaged_index_is_found_by_verify_and_refused_by_record(kinds, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(kinds.path, target)
    dataset = tb.load(target)
    index = Path(dataset.index_files("train")[1])
    shard = os.path.basename(dataset.files("train")[1])
    original = index.read_text().splitlines()
    offset, length = original[2].split()
    lines = [*original[:2], f"{int(offset) + 1} {length}", *original[3:]]
    index.write_text("\n".join(lines) + "\n")
    faults = verify(target).faults
    assert f"index/{index.name}: line 3: `{int(offset) + 1} {length}`, but record 2 is at offset {offset}, " \
           f"{length} bytes framed (the index of {shard})" in faults
    first = dataset.info.splits["train"].shards[0]["num_examples"]
    with pytest.raises(tb.DatasetError, match=rf"{shard}: record 2: the index \(index/{index.name}\) points at byte "
                                              rf"{int(offset) + 1}, {length} bytes, where no such record is"):
        tb.load(target).record("train", first + 2)
    index.write_text("\n".join(original[:-1]) + "\n")  # a line too few
    faults = verify(target).faults
    count = dataset.info.splits["train"].shards[1]["num_examples"]
    assert f"index/{index.name}: {count - 1} lines, the shard has {count} records (the index of {shard})" in faults
    with pytest.raises(tb.DatasetError, match=rf"index/{index.name}: {count - 1} lines, but {shard} holds {count} "
                                              "records"):
        tb.load(target).record("train", first + count - 1)


def test_compressed_shards_have_no_index_and_still_read_by_number(tmp_path):
    spec = {**SEQUENCES, "output": {"shards": 2, "compression": "zlib"}}
    info = tb.build(write_spec(tmp_path, spec, {"steps.jsonl": _sequence_rows()}), output=tmp_path / "out")
    dataset = tb.load(info.path)
    assert not (Path(info.path) / "index").exists()
    assert dataset.index_files("train") == [None, None]
    assert all(name.endswith(".deflate") for name in info.splits["train"].files)
    read = list(dataset.read("train"))
    assert all(_same(dataset.record("train", 7)[name], read[7][name]) for name in read[7])


NO_TENSORFLOW = """
import sys
sys.modules["tensorflow"] = None  # `import tensorflow` now fails
import tfrecord_builder as tb
from tfrecord_builder.cli.main import main
dataset = tb.load(sys.argv[1])
records = list(tb.read(sys.argv[1], "train"))
print(len(records), dataset.record("train", 3)["id"] == records[3]["id"])
for command in (["inspect", sys.argv[1], "--show", "2"], ["verify", sys.argv[1]]):
    code = main(command)
    print("exit", code)
"""


def test_inspect_verify_and_read_need_no_tensorflow(kinds, steps):
    for dataset in (kinds, steps):
        run = subprocess.run([sys.executable, "-c", NO_TENSORFLOW, dataset.path], capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert lines[0] == f"{dataset.info.splits['train'].num_examples} True"
        assert "example 1: " in run.stdout and lines.count("exit 0") == 2, run.stdout


def test_a_dataset_built_before_0_3_still_reads_everywhere(tf, kinds, tmp_path):
    """Before 0.3 our metadata was dataset_info.json itself (and there were no index files)."""
    target = tmp_path / "old"
    shutil.copytree(kinds.path, target)
    old = json.loads((target / "tfrecord_builder.json").read_text())
    for split in old["splits"].values():
        for shard in split["shards"]:
            del shard["index"]
    shutil.rmtree(target / "index")
    for name in ("tfrecord_builder.json", "features.json", "cat.labels.txt", "labels.labels.txt"):
        (target / name).unlink()
    (target / "dataset_info.json").write_text(json.dumps(old))
    dataset = tb.load(target)
    assert dataset.info.metadata_file == "dataset_info.json"
    read = list(dataset.read("test"))
    assert all(_same(read[4][name], value) for name, value in dataset.record("test", 4).items())
    assert len(list(dataset.input_fn("test", batch_size=4))) == -(-len(read) // 4)
    assert verify(target).ok
    run = subprocess.run([sys.executable, "-m", "tfrecord_builder", "inspect", str(target), "--show", "1"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "example 0: " in run.stdout, run.stderr


# ---- tb.read a block of records at a time --------------------------------------------------------

BLOCKS = {**KINDS, "name": "blocks", "splits": {"train": 1.0},
          "features": {name: declared for name, declared in KINDS["features"].items()
                       if name not in ("pts", "photo", "icon", "raw")}}  # a ragged shape, images: per record
BLOCK_STEPS = {**SEQUENCES, "name": "blocksteps", "sequence": {"tok": {"dtype": "int64"},
                                                               "frame": {"dtype": "float32", "shape": [2]}},
               "input": {"max_length": 3, "mask_feature": "mask"}}


def _record_by_record(dataset: tb.Dataset) -> list[dict]:
    """The split's records decoded one at a time (`RecordReader.decoded`), what a block must equal."""
    reader = RecordReader(dataset.info)
    records = []
    for shard in reader.split("train").shards:
        path = reader.checked_path(shard)
        with open(path, "rb") as file:
            records.extend(reader.record_values(data, path, number) for number, data in enumerate(read_records(file, path)))
    return records


def _identical(left, right) -> None:
    """The same value of the same type: dtype, shape and writability for arrays, NaN equal to NaN."""
    assert type(left) is type(right), (left, right)
    if isinstance(left, np.ndarray):
        assert (left.dtype, left.shape, left.flags.writeable) == (right.dtype, right.shape, right.flags.writeable)
        assert _same(left, right), (left, right)
    elif isinstance(left, np.generic):
        assert left.dtype == right.dtype and _same(left, right), (left, right)
    else:
        assert left == right, (left, right)


@pytest.mark.parametrize("spec, rows", [(BLOCKS, "rows.jsonl"), (BLOCK_STEPS, "steps.jsonl")])
def test_tb_read_decodes_whole_blocks_to_the_records_read_one_at_a_time(tmp_path, spec, rows):
    data = _rows()[0] if rows == "rows.jsonl" else _sequence_rows()
    info = tb.build(write_spec(tmp_path, spec, {rows: data}), output=tmp_path / "out")
    dataset = tb.load(info.path)
    assert BlockDecoder.of(dataset.reading) is not None  # every feature decoded a block at a time
    read, expected = list(dataset.read("train")), _record_by_record(dataset)
    assert len(read) == len(expected) == NUM_ROWS
    for ours, theirs in zip(read, expected):
        assert list(ours) == list(theirs)
        for name in ours:
            _identical(ours[name], theirs[name])
    if spec is BLOCK_STEPS:
        assert {int(record["id"]): int(record["sequence_length"]) for record in read} == \
               {row: min(1 + row % 5, 3) for row in range(NUM_ROWS)}  # cut to max_length


def _example(**lists) -> bytes:
    """A tf.train.Example of int64 lists, packed, its keys in the order given."""
    entries = b""
    for key, values in lists.items():
        packed = b"".join(varint(value) for value in values)
        feature = _field(3, _field(1, packed) if values else b"")
        entries += _field(1, _field(1, key.encode()) + _field(2, feature))
    return _field(1, entries)


def _field(number: int, content: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(content)) + content


def _block_of(records: list[bytes]) -> RecordBlock:
    """The records framed, as one block of the framing loop."""
    stream = io.BytesIO(frame(ByteColumn.from_rows(records)))
    block, = stream_blocks(stream, "s")
    return block


READING = {"format": "example", "features": {
    "a": {"parse": {"a": ("fixed", "int64", [])}, "decode": [("cast", {"dtype": "int32"})], "sequence": False},
    "b": {"parse": {"b": ("var", "int64", [None])}, "decode": [("to_ragged", {})], "sequence": False}}}


def test_a_block_with_a_record_off_the_layout_or_of_another_shape_is_left_to_the_per_record_reader():
    decoder = BlockDecoder.of(READING)
    good = [_example(a=[index], b=list(range(index))) for index in range(5)]
    records = decoder.block_records(_block_of(good))
    assert [(type(record["a"]), int(record["a"]), record["b"].tolist()) for record in records] == \
           [(np.int32, index, list(range(index))) for index in range(5)]
    assert decoder.block_records(_block_of([*good, _example(b=[1], a=[2])])) is None  # keys out of map order
    assert decoder.block_records(_block_of([*good, _example(a=[1, 2], b=[])])) is None  # `a` holds two values, not one
    assert BlockDecoder.of({**READING, "features": {"i": {"parse": {"i": ("fixed", "string", [])},
                                                          "decode": [["padded_images", {}]], "sequence": False}}}) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=2),
                          st.lists(st.integers(-2**63, 2**63 - 1), max_size=4), st.booleans()), min_size=1, max_size=8))
def test_a_decoded_block_is_its_records_decoded_one_at_a_time(rows):
    """Any block: decoded at once, the records `decode_record` gives one at a time, or left to it
    when a record is off the layout (keys swapped) or of another shape (two values for `a`)."""
    records = [_example(b=[v & (2**64 - 1) for v in b], a=[v & (2**64 - 1) for v in a]) if swapped else
               _example(a=[v & (2**64 - 1) for v in a], b=[v & (2**64 - 1) for v in b]) for a, b, swapped in rows]
    decoded = BlockDecoder.of(READING).block_records(_block_of(records))
    canonical = all(len(a) == 1 and not swapped for a, _, swapped in rows)
    assert (decoded is not None) == canonical
    if decoded is not None:
        for ours, data in zip(decoded, records):
            theirs = decode_record(*parse_arrays(data), READING)
            assert list(ours) == list(theirs)
            for name in ours:
                _identical(ours[name], theirs[name])
