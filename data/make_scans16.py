"""Writes data/scans16/: real 12-bit CT and MR slices from pydicom's test files as 16-bit grey
PNGs, with scans.csv (path, modality). Run once: `python data/make_scans16.py`.

Values are the files' stored values, unchanged, where they are all 0 or more (CT_small, MR_small,
the abdominal MR). The two 512x512 head and body CTs store Hounsfield units (HU) from -3000
(outside the scanner's field of view) up: they are written as HU + 1024 (air near 24, water
1024), clipped at 0, and every 4th row and column kept (128x128: no value averaged, the files
small). The abdominal MR is its centre 160x160.
"""
from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
import pydicom
from PIL import Image
from pydicom.data import get_testdata_file

OUT = Path(__file__).resolve().parent / "scans16"


def main() -> None:
    warnings.simplefilter("ignore")  # pydicom's notes on the test files' odd tags
    OUT.mkdir(exist_ok=True)
    rows = []
    for source, name in (("CT_small.dcm", "ct_small.png"), ("MR_small.dcm", "mr_small.png"),
                         ("examples_overlay.dcm", "mr_abdomen.png"), ("J2K_pixelrep_mismatch.dcm", "ct_head.png"),
                         ("693_J2KI.dcm", "ct_body.png")):
        scan = pydicom.dcmread(get_testdata_file(source))
        pixels = scan.pixel_array.astype(np.int64)
        if pixels.shape == (512, 512):
            hounsfield = pixels * int(scan.RescaleSlope) + int(scan.RescaleIntercept)
            pixels = np.clip(hounsfield + 1024, 0, None)[::4, ::4]
        elif name == "mr_abdomen.png":
            top, left = (pixels.shape[0] - 160) // 2, (pixels.shape[1] - 160) // 2
            pixels = pixels[top:top + 160, left:left + 160]
        assert pixels.min() >= 0 and pixels.max() <= 65535
        Image.fromarray(pixels.astype(np.uint16)).save(OUT / name, optimize=True)
        rows.append({"path": name, "modality": scan.Modality})
    with open(OUT / "scans.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, ["path", "modality"])
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
