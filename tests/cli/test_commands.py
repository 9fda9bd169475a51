"""The command line's happy paths: every command run for real in a subprocess, exit status 0.

What is checked is the user-facing contract docs/ describes: the on-disk layout
(DIR/NAME/VERSION, shard names, dataset_info.json with counts and sha256, NAME_input.py), the
summary, --overwrite / --resume, --module, generate, validate, inspect, --version, --help and
compression.
"""
from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from support.cli import (CONSOLE_SCRIPT, SHARD_NAME, assert_error, assert_ok, count_records, run_cli,
                         sha256, show, snapshot, write_files)

REPO = Path(__file__).resolve().parents[2]
WINE_SPEC = REPO / "specs" / "wine.yaml"
WINE_CSV = REPO / "data" / "wine.csv"

# A small table that uses each kind of feature: scalars, a fixed shape, a variable-length list
# (empty in some rows) and a class label. `row_id` is unique, to find decoded examples again.
TOY_SPEC = """\
name: toy
version: 2.1.0
description: toy rows for the command-line tests
source:
  builder: csv
  path: rows.csv
splits:
  train: 0.7
  test: 0.3
features:
  row_id: {dtype: int64}
  weight: {dtype: float32}
  scores: {dtype: float32, shape: [3]}
  tags:   {dtype: string, shape: [null]}
  kind:   {type: class_label, names: [cat, dog, bird]}
label: kind
output:
  shards: 2
  seed: 7
"""
KINDS = ["cat", "dog", "bird"]
NUM_ROWS = 30
FEATURES = ["row_id", "weight", "scores", "tags", "kind"]


def toy_rows() -> list[dict[str, str]]:
    rows = []
    for i in range(NUM_ROWS):
        rows.append({
            "row_id": str(1000 + i),
            "weight": f"{i / 10:g}",  # 0.1, 0.3, ...: not exact in binary, printed back as written
            "scores": f"{i} {i + 0.5} {-i * 1.25:g}",
            "tags": " ".join(f"t{i}_{j}" for j in range(i % 3)),  # 0, 1 or 2 tags; empty cell = no tags
            "kind": KINDS[i % 3],
        })
    return rows


def toy_csv(rows: list[dict[str, str]]) -> str:
    return "row_id,weight,scores,tags,kind\n" + "".join(
        f"{r['row_id']},{r['weight']},{r['scores']},{r['tags']},{r['kind']}\n" for r in rows)


def write_toy(folder: Path, spec: str = TOY_SPEC) -> Path:
    write_files(folder, {"toy.yaml": spec, "rows.csv": toy_csv(toy_rows())})
    return folder / "toy.yaml"


def load_info(dataset: Path) -> dict:
    return json.loads((dataset / "tfrecord_builder.json").read_text(encoding="utf-8"))


def visible_files(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir() if not path.name.startswith(".")}


