"""`verify` passes a clean dataset and names every kind of damage by shard, record and feature."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.codec.tfrecord import frame, read_records
from tfrecord_builder.errors import DatasetError
from tfrecord_builder.verify import verify

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
    info = json.loads((target / "dataset_info.json").read_text())
    info["splits"]["train"]["shards"][2]["num_examples"] += 1        # edited metadata
    (target / "dataset_info.json").write_text(json.dumps(info))
    faults = verify(target).faults
    assert any(first.name in fault and "truncated" in fault for fault in faults)
    assert any(f"{second.name}: missing" == fault for fault in faults)
    assert any(third.name in fault and "dataset_info.json says" in fault for fault in faults)
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
    assert run.stderr == (f"error: {shard}: a record that cannot be read (corrupt or cut); "
                          "`tfrecord-builder verify` lists every fault\n")


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
