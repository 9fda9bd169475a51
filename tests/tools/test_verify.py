"""`verify` passes a clean dataset and names every kind of damage by shard, record and feature."""
from __future__ import annotations

import hashlib
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
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder import processes
from tfrecord_builder.write.index import index_lines
from tfrecord_builder.codec.bytecolumn import ByteColumn, join
from tfrecord_builder.codec.wire import varint
from tfrecord_builder.codec.columns import read_columns
from tfrecord_builder.codec.example import entry_parts, map_order
from tfrecord_builder.codec.example_reader import parse_record
from tfrecord_builder.codec.sequence_example import sequence_examples
from tfrecord_builder.codec.tfrecord import frame, read_records
from tfrecord_builder.errors import DatasetError
from tfrecord_builder.features.values import Values
from tfrecord_builder.tools.verify import MAX_FAULTS_PER_SHARD, _layout_of, verify

from conftest import import_module, write_spec

ROWS = "".join(f'{{"id": {i}, "x": [{i}, {i + 1}], "w": "w{i % 3}"}}\n' for i in range(60))
SPEC = {"name": "v", "source": {"builder": "jsonl", "path": "d.jsonl"}, "output": {"shards": 3},
        "features": {"id": {"dtype": "int64"}, "x": {"dtype": "float32", "shape": [2]}, "w": {"dtype": "string"}}}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    folder = tmp_path_factory.mktemp("verify")
    return tb.build(write_spec(folder, SPEC, {"d.jsonl": ROWS}), output=folder / "out", workers=1)


