"""How values are shown: float32 and float16 values as the shortest text that reads back as them."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tfrecord_builder.features.shown import shortest_floats


@given(st.floats(width=32).map(np.float32) | st.floats(width=16).map(np.float16))
def test_a_float_reads_back_as_itself_in_its_dtype_from_its_shortest_text(stored):
    shown = shortest_floats(stored)
    assert isinstance(shown, float)
    assert np.array_equal(stored.dtype.type(shown), stored, equal_nan=True)
    assert _digits(shown) <= _digits(float(stored))  # never more digits than the float64 expansion
    in_arrays = shortest_floats(np.array([[stored]]))  # the same in an array as in a scalar
    assert np.array_equal(in_arrays, [[shown]], equal_nan=True)


def _digits(number: float) -> int:
    """Significant digits of a float's repr (1e15 shows as 1000000000000000.0: one digit)."""
    mantissa = repr(number).lower().split("e")[0].lstrip("-").replace(".", "")
    return len(mantissa.strip("0")) or 1


def test_examples():
    assert shortest_floats(np.float32(0.1)) == 0.1 and float(np.float32(0.1)) == 0.10000000149011612
    assert shortest_floats(np.array([0.3, 1e-8, 2.5], dtype=np.float32)) == [0.3, 1e-08, 2.5]
    assert shortest_floats(np.array([0.1], dtype=np.float64)) == [0.1]
