"""An S3-compatible server on 127.0.0.1 (moto in server mode) for tests: clients reach it through
the standard `AWS_ENDPOINT_URL` and credential variables, as a user's bucket is reached. A test
can hold one request at its door (`GATE`), as a slow network would."""
from __future__ import annotations

import io
import json
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


class Gate:
    """Holds the first request whose method and path a test names until a later request it names
    has been answered, as a network slow for one connection would; the held request then reaches
    the server only if its client is still there to send it (a process killed meanwhile sends
    nothing more). Every other request passes as it comes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rule: tuple[str, re.Pattern[str], Callable[[str, str, bytes], bool], float] | None = None
        self.held: str | None = None  # the path of the request held
        self._held_call: str | None = None
        self._others: set[str] = set()  # the calls (botocore's invocation ids) for that path while held
        self.outcome: str | None = None  # "sent" (its client was there) or "dropped" (gone)
        self._released = threading.Event()

    def hold(self, method: str, path: str, until: Callable[[str, str, bytes], bool], seconds: float = 300.0) -> None:
        """Holds the first `method` request whose path matches the regular expression `path`,
        until a request for which `until(method, path and query, body)` is true has been
        answered, or for `seconds` at most (a test waiting for what never comes then fails on
        its own assertions rather than hanging)."""
        with self._lock:
            self._rule = (method, re.compile(path), until, seconds)
            self.held, self._held_call, self._others, self.outcome = None, None, set(), None
            self._released.clear()

    @property
    def again(self) -> int:
        """How many other calls (not retries of the one held) wrote what it writes while it was held."""
        return len(self._others)

    def clear(self) -> None:
        """No request held from now on; one held now is let go."""
        with self._lock:
            self._rule = None
        self._released.set()

    def wrap(self, app: Callable) -> Callable:
        def gated(environ: dict[str, Any], start_response: Callable) -> Any:
            rule = self._rule
            if rule is None:
                return app(environ, start_response)
            method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
            query = environ.get("QUERY_STRING", "")
            length = int(environ.get("CONTENT_LENGTH") or 0)
            chunked = environ.get("wsgi.input_terminated")  # werkzeug's: a chunked body, read to its end
            body = environ["wsgi.input"].read() if chunked else environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(body)
            hold = False
            call = environ.get("HTTP_AMZ_SDK_INVOCATION_ID", f"request {id(environ)}")  # one per call, its retries too
            with self._lock:
                if method == rule[0] and rule[1].search(path):
                    if self.held is None:
                        self.held, self._held_call, hold = path, call, True
                    elif path == self.held and self.outcome is None and call != self._held_call:
                        self._others.add(call)
            if hold:
                self._released.wait(rule[3])
                if not _connected(environ["werkzeug.socket"]):
                    self.outcome = "dropped"
                    start_response("503 Service Unavailable", [("Content-Length", "0")])
                    return [b""]
                self.outcome = "sent"
                return app(environ, start_response)
            answer = list(app(environ, start_response))  # answered before the held request goes on
            if self.held is not None and rule[2](method, f"{path}?{query}", body):
                self._released.set()
            return answer

        return gated


def _connected(connection: socket.socket) -> bool:
    """Whether the client of `connection` is still there: it hasn't closed it (its request was
    read whole before, so anything readable now is the end of the connection)."""
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


GATE = Gate()


@contextmanager
def s3_server() -> Iterator[dict[str, str]]:
    """A fresh S3 server on 127.0.0.1 with a bucket `data`, behind `GATE`: the variables that point
    clients at it (os.environ untouched: `pointed_at`)."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, GATE.wrap(DomainDispatcherApplication(create_backend_app)), threaded=True,
                         request_handler=MotoRequestHandler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    host, port = server.server_address[:2]
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    import boto3

    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                 aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                 region_name=env["AWS_DEFAULT_REGION"]).create_bucket(Bucket="data")
    try:
        yield env
    finally:
        server.shutdown()
        serving.join()


@contextmanager
def pointed_at(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """This process's clients pointed at the server of `env` (s3_server's), for the time of the
    `with`; then as they were, `GATE` open."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        import s3fs

        s3fs.S3FileSystem.clear_instance_cache()  # fsspec keeps filesystems by their arguments: this server goes
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        GATE.clear()


@pytest.fixture(scope="module")
def s3():
    """A fresh S3 server on 127.0.0.1 with a bucket `data`, behind `GATE`, for the module; the
    variables that point clients at it (set meanwhile)."""
    with s3_server() as env, pointed_at(env):
        yield env


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
    from gcp_storage_emulator import server as emulator
    from gcp_storage_emulator.server import create_server

    emulator._read_data = _exact_multipart(emulator)
    server = create_server("127.0.0.1", 0, in_memory=True, default_bucket="data")
    server.start()
    # the port the system chose as the server bound it (a port probed before could be taken by
    # then, by another test run on the machine: the emulator's thread would fail and start() wait)
    port = server._api._httpd.server_address[1]
    env = {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}", "FSSPEC_GS_TOKEN": "anon",
           "FSSPEC_GS_PROJECT": "test"}
    yield server, env
    server.stop()


def _exact_multipart(emulator: Any) -> Callable:
    """The emulator's request reader, but an upload's bytes taken from its multipart body as they
    are. The emulator parses the body as an e-mail, and gcsfs ends its lines with LF alone, so an
    object whose last byte is a carriage return lost it (a shard ends with its last record's CRC:
    1 in 256 of them did). The body's lines end as its first line does."""
    from email.message import Message

    original = emulator._read_data

    def read_data(request_handler: Any, query: Any) -> Any:
        content_type = request_handler.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/related"):
            return original(request_handler, query)
        raw = emulator._decode_raw_data(emulator._read_raw_data(request_handler), request_handler)
        header = Message()
        header["Content-Type"] = content_type
        newline = b"\r\n" if raw.split(b"\n", 1)[0].endswith(b"\r") else b"\n"
        delimiter = newline + b"--" + str(header.get_param("boundary")).encode()
        parts = [part[len(newline):].partition(newline * 2) for part in (newline + raw).split(delimiter)[1:-1]]
        (_, _, meta), (headers, _, content) = parts
        types = re.findall(rb"(?im)^content-type:[ \t]*([^;\r\n]+)", headers)
        return {"meta": json.loads(meta), "content": content,
                "content-type": types[0].decode().strip() if types else "application/octet-stream"}

    return read_data


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
