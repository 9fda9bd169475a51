"""The fast readers (Arrow, builders/csv_blocks.py and json_blocks.py) against the plain ones (the
csv module, json.loads): for any file, the same shards, statistics and skips, or the same error.

Hypothesis writes the files from cells and values chosen to sit on the edges where two parsers
could part ways: number spellings ("+1", "1_0", " 5", "1e400", "nan", "0x1"), empty cells,
whitespace in lists, blank lines, quotes, non-ASCII text, integers past int64, JSON null, 1.0
for an integer, repeated keys.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.features import TensorFeature

from conftest import write_spec
from support.reading import files_of

csv_blocks = importlib.import_module("tfrecord_builder.builders.csv_blocks")
json_blocks = importlib.import_module("tfrecord_builder.builders.json_blocks")
lines = importlib.import_module("tfrecord_builder.builders.lines")

NUMBERS = st.sampled_from(["0", "7", "-3", "+1", "1_0", " 5", "5 ", "1.5", ".5", "5.", "-0.0", "1e3", "1E-2",
                           "1e400", "nan", "inf", "0x1", "", "abc", "9223372036854775807",
                           "9223372036854775808", "007", "1.0"])
LISTS = st.sampled_from(["", "1 2 3", "4", "1  2", " 1 2", "1 2 ", "[1, 2]", "1\t2", "x y", "1.5 2"])
WORDS = st.sampled_from(["", "a", "b c", "Zürich", "x,y", "tab\there", "ü" * 3, " lead"])


def _build_both(tmp_path: Path, spec: dict, files: dict, module, workers: int = 1):
    """(result of the fast build, result of the plain one): an info's splits, statistics and skips,
    or the error text."""
    results = []
    for index, fast in enumerate((True, False)):
        saved = module.pa
        module.pa = saved if fast else None
        try:
            path = write_spec(tmp_path / f"case{index}", spec, files)
            info = tb.build(path, output=tmp_path / f"case{index}" / "out", workers=workers)
            skipped = Path(info.path, "skipped.jsonl")
            results.append((info.to_dict()["splits"], info.statistics, info.skipped,
                            skipped.read_text().replace(f"case{index}", "case") if skipped.exists() else ""))
        except tb.DataError as error:
            results.append(("error", str(error).replace(f"case{index}", "case")))
        finally:
            module.pa = saved
    return results


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(NUMBERS, NUMBERS, LISTS, WORDS), min_size=1, max_size=12),
       blank=st.booleans(), quote=st.booleans(), crlf=st.booleans(), skip=st.booleans(),
       last_newline=st.booleans(), batch_rows=st.sampled_from([1, 3, 16384]))
def test_csv_fast_and_plain_readers_agree(tmp_path_factory, rows, blank, quote, crlf, skip, last_newline,
                                          batch_rows):
    tmp_path = tmp_path_factory.mktemp("csv")
    end = "\r\n" if crlf else "\n"
    lines = ["n,x,tokens,word"]
    for index, (number, real, tokens, word) in enumerate(rows):
        cell = f'"{word}"' if quote and index == len(rows) // 2 else word
        lines.append(f"{number},{real},{tokens},{cell}")
        if blank and index == 0:
            lines.append("")
    spec = {"name": "agree", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"n": {"dtype": "int64", "default": 0}, "x": {"dtype": "float32"},
                         "tokens": {"dtype": "int64", "shape": [None]}, "word": {"dtype": "string", "default": "-"}},
            "on_error": "skip" if skip else "fail", "output": {"shards": 2}}
    text = end.join(lines) + (end if last_newline else "")
    with mock.patch.object(TensorFeature, "batch_rows", batch_rows):  # batches cut across lines
        fast, plain = _build_both(tmp_path, spec, {"d.csv": text}, csv_blocks)
    assert fast == plain


def test_the_first_bad_row_in_the_file_is_the_one_reported(tmp_path, monkeypatch):
    """Reading runs ahead of encoding: the plain reader finds line 5's extra field while line 4's
    bad integer is still to be encoded, yet line 4 is reported, by both readers and any worker
    count (found by the property test above)."""
    monkeypatch.setattr(TensorFeature, "batch_rows", 3)
    spec = {"name": "first", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"n": {"dtype": "int64"}, "tokens": {"dtype": "int64", "shape": [None]}},
            "output": {"shards": 2}}
    text = "n,tokens\n0,\n0,\n1.5,\n0,[1, 2]\n"
    expected = ("error", "d.csv, line 4: feature `n`: expected an integer in [-9223372036854775808, "
                "9223372036854775807] (int64), received '1.5'")
    for workers in (1, 2):
        fast, plain = _build_both(tmp_path / f"w{workers}", spec, {"d.csv": text}, csv_blocks, workers=workers)
        assert fast == plain == expected


JSON_VALUES = st.sampled_from(['0', '7', '-3', '1.0', '1.5', '9223372036854775808', 'null', '"5"', 'true',
                               'NaN', '1e400', '[1]'])
JSON_STEPS = st.sampled_from(['[]', '[1, 2, 3]', '[4]', 'null', '[1.5]', '[1, null]', '["a"]', '[[1]]'])
JSON_PAIRS = st.sampled_from(['[[1, 2], [3, 4]]', '[]', '[[1, 2, 3]]', '[[1.5, -2]]', 'null', '[[1, 2], null]'])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=st.lists(st.tuples(JSON_VALUES, JSON_STEPS, JSON_PAIRS), min_size=1, max_size=10),
       blank=st.booleans(), repeated=st.booleans(), drop=st.booleans(), skip=st.booleans())
def test_jsonl_fast_and_plain_readers_agree(tmp_path_factory, records, blank, repeated, drop, skip):
    tmp_path = tmp_path_factory.mktemp("jsonl")
    lines = []
    for index, (label, tokens, pairs) in enumerate(records):
        fields = [f'"label": {label}', f'"tokens": {tokens}', f'"pairs": {pairs}']
        if drop and index == 0:
            fields.pop(2)  # a record without `pairs`
        if repeated and index == len(records) - 1:
            fields.append('"label": 3')  # json.loads keeps the last
        lines.append("{" + ", ".join(fields) + "}")
        if blank and index == 0:
            lines.append("   ")
    spec = {"name": "agree", "format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "d.jsonl"},
            "context": {"label": {"dtype": "int64"}},
            "sequence": {"tokens": {"dtype": "int64"}, "pairs": {"dtype": "float32", "shape": [2]}},
            "sequence_lengths": "free", "on_error": "skip" if skip else "fail", "output": {"shards": 2}}
    fast, plain = _build_both(tmp_path, spec, {"d.jsonl": "\n".join(lines) + "\n"}, json_blocks)
    assert fast == plain


def test_the_fast_readers_really_run(tmp_path, monkeypatch):
    """The property tests above would pass if the fast readers never ran: these files take them."""
    calls = []
    for module in (csv_blocks, json_blocks):
        original = module.fast_batches

        def spy(*args, original=original, module=module, **kwargs):
            result = yield from original(*args, **kwargs)
            calls.append((module.__name__, result))
            return result

        monkeypatch.setattr(module, "fast_batches", spy)
    try:
        csv_spec = {"name": "c", "source": {"builder": "csv", "path": "d.csv"},
                    "features": {"n": {"dtype": "int64"}, "t": {"dtype": "int64", "shape": [None]}}}
        tb.build(write_spec(tmp_path / "c", csv_spec, {"d.csv": "n,t\n1,1 2\n2,\n"}), output=tmp_path / "c" / "out")
        json_spec = {"name": "j", "format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "d.jsonl"},
                     "context": {"n": {"dtype": "int64"}}, "sequence": {"t": {"dtype": "float32", "shape": [2]}}}
        data = "".join(json.dumps({"n": i, "t": [[i, 1.5]] * i}) + "\n" for i in range(5))
        tb.build(write_spec(tmp_path / "j", json_spec, {"d.jsonl": data}), output=tmp_path / "j" / "out")
    finally:
        monkeypatch.undo()
    assert calls == [("tfrecord_builder.builders.csv_blocks", None), ("tfrecord_builder.builders.json_blocks", None)]


def test_a_field_missing_from_a_whole_batch_reads_as_json_loads_reads_it(tmp_path, monkeypatch):
    """json.loads's reader gives no column for a field no record of a batch has, but a column of
    missing values for explicit nulls; Arrow sees nulls either way, so such a batch takes the
    plain reader."""
    monkeypatch.setattr(TensorFeature, "batch_rows", 2)
    for first_two in ('{"n": 1}', '{"n": 1, "x": null}'):
        records = [first_two, first_two] + ['{"n": 2, "x": [1.5]}'] * 3
        for default in (None, [0.0]):
            x = {"dtype": "float32", "shape": [1], **({"default": default} if default else {})}
            spec = {"name": "gap", "source": {"builder": "jsonl", "path": "d.jsonl"},
                    "features": {"n": {"dtype": "int64"}, "x": x}}
            fast, plain = _build_both(tmp_path / f"{len(first_two)}-{default}", spec,
                                      {"d.jsonl": "\n".join(records) + "\n"}, json_blocks)
            assert fast == plain


def test_lines_longer_than_a_block_are_all_read():
    """A line longer than the fast readers' block (a long sequence on one JSONL line) must not end
    the file early: the blocks hold every byte, each cut after a newline."""
    import io

    text = b"a\n" + b"x" * 300 + b"\n" + b"b\nc"
    blocks = list(lines.line_blocks(io.BytesIO(text), 64))
    assert b"".join(blocks) == text
    assert all(block.endswith(b"\n") for block in blocks[:-1])


def test_batches_parsed_in_workers_read_as_the_plain_readers_do(tmp_path, monkeypatch):
    """The fast readers leave each batch's lines to the encoding workers to parse. A batch Arrow
    refuses there (a row with the wrong number of fields, a bad JSON value) is read by the plain
    reader in that worker: the same records, or the same error with the file's line number."""
    monkeypatch.setattr(TensorFeature, "batch_rows", 4)
    rows = [f"{i},{i * 0.5},{' '.join(map(str, range(i % 4)))}" for i in range(30)]
    spec = {"name": "w", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"n": {"dtype": "int64"}, "x": {"dtype": "float32"},
                         "t": {"dtype": "int64", "shape": [None]}}, "output": {"shards": 2}}
    for case, lines in {"clean": rows, "short row": rows[:17] + ["17,1.5"] + rows[18:],
                        "bad utf-8": rows[:9] + ["9,\udcff,1"] + rows[10:]}.items():
        text = ("n,x,t\n" + "\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
        fast, plain = _build_both(tmp_path / case.replace(" ", "-"), spec, {"d.csv": text}, csv_blocks, workers=2)
        assert fast == plain
        if case != "clean":
            assert fast[0] == "error" and ("line 19" in fast[1] or "line 11" in fast[1])

    records = [json.dumps({"n": i, "t": [[i, 0.5]] * (i % 3)}) for i in range(30)]
    json_spec = {"name": "j", "format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "d.jsonl"},
                 "context": {"n": {"dtype": "int64"}}, "sequence": {"t": {"dtype": "float32", "shape": [2]}},
                 "on_error": "skip"}
    for case, lines in {"clean": records, "string": records[:13] + ['{"n": "13", "t": []}'] + records[14:],
                        "two objects": records[:21] + ['{"n": 21, "t": []} {"n": 22}'] + records[22:]}.items():
        fast, plain = _build_both(tmp_path / f"j-{case.replace(' ', '-')}", json_spec,
                                  {"d.jsonl": "\n".join(lines) + "\n"}, json_blocks, workers=2)
        assert fast == plain


@settings(max_examples=300, deadline=None)
@given(cells=st.lists(st.text(alphabet="-+.0123456789eE", min_size=0, max_size=7), min_size=1, max_size=3),
       kind=st.sampled_from(["int64", "float"]))
def test_numbers_arrow_reads_are_the_numbers_python_reads(cells, kind):
    """A column Arrow converts at once holds what int() or float() make of each cell (the fast
    path checks only which characters the cells hold, then lets Arrow's cast refuse the rest)."""
    import math

    import pyarrow as pa

    from tfrecord_builder.features.cells import TextCells

    converted = TextCells(pa.array(cells)).scalars(kind)
    if converted is None:
        return  # the careful path reads them
    python = int if kind == "int64" else float
    for cell, value in zip(cells, converted.tolist()):
        expected = python(cell)  # raises if Arrow read a cell Python can't
        assert value == expected or (math.isnan(value) and math.isnan(expected)), cell


def test_a_float_key_splits_the_same_whichever_reader_reads_it(tmp_path):
    """Keys decide splits; json.loads keeps `5` an int where Arrow's float column makes it 5.0, so
    a file that takes the plain reader from its first line (a blank line) must split alike."""
    spec = {"name": "k", "source": {"builder": "jsonl", "path": "d.jsonl", "key": "id"},
            "splits": {"train": 0.5, "test": 0.5},
            "features": {"id": {"dtype": "float32"}, "x": {"dtype": "int64"}}}
    rows = "".join(json.dumps({"id": i if i % 3 else i + 0.5, "x": 2 * i}) + "\n" for i in range(300))
    members = []
    for index, text in enumerate((rows, "\n" + rows)):
        info = tb.build(write_spec(tmp_path / f"c{index}", spec, {"d.jsonl": text}), output=tmp_path / f"c{index}" / "out")
        members.append({split: sorted(int(x) for batch in tb.input_fn(info.path, split, shuffle=False)
                                      for x in batch["x"].numpy()) for split in ("train", "test")})
    assert members[0] == members[1]
    assert 100 < len(members[0]["train"]) < 200


def test_text_that_is_not_utf8_deep_in_a_fast_block_is_refused_with_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(TensorFeature, "batch_rows", 64)
    spec = {"name": "u", "source": {"builder": "jsonl", "path": "d.jsonl"},
            "features": {"n": {"dtype": "int64"}, "s": {"dtype": "string"}}}
    lines = [json.dumps({"n": i, "s": f"ü{i}"}).encode() for i in range(500)]
    lines[300] = b'{"n": 300, "s": "\xed\xa0\x80"}'  # an encoded surrogate: not UTF-8
    path = write_spec(tmp_path, spec, {"d.jsonl": b"\n".join(lines) + b"\n"})
    with pytest.raises(tb.DataError, match=r"^d\.jsonl, line 301: not valid utf-8 text \(byte 0xed\)$"):
        tb.build(path, output=tmp_path / "out")


@given(st.lists(st.sampled_from([b"a", b",", b"\r", b"\n", b"\r\n"]), max_size=40).map(b"".join))
def test_a_lone_carriage_return_is_one_not_followed_by_a_newline(data):
    """What the fast readers refuse a block for (the csv module ends a row at it), found with NumPy."""
    lone = any(byte == 13 and data[index + 1 : index + 2] != b"\n" for index, byte in enumerate(data))
    assert lines.lone_carriage_return(data) == lone


def _pending_batches(spec_path: Path) -> list:
    """The batches the build's process hands its encoding workers, for the spec at `spec_path`."""
    from tfrecord_builder.build.plan import read_tasks, task_batches
    from tfrecord_builder.builders.sources import source_builders, with_source_classes, with_source_columns
    from tfrecord_builder.spec.load import load_spec

    spec = load_spec(spec_path)
    builders = source_builders(spec)
    spec = with_source_columns(with_source_classes(spec, builders), builders)
    return [batch for task in read_tasks(builders) for batch in task_batches(spec, dict(builders)[task.split], task)]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_workers_read_the_lines_of_a_plain_file_themselves(tmp_path, monkeypatch, kind):
    """The build's process only finds where a plain file's batches of lines start and end: a
    pending batch holds that place (a few bytes to send a worker), not the lines, and is read there.
    A compressed file's batches hold their bytes. Both build the same shards, whether the file is
    read whole or in windows (tasks)."""
    import gzip
    import pickle

    from tfrecord_builder.features.notices import Notices

    monkeypatch.setattr(TensorFeature, "batch_rows", 64)
    if kind == "csv":
        text = "n,x,t\n" + "".join(f"{i},{i * 0.25},{' '.join(map(str, range(i % 5)))}\r\n" for i in range(1000))
        features = {"n": {"dtype": "int64"}, "x": {"dtype": "float32"}, "t": {"dtype": "int64", "shape": [None]}}
        source = {"builder": "csv"}
    else:
        text = "".join(json.dumps({"n": i, "x": i * 0.25, "t": list(range(i % 5))}) + "\n" for i in range(1000))
        features = {"n": {"dtype": "int64"}, "x": {"dtype": "float32"}, "t": {"dtype": "int64", "shape": [None]}}
        source = {"builder": "jsonl"}
    built = {}
    for task_bytes in (None, 4000):  # the file whole, and cut into windows read as tasks of their own
        if task_bytes is not None:
            monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", str(task_bytes))
        for name, data in ((f"d.{kind}", text.encode()), (f"d.{kind}.gz", gzip.compress(text.encode(), mtime=0))):
            folder = tmp_path / f"{name}-{task_bytes}"
            path = write_spec(folder, {"name": "r", "source": {**source, "path": name}, "features": features,
                                       "output": {"shards": 2}}, {name: data})
            batches = _pending_batches(path)
            assert sum(map(len, batches)) == 1000
            if name.endswith(".gz"):
                assert all(isinstance(batch.lines, bytes) for batch in batches)
            else:
                assert all(isinstance(batch.lines, lines.FileLines) for batch in batches)
                assert all(len(pickle.dumps(batch.lines)) < 200 for batch in batches)
                first = batches[3].load(Notices()).origin(0)
                assert task_bytes is not None or first == f"{name}, line {3 * 64 + 1 + (kind == 'csv')}"
            info = tb.build(path, output=folder / "out", workers=2)
            built[(name.endswith(".gz"), task_bytes)] = (
                {file: data for file, data in files_of(info.path).items() if ".tfrecord" in file}, info.statistics)
    # (a compressed file is read whole; a window's batches start at its first line, so their
    # statistics are merged otherwise: its shards alone are compared)
    assert repr(built[(False, None)]) == repr(built[(True, None)]) == repr(built[(True, 4000)])
    assert built[(False, None)][0] == built[(False, 4000)][0]


def test_a_file_cut_short_after_its_lines_were_found_is_an_error(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"n\n1\n2\n")
    part = lines.FileLines(str(path), 2, 6)
    assert part.read() == b"1\n2\n"
    path.write_bytes(b"n\n1\n")
    with pytest.raises(tb.DataError, match=r"d\.csv: the file changed while it was read"):
        part.read()


NUMBER_TEXT = st.sampled_from(["0", "7", "-3", "-0", "1.0", "1.5", "-0.0", "1e2", "1E-2", "2.5e+3", " 4 ",
                               "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400",
                               "NaN", "null", "true", '"5"', "[1]", "[]"])


@st.composite
def _number_lines(draw):
    """JSON lines of an int `n`, a float list `t` and a list of float pairs `p`, spelled oddly:
    spaces, keys in any order, a key missing or repeated, lists of other shapes."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        size = draw(st.sampled_from([2, 2, 2, 0, 1, 3]))  # mostly pairs, of one size a line
        pairs = draw(st.lists(st.lists(NUMBER_TEXT, min_size=size, max_size=size + draw(st.sampled_from([0, 0, 1]))),
                              max_size=3))
        fields = {"n": draw(NUMBER_TEXT), "t": "[" + ",".join(draw(st.lists(NUMBER_TEXT, max_size=4))) + "]",
                  "p": "[" + ", ".join("[" + ",".join(pair) + "]" for pair in pairs) + "]"}
        names = draw(st.permutations(list(fields)))
        if draw(st.integers(0, 9)) == 0:
            names = names[:-1]
        if draw(st.integers(0, 9)) == 0:
            names = [*names, names[0]]
        space = draw(st.sampled_from(["", " ", "\t"]))
        lines.append(("{" + f",{space}".join(f'"{name}":{space}{fields[name]}' for name in names) + "}").encode())
    return lines


@settings(max_examples=300, deadline=None)
@given(lines=_number_lines())
def test_numbers_simdjson_reads_are_what_json_loads_reads(lines):
    """A batch of numbers goes through simdjson (json_blocks.numbers_table) only where its columns
    hold exactly what json.loads reads, in the same shapes; any other batch is left to Arrow."""
    import math

    import pyarrow as pa

    schema = pa.schema([("n", pa.int64()), ("t", pa.list_(pa.float64())), ("p", pa.list_(pa.list_(pa.float64())))])
    table = json_blocks.numbers_table(lines, schema)
    if table is None:
        return
    assert table.schema == schema and table.num_rows == len(lines)
    for line, row in zip(lines, table.to_pylist()):
        pairs = list(json.loads(line, object_pairs_hook=lambda pairs: pairs))
        assert sorted(name for name, _ in pairs) == ["n", "p", "t"]
        record = dict(pairs)
        assert type(record["n"]) is int and record["n"] == row["n"]
        assert [float(value) for value in record["t"]] == row["t"]
        assert [[float(value) for value in pair] for pair in record["p"]] == row["p"]
        assert not any(math.isnan(value) for value in row["t"])


def test_numbers_take_simdjson_where_it_is_installed():
    """The property test above would pass if simdjson never read a batch."""
    import pyarrow as pa

    pytest.importorskip("simdjson")
    schema = pa.schema([("n", pa.int64()), ("t", pa.list_(pa.float64())), ("p", pa.list_(pa.list_(pa.float64())))])
    lines = [b'{"n": 1, "t": [1.5, 2], "p": [[1, 2], [3, 4.25]]}', b'{"p":[],"t":[],"n":-7}\r']
    assert json_blocks.numbers_table(lines, schema).to_pylist() == [
        {"n": 1, "t": [1.5, 2.0], "p": [[1.0, 2.0], [3.0, 4.25]]}, {"n": -7, "t": [], "p": []}]
    assert json_blocks.numbers_table([b'{"n": 1, "t": [[1.5]], "p": []}'], schema) is None  # a list too deep
    assert json_blocks.numbers_table([b'{"n": 1, "t": [], "p": [[1, 2], [3]]}'], schema) is None  # pairs of 2 and 1
    assert json_blocks.numbers_table([b'{"n": 1, "t": [], "p": [], "n": 2}'], schema) is None  # json.loads keeps 2


def test_sequences_build_the_same_shards_with_simdjson_or_arrow_alone(tmp_path, monkeypatch):
    """Batches simdjson reads (numbers alone) and batches it leaves to Arrow (a string, a step
    of another size) build the same bytes as with Arrow's parser alone."""
    pytest.importorskip("simdjson")
    monkeypatch.setattr(TensorFeature, "batch_rows", 8)
    lines = [json.dumps({"n": i, "t": [[i, 0.1 * i]] * (i % 5), "w": list(range(i % 4))}) for i in range(60)]
    lines[17] = '{"n": 17, "t": [[1, 2], [3]], "w": []}'  # a step of one value: an error in both
    lines[30] = '{"n": 30, "t": [], "w": [1], "note": "x"}'  # a field the spec doesn't read
    spec = {"name": "s", "format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "d.jsonl"},
            "context": {"n": {"dtype": "int64"}, "w": {"dtype": "int64", "shape": [None]}},
            "sequence": {"t": {"dtype": "float32", "shape": [2]}}, "on_error": "skip", "output": {"shards": 2}}
    built = []
    for index, parser in enumerate((json_blocks.simdjson, None)):
        monkeypatch.setattr(json_blocks, "simdjson", parser)
        info = tb.build(write_spec(tmp_path / f"c{index}", spec, {"d.jsonl": "\n".join(lines) + "\n"}),
                        output=tmp_path / "out", overwrite=True)
        built.append(({name: data for name, data in files_of(info.path).items() if ".tfrecord" in name},
                      info.statistics, info.skipped, Path(info.path, "skipped.jsonl").read_text()))
    assert built[0] == built[1] and built[0][2] == 1 and "d.jsonl, line 18" in built[0][3]


@settings(max_examples=200, deadline=None)
@given(cells=st.lists(st.one_of(st.none(), st.text(alphabet="-+.0123456789eEx é", max_size=6)), max_size=8),
       start=st.integers(0, 8), length=st.integers(0, 8), large=st.booleans())
def test_a_column_made_of_number_characters_is_told_as_value_by_value(cells, start, length, large):
    """`_made_of` looks at the column's bytes at once: the same answer as asking each value, for
    slices of a column, nulls and large strings."""
    from tfrecord_builder.features.cells import _CHARACTERS, _made_of

    import pyarrow as pa

    array = pa.array(cells, pa.large_string() if large else pa.string()).slice(start, length)
    for characters in (*_CHARACTERS.values(), " -+.0123456789eE"):
        assert _made_of(array, characters) == all(value is None or set(value) <= set(characters)
                                                  for value in array.to_pylist())


# cells as written in the file: quoted well (Arrow reads them), and quoted in ways the csv module
# alone reads (a quote within a plain cell) or refuses (text after a closing quote, a quote left open)
QUOTED_CELLS = st.sampled_from(['"a, b"', '""', '"say ""hi"""', '""""', '"two\nlines"', '"crlf\r\nin"',
                                '"\n"', '"x"', 'plain', '', 'Zürich', '"ü, ""ö"""'])
HOSTILE_CELLS = st.sampled_from(['5" screen', 'one,field too many', '"a"b', ' "a"', '"open', 'a""b', '"a" ', '"\r"'])


def _records_and_skips(tmp_path: Path, spec: dict, text: bytes, fast: bool) -> tuple:
    """The records a build of `text` holds (as read back) and its skipped rows, or its error text."""
    saved = csv_blocks.pa
    csv_blocks.pa = saved if fast else None
    try:
        path = write_spec(tmp_path, spec, {"d.csv": text})
        info = tb.build(path, output=tmp_path / "out", workers=1)
        skipped = Path(info.path, "skipped.jsonl")
        return ([(record["n"], record["word"]) for record in tb.read(info.path, "train")],
                skipped.read_text() if skipped.exists() else "")
    except tb.DataError as error:
        return ("error", str(error).replace(str(tmp_path), "case"))
    finally:
        csv_blocks.pa = saved


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cells=st.lists(st.tuples(QUOTED_CELLS, QUOTED_CELLS), min_size=1, max_size=10),
       hostile=st.one_of(st.none(), st.tuples(st.integers(0, 9), HOSTILE_CELLS)), quoted_header=st.booleans(),
       crlf=st.booleans(), skip=st.booleans(), last_newline=st.booleans(), batch_rows=st.sampled_from([1, 2, 16384]),
       block=st.sampled_from([8, 40, 4 * 1024**2]), bad_number=st.one_of(st.none(), st.integers(0, 9)))