def _copy(info, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(info.path, target)
    return target


def _cli(path):
    return subprocess.run([sys.executable, "-m", "tfrecord_builder", "verify", str(path)], capture_output=True, text=True)


def test_a_clean_dataset_verifies(clean):
    result = verify(clean.path)
    assert result.ok and result.num_records == 60 and result.num_shards == 3
    run = _cli(clean.path)
    assert run.returncode == 0 and "ok: 3 shards, 60 records" in run.stdout


def test_every_flipped_byte_of_a_shard_is_caught(clean, tmp_path):
    target = _copy(clean, tmp_path)
    shard = target / clean.splits["train"].files[0]
    original = shard.read_bytes()
    for position in range(0, len(original), max(1, len(original) // 97)):
        damaged = bytearray(original)
        damaged[position] ^= 0x10
        shard.write_bytes(bytes(damaged))
        result = verify(target)
        assert not result.ok, position
        assert any(shard.name in fault for fault in result.faults)
    shard.write_bytes(original)
    assert verify(target).ok


def test_damage_is_named(clean, tmp_path):
    target = _copy(clean, tmp_path)
    first, second, third = (target / name for name in clean.splits["train"].files)
    first.write_bytes(first.read_bytes()[:-7])                       # truncated
    second.unlink()                                                  # deleted
    info = json.loads((target / "tfrecord_builder.json").read_text())
    info["splits"]["train"]["shards"][2]["num_examples"] += 1        # edited metadata
    (target / "tfrecord_builder.json").write_text(json.dumps(info))
    faults = verify(target).faults
    assert any(first.name in fault and "truncated" in fault for fault in faults)
    assert any(f"{second.name}: missing" == fault for fault in faults)
    assert any(third.name in fault and "tfrecord_builder.json says" in fault for fault in faults)
    run = _cli(target)
    assert run.returncode == 1 and run.stderr.startswith("error: ") and run.stderr.count("\n") == 1


def test_a_record_that_breaks_the_spec_is_named_by_feature(clean, tmp_path, tf):
    target = _copy(clean, tmp_path)
    shard = target / clean.splits["train"].files[0]
    example = tf.train.Example()
    example.features.feature["id"].int64_list.value.append(1)
    example.features.feature["x"].float_list.value.extend([1.0, 2.0, 3.0])   # shape [2] declared
    example.features.feature["w"].bytes_list.value.append(b"w")
    shard.write_bytes(frame(ByteColumn.from_rows([example.SerializeToString()])))
    faults = verify(target).faults
    assert f"{shard.name}: record 0: feature `x`: expected 2 values (shape [2]), found 3" in faults


def test_an_unfinished_dataset_is_refused(clean, tmp_path):
    target = _copy(clean, tmp_path)
    (target / "dataset_info.json").unlink()
    with pytest.raises(DatasetError, match="not a finished dataset"):
        verify(target)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=4), st.data())
def test_the_framing_reader_never_accepts_damage_silently(records, data):
    framed = frame(ByteColumn.from_rows(records))
    position = data.draw(st.integers(0, len(framed) - 1))
    flip = data.draw(st.integers(1, 255))
    damaged = bytearray(framed)
    damaged[position] ^= flip
    try:
        read = list(read_records(io.BytesIO(bytes(damaged)), "shard"))
    except DatasetError as error:
        assert str(error).startswith("shard: record ")
    else:
        pytest.fail(f"damage at byte {position} went unnoticed: {read}")
    cut = data.draw(st.integers(1, len(framed) - 1))
    boundaries = set(np.cumsum([16 + len(record) for record in records]).tolist())
    if cut in boundaries:  # a shard cut between records is still well framed: verify's counts catch it
        assert list(read_records(io.BytesIO(framed[:cut]), "shard")) == records[: sorted(boundaries).index(cut) + 1]
    else:
        with pytest.raises(DatasetError, match="truncated"):
            list(read_records(io.BytesIO(framed[:cut]), "shard"))


def test_readers_name_a_missing_or_cut_shard_before_reading(clean, tmp_path, tf):
    from conftest import import_module

    target = _copy(clean, tmp_path)
    shard = target / clean.splits["train"].files[1]
    shard.write_bytes(shard.read_bytes()[:-3])
    with pytest.raises(DatasetError, match=f"{shard.name}: shard is .* bytes, expected"):
        tb.input_fn(target, "train")
    module = import_module(target / "v_input.py")
    with pytest.raises(OSError, match=f"{shard.name}: shard is .* bytes, expected"):
        module.input_fn("train")
    shard.unlink()
    with pytest.raises(DatasetError, match=f"{shard.name}: shard is missing"):
        tb.input_fn(target, "train")


@pytest.mark.parametrize("reader", ["tb.input_fn", "generated module", "keras fit"])
@pytest.mark.parametrize("where,shuffle", [(0.5, True), (0.05, False), (0.95, True), (0.95, False)])
def test_a_flipped_byte_fails_the_epoch_naming_the_shard(clean, tmp_path, tf, reader, where, shuffle):
    target = _copy(clean, tmp_path)
    shard = target / clean.splits["train"].files[1]
    damaged = bytearray(shard.read_bytes())
    damaged[int(len(damaged) * where)] ^= 0x01
    shard.write_bytes(bytes(damaged))
    if reader == "tb.input_fn":
        batches = tb.input_fn(target, "train", batch_size=7, shuffle=shuffle)
    else:
        batches = import_module(target / "v_input.py").input_fn("train", batch_size=7, shuffle=shuffle)
    message = rf"cannot be read \(corrupt or cut\) in shard\] \[{re.escape(str(shard))}\]"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        if reader == "keras fit":
            inputs = {"x": tf.keras.Input((2,), name="x")}
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs["x"]))
            model.compile("sgd", "mse")
            model.fit(batches.map(lambda batch: ({"x": batch["x"]}, batch["id"])), epochs=1, verbose=0)
        else:
            for _ in batches:
                pass


