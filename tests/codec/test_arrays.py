"""The NumPy record parser (codec/arrays.py): some keys of a record parse as they do among all."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_builder.codec.arrays import parse_arrays

from support.wire import encode, tables

# keys of one byte to over 127 (a two-byte length: the parser reads the entry whole), some not ASCII
KEYS = st.one_of(st.text(min_size=1, max_size=12), st.text(alphabet="ké", min_size=100, max_size=140))


@settings(max_examples=150, deadline=None)
@given(tables(keys=KEYS), st.data())
def test_the_keys_asked_for_parse_as_they_do_among_every_key(drawn, data):
    """What the report reads of a wide table: a few record keys of thousands, the others skipped."""
    _, table = drawn
    asked = frozenset(data.draw(st.lists(st.sampled_from(sorted(table)) | st.text(max_size=3), max_size=4)))
    for record in encode(table):
        every, _ = parse_arrays(record)
        some, _ = parse_arrays(record, asked)
        assert sorted(some) == sorted(key for key in every if key in asked)
        for key, values in some.items():
            assert values.dtype == every[key].dtype and np.array_equal(values, every[key])
