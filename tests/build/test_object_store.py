"""Building into an object store: an S3-compatible server on 127.0.0.1 (moto in server mode),
reached through the standard `AWS_ENDPOINT_URL` and credential variables, as a user's bucket is.

A build into `s3://bucket/...`, with either runner, holds exactly the bytes of a local-disk build;
`dataset_info.json` is written last (the commit); a missing bucket or an endpoint that doesn't
answer is one line, exit 2, before any work; a scheme without a filesystem names its package.
Two builds of one URL exclude each other by a lock object in the store, taken over from a killed
build once stale.
"""
from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, write_spec
from support.engines import BEAM_PYTHON, SMALL_TASKS, run_in as _cli, table as _table, tabular as _tabular
from support.object_store import gs_objects, objects as _objects
from support.reading import files_of as _files

LOCK_STALE = "TFRECORD_BUILDER_LOCK_STALE_SECONDS"  # shortened here, to take a killed build's lock over
SINCE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
pytestmark = pytest.mark.server


STORES = {"s3": _objects, "gs": gs_objects}


def _on_disk(folder: Path, spec: dict, rows: str) -> tuple[Path, Path]:
    """`spec` of `rows` (rows.csv) written into `folder` and built there on the local disk (from
    many read tasks), as every store's build of it is compared with: the spec's path and the build's."""
    path = write_spec(folder, spec, {"rows.csv": rows})
    disk = _cli(sys.executable, "build", str(path), "--output", str(folder / "disk"), env=SMALL_TASKS)
    assert disk.returncode == 0, disk.stderr
    return path, folder / "disk"


@pytest.fixture(scope="module")
def table_on_disk(tmp_path_factory) -> tuple[Path, Path]:
    """A table with a bad row built on disk, once for both stores."""
    return _on_disk(tmp_path_factory.mktemp("table"), _tabular(), _table(2000, bad=(9,)))


@pytest.mark.beam
@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_both_runners_write_the_local_bytes_into_a_bucket(request, scheme, table_on_disk):
    request.getfixturevalue({"s3": "s3", "gs": "gcs"}[scheme])
    objects = STORES[scheme]
    spec, disk = table_on_disk
    local = _cli(sys.executable, "build", str(spec), "--output", f"{scheme}://data/local", env=SMALL_TASKS)
    assert local.returncode == 0, local.stderr
    assert f"rows 1.0.0 -> {scheme}://data/local/rows/1.0.0" in local.stdout
    beam = _cli(BEAM_PYTHON, "build", str(spec), "--output", f"{scheme}://data/beam", "--runner", "beam", env=SMALL_TASKS)
    assert beam.returncode == 0, beam.stderr
    on_disk = _files(disk / "rows" / "1.0.0")
    from_local, from_beam = objects("local/rows/1.0.0"), objects("beam/rows/1.0.0")
    assert sorted(from_local) == sorted(from_beam) == sorted(on_disk)
    for name, content in on_disk.items():
        if name == "rows_input.py":  # its DATA_DIR names where it was built
            assert from_local[name] == content.replace(str(disk).encode(), f"{scheme}://data/local".encode())
            assert from_beam[name] == content.replace(str(disk).encode(), f"{scheme}://data/beam".encode())
        else:
            assert from_local[name] == from_beam[name] == content, name
    assert not objects("local/rows/.1.0.0.building") and not objects("beam/rows/.1.0.0.building")
    summary = _cli(sys.executable, "inspect", f"{scheme}://data/beam/rows/1.0.0")
    assert summary.returncode == 0, summary.stderr
    assert f"folder: {scheme}://data/beam/rows/1.0.0" in summary.stdout and "label: classes bird 468, cat 459, dog 458" in summary.stdout
    unfinished = _cli(sys.executable, "inspect", f"{scheme}://data/beam/rows")
    assert (unfinished.returncode, unfinished.stderr) == (1, f"error: {scheme}://data/beam/rows: not a finished dataset (no "
                                                             "dataset_info.json); build it, or finish it with --resume\n")