@pytest.mark.parametrize("compression", [None, "gzip"])
@pytest.mark.parametrize("batch_size,shuffle", [(1, False), (5, False), (64, False), (5, True)])
def test_damage_in_a_shards_last_record_fails_the_epoch_naming_it(tmp_path, tf, compression, batch_size, shuffle):
    """The shard's last batch is the one that goes: whether the batches divide the shard exactly
    (20 records in batches of 1 or 5), or one batch holds it all (64), it still fails by name."""
    spec = {**SPEC, "output": {"shards": 3, **({"compression": compression} if compression else {})}}
    info = tb.build(write_spec(tmp_path / "src", spec, {"d.jsonl": ROWS}), output=tmp_path / "out", workers=1)
    shard = Path(info.path) / info.splits["train"].files[2]
    damaged = bytearray(shard.read_bytes())
    if compression:
        damaged[-12] ^= 0x01  # the stream's last compressed bytes: the last record can't be read
    else:
        damaged[-6] ^= 0x01  # the last record's data, before its checksum
    shard.write_bytes(bytes(damaged))
    message = rf"cannot be read \(corrupt or cut\) in shard\] \[{re.escape(str(shard))}\]"
    for batches in (tb.input_fn(info.path, "train", batch_size=batch_size, shuffle=shuffle),
                    import_module(Path(info.path) / "v_input.py").input_fn("train", batch_size=batch_size,
                                                                            shuffle=shuffle)):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            for _ in batches:
                pass


def _inspect(*args):
    return subprocess.run([sys.executable, "-m", "tfrecord_builder", "inspect", *map(str, args)],
                          capture_output=True, text=True)


def test_inspect_names_a_damaged_shard_in_one_line(clean, tmp_path):
    target = _copy(clean, tmp_path)
    shard = target / clean.splits["train"].files[0]
    damaged = bytearray(shard.read_bytes())
    damaged[len(damaged) // 2] ^= 0x01
    shard.write_bytes(bytes(damaged))
    run = _inspect(target, "--show", 25)  # past the end of the damaged first shard
    assert run.returncode == 1
    assert re.fullmatch(rf"error: {re.escape(str(shard))}: record \d+: (length|data) checksum mismatch \(corrupt "
                        r"(frame|record)\); `tfrecord-builder verify` lists every fault\n", run.stderr), run.stderr


def test_inspect_names_a_compressed_file_that_cannot_be_decompressed(tmp_path):
    folder = tmp_path / "z"
    spec = {**SPEC, "output": {"shards": 1, "compression": "zlib"}}
    info = tb.build(write_spec(folder, spec, {"d.jsonl": ROWS}), output=folder / "out", workers=1)
    shard = os.path.join(info.path, info.splits["train"].files[0])
    data = bytearray(open(shard, "rb").read())
    data[-2] ^= 0xFF  # the stream's Adler-32 check
    open(shard, "wb").write(bytes(data))
    run = _inspect(shard)
    assert run.returncode == 1 and run.stderr.count("\n") == 1
    assert run.stderr.startswith(f"error: {os.path.basename(shard)}: cannot be decompressed (Error -3"), run.stderr


def test_inspect_refuses_an_unknown_split_even_without_show(clean):
    run = _inspect(clean.path, "--split", "nope")
    assert run.returncode == 2
    assert run.stderr == "error: --split: unknown split 'nope'; expected one of: train\n"


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, True])
def test_a_batch_size_that_is_not_a_positive_integer_is_refused(clean, tf, batch_size):
    """tf.data would crash the process on rebatch(-1) and take 0 for the default before."""
    module = import_module(os.path.join(clean.path, "v_input.py"))
    for input_fn in (lambda **kw: tb.input_fn(clean.path, "train", **kw), lambda **kw: module.input_fn("train", **kw)):
        for shuffle in (False, True):
            with pytest.raises(ValueError, match=rf"batch_size must be a positive integer, received {batch_size!r}"):
                input_fn(batch_size=batch_size, shuffle=shuffle)
    assert sum(len(batch["id"]) for batch in tb.input_fn(clean.path, "train", batch_size=np.int64(7))) == 60


# ---- the column reader against the per-record reader --------------------------------------------
# verify reads records as columns and sends a record to the per-record check only when it leaves
# the encoder's layout or a column check flags it; both readers must report the very same faults.

WIDE_ROWS = "".join(json.dumps({
    "id": i, "age": i * 7 % 256, "n": -i * 1000, "flag": i % 2 == 0, "cat": "abc"[i % 3], "x": [i / 4, -i],
    "w": f"w{i}", "tags": ["t", "ü"][: i % 3], "xs": list(range(i % 4)), "pts": [[i, i + 0.5]] * (i % 3),
    "big": -(2**62) + i}) + "\n" for i in range(40))
