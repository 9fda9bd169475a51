"""Spec loading: typed objects out, and errors that name the file, line, key path and expectation."""
from __future__ import annotations

import json

import pytest

import tfrecord_builder as tb
from tfrecord_builder.errors import SpecError
from tfrecord_builder.spec.schema import spec_schema

from conftest import ROOT, write_spec

BASE = """\
name: demo
source: {builder: csv, path: data.csv}
features:
  x: {dtype: float32}
"""


def load(tmp_path, text):
    return tb.load_spec(write_spec(tmp_path, text))


def test_defaults_and_resolution(tmp_path):
    spec = load(tmp_path, BASE)
    assert spec.version == "1.0.0" and spec.format == "example" and spec.splits == {"train": 1.0}
    assert spec.output.dir == "build" and spec.output.compression == "none" and spec.output.shuffle
    assert spec.input.batch_size == 32 and spec.on_error == "fail"
    assert spec.resolve(spec.source.path) == str(tmp_path / "data.csv")
    feature = spec.features["x"]
    assert (feature.name, feature.record_key, feature.source_name, feature.shape) == ("x", "x", "x", [])


ERRORS = [
    ("unknown key with a suggestion", BASE + "lable: x\n", 5, "lable: unknown key `lable` (did you mean `label`?)"),
    ("feature key typo", BASE.replace("{dtype: float32}", "{dtype: float32, shpe: [2]}"), 4,
     "features.x.shpe: unknown key `shpe` (did you mean `shape`?)"),
    ("bad dtype", BASE.replace("float32", "float31"), 4, "features.x.dtype: expected one of int64, float32"),
    ("duplicate key", BASE + "  x: {dtype: int64}\n", 5, "features.x: duplicate key (first given on line 4)"),
    ("bad name", BASE.replace("name: demo", "name: 3demo"), 1, "name: expected an identifier"),
    ("feature name", BASE.replace("  x:", "  x-y:"), 4, "features.x-y: a feature name must be a Python identifier"),
    ("splits sum", BASE + "splits: {train: 0.5, test: 0.4}\n", 5, "splits: split fractions must sum to 1, received 0.9"),
    ("splits mixed", BASE + "splits: {train: 0.5, test: {path: t.csv}}\n", 5, "give every split a fraction"),
    ("label", BASE + "label: y\n", 5, "label: expected the name of a feature (x), received 'y'"),
    ("null dimension", BASE.replace("{dtype: float32}", "{dtype: float32, shape: [2, null]}"), 4,
     "features.x.shape[1]: only the first dimension may be variable"),
    ("zero dimension", BASE.replace("{dtype: float32}", "{dtype: float32, shape: [0]}"), 4,
     "features.x.shape[0]: expected a positive dimension, received 0"),
    ("shards and size", BASE + "output: {shards: 2, shard_size: 1MiB}\n", 5, "output: give `shards` or `shard_size`, not both"),
    ("shard size", BASE + "output: {shard_size: lots}\n", 5, "output.shard_size: expected a positive size"),
    ("compression", BASE + "output: {compression: lz4}\n", 5, "output.compression: expected one of none, gzip, zlib"),
    ("class label", BASE.replace("{dtype: float32}", "{type: class_label}"), 4,
     "features.x: a class_label needs one of `names`, `names_file` or `num_classes`"),
    ("class label twice", BASE.replace("{dtype: float32}", "{type: class_label, names: [a], num_classes: 1}"), 4,
     "features.x: give one of `names`, `names_file` or `num_classes`, not names and num_classes"),
    ("duplicate class", BASE.replace("{dtype: float32}", "{type: class_label, names: [a, b, a]}"), 4,
     "features.x.names: duplicate class names: a"),
    ("bad default", BASE.replace("{dtype: float32}", "{dtype: float32, shape: [3], default: [1, 2]}"), 4,
     "features.x.default: invalid default: expected shape [3], received shape [2]"),
    ("unknown type", BASE.replace("{dtype: float32}", "{type: tensr, dtype: float32}"), 4,
     "features.x.type: unknown type 'tensr' (did you mean `tensor`?)"),
    ("unknown builder", BASE.replace("builder: csv", "builder: cvs"), 2,
     "source.builder: unknown builder 'cvs' (did you mean `csv`?)"),
    ("python tag", BASE + "description: !!python/object/apply:os.system ['echo hacked']\n", 5,
     "description: unsupported YAML tag"),
    ("mapping tag", BASE + "output: !!python/object:os.system {dir: x}\n", 5, "unsupported YAML tag"),
    ("malformed", BASE.replace("{dtype: float32}", "{dtype: float32"), 4, "malformed YAML"),
    ("wrong type", BASE + "output: {shards: many}\n", 5, "output.shards: expected an integer, received 'many'"),
    ("nan not for ints", BASE.replace("{dtype: float32}", "{dtype: int64, allow_nan: true}"), 4,
     "features.x.allow_nan: only float dtypes can hold NaN"),
    ("version path", BASE + "version: ../../etc\n", 5, "version: expected a version such as 1.0.0"),
    ("resize without a size", BASE.replace("{dtype: float32}", "{type: image, channels: 3, resize: pad}"), 4,
     "features.x.resize: `resize: pad` needs a fixed height and width"),
    ("alias cycle", BASE.replace("features:\n  x: {dtype: float32}", "features: &f {x: {dtype: float32}, y: *f}"), 3,
     "features.y: a YAML alias refers to a value that contains it (a cycle)"),
    ("list cycle", BASE + "description: &l [1, *l]\n", 5, "description[1]: a YAML alias refers to a value that contains it"),
    ("split column and a path per split",
     BASE.replace("path: data.csv}", "path: data.csv, split_column: part}") + "splits:\n  train: {path: a.csv}\n  test: {}\n",
     6, "splits.train.path: with source.split_column the rows choose their split from one source"),
    ("no features", BASE.split("features:")[0] + "features: {}\n", 3, "features: expected at least one feature"),
    ("stratify by no feature", BASE + "  y: {type: class_label, names: [a, b]}\nsplits: {train: 0.8, test: 0.2}\n" + "stratify: z\n", 7,
     "stratify: expected the name of a class_label feature (y), received 'z'"),
    ("stratify by a tensor", BASE + "  y: {type: class_label, names: [a, b]}\nsplits: {train: 0.8, test: 0.2}\n" + "stratify: x\n", 7,
     "stratify: expected the name of a class_label feature (y), received 'x', a tensor feature"),
    ("stratify without class labels", BASE + "stratify: x\n", 5,
     "stratify: expected the name of a class_label feature (the spec has none), received 'x', a tensor feature"),
    ("stratify by a multi-label", BASE + "  y: {type: class_label, names: [a, b], shape: [2]}\nstratify: y\n", 6,
     "stratify: expected a class_label of one class per record (shape []), received `y` of shape [2]"),
    ("stratify splits with sources", BASE + "  y: {type: class_label, names: [a, b]}\n"
     "splits: {train: {path: a.csv}, test: {path: b.csv}}\nstratify: y\n", 7,
     "stratify: stratify divides splits given by fraction (e.g. {train: 0.8, test: 0.2}); here each split has a "
     "source of its own"),
    ("stratify a split column", BASE.replace("path: data.csv}", "path: data.csv, split_column: part}")
     + "  y: {type: class_label, names: [a, b]}\nsplits: {train: {}, test: {}}\nstratify: y\n", 7,
     "stratify: stratify divides splits given by fraction (e.g. {train: 0.8, test: 0.2}); here source.split_column "
     "names each row's split"),
    ("same record key", BASE + "  y: {dtype: float32, key: x}\n", 5, "record key 'x' is already used by feature `x`"),
    ("columns and source", BASE.replace("{dtype: float32}", "{dtype: float32, source: a, columns: [a, b]}"), 4,
     "features.x: give `columns` (several columns gathered into one feature) or `source` (one column), not both"),
    ("columns against shape", BASE.replace("{dtype: float32}", "{dtype: float32, columns: [a, b, c], shape: [2]}"),
     4, "features.x.shape: shape [2] doesn't match the 3 columns gathered; omit `shape` (it becomes [3]) or give [3]"),
    ("pattern against a variable shape", BASE.replace("{dtype: float32}", "{dtype: float32, columns: 'g_*', shape: [null]}"),
     4, "features.x.shape: columns gathered into one feature make a fixed shape [n]; omit `shape`, received [None]"),
    ("a column twice", BASE.replace("{dtype: float32}", "{dtype: float32, columns: [a, b, a]}"), 4,
     "features.x.columns[2]: column `a` is listed twice"),
    ("no columns", BASE.replace("{dtype: float32}", "{dtype: float32, columns: []}"), 4,
     "features.x.columns: expected at least one column name"),
    ("columns of an image", BASE.replace("{dtype: float32}", "{type: image, columns: [a, b]}"), 4,
     "features.x.columns: a feature of type image reads one column (`source:`); `columns:` gathers several into a "
     "tensor feature"),
    ("columns of a number", BASE.replace("{dtype: float32}", "{dtype: float32, columns: 3}"), 4,
     "features.x.columns: expected a list of column names, e.g. [xmin, ymin, xmax, ymax], or a pattern such as "
     "\"gene_*\", received 3"),
    ("a column not named", BASE.replace("{dtype: float32}", "{dtype: float32, columns: [a, 3]}"), 4,
     "features.x.columns: expected a list of column names"),
    ("a bad default of columns", BASE.replace("{dtype: float32}", "{dtype: float32, columns: [a, b], default: x}"),
     4, "features.x.default: invalid default: expected a number (float32), received 'x'"),
]


