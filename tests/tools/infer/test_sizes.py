"""`infer` on annotations whose image sizes differ from the files': the spec says so, and builds."""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb

skimage_data = pytest.importorskip("skimage.data")


def test_a_voc_folder_whose_sizes_differ_from_the_files_infers_size_mismatch_warn(tmp_path):
    folder = tmp_path / "VOC"
    (folder / "JPEGImages").mkdir(parents=True)
    (folder / "Annotations").mkdir()
    for name in ("coffee", "chelsea"):
        Image.fromarray(getattr(skimage_data, name)()).resize((64, 48)).save(folder / "JPEGImages" / f"{name}.jpg")
        root = ElementTree.Element("annotation")
        ElementTree.SubElement(root, "filename").text = f"{name}.jpg"
        size = ElementTree.SubElement(root, "size")
        for key, value in (("width", 128 if name == "coffee" else 64), ("height", 96 if name == "coffee" else 48)):
            ElementTree.SubElement(size, key).text = str(value)
        element = ElementTree.SubElement(root, "object")
        ElementTree.SubElement(element, "name").text = "thing"
        box = ElementTree.SubElement(element, "bndbox")
        for key, value in zip(("xmin", "ymin", "xmax", "ymax"), (8, 6, 40, 30)):
            ElementTree.SubElement(box, key).text = str(value)
        ElementTree.ElementTree(root).write(folder / "Annotations" / f"{name}.xml")
    spec_path = tmp_path / "voc.yaml"
    text = tb.infer(folder, spec_path)
    spec_path.write_text(text)
    assert yaml.safe_load(text)["source"]["options"] == {"size_mismatch": "warn"}
    assert "guessed: 1 image whose annotated size differs from the file's" in text
    with pytest.warns(tb.BuildWarning, match="1 image whose annotated size differs from the file's"):
        info = tb.build(spec_path, workers=1)
    for record in tb.read(info.path, "train"):
        np.testing.assert_allclose(record["objects"], [[6 / 48, 8 / 64, 30 / 48, 40 / 64]], atol=1e-6)
