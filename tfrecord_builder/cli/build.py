"""`build SPEC`: builds every split, then prints a summary."""
from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
import warnings

from .. import fs
from ..build.run import build
from ..build.dry_run import DEFAULT_SAMPLE, DryRun, dry_run
from ..errors import BuildWarning, UsageError
from ..build.runners import runner_names
from ..build.runners.contract import RunnerOptions
from ..write.info import read_info
from ..spec.load import load_spec
from ..write.naming import INFO_FILE, REPORT_FILE, module_name
from .format import positive_int, size, table

NAME = "build"
HELP = "build every split of a spec into sharded TFRecord files and the generated input module"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="the YAML spec file")
    parser.add_argument("--output", metavar="DIR", help="output folder (default: the spec's output.dir)")
    parser.add_argument("--module", metavar="FILE", help="also write the generated input module here")
    parser.add_argument("--workers", type=positive_int, default=None, metavar="N",
                        help="processes that encode records (default: the machine's cores)")
    parser.add_argument("--runner", choices=runner_names(), default=runner_names()[0],
                        help="local: this machine's processes (default); beam: an Apache Beam pipeline; "
                             "spark: an Apache Spark job; byte for byte the same dataset")
    parser.add_argument("--runner-option", metavar="KEY=VALUE", action="append", default=None,
                        help="an option of the runner's engine (repeat it): Beam's pipeline options without "
                             "their dashes (runner=DataflowRunner, project=P; default: the DirectRunner in "
                             "--workers processes), Spark's conf for a new session (spark.master=spark://host:7077; "
                             "default: local[--workers])")
    parser.add_argument("--pipeline-options", metavar="OPTIONS", default=None,
                        help="Beam's options as its own flags in one argument, passed as they are (e.g. "
                             "\"--runner=DataflowRunner --project=P --region=R --temp_location=gs://B/tmp\"): "
                             "--runner-option's old spelling for --runner beam")
    parser.add_argument("--spark-conf", metavar="KEY=VALUE", action="append", default=None,
                        help="a Spark option for the job's session, as spark-submit's --conf (repeat it): "
                             "--runner-option's old spelling for --runner spark")
    parser.add_argument("--overwrite", action="store_true", help="replace a dataset already built there")
    parser.add_argument("--dry-run", nargs="?", type=positive_int, const=DEFAULT_SAMPLE, default=None, metavar="N",
                        help=f"write nothing: encode the first N records of each split (default {DEFAULT_SAMPLE}) "
                             "through the build's path, read them back with the generated module, and "
                             "predict the whole build's records, sizes, shards, time and memory; exit 1 "
                             "if the sample looks wrong (one class only, a feature always missing)")
    parser.add_argument("--keep-splits", metavar="OLD_DATASET_DIR", default=None,
                        help="an earlier version of the dataset (NAME/VERSION folder): every record whose key it "
                             "holds stays in the split it had there; records new to it are split by hash")
    parser.add_argument("--resume", action="store_true",
                        help="finish an interrupted build, keeping the shards it finished (a finished "
                             "dataset is left as it is)")


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    spec = load_spec(args.spec)
    if args.dry_run is not None:
        if args.resume or args.overwrite or args.module or args.pipeline_options is not None or args.keep_splits:
            raise UsageError("--dry-run writes nothing: give it without --resume, --overwrite, --module, "
                             "--pipeline-options and --keep-splits")
        return _print_plan(dry_run(spec, args.dry_run, args.workers))
    root = args.output or spec.resolve(spec.output.dir)
    folder = fs.join(root, spec.name, spec.version)
    if args.resume and args.overwrite:
        raise UsageError("--resume keeps what an interrupted build finished, --overwrite replaces it: give one")
    if args.resume and fs.exists(fs.join(folder, INFO_FILE)):
        if not _same_spec(read_info(folder).spec.to_dict(), spec.to_dict()):
            raise UsageError(f"{folder}: already built from a different spec; rebuild it with --overwrite")
        print(f"{spec.name} {spec.version} is already built in {folder}; nothing to resume")
        return 0
    options = _runner_options(args)
    with warnings.catch_warnings():  # printed below as `warning: ...` lines
        warnings.simplefilter("ignore", BuildWarning)
        # progress: tqdm bars on a terminal, cleared before the summary; none in logs and pipes
        info = build(spec, root, module=args.module, overwrite=args.overwrite, resume=args.resume,
                     workers=args.workers, progress=None, runner=args.runner, runner_options=options,
                     keep_splits=args.keep_splits)
    rows = [(name, f"{split.num_examples:,}", len(split.shards), size(split.num_bytes))
            for name, split in info.splits.items()]
    print(f"{spec.name} {spec.version} -> {info.path}")
    print(table(["split", "examples", "shards", "size"], rows))
    kept = (info.membership or {}).get("kept_splits")
    if kept is not None:
        print(f"splits kept from {args.keep_splits}: {kept['kept']:,} records in the split they had there, "
              f"{kept['new']:,} new to it (split by hash)")
    if info.skipped:
        print(f"skipped {info.skipped} bad records: listed in {os.path.join(info.path, 'skipped.jsonl')}")
    for message in info.warnings:
        print(f"warning: {message}", file=sys.stderr)
    print(f"input module: {os.path.join(info.path, module_name(spec.name))}")
    if spec.output.report:
        print(f"report: {fs.join(info.path, REPORT_FILE)}")
    print(f"done in {time.monotonic() - started:.1f} s")
    return 0


