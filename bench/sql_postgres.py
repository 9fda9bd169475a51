"""PostgreSQL benchmark: `builder: sql` with 2 workers against the hand-written way (a driver
cursor, a Python loop building a tf.train.Example per row), and our build's peak memory at two
sizes. Run by hand, never by the tests (it starts a server of its own, as they do):

    .venv/bin/python bench/sql_postgres.py [--rows 1000000] [--repeats R]

It starts a throwaway PostgreSQL server on 127.0.0.1 (tests/support/postgres_server.py:
Debian's binaries, a cluster of its own; as root it runs as the `postgres` user; `make
postgres` installs it), loads a table of N rows x 12 columns with COPY (bigint `id`, four
integers, three doubles, a text of a few words, a boolean, a date, a class label as text), then
builds it two ways, side by side in interleaved rounds (the best of R counts):

- ours: `builder: sql`, `table: bench`, `partition_by: id`, `tb.build(..., workers=2)` (the
  CLI's `--workers 2`): the driver's Arrow batches, the encoder, the seeded shuffle, 4 shards,
  statistics, metadata and the generated module;
- hand-written: a psycopg server-side cursor (`itersize`), a Python loop building a
  `tf.train.Example` per row, `tf.io.TFRecordWriter`, round-robin over 4 shards.

Both must give N records (counted in their shards); the target is the hand-written time over
ours, at least 5x. Then our build's peak resident memory (the build process and its largest
worker, each build in a fresh process) at N/4 and N rows: the larger over the smaller, at most
1.25 (flat in the number of rows). Prints a Markdown report; writes bench/out/sql_postgres.json.
The machine is shared: the load average is in the report.
"""
from __future__ import annotations

import datetime
import io
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # the repository, should the package not be installed
sys.path.insert(0, os.path.join(ROOT, "tests"))  # tests/support: the server the tests start, started the same way

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402

from harness import (  # noqa: E402
    OutputPaths, Result, Target, argument_parser, best_of_rounds, machine, machine_line, markdown_table,
    record_writers, results_table, shard_paths, targets_table, with_ratios, write_json,
)

NAME = "sql_postgres"
TABLE = "bench"
SHARDS = 4
WORKERS = 2
SPEED_BAR = 5.0  # hand-written time / ours, at least (issue 41)
MEMORY_BAR = 1.25  # peak RSS at N rows / at N/4, at most: flat in the number of rows
ITERSIZE = 10_000  # rows per round trip of the hand-written server-side cursor
CHUNK = 100_000  # rows generated and sent per COPY write
SEED = 41
WORDS = ["red", "green", "blue", "cyan", "amber", "slate", "olive", "coral", "ivory", "teal", "plum", "sand"]
LABELS = ["cat", "dog", "bird", "fish", "horse"]
EPOCH = datetime.date(1970, 1, 1)
COLUMNS = [("id", "bigint"), ("small", "smallint"), ("count", "integer"), ("score", "integer"), ("big", "bigint"),
           ("x", "double precision"), ("y", "double precision"), ("z", "double precision"), ("words", "text"),
           ("flag", "boolean"), ("day", "date"), ("label", "text")]
INTS = ["id", "small", "count", "score", "big"]
FLOATS = ["x", "y", "z"]

OURS = f"ours: `builder: sql`, `partition_by: id`, {WORKERS} workers"
HAND = "hand-written: psycopg server-side cursor + tf.train.Example loop"


# ---- the data ----------------------------------------------------------------------------------------

def chunk_csv(start: int, count: int) -> bytes:
    """Rows start..start+count-1 as CSV (no header), deterministic in the row number."""
    rng = np.random.default_rng([SEED, start])
    ids = np.arange(start, start + count, dtype=np.int64)
    words = np.array(WORDS)
    phrase = [" ".join(row) for row in words[rng.integers(0, len(WORDS), size=(count, 3))].tolist()]
    table = pa.table({
        "id": ids,
        "small": rng.integers(-1000, 1000, count).astype(np.int16),
        "count": rng.integers(0, 100_000, count).astype(np.int32),
        "score": rng.integers(-2**31, 2**31 - 1, count).astype(np.int32),
        "big": rng.integers(-2**62, 2**62, count),
        "x": rng.normal(size=count), "y": rng.uniform(-1e6, 1e6, count), "z": rng.exponential(size=count),
        "words": phrase,
        "flag": rng.integers(0, 2, count).astype(bool),
        "day": pa.array(rng.integers(0, 20_000, count).astype("int32"), pa.date32()),
        "label": np.array(LABELS)[rng.integers(0, len(LABELS), count)],
    })
    out = io.BytesIO()
    pacsv.write_csv(table, out, pacsv.WriteOptions(include_header=False))
    return out.getvalue()


