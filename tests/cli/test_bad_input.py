"""Bad specs, bad usage and bad data on the real command line.

Each case is (description, spec text, data files, argv) -> (exit status, what the error says).
The contract (PRODUCT.md): exit 2 for a bad spec or usage, 1 for bad data; the error is ONE line
on stderr, `error: ...`, naming the place (file, and line / key path / feature as it applies) and
what was expected; no traceback unless --debug; and a failed build leaves no dataset_info.json.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pytest

from support.cli import (Expected, LineOf, assert_error, assert_no_dataset_info, assert_ok, files_outside,
                         run_cli, show, write_files)

SPEC = "myspec.yaml"
CSV = "rows.csv"
JSONL = "rows.jsonl"
VALIDATE = ("validate", SPEC)
BUILD = ("build", SPEC, "--output", "out")
SPEC_LINE = lambda text: LineOf(SPEC, text)  # noqa: E731
CSV_LINE = lambda text: LineOf(CSV, text)  # noqa: E731

# The spec most data cases use; a case replaces `features:` and the data.
HEADER = f"""\
name: wines
version: 1.0.0
source:
  builder: csv
  path: {CSV}
"""
GOOD_FEATURES = """\
features:
  row_id:  {dtype: int64}
  alcohol: {dtype: float32}
"""
GOOD_SPEC = HEADER + GOOD_FEATURES
GOOD_CSV = "row_id,alcohol\n1,13.2\n2,12.5\n"


@dataclass(frozen=True)
class Case:
    id: str
    spec: str | None
    files: Mapping[str, str | bytes]
    argv: Sequence[str]
    status: int
    expected: Sequence[Expected] = field(default_factory=tuple)

    def param(self):
        return pytest.param(self, id=self.id)


def spec_case(id: str, spec: str, expected: Sequence[Expected], argv: Sequence[str] = VALIDATE,
              files: Mapping[str, str | bytes] | None = None) -> Case:
    """A bad spec (exit 2); the data is fine."""
    return Case(id, spec, {CSV: GOOD_CSV} if files is None else files, argv, 2, expected)


def data_case(id: str, features: str, data: str | bytes, expected: Sequence[Expected], *, file: str = CSV,
              header: str = HEADER) -> Case:
    """Bad data (exit 1) under a good spec."""
    return Case(id, header + features, {file: data}, BUILD, 1, expected)


def jsonl_case(id: str, features: str, data: str | bytes, expected: Sequence[Expected]) -> Case:
    """Bad data (exit 1) in a JSONL source."""
    return data_case(id, features, data, expected, file=JSONL, header=HEADER.replace("csv", "jsonl"))


NOT_FOUND = re.compile(r"not found|no such|does not exist|doesn't exist")

CASES = [
    # ---- exit 2: the spec ---------------------------------------------------------------------
    spec_case("malformed-yaml-unclosed-bracket",
              HEADER + "features:\n  row_id: {dtype: int64}\n  alcohol: {dtype: float32, shape: [3\n",
              [SPEC, SPEC_LINE("shape: [3")]),
    spec_case("unknown-key-did-you-mean",
              HEADER + "features:\n  row_id: {dtype: int64}\n  alcohol: {dtype: float32, shpe: [3]}\n",
              [SPEC, SPEC_LINE("shpe"), "shpe", re.compile(r"did you mean\W+shape\b")]),
    spec_case("unknown-dtype",
              HEADER + "features:\n  row_id: {dtype: int64}\n  alcohol: {dtype: float33}\n",
              [SPEC, SPEC_LINE("float33"), "alcohol", "float33", "float32"]),
    spec_case("duplicate-key",
              HEADER + "features:\n  alcohol: {dtype: float32}\n  row_id: {dtype: int64}\n  alcohol: {dtype: int64}\n",
              [SPEC, SPEC_LINE("alcohol: {dtype: int64}"), "alcohol", "duplicate"]),
    spec_case("feature-name-not-identifier",
              HEADER + "features:\n  row_id: {dtype: int64}\n  a-b: {dtype: float32}\n",
              [SPEC, SPEC_LINE("a-b:"), "a-b", "identifier"]),
    spec_case("splits-do-not-sum-to-one",
              HEADER + "splits:\n  train: 0.5\n  test: 0.3\n" + GOOD_FEATURES,
              [SPEC, SPEC_LINE("splits:"), "splits", re.compile(r"sum\w* to 1\b")]),
    spec_case("label-not-a-feature",
              HEADER + GOOD_FEATURES + "label: colour\n",
              [SPEC, SPEC_LINE("label:"), "colour", "feature"]),
    spec_case("class-label-without-names",
              HEADER + GOOD_FEATURES + "  cultivar: {type: class_label}\n",
              [SPEC, SPEC_LINE("cultivar:"), "cultivar", "names"]),
    spec_case("shape-null-not-first",
              HEADER + GOOD_FEATURES + "  boxes: {dtype: float32, shape: [4, null]}\n",
              [SPEC, SPEC_LINE("boxes:"), "boxes", "shape", "null"]),
    spec_case("shards-and-shard-size",
              HEADER + GOOD_FEATURES + "output: {shards: 2, shard_size: 64MiB}\n",
              [SPEC, SPEC_LINE("output:"), "shards", "shard_size"]),
    spec_case("python-tag-in-a-value",
              HEADER + 'description: !!python/object/apply:os.system ["echo hacked"]\n' + GOOD_FEATURES,
              [SPEC, SPEC_LINE("!!python"), "tag"]),
    spec_case("python-tag-in-a-feature",
              HEADER + GOOD_FEATURES + '  evil: !!python/object/apply:os.system ["echo hacked > hacked.txt"]\n',
              [SPEC, SPEC_LINE("!!python"), "tag"], argv=BUILD),
    Case("spec-file-missing", None, {CSV: GOOD_CSV}, ("validate", "absent.yaml"), 2, ["absent.yaml", NOT_FOUND]),
    spec_case("source-path-missing-validate",
              HEADER.replace(CSV, "missing.csv") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("path: missing.csv"), "missing.csv", NOT_FOUND]),
    spec_case("source-path-missing-build",
              HEADER.replace(CSV, "missing.csv") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("path: missing.csv"), "missing.csv", NOT_FOUND], argv=BUILD),
    spec_case("unknown-command-line-option", GOOD_SPEC, ["--shard-count"],
              argv=("build", SPEC, "--output", "out", "--shard-count", "3")),
    spec_case("unknown-builder-did-you-mean",
              HEADER.replace("builder: csv", "builder: cvs") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("builder: cvs"), "cvs", re.compile(r"did you mean\W+csv\b")]),
    spec_case("unknown-builder-on-build",
              HEADER.replace("builder: csv", "builder: cvs") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("builder: cvs"), "cvs", re.compile(r"did you mean\W+csv\b")], argv=BUILD),
    spec_case("empty-spec-file", "", [SPEC, "empty"]),
    spec_case("spec-is-a-list", "- name: wines\n- features: {}\n", [SPEC, "mapping"]),
    spec_case("missing-features-key", HEADER, [SPEC, "features"]),
    Case("inspect-a-missing-path", None, {}, ("inspect", "nowhere/wines/1.0.0"), 2,
         ["nowhere/wines/1.0.0", NOT_FOUND]),

    # ---- exit 1: the data ---------------------------------------------------------------------
    data_case("non-numeric-float",
              GOOD_FEATURES, "row_id,alcohol\n1,13.2\n2,abc\n3,12.5\n",
              [CSV, CSV_LINE("2,abc"), "alcohol", "abc", "float32"]),
    data_case("wrong-fixed-shape",
              "features:\n  row_id: {dtype: int64}\n  scores: {dtype: float32, shape: [3]}\n",
              "row_id,scores\n1,1 2 3\n2,4 5 6\n3,7 8\n",
              [CSV, CSV_LINE("3,7 8"), "scores", "shape", "[3]"]),
    data_case("missing-value-without-default",
              GOOD_FEATURES, "row_id,alcohol\n1,13.2\n2,12.5\n3,\n4,14.1\n",
              [CSV, CSV_LINE("3,"), "alcohol", "missing"]),
    data_case("int64-overflow",
              GOOD_FEATURES, "row_id,alcohol\n1,13.2\n99999999999999999999,12.5\n",
              [CSV, CSV_LINE("99999999999999999999"), "row_id", "99999999999999999999", "int64"]),
    data_case("uint8-out-of-range",
              "features:\n  row_id: {dtype: int64}\n  pixel: {dtype: uint8}\n",
              "row_id,pixel\n1,0\n2,255\n3,300\n",
              [CSV, CSV_LINE("3,300"), "pixel", "300", "uint8"]),
    data_case("nan-rejected-by-default",
              GOOD_FEATURES, "row_id,alcohol\n1,13.2\n2,nan\n",
              [CSV, CSV_LINE("2,nan"), "alcohol", "nan", re.compile(r"allow_nan|not allowed|finite")]),
    data_case("float32-out-of-range",
              GOOD_FEATURES, "row_id,alcohol\n1,13.2\n2,1e40\n",
              [CSV, CSV_LINE("2,1e40"), "alcohol", re.compile(r"1e\+?40"), "float32"]),
    data_case("csv-row-with-too-many-fields",
              GOOD_FEATURES, "row_id,alcohol\n1,13.2\n2,12.5\n3,12.9,extra,more\n",
              [CSV, CSV_LINE("extra"), "fields", re.compile(r"\b2\b"), re.compile(r"\b4\b")]),
    jsonl_case("invalid-json-line",
             GOOD_FEATURES, '{"row_id": 1, "alcohol": 13.2}\n{"row_id": 2, "alcohol": 12.5\n{"row_id": 3, "alcohol": 1}\n',
             [JSONL, LineOf(JSONL, '"row_id": 2'), "JSON"]),
    data_case("csv-lacks-a-needed-column",
              GOOD_FEATURES, "row_id,alcool\n1,13.2\n",
              [CSV, "alcohol", "column"]),
    data_case("class-label-not-a-class-name",
              "features:\n  row_id: {dtype: int64}\n  cultivar: {type: class_label, names: [barolo, barbera]}\n",
              "row_id,cultivar\n1,barolo\n2,barbera\n3,merlot\n",
              [CSV, CSV_LINE("3,merlot"), "cultivar", "merlot", "barolo"]),
    data_case("csv-not-utf8",
              GOOD_FEATURES, b"row_id,alcohol\n1,13.2\n2,\xff\xfe\n3,12.5\n",
              [CSV, CSV_LINE("2,"), re.compile(r"utf-?8", re.IGNORECASE)]),
    data_case("empty-csv-file",
              GOOD_FEATURES, "",
              [CSV, "empty"]),
    jsonl_case("jsonl-string-where-a-list-belongs",  # JSON gives lists as lists: no CSV-cell splitting
             "features:\n  row_id: {dtype: int64}\n  tags: {dtype: string, shape: [null]}\n",
             '{"row_id": 1, "tags": ["a"]}\n{"row_id": 2, "tags": "new york"}\n',
             [JSONL, LineOf(JSONL, "new york"), "tags", "new york", "list"]),
    jsonl_case("jsonl-string-not-utf8",  # Arrow's JSON parser lets such bytes through; we don't
             "features:\n  row_id: {dtype: int64}\n  note: {dtype: string}\n",
             b'{"row_id": 1, "note": "x"}\n{"row_id": 2, "note": "\xff"}\n',
             [JSONL, LineOf(JSONL, '"row_id": 2'), re.compile(r"utf-?8", re.IGNORECASE)]),
    jsonl_case("jsonl-column-of-a-cut-line",
             GOOD_FEATURES, '{"row_id": 1, "alcohol": 13.2}\n{"row_id": 2, "alcohol": 12.5\n',
             [JSONL, LineOf(JSONL, '"row_id": 2'), "column 30"]),
    data_case("csv-column-named-twice",
              GOOD_FEATURES, "row_id,alcohol,alcohol\n1,13.2,14.0\n",
              [CSV, "line 1", "alcohol", re.compile(r"appears 2 times")]),
    data_case("csv-lacks-a-column-that-has-a-default",  # a misspelt name must not become a constant
              "features:\n  row_id: {dtype: int64}\n  weight: {dtype: float32, default: 1.0}\n",
              "row_id,wieght\n1,2.0\n",
              [CSV, "weight", "column", "wieght"]),
    spec_case("source-path-is-a-folder",
              HEADER.replace(f"path: {CSV}", "path: data") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("path: data"), "folder"], files={"data/rows.csv": GOOD_CSV}),
    spec_case("mask-feature-is-the-label",
              "name: tags\nformat: sequence_example\nsource: {builder: sequence_jsonl, path: s.jsonl}\n"
              "sequence:\n  tok: {dtype: int64}\n  tags: {type: class_label, names: [O, B]}\n"
              "label: tags\ninput: {mask_feature: tags}\n",
              [SPEC, SPEC_LINE("mask_feature"), "tags", "already"], files={"s.jsonl": '{"tok": [1], "tags": ["O"]}\n'}),
    spec_case("delimiter-is-a-line-break", HEADER + '  delimiter: "\\n"\n' + GOOD_FEATURES,
              [SPEC, SPEC_LINE("delimiter"), "line break"]),
    Case("output-is-a-file", GOOD_SPEC, {CSV: GOOD_CSV, "afile": "x"}, ("build", SPEC, "--output", "afile"), 2,
         ["afile", "not a folder"]),
    Case("inspect-show-negative", GOOD_SPEC, {CSV: GOOD_CSV}, ("inspect", CSV, "--show", "-1"), 2,
         ["--show", "-1"]),
    Case("verify-a-file", GOOD_SPEC, {CSV: GOOD_CSV}, ("verify", CSV), 2, [CSV, "dataset folder", "inspect"]),
    spec_case("custom-builder-class-missing", HEADER.replace("builder: csv", "builder: mymod:Missing") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("builder: mymod"), "Missing"], files={CSV: GOOD_CSV, "mymod.py": "x = 1\n"}),
    Case("resume-and-overwrite-together", GOOD_SPEC, {CSV: GOOD_CSV}, (*BUILD, "--resume", "--overwrite"), 2,
         ["--resume", "--overwrite"]),
    Case("validate-finds-a-column-missing-from-the-header", HEADER + GOOD_FEATURES, {CSV: "row_id,alcool\n1,13.2\n"},
         VALIDATE, 1, [CSV, "alcohol", "no column", "alcool"]),
    # ---- URLs: outputs go to object stores whose filesystem is installed (tests/build/test_object_store.py);
    # sources, verify and generate take local paths only, for now (a local folder `s3:` was once made) ----
    Case("output-is-a-url-without-its-filesystem", GOOD_SPEC, {CSV: GOOD_CSV},
         ("build", SPEC, "--output", "az://bucket/x"), 2, ["az://bucket/x", "needs adlfs", "pip install adlfs"]),
    spec_case("output-dir-is-a-url-without-its-filesystem", GOOD_SPEC + "output: {dir: 'az://bucket/out'}\n",
              [SPEC, SPEC_LINE("az://bucket/out"), "output.dir", "az:// needs adlfs"], argv=BUILD[:2]),
    spec_case("source-path-is-a-url-without-its-filesystem",
              HEADER.replace(f"path: {CSV}", "path: az://bucket/rows.csv") + GOOD_FEATURES,
              [SPEC, SPEC_LINE("az://bucket"), "source.path", "az://bucket/rows.csv: reading and writing az:// needs "
               "adlfs: pip install adlfs"]),
    Case("verify-a-url-without-its-filesystem", None, {}, ("verify", "az://bucket/ds/1.0.0"), 2,
         ["az://bucket/ds/1.0.0", "needs adlfs", "pip install adlfs"]),
    Case("generate-into-a-url-without-its-filesystem", GOOD_SPEC, {CSV: GOOD_CSV}, ("generate", SPEC, "-o", "az://b/m.py"),
         2, ["az://b/m.py", "needs adlfs"]),
    # ---- options are checked per builder ---------------------------------------------------------
    spec_case("unknown-option-did-you-mean", HEADER + "  options: {na_valuse: [NA]}\n" + GOOD_FEATURES,
              [SPEC, SPEC_LINE("na_valuse"), "source.options.na_valuse", "did you mean `na_values`"]),
    spec_case("na-values-not-a-list", HEADER + "  options: {na_values: 5}\n" + GOOD_FEATURES,
              [SPEC, SPEC_LINE("na_values"), "expected a list of texts read as missing values"]),
    spec_case("parquet-takes-no-options",
              HEADER.replace("builder: csv", "builder: parquet").replace(CSV, "rows.parquet")
              + "  options: {na_values: [NA]}\n" + GOOD_FEATURES,
              [SPEC, SPEC_LINE("na_values"), "the parquet builder takes no options"], files={"rows.parquet": b"x"}),
    spec_case("labels-file-beside-the-images-not-the-spec",
              "name: pics\nsource: {builder: image_folder, path: pics, options: {labels: labels.csv}}\n"
              "features:\n  image: {type: image}\n  label: {type: class_label}\n",
              [SPEC, SPEC_LINE("labels.csv"), "labels file not found", "relative to the spec's folder",
               "write `labels: pics/labels.csv`"], argv=BUILD,
              files={"pics/labels.csv": "filename,label\na.png,cat\n", "pics/a.png": b"not read"}),
    Case("inspect-an-unfinished-dataset", None,
         {"out/wines/1.0.0/wines-train.tfrecord-00000-of-00001": b"", "out/wines/1.0.0/.made-by-tb": b""},
         ("inspect", "out/wines/1.0.0"), 1, ["out/wines/1.0.0", "dataset_info.json"]),
]


@pytest.mark.parametrize("case", [case.param() for case in CASES])
def test_bad_input(tmp_path: Path, case: Case) -> None:
    files = dict(case.files)
    if case.spec is not None:
        files[SPEC] = case.spec
    write_files(tmp_path, files)
    before = files_outside(tmp_path)

    result = run_cli(*case.argv, cwd=tmp_path)

    assert_error(result, case.status, case.expected, tmp_path)
    assert_no_dataset_info(tmp_path)
    assert files_outside(tmp_path) == before, "the failed command wrote files outside its output folder"
    assert "hacked" not in result.stdout


def test_the_cases_point_at_lines_that_exist(tmp_path: Path) -> None:
    """Guards the table itself: every LineOf finds its text in the file the case writes."""
    for case in CASES:
        files = {SPEC: case.spec, **case.files} if case.spec is not None else dict(case.files)
        for item in case.expected:
            if isinstance(item, LineOf):
                content = files[item.file]
                content = content if isinstance(content, bytes) else content.encode("utf-8")
                assert item.text.encode("utf-8") in content, (case.id, item)


# ---- on_error: skip --------------------------------------------------------------------------------

def test_skip_bad_records(tmp_path: Path) -> None:
    rows = ["row_id,alcohol"] + [f"{i},{12 + i / 10:g}" for i in range(10)]
    rows[3 + 1] = "3,abc"  # line 5
    rows[7 + 1] = "7,"  # line 9: missing, no default
    write_files(tmp_path, {SPEC: GOOD_SPEC + "on_error: skip\n", CSV: "\n".join(rows) + "\n"})

    result = run_cli(*BUILD, cwd=tmp_path)

    assert_ok(result)
    assert re.search(r"\b2\b.*\bskipped\b|\bskipped\b.*\b2\b", result.stdout, re.IGNORECASE), show(result)
    dataset = tmp_path / "out" / "wines" / "1.0.0"
    info = json.loads((dataset / "tfrecord_builder.json").read_text(encoding="utf-8"))
    assert info["num_skipped"] == 2
    assert sum(split["num_examples"] for split in info["splits"].values()) == 8
    entries = [json.loads(line) for line in (dataset / "skipped.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(entries) == 2
    texts = [json.dumps(entry, ensure_ascii=False) for entry in entries]
    assert CSV in texts[0] and re.search(r"\bline 5\b", texts[0]) and "alcohol" in texts[0] and "abc" in texts[0], texts
    assert CSV in texts[1] and re.search(r"\bline 9\b", texts[1]) and "alcohol" in texts[1] and "missing" in texts[1], texts


# ---- --debug -----------------------------------------------------------------------------------------

BAD_DATA = "row_id,alcohol\n1,13.2\n2,abc\n"
MISSING_SOURCE = HEADER.replace(CSV, "missing.csv") + GOOD_FEATURES


@pytest.mark.parametrize("where", ["after-the-command", "before-the-command"])
def test_debug_shows_the_traceback(tmp_path: Path, where: str) -> None:
    write_files(tmp_path, {SPEC: GOOD_SPEC, CSV: BAD_DATA})
    argv = [*BUILD, "--debug"] if where == "after-the-command" else ["--debug", *BUILD]
    result = run_cli(*argv, cwd=tmp_path)
    assert result.returncode == 1, show(result)
    assert "Traceback" in result.stderr, show(result)
    assert "abc" in result.stderr.strip().splitlines()[-1], show(result)
    assert_no_dataset_info(tmp_path)


def test_debug_keeps_the_exit_status_of_a_spec_error(tmp_path: Path) -> None:
    write_files(tmp_path, {SPEC: MISSING_SOURCE})
    result = run_cli("validate", SPEC, "--debug", cwd=tmp_path)
    assert "Traceback" in result.stderr, show(result)
    assert "missing.csv" in result.stderr.strip().splitlines()[-1], show(result)
    assert result.returncode == 2, show(result)


def test_a_failed_build_leaves_an_existing_dataset_alone(tmp_path: Path) -> None:
    write_files(tmp_path, {SPEC: GOOD_SPEC, CSV: GOOD_CSV})
    assert_ok(run_cli(*BUILD, cwd=tmp_path))
    dataset = tmp_path / "out" / "wines" / "1.0.0"
    before = {path: path.read_bytes() for path in dataset.rglob("*") if path.is_file()}
    write_files(tmp_path, {CSV: BAD_DATA})
    result = run_cli(*BUILD, "--overwrite", cwd=tmp_path)
    assert_error(result, 1, [CSV, CSV_LINE("2,abc"), "alcohol", "abc"], tmp_path)
    assert {path: path.read_bytes() for path in dataset.rglob("*") if path.is_file()} == before