@pytest.fixture(scope="module")
def built_toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy dataset, built once per module for the tests that only read it."""
    folder = tmp_path_factory.mktemp("toy")
    write_toy(folder)
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", cwd=folder))
    return folder / "out" / "toy" / "2.1.0"


# ---- build ------------------------------------------------------------------------------------

def test_build_writes_the_dataset_layout_info_and_module(tmp_path: Path) -> None:
    result = run_cli("build", WINE_SPEC, "--output", tmp_path / "out", cwd=tmp_path)
    assert_ok(result)
    dataset = tmp_path / "out" / "wine" / "1.0.0"
    assert dataset.is_dir(), show(result)
    info = load_info(dataset)

    shards = {name for name in visible_files(dataset) if SHARD_NAME.fullmatch(name)}
    # ours, what TensorFlow Datasets reads (its info, features, class names), the index files' folder,
    # the split membership's
    assert visible_files(dataset) == shards | {"tfrecord_builder.json", "dataset_info.json", "features.json",
                                               "cultivar.labels.txt", "index", "splits", "wine_input.py"}
    assert sorted(os.listdir(dataset / "splits")) == ["wine-test.keys", "wine-train.keys"]
    indexes = {f"index/{name.replace('.tfrecord-', '-')}.idx" for name in shards}
    assert {f"index/{name}" for name in os.listdir(dataset / "index")} == indexes
    assert {shard["index"]["file"] for split in info["splits"].values() for shard in split["shards"]} == indexes
    assert set(info["splits"]) == {"train", "test"}
    for split, split_info in info["splits"].items():
        count = split_info["num_shards"]
        expected = [f"wine-{split}.tfrecord-{index:05d}-of-{count:05d}" for index in range(count)]
        assert [shard["file"] for shard in split_info["shards"]] == expected
        assert count == 2  # output.shards in specs/wine.yaml
        for shard in split_info["shards"]:
            path = dataset / shard["file"]
            assert path.name in shards
            assert shard["sha256"] == sha256(path)
            assert shard["num_examples"] == count_records(path)
            assert shard["num_bytes"] == path.stat().st_size
        assert split_info["num_examples"] == sum(shard["num_examples"] for shard in split_info["shards"])
        assert split_info["num_bytes"] == sum(shard["num_bytes"] for shard in split_info["shards"])
    assert shards == {shard["file"] for split in info["splits"].values() for shard in split["shards"]}

    with open(WINE_CSV, newline="", encoding="utf-8") as file:
        num_rows = sum(1 for _ in csv.DictReader(file))
    assert sum(split["num_examples"] for split in info["splits"].values()) == num_rows == 178
    assert info["num_skipped"] == 0

    module = (dataset / "wine_input.py").read_text(encoding="utf-8")
    compile(module, "wine_input.py", "exec")
    assert "import tensorflow" in module
    for split in info["splits"]:
        assert re.search(rf"^\s*{split}\b", result.stdout, re.MULTILINE), show(result)
    assert "\r" not in result.stdout and "\r" not in result.stderr, show(result)


def test_build_without_output_uses_output_dir_relative_to_the_spec(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_toy(project, TOY_SPEC.replace("output:\n", "output:\n  dir: built\n"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert_ok(run_cli("build", project / "toy.yaml", cwd=elsewhere))
    assert (project / "built" / "toy" / "2.1.0" / "dataset_info.json").is_file()
    assert not any(elsewhere.iterdir())


def test_summary_names_every_split_with_its_count(tmp_path: Path) -> None:
    write_toy(tmp_path)
    result = run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path)
    assert_ok(result)
    info = load_info(tmp_path / "out" / "toy" / "2.1.0")
    assert sum(split["num_examples"] for split in info["splits"].values()) == NUM_ROWS
    for split, split_info in info["splits"].items():
        line = next((line for line in result.stdout.splitlines() if re.match(rf"\s*{split}\b", line)), None)
        assert line is not None, show(result)
        assert re.search(rf"\b{split_info['num_examples']}\b", line), show(result)
    assert "\r" not in result.stdout and "\r" not in result.stderr, show(result)


def test_a_split_left_empty_by_its_fraction_is_warned_about(tmp_path: Path) -> None:
    (tmp_path / "one.csv").write_text("x\n1\n")
    (tmp_path / "one.yaml").write_text("name: one\nsource: {builder: csv, path: one.csv}\n"
                                       "splits: {train: 0.5, test: 0.5}\nfeatures: {x: {dtype: int64}}\n")
    result = run_cli("build", "one.yaml", "--output", "out", cwd=tmp_path)
    assert result.returncode == 0, show(result)
    info = load_info(tmp_path / "out" / "one" / "1.0.0")
    (empty,) = [name for name, split in info["splits"].items() if not split["num_examples"]]
    assert result.stderr == f"warning: split {empty} has no examples\n", show(result)


def test_repeated_rows_that_skew_the_splits_are_warned_about(tmp_path: Path) -> None:
    (tmp_path / "few.csv").write_text("x\n" + "".join(f"{index % 6}\n" for index in range(600)))
    (tmp_path / "few.yaml").write_text("name: few\nsource: {builder: csv, path: few.csv}\n"
                                       "splits: {train: 0.8, test: 0.2}\nfeatures: {x: {dtype: int64}}\n")
    result = run_cli("build", "few.yaml", "--output", "out", cwd=tmp_path)
    assert result.returncode == 0, show(result)
    info = load_info(tmp_path / "out" / "few" / "1.0.0")
    made = {name: split["num_examples"] / 600 for name, split in info["splits"].items()}
    warning = [line for line in result.stderr.splitlines() if "far from" in line]
    assert warning == [f"warning: the splits came out train {made['train']:.2f}, test {made['test']:.2f}, far from "
                       "the 0.8, 0.2 asked: rows with the same key go to the same split, and the 600 records have "
                       "only 6 different keys (a row's key is the whole row); give `source.key`, a column that "
                       "identifies each record, if equal rows are different records"], show(result)


def test_resume_refuses_a_dataset_built_from_another_spec(tmp_path: Path) -> None:
    write_toy(tmp_path)
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path))
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", "--resume", cwd=tmp_path))  # the same: nothing to do
    spec = tmp_path / "toy.yaml"
    spec.write_text(spec.read_text() + "on_error: skip\n")
    result = run_cli("build", "toy.yaml", "--output", "out", "--resume", cwd=tmp_path)
    assert_error(result, 2, ["out/toy/2.1.0", "different spec", "--overwrite"], tmp_path)


def test_generate_fills_class_names_the_source_defines(tmp_path: Path) -> None:
    result = run_cli("generate", REPO / "specs" / "digits.yaml", cwd=tmp_path)
    assert_ok(result)
    assert "CLASS_NAMES = {'label': ('0', '1', '2', '3', '4', '5', '6', '7', '8', '9')}" in result.stdout


def test_building_again_needs_overwrite(tmp_path: Path) -> None:
    write_toy(tmp_path)
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path))
    dataset = tmp_path / "out" / "toy" / "2.1.0"
    before = snapshot(dataset)

    again = run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path)
    assert_error(again, 2, ["--overwrite", str(Path("out") / "toy" / "2.1.0")])
    assert snapshot(dataset) == before

    replaced = run_cli("build", "toy.yaml", "--output", "out", "--overwrite", cwd=tmp_path)
    assert_ok(replaced)
    info = load_info(dataset)
    assert sum(split["num_examples"] for split in info["splits"].values()) == NUM_ROWS
    for split in info["splits"].values():
        for shard in split["shards"]:
            assert shard["sha256"] == sha256(dataset / shard["file"])


def test_resume_on_a_finished_dataset_changes_nothing(tmp_path: Path) -> None:
    write_toy(tmp_path)
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path))
    dataset = tmp_path / "out" / "toy" / "2.1.0"
    before = snapshot(dataset)
    result = run_cli("build", "toy.yaml", "--output", "out", "--resume", cwd=tmp_path)
    assert_ok(result)
    assert snapshot(dataset) == before


def test_resume_finishes_an_unfinished_dataset(tmp_path: Path) -> None:
    write_toy(tmp_path)
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path))
    dataset = tmp_path / "out" / "toy" / "2.1.0"
    (dataset / "dataset_info.json").unlink()  # as if the build had stopped before its last step

    refused = run_cli("inspect", dataset, cwd=tmp_path)
    assert_error(refused, 1, ["dataset_info.json"])

    assert_ok(run_cli("build", "toy.yaml", "--output", "out", "--resume", cwd=tmp_path))
    info = load_info(dataset)
    assert sum(split["num_examples"] for split in info["splits"].values()) == NUM_ROWS
    for split in info["splits"].values():
        for shard in split["shards"]:
            assert shard["sha256"] == sha256(dataset / shard["file"])


@pytest.mark.parametrize("how", ["--module", "output.module"])
def test_module_copy_is_byte_identical(tmp_path: Path, how: str) -> None:
    if how == "--module":
        write_toy(tmp_path)
        result = run_cli("build", "toy.yaml", "--output", "out", "--module", "train/toy_input.py", cwd=tmp_path)
    else:
        write_toy(tmp_path, TOY_SPEC.replace("output:\n", "output:\n  module: train/toy_input.py\n"))
        elsewhere = tmp_path / "elsewhere"  # output.module is relative to the spec file, not the cwd
        elsewhere.mkdir()
        result = run_cli("build", tmp_path / "toy.yaml", "--output", tmp_path / "out", cwd=elsewhere)
    assert_ok(result)
    copy = tmp_path / "train" / "toy_input.py"
    original = tmp_path / "out" / "toy" / "2.1.0" / "toy_input.py"
    assert copy.is_file(), show(result)
    assert copy.read_bytes() == original.read_bytes()


# ---- generate, validate ------------------------------------------------------------------------

def test_generate_prints_the_module(tmp_path: Path) -> None:
    write_toy(tmp_path)
    result = run_cli("generate", "toy.yaml", cwd=tmp_path)
    assert_ok(result)
    text = result.stdout
    assert text.startswith('"""'), show(result)
    docstring = text[3:text.index('"""', 3)]
    assert re.search(r"\btoy\b", docstring), docstring
    code = compile(text, "toy_input.py", "exec")
    assert {"FEATURES", "parse_batch", "input_fn"} <= set(code.co_names)
    assert result.stderr == ""