@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_a_file_ending_in_a_carriage_return_keeps_it_in_the_bucket(request, scheme, tmp_path):
    """A shard ends with its last record's CRC, which may end in any byte: uploaded, it is the
    same bytes (the Cloud Storage emulator dropped a final carriage return until the fixture
    read its uploads exactly; support/object_store.py)."""
    from tfrecord_builder import fs

    request.getfixturevalue({"s3": "s3", "gs": "gcs"}[scheme])
    contents = {"cr": b"record\x00\r", "crlf": b"\r\n", "all": bytes(range(256)) * 5 + b"\r"}
    for name, content in contents.items():
        (tmp_path / name).write_bytes(content)
        fs.upload(str(tmp_path / name), f"{scheme}://data/bytes/{name}")
    assert STORES[scheme]("bytes") == contents


@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_a_dataset_in_a_bucket_is_replaced_only_with_overwrite(request, scheme, tmp_path):
    request.getfixturevalue({"s3": "s3", "gs": "gcs"}[scheme])
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(300)})
    assert _cli(sys.executable, "build", str(spec), "--output", f"{scheme}://data/again").returncode == 0
    again = _cli(sys.executable, "build", str(spec), "--output", f"{scheme}://data/again")
    assert (again.returncode, again.stderr) == (2, f"error: {scheme}://data/again/rows/1.0.0: a dataset is already built "
                                                   "there; pass --overwrite to replace it\n")
    write_spec(tmp_path, _tabular(), {"rows.csv": _table(200)})
    replaced = _cli(sys.executable, "build", str(spec), "--output", f"{scheme}://data/again", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    import json

    info = json.loads(STORES[scheme]("again/rows/1.0.0")["tfrecord_builder.json"])
    assert sum(split["num_examples"] for split in info["splits"].values()) == 200 + 39


@pytest.mark.parametrize("output, env, message", [
    ("s3://no-such-bucket/x", {}, "error: s3://no-such-bucket: no such bucket (or no right to see it)\n"),
    # one attempt: botocore's retries of a refused connection, with backoff, only wait longer
    ("s3://data/x", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"},
     "error: s3://data/x/rows: can't write to the object store: EndpointConnectionError: Could not connect to the "
     "endpoint URL: \"http://127.0.0.1:9/data\"\n"),
    ("gs://no-such-bucket/x", {}, "error: gs://no-such-bucket: no such bucket (or no right to see it)\n"),
    ("gs://data/x", {"STORAGE_EMULATOR_HOST": "http://127.0.0.1:9"},
     "error: gs://data/x/rows: can't write to the object store: http://127.0.0.1:9 doesn't answer (Connection "
     "refused)\n"),
    ("az://data/x", {}, "error: az://data/x: reading and writing az:// needs adlfs: pip install adlfs\n"),
    ("nosuchscheme://data/x", {}, "error: nosuchscheme://data/x: no filesystem for nosuchscheme:// is installed "
                                  "(fsspec knows none by that name)\n"),
], ids=["no-bucket", "no-endpoint", "gs-no-bucket", "gs-no-endpoint", "no-adlfs", "unknown-scheme"])
def test_a_store_we_cannot_write_is_one_line_before_any_work(s3, gcs, tmp_path, output, env, message):
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(50)})
    done = _cli(sys.executable, "build", str(spec), "--output", output, env=env)
    assert (done.returncode, done.stderr) == (2, message)