WIDE_SPEC = {"name": "wide", "source": {"builder": "jsonl", "path": "d.jsonl"}, "output": {"shards": 2},
             "features": {"id": {"dtype": "int64"}, "age": {"dtype": "uint8"}, "n": {"dtype": "int32"},
                          "flag": {"dtype": "bool"}, "cat": {"type": "class_label", "names": ["a", "b", "c"]},
                          "x": {"dtype": "float32", "shape": [2]}, "w": {"dtype": "string"},
                          "tags": {"dtype": "string", "shape": [None]}, "xs": {"dtype": "int64", "shape": [None]},
                          "pts": {"dtype": "float32", "shape": [None, 2]}, "big": {"dtype": "int64"}}}
SEQUENCE_ROWS = "".join(json.dumps({
    "id": i, "label": i % 3, "tok": list(range(i % 5)), "v": [[i, -i]] * (i % 5),
    "word": ["a" * j for j in range(i % 5)], "px": [[j] * j for j in range(i % 5)]}) + "\n" for i in range(30))
SEQUENCE_SPEC = {"name": "seq", "format": "sequence_example",
                 "source": {"builder": "sequence_jsonl", "path": "d.jsonl"}, "output": {"shards": 2},
                 "context": {"id": {"dtype": "int64"}, "label": {"type": "class_label", "num_classes": 3}},
                 "sequence": {"tok": {"dtype": "int64"}, "v": {"dtype": "float32", "shape": [2]},
                              "word": {"dtype": "string"}, "px": {"dtype": "uint8", "shape": [None]}}}


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wide")
    return tb.build(write_spec(folder, WIDE_SPEC, {"d.jsonl": WIDE_ROWS}), output=folder / "out", workers=1)