def test_quoted_csv_cells_read_alike(tmp_path_factory, cells, hostile, quoted_header, crlf, skip, last_newline,
                                     batch_rows, block, bad_number):
    """Quoted cells, with delimiters, doubled quotes and newlines in them, read by Arrow as the csv
    module reads them: the same values, the same line numbers in skips and errors (a row after
    a cell of two lines is on a later line), whatever the batches and blocks cut; and quoting
    the csv module alone reads (or refuses) goes to the csv module."""
    tmp_path = tmp_path_factory.mktemp("quoted")
    end = "\r\n" if crlf else "\n"
    rows = []
    for index, (first, second) in enumerate(cells):
        if hostile is not None and hostile[0] % len(cells) == index:
            first = hostile[1]
        number = "x" if bad_number is not None and bad_number % len(cells) == index else str(index)
        rows.append(f"{number},{first},{second}")
    header = '"n","word","note"' if quoted_header else "n,word,note"
    text = (end.join([header] + rows) + (end if last_newline else "")).encode()
    spec = {"name": "q", "source": {"builder": "csv", "path": "d.csv"}, "output": {"shards": 1, "shuffle": False},
            "features": {"n": {"dtype": "int64"}, "word": {"dtype": "string"}},
            "on_error": "skip" if skip else "fail"}
    with mock.patch.object(TensorFeature, "batch_rows", batch_rows), mock.patch.object(csv_blocks, "BLOCK_BYTES", block):
        fast = _records_and_skips(tmp_path / "fast", spec, text, True)
        plain = _records_and_skips(tmp_path / "plain", spec, text, False)
    assert fast == plain