@pytest.fixture(scope="module")
def long_table_on_disk(tmp_path_factory) -> tuple[Path, Path]:
    """40,000 rows in 32 shards, long enough a build to kill mid-write, built on disk once for both stores."""
    generator = random.Random(5)
    rows = ["id,x,label"] + [f"{row},{generator.random():.6f},{generator.choice(['cat', 'dog'])}" for row in range(40000)]
    spec = {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"},
            "features": {"x": {"dtype": "float32"}, "label": {"type": "class_label", "names": ["cat", "dog"]}},
            "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 16}}
    return _on_disk(tmp_path_factory.mktemp("long"), spec, "\n".join(rows) + "\n")


@pytest.mark.beam
@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_a_killed_beam_job_into_a_bucket_resumes_from_the_shards_its_workers_wrote_there(request, scheme,
                                                                                         long_table_on_disk):
    """Beam's workers write shards straight into the bucket's staging prefix (a remote runner's
    workers have no disk in common with the machine that started the job), so a killed job's
    finished shards are found there by `--resume`."""
    request.getfixturevalue({"s3": "s3", "gs": "gcs"}[scheme])
    objects = STORES[scheme]
    path, disk = long_table_on_disk
    command = [str(BEAM_PYTHON), "-m", "tfrecord_builder", "build", str(path), "--output", f"{scheme}://data/killed",
               "--runner", "beam"]
    job = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **SMALL_TASKS}, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    staged = "killed/rows/.1.0.0.building/manifest"
    deadline = time.monotonic() + 300
    while job.poll() is None and time.monotonic() < deadline:
        if objects(staged):
            break
        time.sleep(0.02)
    os.killpg(job.pid, signal.SIGKILL)  # the job and every worker, mid-write
    job.wait()
    entries = list(objects(staged))
    assert 0 < len(entries) < 32 and not objects("killed/rows/1.0.0")
    resume = ["build", str(path), "--output", f"{scheme}://data/killed", "--runner", "beam", "--resume"]
    if scheme == "s3":  # the gs:// emulator doesn't enforce conditional writes (ifGenerationMatch): no lock there
        refused = _cli(BEAM_PYTHON, *resume, env=SMALL_TASKS)  # the killed job's lock is fresh: it may be running
        assert refused.returncode == 2 and re.fullmatch(_refusal("killed", job.pid), refused.stderr), refused.stderr
        time.sleep(2.1)  # the store's clock counts whole seconds
    resumed = _cli(BEAM_PYTHON, *resume, env={**SMALL_TASKS, LOCK_STALE: "2"})  # once stale, taken over
    assert resumed.returncode == 0, resumed.stderr
    if scheme == "s3":
        assert resumed.stderr.startswith("warning: s3://data/killed/rows/1.0.0: took over the lock of a build that "), \
            resumed.stderr
    on_disk = _files(disk / "rows" / "1.0.0")
    in_bucket = objects("killed/rows/1.0.0")
    assert sorted(in_bucket) == sorted(on_disk)
    for name, content in on_disk.items():
        if name.endswith((".json", ".py")):
            assert in_bucket[name] == content.replace(str(disk).encode(), f"{scheme}://data/killed".encode()), name
        else:
            assert in_bucket[name] == content, name
    assert sorted(objects("killed/rows")) == sorted(f"1.0.0/{name}" for name in on_disk)  # no staging, no lock


@pytest.mark.beam
def test_dataflow_is_refused_a_local_output_or_source_before_it_starts(s3, tmp_path):
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(50)})
    options = ["--pipeline-options", "--runner=DataflowRunner --project=p --region=r --temp_location=gs://t/tmp"]
    to_disk = _cli(BEAM_PYTHON, "build", str(spec), "--output", str(tmp_path / "out"), "--runner", "beam", *options)
    assert (to_disk.returncode, to_disk.stderr) == (2, "error: --output: a DataflowRunner job's workers can't write "
                                                       "to this machine's disk; give a bucket (--output gs://BUCKET/datasets)\n")
    from_disk = _cli(BEAM_PYTHON, "build", str(spec), "--output", "s3://data/flow", "--runner", "beam", *options)
    assert (from_disk.returncode, from_disk.stderr) == (2, f"error: {tmp_path / 'rows.csv'}: a DataflowRunner job's "
                                                           "workers can't read this machine's disk; copy the source to "
                                                           "a bucket and give its URL as the path\n")
    assert not (tmp_path / "out").exists() and not _objects("flow")


def test_verify_and_inspect_read_a_dataset_in_a_bucket_as_on_disk(s3, tmp_path):
    """verify and inspect read the shards through fsspec; a flipped byte in an object is found
    and named as it is on disk."""
    import boto3

    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(400)})
    for output in (str(tmp_path / "disk"), "s3://data/read"):
        assert _cli(sys.executable, "build", str(spec), "--output", output).returncode == 0
    disk, url = str(tmp_path / "disk" / "rows" / "1.0.0"), "s3://data/read/rows/1.0.0"
    verified = [_cli(sys.executable, "verify", place) for place in (disk, url)]
    assert [done.returncode for done in verified] == [0, 0], verified[1].stderr
    assert verified[1].stdout == verified[0].stdout.replace(disk, url)
    shown = [_cli(sys.executable, "inspect", place, "--show", "3", "--split", "test") for place in (disk, url)]
    assert [done.returncode for done in shown] == [0, 0], shown[1].stderr
    assert shown[1].stdout == shown[0].stdout.replace(disk, url) and "example 2: {" in shown[1].stdout
    shard = "rows-test.tfrecord-00001-of-00003"
    lone = [_cli(sys.executable, "inspect", f"{place}/{shard}", "--show", "1") for place in (disk, url)]
    assert [done.returncode for done in lone] == [0, 0] and lone[1].stdout == lone[0].stdout.replace(disk, url)
    client = boto3.client("s3")
    data = bytearray(client.get_object(Bucket="data", Key=f"read/rows/1.0.0/{shard}")["Body"].read())
    data[40] ^= 0xFF
    client.put_object(Bucket="data", Key=f"read/rows/1.0.0/{shard}", Body=bytes(data))
    damaged = _cli(sys.executable, "verify", url)
    assert damaged.returncode == 1 and f"{shard}: sha256 " in damaged.stdout + damaged.stderr