@pytest.mark.parametrize("case, text, line, message", ERRORS, ids=[case[0] for case in ERRORS])
def test_errors_name_file_line_and_key(tmp_path, case, text, line, message):
    with pytest.raises(SpecError) as error:
        load(tmp_path, text)
    text = str(error.value)
    assert text.startswith(f"{tmp_path / 'spec.yaml'}, line {line}: "), text
    assert message in text
    assert "\n" not in text


def test_top_level_must_be_a_mapping(tmp_path):
    with pytest.raises(SpecError, match=r"line 1: expected a mapping of spec keys .* received an empty file"):
        load(tmp_path, "")
    with pytest.raises(SpecError, match="received a list"):
        load(tmp_path, "- a\n- b\n")


def test_alias_bombs_are_refused(tmp_path):
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefg":
        previous = chr(ord(level) - 1)
        text += f"{level}: &{level} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"
    with pytest.raises(SpecError, match="expands to over"):
        load(tmp_path, text)
    # sized before any value is converted: the size is said, not the tag of the first value
    with pytest.raises(SpecError, match="expands to over"):
        load(tmp_path, "first: !!python/name:os.system x\n" + text)
    for level in "hijklm":  # 10^13 values: refused from its 13 lists
        previous = chr(ord(level) - 1)
        text += f"{level}: &{level} [{', '.join([f'*{previous}'] * 10)}]\n"
    with pytest.raises(SpecError, match=r"spec\.yaml: the spec expands to over 200000 values \(aliases\?\); expected a small spec"):
        load(tmp_path, text)