def test_generate_writes_the_module_to_a_file(tmp_path: Path) -> None:
    write_toy(tmp_path)
    printed = run_cli("generate", "toy.yaml", cwd=tmp_path)
    assert_ok(printed)
    result = run_cli("generate", "toy.yaml", "-o", "gen/toy_input.py", cwd=tmp_path)
    assert_ok(result)
    written = tmp_path / "gen" / "toy_input.py"
    assert written.is_file(), show(result)
    assert written.read_text(encoding="utf-8") == printed.stdout
    compile(written.read_text(encoding="utf-8"), str(written), "exec")


def test_validate_says_ok(tmp_path: Path) -> None:
    write_toy(tmp_path)
    result = run_cli("validate", "toy.yaml", cwd=tmp_path)
    assert_ok(result)
    assert any(re.search(r"\bok\b", line) for line in result.stdout.splitlines()), show(result)
    assert result.stderr == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["rows.csv", "toy.yaml"]  # wrote nothing


# ---- inspect -----------------------------------------------------------------------------------

def test_inspect_lists_features_and_splits(built_toy: Path) -> None:
    result = run_cli("inspect", built_toy, cwd=built_toy.parent)
    assert_ok(result)
    info = load_info(built_toy)
    for feature in FEATURES:
        assert re.search(rf"^\s*{feature}\b", result.stdout, re.MULTILINE), show(result)
    for split, split_info in info["splits"].items():
        line = next((line for line in result.stdout.splitlines() if re.match(rf"\s*{split}\b", line)), None)
        assert line is not None, show(result)
        assert re.search(rf"\b{split_info['num_examples']}\b", line), show(result)


