"""The spec checks its sections against each other through the features' hooks (features/base.py:
`holds_classes`, `check_stratify`, `holds_boxes`, `image_name`, `ids_per_object`, `check_record`,
`check_ungrouped`, ...), never by which type a feature is: a type of one's own that answers them
is taken as the built-in ones are, with no edit to spec/model.py."""
from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest

import tfrecord_builder as tb

from conftest import write_spec

TYPES = textwrap.dedent('''
    import dataclasses

    import tfrecord_builder as tb


    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Grade(tb.TensorFeature):
        """A school grade, 0 to 2, stored as its int64 index: classes without names."""

        dtype: str = tb.spec_field("always int64", "int64")

        @property
        def holds_classes(self):
            return True

        def check_stratify(self, at):
            if self.shape:
                raise at.error("a grade to stratify by is one a record")


    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Corners(tb.TensorFeature):
        """Boxes as [ymin, xmin, ymax, xmax] fractions, any number a record, of the spec's image."""

        dtype: str = tb.spec_field("always float32", "float32")
        shape: list = tb.spec_field("always [null, 4]", [None, 4])
        image: str = tb.spec_field("the image feature the boxes are on", "image")

        @property
        def holds_boxes(self):
            return True

        @property
        def image_name(self):
            return self.image
''')


def _grades() -> str:
    rows = [(f"g{grade}-{index}", grade) for grade, count in ((0, 500), (1, 90), (2, 10)) for index in range(count)]
    random.Random(3).shuffle(rows)
    return "id,grade\n" + "".join(f"{key},{grade}\n" for key, grade in rows)


def test_a_type_of_ones_own_that_holds_classes_is_stratified_by(tmp_path):
    spec = {"name": "grades", "source": {"builder": "csv", "path": "grades.csv", "key": "id"},
            "features": {"grade": {"type": "types.py:Grade"}}, "splits": {"train": 0.8, "test": 0.2},
            "stratify": "grade"}
    info = tb.build(write_spec(tmp_path, spec, {"grades.csv": _grades(), "types.py": TYPES}), output=tmp_path / "out")
    counts = {split: np.bincount([int(record["grade"]) for record in tb.read(info.path, split)], minlength=3).tolist()
              for split in ("train", "test")}
    assert counts == {"train": [400, 72, 8], "test": [100, 18, 2]}  # each grade divided on its own
    wrong = {**spec, "features": {"grade": {"type": "types.py:Grade", "shape": [2]}}}
    with pytest.raises(tb.SpecError) as raised:
        tb.load_spec(write_spec(tmp_path, wrong, name="wrong.yaml"))
    assert str(raised.value).endswith("stratify: a grade to stratify by is one a record")
    plain = {**spec, "features": {"grade": {"dtype": "int64"}}}
    with pytest.raises(tb.SpecError) as raised:
        tb.load_spec(write_spec(tmp_path, plain, name="plain.yaml"))
    assert str(raised.value).endswith("stratify: expected the name of a class_label feature (the spec has none), "
                                      "received 'grade', a tensor feature")


def test_a_type_of_ones_own_that_holds_boxes_is_counted_and_paired_with_its_image(tmp_path):
    spec = {"name": "boxes", "source": {"builder": "image_manifest", "path": "boxes.csv"},
            "features": {"image": {"type": "image", "source": "path"}, "corners": {"type": "types.py:Corners"},
                         "label": {"type": "class_label", "names": ["cat", "dog"], "shape": [None]}},
            "label": "label", "input": {"objects": "padded", "detection": {}}}
    loaded = tb.load_spec(write_spec(tmp_path, spec, {"boxes.csv": "path,corners,label\n", "types.py": TYPES}))
    reading = loaded.reading()
    assert reading["objects"] == {"count_feature": "num_objects", "count_of": "corners"}
    assert reading["detection"] == {"images": "image", "boxes": "corners", "labels": "label", "format": "yxyx"}
    scores = {**spec, "features": {**spec["features"], "label": {"dtype": "float32", "shape": [None]}}}
    with pytest.raises(tb.SpecError) as raised:
        tb.load_spec(write_spec(tmp_path, scores, name="scores.yaml"))
    assert str(raised.value).endswith("the spec's label `label`, float32 [null] (ragged) is not one integer class id "
                                      "per object (a class_label of shape [null]); name the objects' class ids in "
                                      "`labels:`")
