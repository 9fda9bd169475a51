"""TensorFlow Datasets (TFDS) as a compared case: the settings, fresh builds, reading, the placeholder row.

TFDS is a bench-only dependency (`pip install -e '.[cpu,bench]'`, which `make bench` does); the
package never imports it. Each script imports this module where it imports TensorFlow (TFDS
imports TensorFlow), never in `tb.build`'s worker processes, and defines its own
`tfds.core.GeneratorBasedBuilder` next to its data. Without TFDS (`tfds` is None, `MISSING`
says why) the scripts still run and print `NOT_INSTALLED` in place of the TFDS rows.

The settings, the same for the three scripts (bench/README.md gives the reasons):

- build: `builder_class(data_dir=fresh).download_and_prepare(download_config=...)` with the
  default file format (tfrecord), the source files given as the `manual_dir` (TFDS's documented
  way to build from local files), `compute_stats=SKIP` (no statistics pass; the default in
  4.9.10, set explicitly: older versions defaulted to AUTO), `try_download_gcs=False` (never look
  for a prepared copy on Google's bucket) and `num_shards=4`, the shard count of the other cases
  (TFDS would pick 1 for these sizes: it aims at shards of 64 MiB to 1 GiB). TFDS's own
  deterministic shuffle (by hashed key) and duplicate-key check stay on: they are the
  counterparts of our seeded shuffle and key check. No progress bars; TFDS's two status lines
  go to stderr.
- read: `builder.as_dataset(split="train", batch_size=B, shuffle_files=False,
  read_config=tfds.ReadConfig(try_autocache=False))`. TFDS would otherwise `cache()` a dataset
  under 250 MiB read without shuffling, and the timed epochs would come from memory, not from
  the shards; every other reading setting is TFDS's default (parallel interleave of the
  shards, a per-example parse and decode, `padded_batch`, `prefetch`).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
from typing import Any, Sequence

from harness import Column, Result

try:
    import tensorflow_datasets as tfds
    MISSING: str | None = None
    tfds.disable_progress_bar()  # no tqdm bars on stderr (a script's setting, as the other cases print none)
except ImportError as error:  # the bench extra is not installed (or one of its dependencies is missing)
    tfds = None
    MISSING = f"{type(error).__name__}: {error}"

NOT_INSTALLED = "TFDS not installed"
SHARDS = 4


def version() -> str:
    """TFDS's version, or that it is not installed (for the report's machine line)."""
    return tfds.__version__ if tfds is not None else "not installed"


def download_config(manual_dir: str, shards: int = SHARDS) -> Any:
    """The `tfds.download.DownloadConfig` of every TFDS build here (see the module's docstring)."""
    return tfds.download.DownloadConfig(
        manual_dir=manual_dir,
        compute_stats=tfds.download.ComputeStatsMode.SKIP,
        try_download_gcs=False,
        num_shards=shards,
    )


def settings(manual_dir: str, batch_size: int) -> dict[str, Any]:
    """What was set, for the JSON report."""
    return {
        "version": version(),
        "builder": "tfds.core.GeneratorBasedBuilder, download_and_prepare() into a fresh data_dir per round",
        "file_format": "tfrecord (default)",
        "download_config": {"manual_dir": manual_dir, "compute_stats": "SKIP", "try_download_gcs": False,
                            "num_shards": SHARDS},
        "as_dataset": {"split": "train", "batch_size": batch_size, "shuffle_files": False,
                       "read_config": "tfds.ReadConfig(try_autocache=False)"},
    }


class FreshBuilds:
    """Times `download_and_prepare` of a builder class, each call into a data_dir of its own.

    A reused data_dir would make TFDS skip the build (the dataset is already there), so every
    call gets a new folder `root/round_K`; creating the builder is timed with the build, removing
    the folders of earlier rounds is not (`tidy`, after the timing). `builder` is the last one built.
    """

    def __init__(self, builder_class: type, root: str, manual_dir: str) -> None:
        self.builder_class, self.root, self.manual_dir = builder_class, root, manual_dir
        self.rounds = 0
        self.builder: Any = None
        if os.path.isdir(root):
            shutil.rmtree(root)
        os.makedirs(root)

    def __call__(self) -> None:
        self.rounds += 1
        # TFDS prints "Downloading and preparing dataset ..." and "... prepared to ..." on stdout:
        # to stderr with the other libraries' messages, so that stdout holds only the report
        with contextlib.redirect_stdout(sys.stderr):
            builder = self.builder_class(data_dir=os.path.join(self.root, f"round_{self.rounds}"))
            builder.download_and_prepare(download_config=download_config(self.manual_dir))
        self.builder = builder

    def tidy(self) -> None:
        """Removes every round's folder but the last one's (whose dataset the read benchmark uses)."""
        for round_ in range(1, self.rounds):
            shutil.rmtree(os.path.join(self.root, f"round_{round_}"), ignore_errors=True)


def files(builder: Any, split: str = "train") -> list[str]:
    """The paths of a split's shards, as TFDS wrote them."""
    return [os.fspath(path) for path in builder.info.splits[split].filepaths]


def num_bytes(builder: Any, split: str = "train") -> int:
    return int(builder.info.splits[split].num_bytes)


def as_dataset(builder: Any, batch_size: int) -> Any:
    """The train split, batched by TFDS (padded_batch), without auto-caching (see the module's docstring)."""
    return builder.as_dataset(split="train", batch_size=batch_size, shuffle_files=False,
                              read_config=tfds.ReadConfig(try_autocache=False))


# ---- the report ---------------------------------------------------------------------------------------

def absent(*cases: str) -> list[tuple[str, str]]:
    """`results_table`'s rows for the TFDS `cases` where TFDS is not installed (none where it is)."""
    return [] if tfds is not None else [(case, NOT_INSTALLED) for case in cases]


def missing_note() -> str:
    """The report's sentence on why the TFDS rows are missing (empty where TFDS is installed)."""
    if tfds is None:
        return (f"{NOT_INSTALLED} ({MISSING}): `make bench` or `pip install -e '.[cpu,bench]'` "
                f"installs it, for the TFDS rows.")
    return ""


def vs_tfds(results: list[Result], tfds_case: str, ours: Sequence[str]) -> list[Column]:
    """The "vs TFDS" column: the throughput of each of `ours` (cases) over that of `tfds_case`,
    blank in the other rows; no column where `results` hold no `tfds_case` (TFDS not installed)."""
    reference = next((result for result in results if result.case == tfds_case), None)
    if reference is None:
        return []
    return [Column("vs TFDS", lambda result: f"{result.per_second / reference.per_second:.2f}x"
                   if result.case in ours else "")]
