"""`infer` on data it can't make a spec of: one line on stderr, `error: ...`, naming the file (and
the line, column or option where one applies) and what was expected; exit status 2 for a bad
path or option, 1 for bad data; no traceback, and no spec file written."""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pytest
from PIL import Image

from support.cli import run_cli, show, write_files


def _png() -> bytes:
    out = io.BytesIO()
    Image.fromarray(np.zeros((3, 3, 3), np.uint8)).save(out, format="PNG")
    return out.getvalue()


IMAGE_EXTENSIONS = ".bmp, .gif, .jpeg, .jpg, .png, .tif, .tiff, .webp"
STEPS = "sid,t,value\na,1,0.5\na,2,1.5\nb,1,2.5\n"


@dataclass(frozen=True)
class Case:
    id: str
    files: Mapping[str, str | bytes]
    argv: Sequence[str]
    status: int
    line: str
    folders: Sequence[str] = field(default_factory=tuple)

    def param(self):
        return pytest.param(self, id=self.id)


CASES = [
    Case("missing file", {}, ["nothere.csv"], 2,
         "nothere.csv: not found; expected a CSV, JSONL or Parquet file, a folder of images, a Delta table's "
         "folder, or a DuckDB or SQLite file"),
    Case("unknown kind of file", {"notes.txt": "a b\n"}, ["notes.txt"], 2,
         "notes.txt: can't tell the kind of file from its name; expected .csv, .tsv, .jsonl, .ndjson, .json or "
         ".parquet (maybe compressed: .gz, .bz2, .xz, .zst), or a folder of images"),
    Case("empty csv", {"empty.csv": ""}, ["empty.csv"], 1,
         "empty.csv: the file is empty; expected a header row and data rows"),
    Case("a header and no rows", {"head.csv": "a,b\n"}, ["head.csv"], 1,
         "head.csv: no rows after the header; expected at least one row to infer the features from"),
    Case("empty jsonl", {"empty.jsonl": ""}, ["empty.jsonl"], 1,
         "empty.jsonl: the file is empty; expected one JSON object per line"),
    Case("jsonl line not an object", {"rows.jsonl": '{"a": 1}\n[1, 2]\n'}, ["rows.jsonl"], 1,
         "rows.jsonl, line 2: expected a JSON object, received list"),
    Case("jsonl line not json", {"rows.jsonl": '{"a": 1}\n\n{"a": 2,}\n'}, ["rows.jsonl"], 1,
         "rows.jsonl, line 3: invalid JSON: Expecting property name enclosed in double quotes at column 9"),
    Case("jsonl number among words", {"rows.jsonl": '{"a": "x"}\n{"a": "y"}\n{"a": 2.5}\n'}, ["rows.jsonl"], 1,
         "rows.jsonl, line 3: column `a`: expected text like the values before it (line 1: \"x\"), received 2.5; "
         "no dtype reads both: make the column one type"),
    Case("jsonl boolean among numbers", {"rows.jsonl": '{"a": 1}\n{"a": true}\n'}, ["rows.jsonl"], 1,
         "rows.jsonl, line 2: column `a`: expected a number like the values before it (line 1: 1), received true; "
         "no dtype reads both: make the column one type"),
    Case("jsonl list among numbers", {"rows.jsonl": '{"a": 1}\n{"a": [1]}\n'}, ["rows.jsonl"], 1,
         "rows.jsonl, line 2: column `a`: expected a number like the values before it (line 1: 1), received [1]; "
         "no dtype reads both: make the column one type"),
    Case("csv row of the wrong width", {"rows.csv": "a,b\n1,2\n3\n"}, ["rows.csv"], 1,
         "rows.csv, line 3: expected 2 fields (as in the header), received 1"),
    Case("csv column named twice", {"rows.csv": "a,b,a\n1,2,3\n"}, ["rows.csv"], 1,
         "rows.csv, line 1: column `a` appears 2 times; expected unique column names"),
    Case("folder without images", {"pets/cat/readme.txt": "x"}, ["pets"], 1,
         f"pets: no images found (extensions: {IMAGE_EXTENSIONS})"),
    Case("empty folder", {}, ["pets"], 1, f"pets: no images found (extensions: {IMAGE_EXTENSIONS})",
         folders=["pets"]),
    Case("images beside the class folders", {"pets/cat/a.png": _png(), "pets/b.png": _png()}, ["pets"], 1,
         "pets: 1 image lies beside the class sub-folders (e.g. b.png); expected every image in a class "
         "sub-folder, or all of them in the folder itself"),
    Case("corrupt image", {"pets/cat/a.png": _png(), "pets/dog/b.png": b"not a png at all"}, ["pets"], 1,
         "pets/dog/b.png: not an image Pillow can read (unsupported format or corrupt header)"),
    Case("group-by without order-by", {"steps.csv": STEPS}, ["steps.csv", "--group-by", "sid"], 2,
         "--group-by and --order-by go together: the column naming each row's sequence, and the column "
         "ordering its steps"),
    Case("group-by column missing", {"steps.csv": STEPS}, ["steps.csv", "--group-by", "id", "--order-by", "t"], 2,
         "steps.csv: no column `id` (--group-by); its columns: sid, t, value"),
    Case("a step given twice", {"steps.csv": STEPS + "a,2,9\n"}, ["steps.csv", "--group-by", "sid", "--order-by", "t"],
         1, "steps.csv, line 5: sid 'a' has step t '2' twice (also at steps.csv, line 3)"),
    Case("a step without its position", {"steps.csv": STEPS + "b,,9\n"},
         ["steps.csv", "--group-by", "sid", "--order-by", "t"], 1,
         "steps.csv, line 5: `t` is empty; every step needs its sequence and position"),
    Case("positions of two kinds", {"steps.csv": STEPS + "b,two,9\n"},
         ["steps.csv", "--group-by", "sid", "--order-by", "t"], 1,
         "steps.csv, line 5: sid 'b': position t 'two' is text, but the sequence's other positions are numbers, "
         "so it can't be ordered among them; expected a number"),
    Case("group-by on a folder", {"pets/cat/a.png": _png()}, ["pets", "--group-by", "a", "--order-by", "b"], 2,
         "pets: a folder of images has no rows to group; --group-by, --order-by and --sequence read tables"),
    Case("sequence on a csv", {"steps.csv": STEPS}, ["steps.csv", "--sequence"], 2,
         "steps.csv: --sequence reads a JSONL file's list fields as steps; a long table takes --group-by and "
         "--order-by instead"),
    Case("sequence without lists", {"rows.jsonl": '{"a": 1}\n'}, ["rows.jsonl", "--sequence"], 2,
         "rows.jsonl: --sequence: no field holds lists (a record's steps); expected fields such as "
         "\"tokens\": [3, 1, 4]"),
]


@pytest.mark.parametrize("case", [case.param() for case in CASES])
def test_bad_input_is_one_line_naming_the_place(tmp_path, case):
    write_files(tmp_path, case.files)
    for folder in case.folders:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    result = run_cli("infer", *case.argv, "-o", "out.yaml", cwd=tmp_path)
    assert result.returncode == case.status, show(result)
    assert result.stderr == f"error: {case.line}\n", show(result)
    assert result.stdout == "", show(result)
    assert not (tmp_path / "out.yaml").exists()