def test_an_anchor_used_many_times_is_counted_as_often_as_it_is_used(tmp_path):
    """Aliases are sized as they expand: 100 features of one anchored mapping load; the same
    anchor 200 times over (1,001 values each) is over the limit."""
    base = "features:\n  f0: &f {dtype: float32, shape: [2]}\n"
    spec = load(tmp_path, BASE.replace("features:\n", base + "".join(f"  f{n}: *f\n" for n in range(1, 100)), 1))
    assert len(spec.features) == 101 and spec.features["f99"].shape == [2]
    with pytest.raises(SpecError, match="expands to over 200000 values"):
        load(tmp_path, f"a: &a [{', '.join(['x'] * 1000)}]\nb: [{', '.join(['*a'] * 200)}]\n")


def test_class_names_from_a_file_are_inlined(tmp_path):
    (tmp_path / "classes.txt").write_text("cat\ndog\n\nbird\n")
    spec = load(tmp_path, BASE.replace("{dtype: float32}", "{type: class_label, names_file: classes.txt}"))
    assert spec.features["x"].names == ["cat", "dog", "bird"]
    assert spec.to_dict()["features"]["x"]["names"] == ["cat", "dog", "bird"]


def test_the_normalised_spec_loads_back_the_same(tmp_path):
    spec = tb.load_spec(ROOT / "specs" / "wine.yaml")
    again = tb.spec.load.spec_from_dict(json.loads(json.dumps(spec.to_dict())), spec.file)
    assert again.to_dict() == spec.to_dict()