def test_inspect_show_decodes_examples_equal_to_the_source_rows(built_toy: Path) -> None:
    result = run_cli("inspect", built_toy, "--show", "2", cwd=built_toy.parent)
    assert_ok(result)
    shown = []
    for line in result.stdout.splitlines():
        if "{" in line:
            try:
                value = json.loads(line[line.index("{"):])
            except ValueError:
                continue
            if isinstance(value, dict) and "row_id" in value:
                shown.append(value)
    assert len(shown) == 2, show(result)
    rows = {int(row["row_id"]): row for row in toy_rows()}
    seen = set()
    for example in shown:
        row = rows[example["row_id"]]
        assert set(example) == set(FEATURES)
        assert np.float32(example["weight"]) == np.float32(row["weight"])
        assert [np.float32(v) for v in example["scores"]] == [np.float32(v) for v in row["scores"].split()]
        assert example["tags"] == row["tags"].split()
        assert example["kind"] == f"{KINDS.index(row['kind'])} ({row['kind']})"  # the index and its name
        seen.add(example["row_id"])
    assert len(seen) == 2


FLOATS_SPEC = """\
name: floats
format: sequence_example
source: {builder: sequence_jsonl, path: rows.jsonl}
splits: {train: 1.0}
context:
  x: {dtype: float32}
  v: {dtype: float32, shape: [2]}
  half: {dtype: float16}
sequence:
  seq: {dtype: float32}
"""


