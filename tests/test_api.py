"""The public Python API: its surface, and the reading paths agreeing batch for batch."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

import tfrecord_builder as tb

from conftest import ROOT, batches_as_numpy, import_module


def test_the_public_surface_is_pinned():
    assert sorted(tb.__all__) == sorted([
        "Builder", "BuildWarning", "DataError", "Dataset", "DatasetError", "DatasetInfo", "EncodeContext", "Feature", "SpecError",
        "Spec", "TensorFeature", "TFRecordBuilderError", "UsageError", "__version__", "build", "generate_module",
        "input_fn", "load", "load_spec", "read", "register_feature", "spec_field", "infer", "diff", "report",
        "dry_run",
    ])
    for name in tb.__all__:
        assert getattr(tb, name) is not None


def test_every_public_name_has_a_docstring_with_an_example():
    for name in tb.__all__:
        if name == "__version__":
            continue
        doc = getattr(tb, name).__doc__ or ""
        assert ">>>" in doc, f"tb.{name} needs a docstring with an example"


def _build_reference(tmp_path):
    rows = []
    for index in range(40):
        rows.append({
            "id": index, "raw_score": index / 4, "scores": [index, 0.5, -1], "grid": [[1, 2], [3, index % 256]],
            "flag": index % 3 == 0, "tags": ["t"] * (index % 3), "boxes": [[0.0, 0.5, 1.0, index]] * (index % 2),
            "caption": f"caption {index}", "grade": ["low", "mid'dle", "high"][index % 3],
        })
    folder = tmp_path / "src"
    shutil.copytree(ROOT / "tests" / "golden", folder)
    (folder / "reference.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tb.build(folder / "reference.yaml", output=tmp_path / "out"), rows


def _build_tagging(tmp_path):
    """The golden SequenceExample spec, built from generated sequences of 1-60 steps."""
    folder = tmp_path / "src"
    shutil.copytree(ROOT / "tests" / "golden", folder)
    rng = np.random.default_rng(5)
    for split, count in (("train", 70), ("test", 20)):
        lines = []
        for index in range(count):
            steps = int(rng.integers(1, 61))
            lines.append(json.dumps({
                "id": index, "speaker": ["ann", "bob"][index % 2],
                "word": [f"w{index}.{step}" for step in range(steps)],
                "tag": [["noun", "verb", "other"][(index + step) % 3] for step in range(steps)],
                "score": [step / 8 for step in range(steps)],
                "frame": [[step, -step / 2] for step in range(steps)],
                "chars": [list(range(step % 4)) for step in range(steps)],
            }) + "\n")
        (folder / f"tagging-{split}.jsonl").write_text("".join(lines))
    return tb.build(folder / "sequence.yaml", output=tmp_path / "out")


def _build_photos(tmp_path):
    """The golden image spec, built from JPEGs of varying sizes in class folders."""
    from PIL import Image

    folder = tmp_path / "src"
    shutil.copytree(ROOT / "tests" / "golden", folder)
    rng = np.random.default_rng(6)
    for index in range(24):
        label = ["cat", "dog"][index % 2]
        (folder / "photos" / label).mkdir(parents=True, exist_ok=True)
        pixels = rng.integers(0, 256, (20 + index, 30 + 2 * index, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / "photos" / label / f"{index}.jpg", quality=90)
    return tb.build(folder / "images.yaml", output=tmp_path / "out")


def _build_golden(name, tmp_path):
    return {"reference": lambda: _build_reference(tmp_path)[0], "sequence": lambda: _build_tagging(tmp_path),
            "images": lambda: _build_photos(tmp_path)}[name]()


def _as_lists(value):
    if isinstance(value, dict):
        return {key: _as_lists(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_as_lists(item) for item in value)
    return value.tolist() if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("name", ["reference", "sequence", pytest.param("images", marks=pytest.mark.slow)])
def test_module_and_library_give_the_same_batches(tf, tmp_path, name):
    """One reading implementation: the generated module and tb.input_fn yield equal batches (the
    golden specs: an Example of every tensor kind, a SequenceExample with padding, a mask, a cut
    and buckets, varying-size JPEGs resized and scaled)."""
    info = _build_golden(name, tmp_path)
    module = import_module(f"{info.path}/{info.spec.name}_input.py")
    for split in info.splits:
        for shuffle in (False, True):
            tf.random.set_seed(3)
            ours = _as_lists(batches_as_numpy(tb.load(info.path).input_fn(split, shuffle=shuffle)))
            tf.random.set_seed(3)
            theirs = _as_lists(batches_as_numpy(module.input_fn(split, shuffle=shuffle)))
            assert ours == theirs
            features = [features for features, _ in ours]
            assert sum(len(batch[next(iter(batch))]) for batch in features) == info.splits[split].num_examples
    first, label = tb.load(info.path).first("test", 5)
    assert _as_lists(_numpy(module.parse_batch(tf.constant(_records(info, "test")[:5])))) == {
        **_as_lists(_numpy(first)), info.spec.label: _as_lists(_numpy(label))}


def _records(info, split):
    import tensorflow as tf

    return [record.numpy() for record in tf.data.TFRecordDataset(
        [f"{info.path}/{shard['file']}" for shard in info.splits[split].shards],
        compression_type=info.spec.output.reader_compression)]


def _numpy(value):
    import tensorflow as tf

    if isinstance(value, dict):
        return {key: _numpy(item) for key, item in value.items()}
    return value.to_list() if isinstance(value, tf.RaggedTensor) else value.numpy()


def test_reference_values_come_back_with_their_dtypes(tf, tmp_path):
    info, rows = _build_reference(tmp_path)
    module = import_module(f"{info.path}/reference_input.py")
    seen = 0
    for features, labels in module.input_fn("train", batch_size=50, shuffle=False):
        assert features["scores"].dtype == tf.float64 and features["grid"].dtype == tf.uint8
        assert features["flag"].dtype == tf.bool and isinstance(features["boxes"], tf.RaggedTensor)
        for index, identifier in enumerate(features["id"].numpy().tolist()):
            row = rows[identifier]
            assert features["score"][index].numpy() == row["raw_score"]
            assert features["grid"][index].numpy().tolist() == row["grid"]
            assert bool(features["flag"][index]) == row["flag"]
            assert features["boxes"][index].numpy().tolist() == row["boxes"]
            assert features["caption"][index].numpy().decode() == row["caption"]
            assert labels[index].numpy() == ["low", "mid'dle", "high"].index(row["grade"])
            seen += 1
    assert seen == info.splits["train"].num_examples
    assert module.COMPRESSION == "GZIP" and all(name.endswith(".gz") for name in info.splits["train"].files)


def test_a_moved_dataset_folder_is_read_through_its_own_module(tf, tmp_path):
    info, _ = _build_reference(tmp_path)
    moved = tmp_path / "elsewhere"
    shutil.move(info.path, moved)
    module = import_module(moved / "reference_input.py")
    assert module.default_data_dir() == str(moved)
    assert sum(len(labels) for _, labels in module.input_fn("test")) == info.splits["test"].num_examples
    assert tb.load(moved).info.splits["test"].num_examples == info.splits["test"].num_examples


def test_readers_refuse_an_unfinished_dataset(tf, tmp_path):
    info, _ = _build_reference(tmp_path)
    (tmp_path / "out" / "reference" / "2.1.0" / "dataset_info.json").unlink()
    with pytest.raises(tb.DatasetError, match="not a finished dataset"):
        tb.load(info.path)
    module = import_module(f"{info.path}/reference_input.py")
    with pytest.raises(FileNotFoundError, match="not a finished reference dataset"):
        module.input_fn("train")


def test_an_unfinished_copy_is_refused_not_swapped_for_the_original(tf, tmp_path):
    """The module inside a copied folder reads the copy; without its dataset_info.json the copy is
    refused, rather than the module quietly reading the dataset where it was built."""
    info, _ = _build_reference(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(info.path, copy)
    (copy / "dataset_info.json").unlink()
    module = import_module(copy / "reference_input.py", "reference_copy")
    with pytest.raises(FileNotFoundError, match=f"^{copy}: not a finished reference dataset"):
        module.input_fn("train")


def test_a_dataset_in_a_tensorflow_filesystem_is_read_by_url(tf, tmp_path):
    """Both readers take a URL that TensorFlow's own filesystems serve (gs://, or here ram://,
    TensorFlow's in-memory one), give the batches a local folder gives, and name a cut shard."""
    info, _ = _build_reference(tmp_path)
    url = f"ram://{tmp_path.name}/reference/2.1.0"
    tf.io.gfile.makedirs(url)
    for name in os.listdir(info.path):
        if os.path.isfile(os.path.join(info.path, name)):  # not splits/: the readers don't need it
            tf.io.gfile.copy(os.path.join(info.path, name), f"{url}/{name}")
    module = import_module(f"{info.path}/reference_input.py")
    local = batches_as_numpy(tb.input_fn(info.path, "test", shuffle=False))
    for batches in (tb.input_fn(url, "test", shuffle=False), module.input_fn("test", shuffle=False, data_dir=url)):
        assert repr(batches_as_numpy(batches)) == repr(local)
    assert tb.load(url).path == url
    shard = info.splits["test"].shards[0]["file"]
    tf.io.gfile.remove(f"{url}/{shard}")  # (ram:// appends to a file opened for writing)
    with tf.io.gfile.GFile(f"{url}/{shard}", "wb") as file:
        file.write(b"cut")
    with pytest.raises(tb.DatasetError, match=f"^{url}/{shard}: shard is 3 bytes, expected "):
        tb.input_fn(url, "test")
    with pytest.raises(IOError, match=f"^{url}/{shard}: shard is 3 bytes, expected "):
        module.input_fn("test", data_dir=url)
    tf.io.gfile.remove(f"{url}/dataset_info.json")
    with pytest.raises(tb.DatasetError, match=f"^{url}: not a finished dataset"):
        tb.load(url)


