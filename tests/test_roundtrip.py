"""Property: any value of any dtype and shape kind comes back exactly, through both reading paths.

Raw value -> JSONL -> `tb.build` -> shards -> the generated module's `input_fn`, `tb.input_fn` and
`tb.read` (NumPy, no TensorFlow).
float64 is stored as float32 (tf.train.Example has no double list), so its values are drawn
from the float32-representable ones, subnormal ones included: TensorFlow's CPU cast would
flush those to zero, so float64 is rebuilt from the stored bits (read/tfdata.py,
exact_float64). float16 draws normal floats only.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb

from conftest import VALUES_BY_DTYPE, batches_as_numpy, import_module, write_spec

VALUES = VALUES_BY_DTYPE
SHAPES = [[], [2], [2, 3], [None], [None, 2]]


@st.composite
def datasets(draw):
    num_features = draw(st.integers(1, 4))
    features = {}
    for index in range(num_features):
        features[f"f{index}"] = {"dtype": draw(st.sampled_from(sorted(VALUES))),
                                 "shape": draw(st.sampled_from(SHAPES))}
    num_rows = draw(st.integers(1, 7))
    rows = []
    for row in range(num_rows):
        record = {"id": row}
        for name, declaration in features.items():
            record[name] = draw(_value(declaration["dtype"], declaration["shape"]))
        rows.append(record)
    return features, rows


def _value(dtype, shape):
    element = VALUES[dtype]
    if not shape:
        return element
    if shape[0] is None:
        inner = shape[1:]
        outer = st.integers(0, 3)
    else:
        inner = shape[1:]
        outer = st.just(shape[0])
    return outer.flatmap(lambda length: st.lists(_value(dtype, inner), min_size=length, max_size=length))


def expected(dtype, value):
    """The decoded form of a raw value: bytes for text, NumPy-typed numbers."""
    if dtype in ("string", "bytes"):
        return _map(value, lambda item: item.encode("utf-8"))
    return value


def _map(value, function):
    return [_map(item, function) for item in value] if isinstance(value, list) else function(value)


def _as_list(value):
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value


def _examples(batches, label=None):
    """Flattens batches into one dict of plain values per example."""
    out = []
    for batch in batches:
        size = len(batch["id"])
        for index in range(size):
            out.append({name: _as_list(values[index]) for name, values in batch.items()})
    return sorted(out, key=lambda example: example["id"])


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(datasets())
def test_every_value_round_trips_exactly(tf, tmp_path_factory, drawn):
    features, rows = drawn
    folder = tmp_path_factory.mktemp("roundtrip")
    data = "".join(json.dumps(row) + "\n" for row in rows)
    spec = {"name": "rt", "source": {"builder": "jsonl", "path": "data.jsonl"},
            "features": {"id": {"dtype": "int64"}, **features}, "output": {"shards": 2}}
    info = tb.build(write_spec(folder, spec, {"data.jsonl": data}), output=folder / "out")

    module = import_module(f"{info.path}/rt_input.py")
    element_spec = module.input_fn("train", batch_size=3, shuffle=False).element_spec
    for name, declaration in features.items():
        assert element_spec[name].dtype.name == declaration["dtype"].replace("bytes", "string"), name
        is_ragged = bool(declaration["shape"]) and declaration["shape"][0] is None
        assert isinstance(element_spec[name], tf.RaggedTensorSpec) == is_ragged, name
        assert element_spec[name].shape.as_list() == [None, *declaration["shape"]], name
    through_module = _examples(batches_as_numpy(module.input_fn("train", batch_size=3, shuffle=False)))
    through_library = _examples(batches_as_numpy(tb.input_fn(info.path, "train", batch_size=3, shuffle=False)))
    assert through_module == through_library
    through_numpy = sorted(({name: _as_list(value) for name, value in record.items()}
                            for record in tb.read(info.path, "train")), key=lambda example: example["id"])
    assert through_numpy == through_library  # no TensorFlow: the same values
    assert len(through_module) == len(rows)
    for example, row in zip(through_module, rows):
        for name, declaration in features.items():
            assert example[name] == expected(declaration["dtype"], row[name]), (name, declaration)
