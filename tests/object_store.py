"""An S3-compatible server on 127.0.0.1 (moto in server mode) for tests: clients reach it through
the standard `AWS_ENDPOINT_URL` and credential variables, as a user's bucket is reached."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def s3():
    """A fresh S3 server on 127.0.0.1 with a bucket `data`; the variables that point clients at it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    import boto3

    boto3.client("s3").create_bucket(Bucket="data")
    yield env
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()  # fsspec keeps filesystems by their arguments: this one's server stops
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    server.stop()


def objects(prefix: str) -> dict[str, bytes]:
    """Every object below `s3://data/PREFIX/`, by its name below it."""
    import boto3

    client = boto3.client("s3")
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="data", Prefix=prefix + "/"):
        for entry in page.get("Contents", []):
            found[entry["Key"][len(prefix) + 1:]] = client.get_object(Bucket="data", Key=entry["Key"])["Body"].read()
    return found


@pytest.fixture(scope="session")
def gcs_server():
    """One Cloud Storage emulator (gcp-storage-emulator, in memory) on 127.0.0.1 for the session,
    with a bucket `data`, and the variables that point gcsfs at it: STORAGE_EMULATOR_HOST, and
    fsspec's own `FSSPEC_GS_<OPTION>` settings for an anonymous client of project `test`."""
    import socket

    from gcp_storage_emulator.server import create_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket="data")
    server.start()
    env = {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}", "FSSPEC_GS_TOKEN": "anon",
           "FSSPEC_GS_PROJECT": "test"}
    yield server, env
    server.stop()


@pytest.fixture
def gcs(gcs_server):
    """The session's emulator with an empty bucket `data`; its variables set for the test and the
    processes it starts."""
    server, env = gcs_server
    server.wipe(keep_buckets=True)
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    yield env
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def gs_objects(prefix: str) -> dict[str, bytes]:
    """Every object below `gs://data/PREFIX/`, by its name below it (read with gcsfs, as our code
    reads them)."""
    from tfrecord_builder import fs as _fs

    _fs.place_problem("gs://data")  # gcsfs's settings for an emulator, before it is imported
    import gcsfs

    store = gcsfs.GCSFileSystem(token="anon", project="test")
    store.invalidate_cache()
    root = f"data/{prefix}/"
    return {path[len(root):]: store.cat_file(path) for path in store.find(root)}
