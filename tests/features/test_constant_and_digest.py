"""A tensor's `value:` (the same value in every record, read from no column) and `digest: sha256`
(the hex SHA-256 of the file a column names, in place of its path): built from real sources and
read back, and the spec's rules for them, each one line naming the key."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.tools.verify import verify

from conftest import write_spec


def _files() -> dict[str, bytes]:
    return {f"files/{name}.bin": bytes(range(index, index + 40)) * (index + 1) for index, name in enumerate("abc")}


def test_a_constant_and_a_digest_are_stored_in_every_record(tmp_path):
    files = _files()
    table = "id,path\n" + "".join(f"{row},{name[len('files/'):]}\n" for row, name in enumerate(files))
    spec = write_spec(tmp_path, {
        "name": "const", "source": {"builder": "image_manifest", "path": "files/table.csv"},
        "features": {"id": {"dtype": "int64"},
                     "format": {"dtype": "string", "value": "jpeg", "key": "image/format"},
                     "version": {"dtype": "int64", "value": 3},
                     "scale": {"dtype": "float32", "shape": [2], "value": [0.5, 2.0]},
                     "sha256": {"dtype": "string", "source": "path", "digest": "sha256", "key": "image/key/sha256"}}},
        {"files/table.csv": table, **files})
    info = tb.build(spec, output=tmp_path / "out")
    records = sorted(tb.read(info.path), key=lambda record: int(record["id"]))
    assert [record["format"] for record in records] == [b"jpeg"] * 3
    assert [int(record["version"]) for record in records] == [3] * 3
    assert all(np.array_equal(record["scale"], np.float32([0.5, 2.0])) for record in records)
    assert [record["sha256"] for record in records] == [hashlib.sha256(data).hexdigest().encode()
                                                        for data in files.values()]
    # a constant reads no column: statistics count no value missing
    assert "num_missing" not in info.statistics["train"]["format"]
    assert verify(info.path).ok


def test_a_constant_in_rows_grouped_into_records_is_one_value_a_record(tmp_path):
    spec = write_spec(tmp_path, {
        "name": "grouped", "source": {"builder": "csv", "path": "boxes.csv", "group_by": "image"},
        "features": {"image": {"dtype": "string"}, "x": {"dtype": "float32", "shape": [None]},
                     "kind": {"dtype": "string", "value": "boxes"}}},
        {"boxes.csv": "image,x\na,1\na,2\nb,3\nc,4\nc,5\nc,6\n"})
    records = sorted(tb.read(tb.build(spec, output=tmp_path / "out").path), key=lambda record: record["image"])
    assert [(record["image"], record["x"].tolist(), record["kind"]) for record in records] == [
        (b"a", [1.0, 2.0], b"boxes"), (b"b", [3.0], b"boxes"), (b"c", [4.0, 5.0, 6.0], b"boxes")]


def test_a_digest_of_a_missing_file_names_the_row_and_the_file(tmp_path):
    spec = write_spec(tmp_path, {
        "name": "missing", "source": {"builder": "csv", "path": "table.csv"},
        "features": {"sha256": {"dtype": "string", "source": "path", "digest": "sha256"}}},
        {"table.csv": "path\nthere.bin\ngone.bin\n", "there.bin": b"x"})
    with pytest.raises(tb.DataError, match=rf"^table.csv, line 3: feature `sha256`: {tmp_path}/gone.bin: file not found "
                                           r"\(its sha256 is asked for\)$"):
        tb.build(spec, output=tmp_path / "out")


@pytest.mark.parametrize("declaration, message", [
    ({"dtype": "string", "value": "jpeg", "source": "x"},
     "features.f.source: a feature with `value:` stores that value in every record and reads no column: drop `source`"),
    ({"dtype": "string", "value": "jpeg", "default": "png"},
     "features.f.default: a feature with `value:` stores that value in every record and reads no column: drop "
     "`default`"),
    ({"dtype": "int64", "value": "jpeg"}, "features.f.value: invalid value: expected an integer in "
                                          "[-9223372036854775808, 9223372036854775807] (int64), received 'jpeg'"),
    ({"dtype": "float32", "shape": [2], "value": [1.0]}, "features.f.value: invalid value: expected shape [2], "
                                                         "received shape [1] (1 values)"),
    ({"dtype": "int64", "digest": "sha256"}, "features.f.digest: a digest is stored as hex text, one per record: "
                                             "dtype string, shape []; received dtype int64, shape []"),
    ({"dtype": "string", "digest": "md5"}, "features.f.digest: expected one of sha256, received 'md5'"),
])
def test_spec_rules_of_value_and_digest(tmp_path, declaration, message):
    spec = write_spec(tmp_path, {"name": "rules", "source": {"builder": "csv", "path": "t.csv"},
                                 "features": {"f": declaration}}, {"t.csv": "x\n1\n"})
    with pytest.raises(tb.SpecError) as raised:
        tb.load_spec(spec)
    assert message in str(raised.value)


def test_a_per_step_constant_is_refused(tmp_path):
    spec = write_spec(tmp_path, {"name": "steps", "format": "sequence_example",
                                 "source": {"builder": "sequence_jsonl", "path": "s.jsonl"},
                                 "context": {"id": {"dtype": "int64"}},
                                 "sequence": {"tok": {"dtype": "int64", "value": 1}}}, {"s.jsonl": '{"id": 1}\n'})
    with pytest.raises(tb.SpecError, match=r"sequence.tok.value: `value:` is for features of the record; declare it "
                                           "under `context:`"):
        tb.load_spec(spec)