def test_unknown_split(tf, tmp_path):
    info, _ = _build_reference(tmp_path)
    with pytest.raises(tb.UsageError, match="unknown split 'validation'; expected one of: train, test"):
        tb.input_fn(info.path, "validation")


def test_skip_lists_bad_records(tmp_path):
    from conftest import write_spec

    spec = {"name": "s", "source": {"builder": "csv", "path": "d.csv"}, "on_error": "skip",
            "features": {"x": {"dtype": "int64"}}}
    info = tb.build(write_spec(tmp_path, spec, {"d.csv": "x\n1\nbad\n3\n\n4.5\n"}), output=tmp_path / "out")
    assert info.splits["train"].num_examples == 2 and info.skipped == 2
    import json

    skipped = [json.loads(line) for line in open(f"{info.path}/skipped.jsonl")]
    assert [entry["record"] for entry in skipped] == ["d.csv, line 3", "d.csv, line 6"]
    assert "expected an integer" in skipped[0]["reason"]


def test_build_checks_a_spec_changed_with_replace(tmp_path):
    """dataclasses.replace checks nothing: build checks the spec again as a file would be."""
    import dataclasses

    spec = tb.load_spec(ROOT / "specs" / "wine.yaml")
    for change, message in ((dict(version="../../elsewhere"), "version: expected a version such as 1.0.0"),
                            (dict(splits={"train": 0.5, "test": 0.2}), "split fractions must sum to 1"),
                            (dict(label="nope"), "label: expected the name of a feature"),
                            (dict(output=dataclasses.replace(spec.output, shards=0)), "output.shards")):
        with pytest.raises(tb.SpecError, match=message):
            tb.build(dataclasses.replace(spec, **change), output=tmp_path / "out")
    assert not (tmp_path / "elsewhere").exists() and not list(tmp_path.rglob("dataset_info.json"))
    with pytest.raises(tb.UsageError, match="workers: expected a positive integer, received 0"):
        tb.build(spec, output=tmp_path / "out", workers=0)


def test_a_module_loaded_from_its_path_reads_without_autograph_warnings(tf, tmp_path, caplog):
    """importlib's spec_from_file_location (without sys.modules) hides the source from AutoGraph,
    which then warned "could not transform ... please report this" for every input_fn."""
    import importlib.util
    import logging

    info, _ = _build_reference(tmp_path)
    spec = importlib.util.spec_from_file_location("loose_reference_input", f"{info.path}/reference_input.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        count = sum(1 for _ in module.input_fn("train", batch_size=4))
    assert count > 0
    assert not [record for record in caplog.records if "AutoGraph" in record.getMessage()]
