"""Split membership (`splits/NAME-SPLIT.keys`): each split's records' seedless key hashes, sorted,
the same for any worker count; and `build --keep-splits OLD`, which keeps every key OLD holds in
its split there."""
from __future__ import annotations

import glob
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.features import TensorFeature
from tfrecord_builder.build import encoding
from tfrecord_builder.write.membership import KeptSplits

from conftest import write_spec
from support.cli import assert_error, assert_ok, run_cli
from support.versions import NUM_ROWS, weather_csv

FEATURES = {"station_date": {"dtype": "string"}, "temperature": {"dtype": "float32"}, "wind": {"dtype": "float32"},
            "weather": {"type": "class_label", "names": ["calm", "chilly", "rain", "snow", "sun"]}}


def _spec(version: str = "1.0.0", path: str = "celsius.csv", splits=None, seed: int | None = None,
          key: bool = True) -> dict:
    return {"name": "weather", "version": version,
            "source": {"builder": "csv", "path": path, **({"key": "station_date"} if key else {})},
            "splits": splits or {"train": 0.9, "test": 0.1}, "features": FEATURES,
            **({"output": {"seed": seed}} if seed is not None else {})}


FILES = {"celsius.csv": weather_csv(), "fahrenheit.csv": weather_csv(fahrenheit=True)}


