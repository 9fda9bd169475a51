"""What a build made, read back: every file of a dataset's folder as bytes (two builds compared
byte for byte), and the records through both reading paths, the generated module's `input_fn`
and `tb.input_fn`, checked identical batch by batch."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import tfrecord_builder as tb

from conftest import batches_as_numpy, import_module, write_spec


def files_of(folder: str | Path) -> dict[str, bytes]:
    """Every file below `folder`: {path relative to it: its bytes}, in path order."""
    folder = Path(folder)
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def assert_same_files(expected: dict[str, bytes], found: dict[str, bytes]) -> None:
    """The same files with the same bytes (`files_of` of two builds), naming the first that differs."""
    assert sorted(expected) == sorted(found)
    for name in expected:
        assert expected[name] == found[name], f"{name} differs"


def built_as_from_parquet(folder: Path, source: dict[str, Any], features: dict) -> tb.DatasetInfo:
    """The rows of `source` (a spec's source, read from folder/sql/) built, its shards asserted
    equal, byte for byte, to those of the same rows from folder/rows.parquet."""
    sql = write_spec(folder / "sql", {"name": "t", "source": source, "features": features})
    from_parquet = write_spec(folder / "pq", {"name": "t", "source": {"builder": "parquet", "path": "../rows.parquet"},
                                              "features": features})
    built = tb.build(sql, output=folder / "a")
    reference = tb.build(from_parquet, output=folder / "b")
    shards = {name: data for name, data in files_of(built.path).items() if ".tfrecord" in name}
    assert shards and shards == {name: data for name, data in files_of(reference.path).items() if ".tfrecord" in name}
    return built


def both_paths(info: tb.DatasetInfo, split: str = "train", batch_size: int = 1) -> dict[str, Any]:
    """{"module": dataset, "library": dataset}, unshuffled, from the generated module and tb.input_fn."""
    module = import_module(Path(info.path) / f"{info.name}_input.py")
    return {"module": module.input_fn(split, batch_size=batch_size, shuffle=False),
            "library": tb.input_fn(info.path, split, batch_size=batch_size, shuffle=False)}


def assert_same_batches(ours: list, library: list) -> None:
    """Two paths' batches (`batches_as_numpy`: dicts, or (features, label) tuples) identical: as
    many, the same features, dtypes and values."""
    assert len(ours) == len(library)
    for one, other in zip(ours, library):
        _assert_same(one, other, "")


def _assert_same(one: Any, other: Any, where: str) -> None:
    if isinstance(one, tuple):
        assert isinstance(other, tuple) and len(one) == len(other), where
        for index, (item, its) in enumerate(zip(one, other)):
            _assert_same(item, its, f"{where}[{index}]")
    elif isinstance(one, dict):
        assert one.keys() == other.keys(), where
        for key in one:
            _assert_same(one[key], other[key], f"{where}{key}")
    else:
        if isinstance(one, np.ndarray):
            assert one.dtype == other.dtype, where
        np.testing.assert_array_equal(one, other, err_msg=where)


def read_both(info: tb.DatasetInfo, split: str = "train", batch_size: int = 1) -> list[dict]:
    """The split's batches (NumPy) through the generated module, checked identical to tb.input_fn's."""
    datasets = both_paths(info, split, batch_size)
    ours = batches_as_numpy(datasets["module"])
    assert_same_batches(ours, batches_as_numpy(datasets["library"]))
    return ours


def read_all(info: tb.DatasetInfo, batch_size: int = 1) -> tuple[list[dict], list[dict]]:
    """The train split's batches through both reading paths (checked identical), and tb.read's records."""
    return read_both(info, "train", batch_size), list(tb.read(info.path, "train"))