def test_columns_give_a_fixed_shape_and_load_back_the_same(tmp_path):
    spec = load(tmp_path, BASE.replace("{dtype: float32}", "{dtype: float32, columns: [b, a, c], default: 0}"))
    feature = spec.features["x"]
    assert (feature.columns, feature.shape, feature.source_names) == (["b", "a", "c"], [3], ["b", "a", "c"])
    assert spec.reading()["features"]["x"]["parse"] == {"x": ("fixed", "float32", [3])}
    # the normalised spec (what a build records) holds the list and the shape
    again = tb.spec.load.spec_from_dict(json.loads(json.dumps(spec.to_dict())), spec.file)
    assert again.to_dict() == spec.to_dict() and again.features["x"].default == 0
    pattern = load(tmp_path, BASE.replace("{dtype: float32}", "{dtype: float32, columns: 'g_*'}")).features["x"]
    assert (pattern.columns, pattern.shape) == ("g_*", [])  # matched when the source's header is read


def test_columns_are_refused_in_a_long_table(tmp_path):
    text = ("name: demo\nformat: sequence_example\nsource: {builder: csv, path: d.csv, group_by: id, order_by: t}\n"
            "context:\n  c: {dtype: float32, columns: [a, b]}\nsequence:\n  s: {dtype: float32}\n")
    with pytest.raises(SpecError, match=r"line 5: context.c.columns: a long table \(group_by\) gives each feature one "
                                        r"column; `columns:` gathers several columns of one row"):
        load(tmp_path, text)


def test_columns_are_refused_per_step(tmp_path):
    text = ("name: demo\nformat: sequence_example\nsource: {builder: sequence_jsonl, path: d.jsonl}\n"
            "sequence:\n  s: {dtype: float32, columns: [a, b]}\n")
    with pytest.raises(SpecError, match=r"line 5: sequence.s.columns: `columns:` gathers a record's columns into "
                                        r"one tensor; a per-step feature reads one column per step"):
        load(tmp_path, text)


def test_the_committed_json_schema_is_current():
    committed = json.loads((ROOT / "schema" / "spec.schema.json").read_text())
    assert committed == json.loads(json.dumps(spec_schema())), "run `make schema` and commit the result"


def test_the_example_specs_pass_the_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    schema = spec_schema()
    for path in sorted((ROOT / "specs").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)


@pytest.mark.parametrize("written", ["1.10", "2", "1.0", "3.0.1"])
def test_a_version_is_kept_as_written(tmp_path, written):
    """YAML would read `version: 1.10` as the number 1.1 (and build into the wrong folder)."""
    path = tmp_path / "spec.yaml"
    path.write_text(BASE + f"version: {written}\n")
    assert tb.load_spec(path).version == written