def test_tensorflow_readers_name_what_they_cannot_read_and_modules_go_to_the_bucket(s3, tmp_path):
    """TensorFlow 2.21 has no s3:// filesystem: loading says so in one line and names the ways
    around it; the generated module can still be written there (`-o`, `output.module`)."""
    spec = write_spec(tmp_path, {**_tabular(), "output": {"shards": 1, "module": "s3://data/code/"}},
                      {"rows.csv": _table(60)})
    built = _cli(sys.executable, "build", str(spec), "--output", "s3://data/modules")
    assert built.returncode == 0, built.stderr
    in_dataset = _objects("modules/rows/1.0.0")["rows_input.py"]
    assert _objects("code") == {"rows_input.py": in_dataset} and b"DATA_DIR = 's3://data/modules/rows/1.0.0'" in in_dataset
    generated = _cli(sys.executable, "generate", str(spec), "-o", "s3://data/generated/input.py")
    assert generated.returncode == 0 and generated.stdout == "wrote s3://data/generated/input.py\n", generated.stderr
    assert list(_objects("generated")) == ["input.py"]
    import tfrecord_builder as tb

    with pytest.raises(tb.UsageError) as raised:
        tb.load("s3://data/modules/rows/1.0.0")
    assert str(raised.value).startswith("s3://data/modules/rows/1.0.0: TensorFlow ") and \
        "has no filesystem for s3:// (it reads local paths and gs://)" in str(raised.value)


def test_a_dataset_in_gcs_reads_back_as_on_disk_and_tensorflow_is_refused_the_emulator(gcs, tmp_path):
    """tb.read, verify and inspect read gs:// through gcsfs (which honours STORAGE_EMULATOR_HOST):
    the records and the reports of a local build; TensorFlow's own gs:// filesystem doesn't honour
    it, so tb.load says so in one line instead of asking Google's servers for the bucket."""
    import numpy as np

    import tfrecord_builder as tb

    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(300)})
    for output in (str(tmp_path / "disk"), "gs://data/read"):
        built = _cli(sys.executable, "build", str(spec), "--output", output)
        assert built.returncode == 0, built.stderr
    disk, url = str(tmp_path / "disk" / "rows" / "1.0.0"), "gs://data/read/rows/1.0.0"
    for split in ("train", "test"):
        from_disk, from_bucket = list(tb.read(disk, split)), list(tb.read(url, split))
        assert len(from_bucket) == len(from_disk) > 0
        assert all(a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a) for a, b in zip(from_disk, from_bucket))
    verified = [_cli(sys.executable, "verify", place) for place in (disk, url)]
    assert [done.returncode for done in verified] == [0, 0], verified[1].stderr
    assert verified[1].stdout == verified[0].stdout.replace(disk, url)
    shown = [_cli(sys.executable, "inspect", place, "--show", "2", "--split", "test") for place in (disk, url)]
    assert [done.returncode for done in shown] == [0, 0] and shown[1].stdout == shown[0].stdout.replace(disk, url)
    with pytest.raises(tb.UsageError) as raised:
        tb.load(url)
    assert str(raised.value).startswith(f"{url}: TensorFlow ") and str(raised.value).endswith(
        "'s gs:// filesystem doesn't honour STORAGE_EMULATOR_HOST (it asks storage.googleapis.com), so it can't "
        "read an emulator's bucket; tb.read, `tfrecord-builder inspect` and `verify` read it through gcsfs")