def test_inspect_show_gives_float32_values_their_shortest_text_in_scalars_lists_and_sequences(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"x": 0.1, "v": [0.3, 2.5], "half": 0.1, "seq": [0.2, 1e-8, 3.14159]}\n')
    (tmp_path / "floats.yaml").write_text(FLOATS_SPEC)
    assert_ok(run_cli("build", "floats.yaml", "--output", "out", cwd=tmp_path))
    dataset = tmp_path / "out" / "floats" / "1.0.0"
    result = run_cli("inspect", dataset, "--show", "1", cwd=tmp_path)
    assert_ok(result)
    assert ('example 0: {"x": 0.1, "v": [0.3, 2.5], "half": 0.1, "seq": [0.2, 1e-08, 3.14159], '
            '"sequence_length": 3}') in result.stdout.splitlines(), show(result)
    (shard,) = load_info(dataset)["splits"]["train"]["shards"]
    result = run_cli("inspect", dataset / shard["file"], "--show", "1", cwd=tmp_path)
    assert_ok(result)  # a shard's float lists are float32s (a float16 is stored as one)
    assert ('record 0: {"half": [0.099975586], "v": [0.3, 2.5], "x": [0.1], "seq": [[0.2], [1e-08], '
            '[3.14159]]}') in result.stdout.splitlines(), show(result)


def test_inspect_split_shows_that_splits_statistics(built_toy: Path) -> None:
    info = load_info(built_toy)
    for split in ("train", "test"):
        result = run_cli("inspect", built_toy, "--split", split, cwd=built_toy.parent)
        assert_ok(result)
        assert f"statistics ({split}):" in result.stdout, show(result)
        classes = info["statistics"][split]["kind"]["classes"]  # those present, most frequent first
        present = sorted((item for item in classes.items() if item[1]), key=lambda item: -item[1])
        counts = ", ".join(f"{name} {count}" for name, count in present)
        absent = f" ({len(classes) - len(present)} of {len(classes)} classes have none)" if len(present) < len(classes) else ""
        assert f"kind: classes {counts}{absent}" in result.stdout, show(result)
    assert "statistics (train) (--split S for another):" in run_cli("inspect", built_toy, cwd=built_toy.parent).stdout


def test_inspect_a_shard_file_counts_its_records(built_toy: Path) -> None:
    info = load_info(built_toy)
    for split in info["splits"].values():
        for shard in split["shards"]:
            result = run_cli("inspect", built_toy / shard["file"], cwd=built_toy.parent)
            assert_ok(result)
            match = re.search(r"(\d[\d,]*) records", result.stdout)
            assert match, show(result)
            assert int(match.group(1).replace(",", "")) == shard["num_examples"] == count_records(built_toy / shard["file"])
            for key in FEATURES:
                assert re.search(rf"^\s*{key}\b", result.stdout, re.MULTILINE), show(result)


# ---- version, console script, help ---------------------------------------------------------------

def test_version_from_module_and_console_script(tmp_path: Path) -> None:
    version = importlib.metadata.version("tfrecord-builder")
    assert CONSOLE_SCRIPT.is_file()
    by_module = run_cli("--version", cwd=tmp_path)
    by_script = run_cli("--version", cwd=tmp_path, script=True)
    for result in (by_module, by_script):
        assert_ok(result)
        assert re.search(rf"(^|\s){re.escape(version)}\s*$", result.stdout), show(result)
    assert by_module.stdout == by_script.stdout


