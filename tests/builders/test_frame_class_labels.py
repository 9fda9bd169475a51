"""A Hugging Face dataset's `ClassLabel` names its classes: a class_label without names takes
them, `infer` writes them, and names that disagree are refused in one line naming both."""
from __future__ import annotations

import datasets
import pytest

import tfrecord_builder as tb

from conftest import write_spec

NAMES = ["neg", "zero", "pos"]


def _dataset() -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {"id": list(range(30)), "label": [(i * 7) % 3 for i in range(30)]},
        features=datasets.Features({"id": datasets.Value("int64"), "label": datasets.ClassLabel(names=NAMES)}))


def _spec(tmp_path, label: dict) -> str:
    return write_spec(tmp_path, {"name": "hf", "source": {"builder": "dataframe", "key": "id"},
                                 "splits": {"train": 0.5, "test": 0.5},
                                 "features": {"id": {"dtype": "int64"}, "label": label}})


def test_a_class_label_without_names_takes_the_class_labels_names(tmp_path):
    info = tb.build(_spec(tmp_path, {"type": "class_label"}), output=tmp_path / "out", source=_dataset(),
                    progress=False)
    assert info.spec.features["label"].names == NAMES
    found = {int(record["id"]): int(record["label"]) for split in info.splits for record in tb.read(info.path, split)}
    assert found == {i: (i * 7) % 3 for i in range(30)}  # each record holds its row's index into NAMES
    counts = {name: 0 for name in NAMES}
    for split in info.statistics.values():
        for name, count in split["label"]["classes"].items():
            counts[name] += count
    assert counts == {name: sum((i * 7) % 3 == index for i in range(30)) for index, name in enumerate(NAMES)}


def test_infer_writes_the_class_labels_names_and_the_spec_builds(tmp_path):
    text = tb.infer(_dataset(), tmp_path / "spec.yaml")
    assert "  label: {type: class_label, names: [neg, zero, pos]}" in text
    (tmp_path / "spec.yaml").write_text(text)
    info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "out", source=_dataset(), progress=False)
    assert info.spec.features["label"].names == NAMES


def test_names_that_disagree_with_the_class_label_are_refused_naming_both(tmp_path):
    spec = _spec(tmp_path, {"type": "class_label", "names": ["pos", "zero", "neg"]})
    with pytest.raises(tb.SpecError) as error:
        tb.build(spec, output=tmp_path / "out", source=_dataset(), progress=False)
    assert str(error.value).endswith(
        "features.label: names [pos, zero, neg] disagree with the ClassLabel of column `label` of the Hugging Face "
        "dataset: [neg, zero, pos]; leave `names` out to take the ClassLabel's, or give the same in its order")
    assert "\n" not in str(error.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.tfrecord*"))