def test_refused_credentials_are_one_line_and_nothing_is_written(tmp_path):
    """A server that checks credentials (moto counts the requests it lets through unsigned: one,
    to make the bucket) refuses the build's, its reads and the verify's: one line each, exit 2."""
    import boto3

    # moto in a process of its own (its settings are read once, at import), on a port the system
    # chooses as it binds, which it says once it serves
    serve = ("import threading\n"
             "from moto.server import ThreadedMotoServer\n"
             "server = ThreadedMotoServer(ip_address='127.0.0.1', port=0, verbose=False)\n"
             "server.start()\n"
             "print(server.get_host_and_port()[1], flush=True)\n"
             "threading.Event().wait()  # serving until terminated\n")
    server = subprocess.Popen([sys.executable, "-c", serve], env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "1"},
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(server.stdout.readline())
        env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "nobody",
               "AWS_SECRET_ACCESS_KEY": "wrong", "AWS_DEFAULT_REGION": "us-east-1"}
        boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], aws_access_key_id="nobody",
                     aws_secret_access_key="wrong", region_name="us-east-1").create_bucket(Bucket="locked")
        spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(50)})
        done = _cli(sys.executable, "build", str(spec), "--output", "s3://locked/out", env=env)
        assert done.returncode == 2 and done.stderr.startswith("error: s3://locked/out/rows: access refused (") and \
            done.stderr.count("\n") == 1, done.stderr
        for command in (("verify", "s3://locked/out/rows/1.0.0"), ("inspect", "s3://locked/out/rows/1.0.0")):
            read = _cli(sys.executable, *command, env=env)
            assert read.returncode == 2 and read.stderr.startswith("error: s3://locked/out/rows/1.0.0") and \
                "access refused (" in read.stderr and read.stderr.count("\n") == 1, read.stderr
    finally:
        server.terminate()
        server.wait()


def _as_on_disk(disk, prefix: str) -> None:
    """The dataset below `s3://data/PREFIX/rows/1.0.0` holds the local build's bytes (its module
    names where it was built), and no staging prefix or lock is left beside it."""
    on_disk, in_bucket = _files(disk / "rows" / "1.0.0"), _objects(f"{prefix}/rows/1.0.0")
    assert sorted(in_bucket) == sorted(on_disk)
    for name, content in on_disk.items():
        assert in_bucket[name] == content.replace(str(disk).encode(), f"s3://data/{prefix}".encode()), name
    assert sorted(_objects(f"{prefix}/rows")) == sorted(f"1.0.0/{name}" for name in on_disk)  # no lock, no staging


def _refusal(prefix: str, pid: int) -> str:
    """The one line a build is refused with while another (this machine's `pid`) holds the lock."""
    folder = f"s3://data/{prefix}/rows/1.0.0"
    return (rf"error: {re.escape(folder)}: another build of this dataset is running \(host "
            rf"{re.escape(socket.gethostname())}, pid {pid}, since {SINCE}\); wait for it to end; if it was killed, "
            rf"its lock s3://data/{prefix}/rows/\.1\.0\.0\.lock is taken over by a build started after {SINCE} "
            rf"\(300 s after its last refresh\), or remove the lock if you know no build is running\n")