@pytest.fixture(scope="module")
def sequences(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sequences")
    return tb.build(write_spec(folder, SEQUENCE_SPEC, {"d.jsonl": SEQUENCE_ROWS}), output=folder / "out", workers=1)


def _values(kind, items, per_step=False):
    """One record's Values of a key: its values, or (per_step) a list of (kind, values) steps."""
    counts = [len(step) for _, step in items] if per_step else [len(items)]
    flat = [value for _, step in items for value in step] if per_step else items
    array = list(flat) if kind == "bytes" else np.array(flat, dtype=np.float32 if kind == "float" else np.int64)
    return Values(kind, array, np.array(counts, np.int64), np.array([len(items)]) if per_step else None)


def _encoded(stored, lists=None, order=None):
    """A record as our encoder writes it, from what parse_record reads (`order`: the keys' order
    in an Example, where the encoder would sort them)."""
    if lists is not None:
        context = {key: _values(kind, values) for key, (kind, values) in stored.items()}
        sequence = {key: _values(steps[0][0] if steps else "int64", steps, per_step=True)
                    for key, steps in lists.items()}
        return sequence_examples(context, sequence).row(0)
    body = b"".join(join(entry_parts(key, _values(*stored[key]))).row(0) for key in order or sorted(stored, key=map_order))
    return b"\x0a" + varint(len(body)) + body


def _shard_records(info, shard=0):
    name = info.splits["train"].files[shard]
    with open(os.path.join(info.path, name), "rb") as file:
        return list(read_records(file, name))


def _rewrite(target, shard, records):
    """Replaces a shard's records (framed, CRCs and all), its index, and their checksums and sizes in
    tfrecord_builder.json, so that only the records' content can be at fault."""
    info = json.loads((target / "tfrecord_builder.json").read_text())
    entry = info["splits"]["train"]["shards"][shard]
    column = ByteColumn.from_rows(records)
    data = frame(column)
    (target / entry["file"]).write_bytes(data)
    entry["sha256"], entry["num_bytes"] = hashlib.sha256(data).hexdigest(), len(data)
    index = index_lines(np.cumsum([0] + [len(record) + 16 for record in records]), 0)
    (target / entry["index"]["file"]).write_bytes(index)
    entry["index"].update(sha256=hashlib.sha256(index).hexdigest(), num_bytes=len(index))
    (target / "tfrecord_builder.json").write_text(json.dumps(info))


def _faults(target, workers=1):
    """verify's faults, which the column reader and the per-record reader must agree on."""
    by_columns = verify(target, workers=workers)
    by_records = verify(target, workers=1, reader="records")
    assert by_columns.faults == by_records.faults
    assert by_columns.num_records == by_records.num_records
    return by_columns.faults


def _regular(info, record):
    """Whether the column reader takes the record in lock step (rather than setting it aside)."""
    data = np.frombuffer(record, np.uint8)
    columns = read_columns(data, np.array([0]), np.array([len(record)]), _layout_of(info.spec.features))
    return len(columns.regular) == 1


def test_records_reencode_to_their_own_bytes(wide, sequences):
    for info in (wide, sequences):
        for record in _shard_records(info):
            assert _encoded(*parse_record(record)) == record
            assert _regular(info, record)


def _damaged(record, change):
    stored, lists = parse_record(record)
    change(stored, lists)
    return _encoded(stored, lists)


WIDE_DAMAGE = [  # (what is changed, the fault, whether the record keeps the encoder's layout)
    (lambda s, _: s.update(x=("float", [1.0, 2.0, 3.0])), "feature `x`: expected 2 values (shape [2]), found 3", True),
    (lambda s, _: s.update(age=("int64", [300])), "feature `age`: a value is out of range for uint8", True),
    (lambda s, _: s.update(age=("int64", [-1])), "feature `age`: a value is out of range for uint8", True),
    (lambda s, _: s.update(n=("int64", [2**31])), "feature `n`: a value is out of range for int32", True),
    (lambda s, _: s.update(flag=("int64", [2])), "feature `flag`: a value is out of range for bool", True),
    (lambda s, _: s.update(cat=("int64", [3])), "feature `cat`: a class index is outside [0, 3)", True),
    (lambda s, _: s.update(cat=("int64", [-5])), "feature `cat`: a class index is outside [0, 3)", True),
    (lambda s, _: s.update(pts=("float", [1.0, 2.0, 3.0])),
     "feature `pts`: expected a multiple of 2 values (shape [null, 2]), found 3", True),
    (lambda s, _: s.update(w=("bytes", [b"a", b"b"])), "feature `w`: expected 1 values (shape []), found 2", True),
    (lambda s, _: s.update(w=("bytes", [])), "feature `w`: expected 1 values (shape []), found 0", True),
    (lambda s, _: s.update(id=("int64", [])), "feature `id`: expected 1 values (shape []), found 0", True),
    (lambda s, _: s.update(id=("float", [1.0])), "feature `id`: expected a int64 list, found a float list", False),
    (lambda s, _: s.pop("w"), "feature `w`: key 'w' is missing", False),
    (lambda s, _: s.update(zz=("int64", [1])), "unexpected key 'zz' (not in the spec)", False),
]


@pytest.mark.parametrize("change, fault, regular", WIDE_DAMAGE)
def test_a_damaged_example_is_named_alike_by_both_readers(wide, tmp_path, change, fault, regular):
    target = _copy(wide, tmp_path)
    records = _shard_records(wide)
    records[3] = _damaged(records[3], change)
    assert _regular(wide, records[3]) == regular  # a regular record is judged by the column checks
    _rewrite(target, 0, records)
    shard = wide.splits["train"].files[0]
    assert _faults(target) == [f"{shard}: record 3: {fault}"]


def test_several_problems_of_a_record_come_in_feature_order(wide, tmp_path):
    target = _copy(wide, tmp_path)
    records = _shard_records(wide)
    records[0] = _damaged(records[0], lambda s, _: s.update(big=("int64", [1, 2]), age=("int64", [256]),
                                                            zz=("bytes", [b""])))
    records[5] = _damaged(records[5], lambda s, _: s.update(cat=("int64", [9])))
    _rewrite(target, 0, records)
    shard = wide.splits["train"].files[0]
    assert _faults(target) == [f"{shard}: record 0: feature `age`: a value is out of range for uint8",
                               f"{shard}: record 0: feature `big`: expected 1 values (shape []), found 2",
                               f"{shard}: record 0: unexpected key 'zz' (not in the spec)",
                               f"{shard}: record 5: feature `cat`: a class index is outside [0, 3)"]


def test_keys_in_another_order_are_no_fault(wide, tmp_path):
    target = _copy(wide, tmp_path)
    records = _shard_records(wide)
    stored, _ = parse_record(records[2])
    records[2] = _encoded(stored, order=sorted(stored, reverse=True))
    assert not _regular(wide, records[2])
    _rewrite(target, 0, records)
    assert _faults(target) == []


SEQUENCE_DAMAGE = [
    (lambda c, l: l.update(v=[("float", [1.0, 2.0])] * 2 + [("float", [1.0])]),
     "feature `v`: step 2: expected 2 values (shape [2]), found 1", True),
    (lambda c, l: l.update(px=[("int64", [1]), ("int64", [256, 0])]),
     "feature `px`: step 1: a value is out of range for uint8", True),
    (lambda c, l: l.update(tok=[("int64", [1]), ("int64", [])]),
     "feature `tok`: step 1: expected 1 values (shape []), found 0", True),
    (lambda c, l: c.update(label=("int64", [3])), "feature `label`: a class index is outside [0, 3)", True),
    (lambda c, l: c.update(id=("int64", [1, 2])), "feature `id`: expected 1 values (shape []), found 2", True),
    (lambda c, l: l.pop("word"), "feature `word`: feature list 'word' is missing", False),
    (lambda c, l: c.pop("id"), "feature `id`: key 'id' is missing", False),
    (lambda c, l: l.update(extra=[("int64", [1])]), "unexpected key 'extra' (not in the spec)", False),
    (lambda c, l: c.update(extra=("int64", [1])), "unexpected key 'extra' (not in the spec)", False),
]


@pytest.mark.parametrize("change, fault, regular", SEQUENCE_DAMAGE)
def test_a_damaged_sequence_example_is_named_alike_by_both_readers(sequences, tmp_path, change, fault, regular):
    target = _copy(sequences, tmp_path)
    records = _shard_records(sequences)
    index = next(index for index, record in enumerate(records) if len(parse_record(record)[1]["tok"]) >= 3)
    records[index] = _damaged(records[index], change)
    assert _regular(sequences, records[index]) == regular
    _rewrite(target, 0, records)
    assert _faults(target) == [f"{sequences.splits['train'].files[0]}: record {index}: {fault}"]


IMAGE_FEATURES = {"id": {"dtype": "int64"},
                  "raw": {"type": "image", "encoding": "raw", "shape": [6, 6, 3], "source": "path"},
                  "own": {"type": "image", "encoding": "png", "channels": 1, "source": "path"},
                  "jpg": {"type": "image", "encoding": "jpeg", "shape": [8, 8, 3], "source": "path"}}


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    from PIL import Image

    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(3)
    lines = ["id,path"]
    for index in range(12):
        (folder / "pics").mkdir(exist_ok=True)
        pixels = rng.integers(0, 256, size=(4 + index % 5, 3 + index % 4, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / "pics" / f"{index}.png")
        lines.append(f"{index},pics/{index}.png")
    spec = {"name": "pics", "source": {"builder": "image_manifest", "path": "manifest.csv"},
            "features": IMAGE_FEATURES, "output": {"shards": 2}}
    manifest = "\n".join(lines) + "\n"
    return tb.build(write_spec(folder, spec, {"manifest.csv": manifest}), output=folder / "out", workers=1)


IMAGE_DAMAGE = [
    (lambda s, _: s.update(raw=("bytes", [b"x" * 10])), "feature `raw`: 10 bytes of pixels, but shape [6, 6, 3]"),
    (lambda s, _: s.update(raw=("bytes", [bytes(108)]), **{"raw/shape": ("int64", [4, 9, 3])}),
     "feature `raw`: shape [4, 9, 3] under 'raw/shape', expected [6, 6, 3]"),
    (lambda s, _: s.update(**{"raw/shape": ("int64", [2**40, 2**40, 3])}),
     f"feature `raw`: 108 bytes of pixels, but shape [{2**40}, {2**40}, 3]"),
    *[(lambda s, _, shape=shape: s.update(**{"own/shape": ("int64", shape)}),
       "feature `own`: expected [height, width, 1] under 'own/shape'") for shape in ([5, 7, 3], [0, 7, 1], [5, 7])],
    (lambda s, _: s.update(jpg=("bytes", [b"a", b"b"])), "feature `jpg`: expected one encoded image under 'jpg'"),
    (lambda s, _: s.update(jpg=("bytes", [])), "feature `jpg`: expected one encoded image under 'jpg'"),
]


@pytest.mark.parametrize("change, fault", IMAGE_DAMAGE)
def test_a_damaged_image_record_is_named_alike_by_both_readers(images, tmp_path, change, fault):
    assert verify(images.path).ok
    target = _copy(images, tmp_path)
    records = _shard_records(images)
    records[2] = _damaged(records[2], change)
    assert _regular(images, records[2])
    _rewrite(target, 0, records)
    assert _faults(target) == [f"{images.splits['train'].files[0]}: record 2: {fault}"]


@pytest.mark.parametrize("dataset", ["wide", "sequences", "images"])
def test_flipped_bytes_inside_records_are_judged_alike(dataset, request, tmp_path):
    """Bytes flipped inside records whose CRCs are then made to match: only the content checks (or
    nothing: a float's bits, a string's letters) can tell; both readers must tell the same."""
    info = request.getfixturevalue(dataset)
    target = _copy(info, tmp_path)
    original = _shard_records(info)
    rng = np.random.default_rng(7)
    faulty = 0
    for _ in range(80):
        records = list(original)
        index = int(rng.integers(len(records)))
        damaged = bytearray(records[index])
        for position in rng.integers(len(damaged), size=int(rng.integers(1, 3))):
            damaged[position] ^= int(rng.integers(1, 256))
        records[index] = bytes(damaged)
        _rewrite(target, 0, records)
        faulty += bool(_faults(target))
    assert faulty >= 8  # many flips break a record (in an image record most land in its pixels, unchecked)


def test_more_faulty_records_than_listed_are_counted_alike(wide, tmp_path):
    target = _copy(wide, tmp_path)
    records = [_damaged(record, lambda s, _: s.update(age=("int64", [999]))) for record in _shard_records(wide)]
    _rewrite(target, 0, records)
    faults = _faults(target)
    shard = wide.splits["train"].files[0]
    assert len(faults) == MAX_FAULTS_PER_SHARD + 1
    assert faults[-1] == f"{shard}: {len(records) - MAX_FAULTS_PER_SHARD} more faulty records"


@pytest.mark.parametrize("dataset", ["wide", "sequences"])
def test_cut_and_flipped_frames_are_named_alike(dataset, request, tmp_path):
    info = request.getfixturevalue(dataset)
    target = _copy(info, tmp_path)
    shard = target / info.splits["train"].files[1]
    original = shard.read_bytes()
    for position in range(0, len(original), max(1, len(original) // 61)):
        damaged = bytearray(original)
        damaged[position] ^= 0x20
        shard.write_bytes(bytes(damaged))
        assert _faults(target)
        shard.write_bytes(original[:position])
        assert _faults(target)


@pytest.mark.parametrize("block_bytes", [5, 100])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_records_cut_across_blocks_are_read_whole(tmp_path, monkeypatch, block_bytes, compression):
    """The column reader reads a shard a block of bytes at a time: records the blocks cut through
    (here almost all) are put together again, also where a cut or a flip breaks the frames."""
    monkeypatch.setattr("tfrecord_builder.codec.frames.BLOCK_BYTES", block_bytes)
    spec = {**WIDE_SPEC, "output": {"shards": 2, "compression": compression}}
    info = tb.build(write_spec(tmp_path, spec, {"d.jsonl": WIDE_ROWS}), output=tmp_path / "out", workers=1)
    result = verify(info.path, workers=1)
    assert result.ok and result.num_records == 40
    shard = Path(info.path) / info.splits["train"].files[0]
    original = shard.read_bytes()
    for position in range(3, len(original), max(1, len(original) // 11)):
        shard.write_bytes(original[:position])
        assert _faults(info.path)
        damaged = bytearray(original)
        damaged[position] ^= 0x04
        shard.write_bytes(bytes(damaged))
        assert _faults(info.path)


def test_one_and_two_workers_give_the_same_faults(wide, tmp_path, monkeypatch):
    monkeypatch.setattr("tfrecord_builder.tools.verify.IN_PROCESS_BYTES", 0)  # workers even for a small dataset
    target = _copy(wide, tmp_path)
    records = _shard_records(wide)
    records[1] = _damaged(records[1], lambda s, _: s.update(flag=("int64", [7])))
    _rewrite(target, 0, records)
    second = target / wide.splits["train"].files[1]
    second.write_bytes(second.read_bytes()[:-9])
    pools = []
    monkeypatch.setattr(processes, "context", lambda real=processes.context: pools.append(1) or real())
    one, two = verify(target, workers=1), verify(target, workers=2)
    assert pools == [1]  # the second in worker processes
    assert one.faults == two.faults == _faults(target)
    assert (one.num_records, one.num_shards) == (two.num_records, two.num_shards) == (39, 2)
    first, cut = wide.splits["train"].files
    assert [re.sub(r"sha256 \w+\.\.\. differs from tfrecord_builder.json's \w+\.\.\.", "sha256 differs", fault)
            for fault in one.faults] == [
        f"{first}: record 1: feature `flag`: a value is out of range for bool",
        f"{cut}: sha256 differs (the file changed after the build)",
        f"{cut}: {second.stat().st_size} bytes, tfrecord_builder.json says {second.stat().st_size + 9}",
        f"{cut}: record 19: truncated (expected {len(_shard_records(wide, 1)[19])} bytes of data)",
        f"{cut}: 19 records, tfrecord_builder.json says 20",
        "split train: 39 records, tfrecord_builder.json says 40",
    ]
    assert verify(wide.path, workers=1).ok and verify(wide.path, workers=2).ok


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_compressed_datasets_are_verified(tmp_path, compression):
    spec = {**WIDE_SPEC, "output": {"shards": 2, "compression": compression}}
    info = tb.build(write_spec(tmp_path, spec, {"d.jsonl": WIDE_ROWS}), output=tmp_path / "out", workers=1)
    result = verify(info.path)
    assert result.ok and result.num_records == 40 and result.num_shards == 2
    shard = os.path.join(info.path, info.splits["train"].files[0])
    data = bytearray(open(shard, "rb").read())
    for position in (10, len(data) // 2, len(data) - 2):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        open(shard, "wb").write(bytes(damaged))
        faults = _faults(info.path)
        assert faults and faults[0].startswith(f"{os.path.basename(shard)}: sha256 ")
    open(shard, "wb").write(bytes(data[:-30]))
    assert _faults(info.path)


def test_verify_refuses_bad_arguments(clean):
    with pytest.raises(tb.UsageError, match="workers: expected a positive integer, received 0"):
        verify(clean.path, workers=0)
    with pytest.raises(tb.UsageError, match="reader: expected 'columns' or 'records'"):
        verify(clean.path, reader="fast")


def test_the_cli_takes_a_number_of_workers(clean):
    run = subprocess.run([sys.executable, "-m", "tfrecord_builder", "verify", str(clean.path), "--workers", "2"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "ok: 3 shards, 60 records" in run.stdout


def test_verify_imports_no_tensorflow(clean):
    code = ("import sys; from tfrecord_builder.tools.verify import verify; "
            f"assert verify({str(clean.path)!r}).ok; print('tensorflow' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip() == "False", run.stderr