def _member(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def _keys_file(dataset: str | Path, split: str) -> np.ndarray:
    return np.frombuffer((Path(dataset) / "splits" / f"weather-{split}.keys").read_bytes(), "<u8")


@pytest.fixture
def in_workers(monkeypatch):
    """Batches of 500 rows, encoded in the worker processes from the first one on."""
    monkeypatch.setattr(TensorFeature, "batch_rows", 500)
    monkeypatch.setattr(encoding, "IN_PROCESS_SECONDS", 0)


def test_each_split_records_the_sorted_hashes_of_its_keys_for_any_worker_count(tmp_path, in_workers):
    spec = write_spec(tmp_path, _spec(), FILES)
    one = tb.build(spec, output=tmp_path / "one", workers=1)
    two = tb.build(spec, output=tmp_path / "two", workers=2)
    assert one.membership == {"hash": "blake2b-64 of the key bytes, little-endian uint64, sorted",
                              "files": {"train": "splits/weather-train.keys", "test": "splits/weather-test.keys"}}
    expected = {split: [_member(record["station_date"].decode()) for record in tb.read(one.path, split)]
                for split in ("train", "test")}
    for split in expected:
        assert _keys_file(one.path, split).tolist() == sorted(expected[split])
        assert (Path(one.path) / "splits" / f"weather-{split}.keys").read_bytes() == \
            (Path(two.path) / "splits" / f"weather-{split}.keys").read_bytes()
    assert sum(map(len, expected.values())) == NUM_ROWS
    # nothing but the shards matches a shard glob
    assert sorted(Path(path).name for path in glob.glob(f"{one.path}/**/*.tfrecord*", recursive=True)) == \
        sorted(shard["file"] for split in one.splits.values() for shard in split.shards)


def test_the_hashes_dont_depend_on_the_seed(tmp_path):
    """So versions built with different seeds compare: the same keys, split otherwise."""
    first = tb.build(write_spec(tmp_path / "a", _spec(), FILES), output=tmp_path / "a", workers=1)
    second = tb.build(write_spec(tmp_path / "b", _spec(seed=7), FILES), output=tmp_path / "b", workers=1)
    every = [np.sort(np.concatenate([_keys_file(info.path, split) for split in ("train", "test")]))
             for info in (first, second)]
    assert every[0].tolist() == every[1].tolist()
    assert _keys_file(first.path, "test").tolist() != _keys_file(second.path, "test").tolist()


def test_keep_splits_keeps_every_known_key_in_its_split_and_splits_new_ones_by_hash(tmp_path, in_workers):
    old = tb.build(write_spec(tmp_path / "old", _spec(), FILES), output=tmp_path / "out", workers=1)
    # the next version: converted, 100 rows more (new keys), the test split asked bigger
    more = weather_csv(fahrenheit=True, rows=NUM_ROWS + 100)
    spec = write_spec(tmp_path / "new", _spec("1.1.0", splits={"train": 0.8, "test": 0.2}), {"fahrenheit.csv": more},
                      name="spec.yaml")
    text = spec.read_text().replace("celsius.csv", "fahrenheit.csv")
    spec.write_text(text)
    plain = tb.build(spec, output=tmp_path / "plain", workers=2)
    kept = tb.build(spec, output=tmp_path / "kept", workers=2, keep_splits=old.path)
    assert kept.membership["kept_splits"] == {"dataset": old.path, "kept": NUM_ROWS, "new": 100}
    for split in ("train", "test"):
        before, after = _keys_file(old.path, split), _keys_file(kept.path, split)
        assert np.isin(before, after).all()  # every known row where it was
    new_keys = np.setdiff1d(np.concatenate([_keys_file(kept.path, s) for s in ("train", "test")]),
                            np.concatenate([_keys_file(old.path, s) for s in ("train", "test")]))
    assert len(new_keys) == 100
    for split in ("train", "test"):  # a new key goes where the hash puts it, as without --keep-splits
        assert np.isin(new_keys, _keys_file(kept.path, split)).tolist() == \
            np.isin(new_keys, _keys_file(plain.path, split)).tolist()
    assert not np.isin(_keys_file(old.path, "train"), _keys_file(plain.path, "train")).all()  # without: moved
    # and diff sees no row move
    assert tb.diff(old.path, kept.path).membership.moved == {}
    assert tb.diff(old.path, plain.path).membership.moved != {}


@pytest.mark.slow
def test_keep_splits_on_the_command_line_reports_what_it_kept(tmp_path):
    old = tb.build(write_spec(tmp_path, _spec(), FILES, name="old.yaml"), output=tmp_path / "out", workers=1)
    write_spec(tmp_path, _spec("1.1.0", "fahrenheit.csv", splits={"train": 0.8, "test": 0.2}), name="new.yaml")
    result = run_cli("build", "new.yaml", "--output", "out", "--keep-splits", old.path, cwd=tmp_path)
    assert_ok(result)
    assert f"splits kept from {old.path}: 3,071 records in the split they had there, 0 new to it (split by hash)" \
        in result.stdout.splitlines()
    # whole-row keys: converting a column leaves no key to keep; the build says so
    unkeyed = tb.build(write_spec(tmp_path, _spec("2.0.0", key=False), name="row.yaml"), output=tmp_path / "out",
                       workers=1)
    write_spec(tmp_path, _spec("2.1.0", "fahrenheit.csv", key=False), name="row-f.yaml")
    result = run_cli("build", "row-f.yaml", "--output", "out", "--keep-splits", unkeyed.path, cwd=tmp_path)
    assert_ok(result)
    assert f"splits kept from {unkeyed.path}: 0 records in the split they had there, 3,071 new to it (split by " \
           "hash)" in result.stdout.splitlines()
    assert result.stderr == (f"warning: --keep-splits {unkeyed.path}: none of the 3,071 records has a key it holds, "
                             "so none kept a split; without source.key a row's key is the whole row, and a row with "
                             "any value changed has a new one\n")


@pytest.mark.slow
def test_keep_splits_refuses_what_it_cant_keep(tmp_path):
    old = tb.build(write_spec(tmp_path, _spec(), FILES, name="old.yaml"), output=tmp_path / "out", workers=1)
    write_spec(tmp_path, _spec("1.1.0", splits={"train": 0.8, "validation": 0.2}), name="renamed.yaml")
    assert_error(run_cli("build", "renamed.yaml", "--output", "out", "--keep-splits", old.path, cwd=tmp_path), 2,
                 [f"--keep-splits {old.path}: its split test is not among the spec's (train, validation); its rows "
                  "would have nowhere to stay"])
    by_file = _spec("1.2.0", splits={"train": {"path": "celsius.csv"}, "test": {"path": "fahrenheit.csv"}})
    del by_file["source"]["path"]
    write_spec(tmp_path, by_file, name="files.yaml")
    assert_error(run_cli("build", "files.yaml", "--output", "out", "--keep-splits", old.path, cwd=tmp_path), 2,
                 ["--keep-splits: the spec's splits come from its sources (a path or a column per split), not from "
                  "hashes of the keys: there is nothing to keep"])
    older = tmp_path / "older"
    shutil.copytree(old.path, older)
    shutil.rmtree(older / "splits")
    info = json.loads((older / "tfrecord_builder.json").read_text())
    del info["membership"]
    (older / "tfrecord_builder.json").write_text(json.dumps(info))
    write_spec(tmp_path, _spec("1.3.0"), name="next.yaml")
    assert_error(run_cli("build", "next.yaml", "--output", "out", "--keep-splits", older, cwd=tmp_path), 2,
                 [f"--keep-splits {older}: the dataset records no split membership (built before tfrecord-builder "
                  "wrote splits/); rebuild that version first, or build without it"])
    assert_error(run_cli("build", "next.yaml", "--dry-run", "--keep-splits", old.path, cwd=tmp_path), 2,
                 ["--dry-run writes nothing: give it without --resume, --overwrite, --module, --pipeline-options "
                  "and --keep-splits"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2)), max_size=40, unique_by=lambda item: item[0]),
       st.lists(st.integers(0, 2**64 - 1), max_size=20))
def test_a_known_hash_finds_its_split_and_any_other_none(known, others):
    hashes = np.array([hash_ for hash_, _ in known], np.uint64)
    order = np.argsort(hashes, kind="stable")
    keep = KeptSplits("old", hashes[order], np.array([split for _, split in known], np.int64)[order])
    asked = np.array([hash_ for hash_, _ in known] + others, np.uint64)
    where = dict(known)
    assert keep.splits_of(asked).tolist() == [where.get(int(hash_), -1) for hash_ in asked.tolist()]