def test_two_builds_of_one_url_started_at_once_one_is_refused_and_the_other_finishes(s3, tmp_path):
    """Two machines building one URL: the lock object, created only if absent, lets one through."""
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(6000)})
    assert _cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "disk"), env=SMALL_TASKS).returncode == 0
    command = [sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", "s3://data/twice"]
    builds = [subprocess.Popen(command, cwd=ROOT, env={**os.environ, **SMALL_TASKS}, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outputs = [build.communicate(timeout=600) for build in builds]
    codes = [build.returncode for build in builds]
    assert sorted(codes) == [0, 2], outputs
    winner, loser = codes.index(0), codes.index(2)
    assert re.fullmatch(_refusal("twice", builds[winner].pid), outputs[loser][1]), outputs[loser][1]
    assert outputs[winner][1] == ""
    _as_on_disk(tmp_path / "disk", "twice")


HELD_BUILDER = '''
import os
import time
import tfrecord_builder as tb


class Held(tb.Builder):
    """Rows of one number each. Where HELD_UNTIL names a file, the build first says it is
    reading (the file HELD_STARTED, made now: the build holds its lock) and reads nothing until
    that file exists: a build that holds its lock as long as the test wants, however fast or
    slow the machine."""

    def generate(self, split):
        until = os.environ.get("HELD_UNTIL")
        if until:
            open(os.environ["HELD_STARTED"], "w").close()
            deadline = time.monotonic() + 600  # a test that never lets go fails on its own, not hangs
            while not os.path.exists(until) and time.monotonic() < deadline:
                time.sleep(0.01)
        for number in range(300):
            yield f"n{number}", {"x": number}
'''


def _held_build(tmp_path, prefix: str) -> tuple[Path, subprocess.Popen]:
    """A build into s3://data/PREFIX held for good while it holds its lock (HELD_BUILDER), once
    it is seen reading: its spec, and its process (a session of its own)."""
    spec = write_spec(tmp_path, {"name": "rows", "source": {"builder": "held.py:Held", "path": "held.py"},
                                 "features": {"x": {"dtype": "int64"}}, "splits": {"train": 0.8, "test": 0.2}},
                      {"held.py": HELD_BUILDER})
    started = tmp_path / "started"
    job = subprocess.Popen([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                            f"s3://data/{prefix}"], cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "HELD_UNTIL": str(tmp_path / "never"), "HELD_STARTED": str(started)})
    while not started.exists():  # the build's own event: it is reading its source, its lock taken
        assert job.poll() is None, f"the build ended before it read its source: {job.stderr.read()}"
        time.sleep(0.01)
    assert list(_objects(f"{prefix}/rows")) == [".1.0.0.lock"]
    return spec, job


def test_a_killed_build_leaves_its_lock_which_a_build_takes_over_only_once_stale(s3, tmp_path):
    """SIGKILL leaves the lock object; the next build is refused while it is fresh, and takes it
    over with a warning once it has gone the stale time (shortened here) without a refresh."""
    spec, job = _held_build(tmp_path, "stale")
    os.killpg(job.pid, signal.SIGKILL)  # the build and its workers, holding the lock
    job.wait()
    assert list(_objects("stale/rows")) == [".1.0.0.lock"]
    assert _cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "disk")).returncode == 0
    refused = _cli(sys.executable, "build", str(spec), "--output", "s3://data/stale")
    assert refused.returncode == 2 and re.fullmatch(_refusal("stale", job.pid), refused.stderr), refused.stderr
    time.sleep(2.1)  # the store's clock counts whole seconds: the lock is older than 2 s after this
    taken = _cli(sys.executable, "build", str(spec), "--output", "s3://data/stale", env={LOCK_STALE: "2"})
    assert taken.returncode == 0, taken.stderr
    assert re.fullmatch(rf"warning: s3://data/stale/rows/1\.0\.0: took over the lock of a build that stopped \d+ s ago "
                        rf"\(host {re.escape(socket.gethostname())}, pid {job.pid}, since {SINCE}\), a killed build's: "
                        r"its lock s3://data/stale/rows/\.1\.0\.0\.lock went more than 2 s without a refresh\n",
                        taken.stderr), taken.stderr
    _as_on_disk(tmp_path / "disk", "stale")


def test_the_lock_is_gone_after_a_build_stopped_with_ctrl_c(s3, tmp_path):
    _, job = _held_build(tmp_path, "stopped")  # Ctrl-C lands while it holds the lock, whatever the machine's load
    os.killpg(job.pid, signal.SIGINT)  # as Ctrl-C sends it: to the build and its workers
    # a bound for a stuck build, not a measure: a busy machine takes seconds to stop one
    assert (job.wait(timeout=300), job.stderr.read()) == (130, "error: interrupted\n")
    assert _objects("stopped") == {}


def test_the_lock_is_gone_after_a_failed_build(s3, tmp_path):
    spec = {**_tabular()}
    del spec["on_error"]  # a bad value fails the build
    path = write_spec(tmp_path, spec, {"rows.csv": _table(300, bad=(120,))})
    failed = _cli(sys.executable, "build", str(path), "--output", "s3://data/failed")
    assert failed.returncode == 1 and failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1, \
        failed.stderr
    assert _objects("failed") == {}
