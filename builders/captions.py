"""Image + caption pairs: a JSONL file of `{"file": ..., "caption": ...}` beside the images.

Each record offers `image` (the picture's path, relative to the captions file), `caption` (the
text) and `tokens` (the caption's lower-cased words), so a spec can store the text, the words, or
their ids through a `class_label` vocabulary:

    tokens: {type: class_label, names_file: ../data/digit_captions_vocab.txt, shape: [null]}

Words missing from `options: {vocabulary: FILE}` become its first entry (e.g. `<unk>`) when the
option is given. The key is the image's path, so a picture with two captions is a duplicate.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterator

import tfrecord_builder as tb

WORD = re.compile(r"[\w']+")


class Captions(tb.Builder):
    """Pictures with one caption each, listed in a JSONL file."""

    def generate(self, split: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
        folder = os.path.dirname(self.path)
        vocabulary = self._vocabulary()
        with open(self.path, encoding="utf-8") as file:
            for number, line in enumerate(file, start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    path, caption = entry["file"], entry["caption"]
                except (ValueError, KeyError, TypeError) as error:
                    raise tb.DataError(f"{self.path}, line {number}: expected "
                                       f'{{"file": ..., "caption": ...}} ({error})') from None
                words = [word.lower() for word in WORD.findall(caption)]
                if vocabulary is not None:
                    words = [word if word in vocabulary else vocabulary[0] for word in words]
                yield path, {"image": os.path.join(folder, path), "caption": caption, "tokens": words}

    def _vocabulary(self) -> list[str] | None:
        name = self.options.get("vocabulary")
        if name is None:
            return None
        with open(self.spec.resolve(name), encoding="utf-8") as file:
            return [line.strip() for line in file if line.strip()]