def test_console_script_runs_a_command(tmp_path: Path) -> None:
    write_toy(tmp_path)
    result = run_cli("validate", "toy.yaml", cwd=tmp_path, script=True)
    assert_ok(result)
    assert re.search(r"\bok\b", result.stdout), show(result)


COMMANDS = ["build", "generate", "validate", "inspect", "verify", "infer", "report", "diff"]  # the table of docs/cli.md


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command(tmp_path: Path, command: str) -> None:
    result = run_cli(command, "--help", cwd=tmp_path)
    assert_ok(result)
    assert "usage" in result.stdout.lower() and command in result.stdout, show(result)


def test_top_level_help_lists_every_command(tmp_path: Path) -> None:
    for script in (False, True):
        result = run_cli("--help", cwd=tmp_path, script=script)
        assert_ok(result)
        for command in COMMANDS:
            assert re.search(rf"\b{command}\b", result.stdout), f"{command} missing{show(result)}"


# ---- compression -------------------------------------------------------------------------------

@pytest.mark.parametrize("compression, suffix", [("gzip", ".gz"), ("zlib", ".deflate")])
def test_compressed_shards(tmp_path: Path, compression: str, suffix: str) -> None:
    write_toy(tmp_path, TOY_SPEC.replace("output:\n", f"output:\n  compression: {compression}\n"))
    assert_ok(run_cli("build", "toy.yaml", "--output", "out", cwd=tmp_path))
    dataset = tmp_path / "out" / "toy" / "2.1.0"
    info = load_info(dataset)
    assert info["compression"] == compression
    metadata = ("tfrecord_builder.json", "dataset_info.json", "features.json", "toy_input.py", "splits")
    names = {name for name in visible_files(dataset) if name not in metadata and not name.endswith(".labels.txt")}
    assert names and all(name.endswith(suffix) and SHARD_NAME.fullmatch(name) for name in names), names
    total = 0
    for split in info["splits"].values():
        for shard in split["shards"]:
            path = dataset / shard["file"]
            assert path.name in names
            assert shard["sha256"] == sha256(path)
            assert count_records(path) == shard["num_examples"]  # decompresses with gzip / zlib
            total += shard["num_examples"]
            result = run_cli("inspect", path, cwd=tmp_path)
            assert_ok(result)
            assert re.search(rf"\b{shard['num_examples']} records", result.stdout), show(result)
    assert total == NUM_ROWS


def test_inspect_names_the_shard_and_record_of_a_malformed_record_and_shows_an_empty_feature(tmp_path: Path) -> None:
    """One wire decoder for every reader: an empty Feature is a list of no kind (`-`, the other
    records' kind where they have one); a varint where a message belongs is refused, naming where."""
    from tfrecord_builder.codec.bytecolumn import ByteColumn
    from tfrecord_builder.codec.tfrecord import frame
    from tfrecord_builder.codec.wire import varint

    def field(number: int, content: bytes) -> bytes:
        return varint(number << 3 | 2) + varint(len(content)) + content

    def example(features: dict[str, bytes]) -> bytes:
        return field(1, b"".join(field(1, field(1, key.encode()) + field(2, value)) for key, value in features.items()))

    good = [example({"x": field(3, b"\x08\x05"), "e": b""}), example({"x": b"", "e": b""})]
    path = tmp_path / "lone.tfrecord"
    path.write_bytes(frame(ByteColumn.from_rows(good)))
    result = run_cli("inspect", path, cwd=tmp_path)
    assert_ok(result)
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()[1:] if line.split()[:1] in (["x"], ["e"])}
    assert rows == {"e": ["-", "0"], "x": ["int64", "0-1"]}, show(result)
    path.write_bytes(frame(ByteColumn.from_rows([*good, example({"x": b"\x18\x05"})])))
    line = assert_error(run_cli("inspect", path, cwd=tmp_path), 1)
    assert line == ("error: lone.tfrecord: record 2: not a valid tf.train.Example or SequenceExample: field 3 of a "
                    "Feature has wire type 0 (varint), where a length-delimited field belongs"), line