def _runner_options(args: argparse.Namespace) -> RunnerOptions | None:
    """The engine's options as given: `--runner-option`, or its old spellings, each for its own
    runner: `--pipeline-options` (Beam's flags in one argument), `--spark-conf`."""
    if args.pipeline_options is not None and args.runner != "beam":
        raise UsageError("--pipeline-options are Beam's: give them with --runner beam")
    if args.spark_conf is not None and args.runner != "spark":
        raise UsageError("--spark-conf options are Spark's: give them with --runner spark")
    given = [name for name, value in (("--runner-option", args.runner_option), ("--pipeline-options",
             args.pipeline_options), ("--spark-conf", args.spark_conf)) if value is not None]
    if len(given) > 1:
        raise UsageError(f"{given[0]} and {given[1]}: the engine's options by two names; give them as --runner-option")
    if args.pipeline_options is not None:
        try:
            return RunnerOptions(tuple(shlex.split(args.pipeline_options)), "--pipeline-options", flags=True)
        except ValueError as error:  # an unclosed quote
            raise UsageError(f"--pipeline-options: {error}") from None
    if args.spark_conf is not None:
        return RunnerOptions(tuple(args.spark_conf), "--spark-conf")
    return RunnerOptions(tuple(args.runner_option), "--runner-option") if args.runner_option is not None else None


def _same_spec(built: dict, current: dict) -> bool:
    """Whether a finished dataset was built from this spec (its class labels may have taken their
    names from the source, as image folders give them)."""
    for section in ("features", "context", "sequence"):
        for name, feature in current.get(section, {}).items():
            given = built.get(section, {}).get(name, {})
            if feature.get("type") == "class_label" and not feature.get("names") and given.get("names"):
                feature["names"] = given["names"]
    return built == current


def _print_plan(plan: DryRun) -> int:
    """The dry run's plan as the build's summary would be, then what looked wrong (exit 1 if any)."""
    spec = plan.spec
    sampled = plan.num_sampled
    read = (f"all {sampled:,} records encoded" if sampled == plan.num_examples else
            f"the first {plan.sample:,} records of each split encoded ({sampled:,} of {plan.num_examples:,})")
    print(f"{spec.name} {spec.version}: dry run, {read}; nothing written")
    rows = [(name, f"{split.num_examples:,}", split.num_shards, size(split.shard_bytes), size(split.num_bytes),
             size(split.record_bytes)) for name, split in plan.splits.items()]
    print(table(["split", "examples", "shards", "shard size", "size", "record size"], rows))
    shards = sum(split.num_shards for split in plan.splits.values())
    print(f"predicted: {size(plan.num_bytes)} in {shards} shard{'s' if shards > 1 else ''}, "
          f"about {_duration(plan.build_seconds)} with {plan.workers} worker{'s' if plan.workers > 1 else ''}, "
          f"peak memory about {size(plan.peak_bytes)}")
    print(f"read back with the generated module: {sampled:,} records parsed and decoded")
    if plan.skipped:
        print(f"skipped {plan.skipped} bad records of the sample (on_error: skip)")
    for finding in plan.findings:
        print(f"warning: {finding}", file=sys.stderr)
    return 1 if plan.findings else 0


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "a second"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
