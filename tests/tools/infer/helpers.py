"""Helpers of the infer tests: write small data files, run infer -> validate -> build on the real
command line, read the built records back (NumPy, no TensorFlow)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import yaml
from PIL import Image

import tfrecord_builder as tb
from support.cli import assert_ok, run_cli, show


def write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_image(path: Path, pixels: np.ndarray, **save: Any) -> np.ndarray:
    """Saves uint8 pixels (by the file's extension) and returns them as Pillow reads the file back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, **save)
    return np.asarray(Image.open(path))


def pixels(height: int, width: int, seed: int, channels: int = 3) -> np.ndarray:
    values = np.random.default_rng(seed).integers(0, 256, size=(height, width, channels), dtype=np.uint8)
    return values[:, :, 0] if channels == 1 else values


def infer_validate_build(cwd: Path, data: str | os.PathLike, *options: str,
                         spec: str = "spec.yaml") -> tuple[str, dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """`infer DATA -o SPEC`, then `validate SPEC` and `build SPEC` as written, all run in `cwd`.

    Returns the spec's text, the spec as YAML loads it, and the built records of each split."""
    inferred = run_cli("infer", data, "-o", spec, *options, cwd=cwd)
    assert_ok(inferred)
    path = (cwd / spec).resolve()
    assert inferred.stdout == f"wrote {spec}\n", show(inferred)
    validated = run_cli("validate", path, cwd=cwd)
    assert_ok(validated)
    assert ": ok: " in validated.stdout, show(validated)
    built = run_cli("build", path, "--output", cwd / "out", "--workers", "1", cwd=cwd)
    assert_ok(built)
    text = path.read_text(encoding="utf-8")
    loaded = yaml.safe_load(text)
    dataset = cwd / "out" / loaded["name"] / "1.0.0"
    records = {split: list(tb.read(dataset, split)) for split in loaded["splits"]}
    return text, loaded, records


def all_records(records: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [record for split in records.values() for record in split]


def by_key(records: dict[str, list[dict[str, Any]]], key: str) -> dict[Any, dict[str, Any]]:
    """Every split's records by a feature's value (bytes decoded)."""
    found = {}
    for record in all_records(records):
        value = record[key]
        value = value.decode() if isinstance(value, bytes) else value.item()
        assert value not in found, f"{key} {value!r} twice"
        found[value] = record
    return found


def line_of(text: str, start: str) -> str:
    """The spec's line that starts with `start` (a top-level key), or else after indentation."""
    lines = [line for line in text.splitlines() if line.startswith(start)] or \
        [line for line in text.splitlines() if line.strip().startswith(start)]
    assert len(lines) == 1, f"expected one line starting with {start!r} in:\n{text}"
    return lines[0]


def comment(text: str, start: str) -> str:
    """The comment beside the spec's line that starts with `start` (empty if none)."""
    line = line_of(text, start)
    return line.split("  # ", 1)[1] if "  # " in line else ""