def load(server: Any, rows: int) -> float:
    """Creates the table and fills it with COPY; returns the seconds it took."""
    start = time.perf_counter()
    with server.connect() as connection:
        connection.execute(f"DROP TABLE IF EXISTS {TABLE}")
        connection.execute(f"CREATE TABLE {TABLE} ({', '.join(f'{name} {kind}' for name, kind in COLUMNS)})")
        with connection.cursor() as cursor, cursor.copy(f"COPY {TABLE} FROM STDIN (FORMAT csv)") as copy:
            for offset in range(0, rows, CHUNK):
                copy.write(chunk_csv(offset, min(CHUNK, rows - offset)))
        connection.execute(f"ALTER TABLE {TABLE} ADD PRIMARY KEY (id)")
        connection.execute(f"VACUUM ANALYZE {TABLE}")
        (count,) = connection.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
    assert count == rows, (count, rows)
    return time.perf_counter() - start


def spec_text(url: str, output: str, rows: int | None = None) -> str:
    """Our spec: the whole table, or (`rows`) its first rows by id."""
    source = f"table: {TABLE}" if rows is None else f'query: "SELECT * FROM {TABLE} WHERE id < {rows}"'
    features = [f"  {name}: {{dtype: int64}}" for name in INTS]
    features += [f"  {name}: {{dtype: float64}}" for name in FLOATS]
    features += ["  words: {dtype: string}", "  flag: {dtype: bool}", "  day: {dtype: int64, time_unit: days}",
                 "  label: {dtype: string}"]
    return "\n".join([
        f"name: {NAME}",
        "version: 1.0.0",
        f"source: {{builder: sql, connection: '{url}', {source}, key: id, partition_by: id}}",
        "splits: {train: 1.0}",
        "features:",
        *features,
        f"output: {{dir: {output}, shards: {SHARDS}}}",
        "",
    ])


class Paths(OutputPaths):
    def __init__(self, out: str) -> None:
        super().__init__(out, NAME)
        self.spec = self.file(f"{NAME}.yaml")
        self.hand = self.file("hand")
        self.memory = self.file("memory")


# ---- the two builds ----------------------------------------------------------------------------------

def build_ours(spec: str, output: str) -> Any:
    import tfrecord_builder as tb

    return tb.build(spec, output=output, overwrite=True, workers=WORKERS)


def build_by_hand(server: Any, folder: str) -> int:
    """The hand-written way: a server-side cursor, a tf.train.Example per row, round-robin shards."""
    import tensorflow as tf

    def int64(value: int) -> Any:
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    def double(value: float) -> Any:
        return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))

    def text(value: str) -> Any:
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode("utf-8")]))

    count = 0
    with server.connect(autocommit=False) as connection, record_writers(shard_paths(folder, NAME, SHARDS)) as writers:
        with connection.cursor(name="rows") as cursor:
            cursor.itersize = ITERSIZE
            cursor.execute(f"SELECT {', '.join(name for name, _ in COLUMNS)} FROM {TABLE}")
            for id_, small, count_, score, big, x, y, z, words, flag, day, label in cursor:
                feature = {"id": int64(id_), "small": int64(small), "count": int64(count_), "score": int64(score),
                           "big": int64(big), "x": double(x), "y": double(y), "z": double(z), "words": text(words),
                           "flag": int64(int(flag)), "day": int64((day - EPOCH).days), "label": text(label)}
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writers[count % SHARDS].write(example.SerializeToString())
                count += 1
    return count


def records_in(files: list[str]) -> int:
    import tensorflow as tf

    return sum(1 for file in files for _ in tf.data.TFRecordDataset(file))


# ---- memory ------------------------------------------------------------------------------------------