def test_quoted_cells_take_the_fast_way(tmp_path, monkeypatch):
    """Quoted well, a file is Arrow's to the end, cells of two lines included; a quote within a
    plain cell hands the rest to the csv module's reader."""
    calls = []
    original = csv_blocks.fast_batches

    def spy(*args, **kwargs):
        result = yield from original(*args, **kwargs)
        calls.append(result)
        return result

    monkeypatch.setattr(csv_blocks, "fast_batches", spy)
    monkeypatch.setattr(TensorFeature, "batch_rows", 2)
    spec = {"name": "c", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"n": {"dtype": "int64"}, "word": {"dtype": "string"}}, "output": {"shuffle": False}}
    quoted = '"n","word"\n1,"a, b"\n2,"two\nlines"\n3,"say ""hi"""\n4,plain\n'
    info = tb.build(write_spec(tmp_path / "q", spec, {"d.csv": quoted}), output=tmp_path / "q" / "out")
    assert [(r["n"], r["word"]) for r in tb.read(info.path, "train")] == [
        (1, b"a, b"), (2, b"two\nlines"), (3, b'say "hi"'), (4, b"plain")]
    stray = 'n,word\n1,"a, b"\n2,x\n3,5" screen\n4,plain\n'
    info = tb.build(write_spec(tmp_path / "s", spec, {"d.csv": stray}), output=tmp_path / "s" / "out")
    assert [(r["n"], r["word"]) for r in tb.read(info.path, "train")] == [
        (1, b"a, b"), (2, b"x"), (3, b'5" screen'), (4, b"plain")]
    assert calls == [None, 2]
