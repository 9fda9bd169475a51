"""Where quoted CSV rows end (builders/csv_quotes.py): what Python's csv module writes, in any of
its quoting styles, is quoting the fast reader takes, and its rows end where the csv module's
reader ends them."""
from __future__ import annotations

import csv
import io
import importlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

csv_quotes = importlib.import_module("tfrecord_builder.builders.csv_quotes")

CELLS = st.lists(st.sampled_from(['a', 'ü', ' ', ',', ';', '"', '\n', '\r\n', '5', '-', '\t']), max_size=6).map("".join)
STYLES = st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC])


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.lists(CELLS, min_size=3, max_size=3), min_size=1, max_size=8), style=STYLES,
       delimiter=st.sampled_from([",", ";", "\t"]), terminator=st.sampled_from(["\n", "\r\n"]))
def test_what_the_csv_module_writes_is_quoted_alike_and_its_rows_end_where_its_reader_ends_them(
        rows, style, delimiter, terminator):
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, quoting=style, lineterminator=terminator).writerows(rows)
    data = out.getvalue().encode()
    assert csv_quotes.quoting_alike(data, ord(delimiter))
    ends = csv_quotes.row_ends(data).tolist()
    rows_read = list(csv.reader(io.StringIO(out.getvalue(), newline=""), delimiter=delimiter, strict=True))
    assert [list(csv.reader(io.StringIO(data[start:end].decode(), newline=""), delimiter=delimiter))[0]
            for start, end in zip([0] + ends[:-1], ends)] == rows_read
    starts = csv_quotes.lines_within(data).tolist()
    assert starts == [data[:start].count(b"\n") for start in [0] + ends[:-1]]


def test_quoting_the_csv_module_reads_otherwise_is_not_alike():
    """A quote within an unquoted cell is text to the csv module, text after a closing quote is
    its error, and a quote left open runs to the file's end: none is Arrow's to read."""
    for data in [b'a,5" screen\n', b'a,"b"c\n', b'a, "b"\n', b'a,"b\n', b'"a"b,c\n', b'a,b"\n']:
        assert not csv_quotes.quoting_alike(data, ord(",")), data
    assert csv_quotes.quoting_alike(b'"a""b","",""""\n"x\ny",z', ord(","))


def test_a_block_ending_within_a_quoted_cell_hands_its_row_on():
    blocks = [b'1,"two\n', b'lines"\n2,x\n', b'3,"open\n']
    assert list(csv_quotes.row_blocks(iter(blocks))) == [b'1,"two\nlines"\n2,x\n', b'3,"open\n']
    assert csv_quotes.row_ends(b'3,"open\n').tolist() == []
    assert np.array_equal(csv_quotes.row_ends(b'1,"a\nb"\n2,c'), [8, 11])