# One build in a fresh process; prints its peak RSS (kB): the process itself, and its largest worker.
MEASURE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[4])
import tfrecord_builder as tb
start = time.perf_counter()
tb.build(sys.argv[1], output=sys.argv[2], overwrite=True, workers=int(sys.argv[3]))
print(json.dumps({"seconds": time.perf_counter() - start,
                  "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "workers_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def peak_memory(spec: str, output: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", MEASURE, spec, output, str(WORKERS), ROOT],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"the measured build failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- the report --------------------------------------------------------------------------------------

def report(rows: int, repeats: int, results: list[Result], memory: list[dict[str, Any]], found: list[Target],
           info: dict[str, Any], loaded: float, loads: list[list[float]]) -> str:
    memory_rows = [[f"{entry['rows']:,}", f"{entry['self_kb'] / 1024:,.0f} MiB", f"{entry['workers_kb'] / 1024:,.0f} MiB",
                    f"{entry['seconds']:.1f}"] for entry in memory]
    return "\n".join([
        f"## PostgreSQL: {rows:,} rows x {len(COLUMNS)} columns, best of {repeats}",
        "",
        f"{machine_line(info)}. Load average (1, 5, 15 min) at the start {loads[0]}, at the end {loads[1]} "
        f"(a shared machine). Table loaded with COPY in {loaded:.1f} s.",
        "",
        f"### Build (a table of the server -> {SHARDS} TFRecord shards)",
        "",
        results_table(results, "rows", "the hand-written loop"),
        "",
        f"### Peak memory of our build ({WORKERS} workers, a fresh process each)",
        "",
        markdown_table(["rows", "build process", "largest worker", "time (s)"], ["---:", "---:", "---:", "---:"],
                       memory_rows),
        "",
        "### Targets",
        "",
        targets_table(found),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--rows", 1_000_000, "rows of the table (default 1000000)")
    args = parser.parse_args(argv)
    if args.rows < 4 * WORKERS:
        parser.error("--rows: expected at least 8")
    paths = Paths(os.path.abspath(args.out))
    for folder in (paths.root, paths.hand, paths.memory):
        os.makedirs(folder, exist_ok=True)
    loads = [[round(load, 2) for load in os.getloadavg()]]

    from support.postgres_server import start

    server, stop = start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the server too (`finally`)
    try:
        loaded = load(server, args.rows)
        print(f"loaded {args.rows:,} rows in {loaded:.1f} s", file=sys.stderr, flush=True)
        url = server.url(password=False)
        os.environ["PGPASSWORD"] = server.password  # libpq's: the spec holds no password
        env = {**os.environ, "PYTHONPATH": ROOT}
        # memory first, while this process is small (a child's peak RSS starts from its parent's)
        memory = []
        for size in (args.rows // 4, args.rows):
            spec = os.path.join(paths.memory, f"rows-{size}.yaml")
            with open(spec, "w", encoding="utf-8") as file:
                file.write(spec_text(url, f"build-{size}", None if size == args.rows else size))
            memory.append({"rows": size, **peak_memory(spec, os.path.join(paths.memory, f"build-{size}"), env)})
            print(f"memory at {size:,} rows: {memory[-1]}", file=sys.stderr, flush=True)

        import tensorflow  # noqa: F401  (imported before anything is timed)

        with open(paths.spec, "w", encoding="utf-8") as file:
            file.write(spec_text(url, os.path.basename(paths.ours)))
        built: dict[str, Any] = {}

        def ours() -> None:
            built["info"] = build_ours(paths.spec, paths.ours)

        def hand() -> None:
            built["hand"] = build_by_hand(server, paths.hand)

        times = best_of_rounds(args.repeats, [ours, hand])
        info_ours = built["info"]
        ours_files = [os.path.join(info_ours.path, name) for name in info_ours.splits["train"].files]
        counted = {"ours": records_in(ours_files), "hand": records_in(shard_paths(paths.hand, NAME, SHARDS))}
        if counted != {"ours": args.rows, "hand": args.rows} or built["hand"] != args.rows:
            raise RuntimeError(f"records: expected {args.rows} each, counted {counted}")
    finally:
        stop()
    loads.append([round(load, 2) for load in os.getloadavg()])

    results = with_ratios([Result("build", OURS, times[0].seconds, args.rows, times[0].cpu_seconds),
                           Result("build", HAND, times[1].seconds, args.rows, times[1].cpu_seconds)], HAND)
    small, large = memory
    peak = max(large["self_kb"], large["workers_kb"]) / max(small["self_kb"], small["workers_kb"])
    found = [Target(f"PostgreSQL build, {WORKERS} workers", times[1].seconds / times[0].seconds, SPEED_BAR,
                    note="hand-written time / ours"),
             Target(f"PostgreSQL build, peak memory at {large['rows']:,} rows over {small['rows']:,}", peak,
                    MEMORY_BAR, at_least=False, note="largest peak RSS (process or worker), larger / smaller")]
    import tensorflow as tf
    import tfrecord_builder as tb

    info = machine({"tensorflow": tf.__version__, "tfrecord_builder": tb.__version__}, load_average=True)
    print(report(args.rows, args.repeats, results, memory, found, info, loaded, loads))
    write_json(paths.json, {"rows": args.rows, "columns": len(COLUMNS), "repeats": args.repeats, "workers": WORKERS,
                            "shards": SHARDS, "machine": info, "load_average": loads, "load_seconds": loaded,
                            "records": counted, "memory": memory}, results, [], targets=found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
