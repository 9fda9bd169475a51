"""A PostgreSQL server on 127.0.0.1 for tests: Debian's binaries (/usr/lib/postgresql/N/bin), a
cluster of its own made by initdb in a temporary folder, a user who logs in with a password
(scram-sha-256 for every TCP connection), no Unix socket. Two test runs at once on one machine
(two clones) each start their own: the port is one free at start, and another is tried when
someone took it meanwhile. A cluster Debian's package started (port 5432) is neither used nor
disturbed. initdb and postgres refuse to run as root: as root, they run as the `postgres` system
user the package made, in a folder it owns."""
from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

START_SECONDS = 60  # a bound for a server that doesn't start, not a measure
PORT_TRIES = 5
READY = "database system is ready to accept connections"


@dataclass(frozen=True)
class Postgres:
    """A running server: where it listens, its user and password, and its database."""

    host: str
    port: int
    user: str
    password: str
    database: str

    def url(self, password: bool = True, database: str | None = None) -> str:
        """`postgresql://user[:password]@host:port/database`."""
        secret = f":{quote(self.password, safe='')}" if password else ""
        return f"postgresql://{self.user}{secret}@{self.host}:{self.port}/{database or self.database}"

    def connect(self, **options: Any) -> Any:
        """A psycopg connection (autocommit) as the user: the tests' independent reading."""
        import psycopg

        return psycopg.connect(**{"host": self.host, "port": self.port, "user": self.user, "password": self.password,
                                  "dbname": self.database, "autocommit": True, **options})


def binaries() -> str | None:
    """The folder of the newest installed PostgreSQL's initdb and postgres (None: none installed)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(folder: Path | None = None) -> tuple[Postgres, Any]:
    """A new server (and the function that stops it and removes its folder)."""
    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin: Debian's `postgresql`; make postgres)")
    as_user: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root, and no `postgres` system user to run PostgreSQL as (it refuses root)")
        as_user = "postgres"
    # a folder the server's user can reach: pytest's own (below /tmp/pytest-of-root) is root's alone
    home = Path(tempfile.mkdtemp(prefix="tfrecord-builder-postgres-", dir=str(folder) if folder and not as_user
                                 else "/tmp"))
    data = home / "data"
    password = "pw-" + secrets.token_hex(8)
    (home / "password").write_text(password + "\n")
    if as_user:
        shutil.chown(home, as_user)
        shutil.chown(home / "password", as_user)
    server = Postgres("127.0.0.1", 0, "tb", password, "rows")
    log = open(home / "postgres.log", "ab")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(home), "TZ": "UTC"}
    subprocess.run([os.path.join(bin_dir, "initdb"), "-D", str(data), "-U", server.user, "--pwfile",
                    str(home / "password"), "--auth-host=scram-sha-256", "--auth-local=reject", "-E", "UTF8",
                    "--locale=C", "--no-sync"], stdout=log, stderr=subprocess.STDOUT, user=as_user, env=env,
                   check=True)
    process: subprocess.Popen | None = None
    for _ in range(PORT_TRIES):
        port = _free_port()
        start_at = (home / "postgres.log").stat().st_size
        process = subprocess.Popen([os.path.join(bin_dir, "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p",
                                    str(port), "-c", "unix_socket_directories=", "-c", "fsync=off",
                                    "-c", "listen_addresses=127.0.0.1"],
                                   stdout=log, stderr=subprocess.STDOUT, user=as_user, env=env, start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        while process.poll() is None and READY not in _log_since(home, start_at):
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"PostgreSQL didn't start within {START_SECONDS} s: see {home / 'postgres.log'}")
            time.sleep(0.1)
        if process.poll() is None:
            server = Postgres(server.host, port, server.user, password, server.database)
            break
        if "could not bind" not in _log_since(home, start_at):  # another run took the port: try another
            pytest.fail(f"PostgreSQL didn't start: see {home / 'postgres.log'}")
        process = None
    if process is None:
        pytest.fail(f"PostgreSQL found no free port in {PORT_TRIES} tries: see {home / 'postgres.log'}")
    with server.connect(dbname="postgres") as connection:
        connection.execute(f"CREATE DATABASE {server.database}")

    def stop() -> None:
        process.send_signal(2)  # SIGINT: the fast shutdown
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(home, ignore_errors=True)

    return server, stop


def _log_since(home: Path, offset: int) -> str:
    with open(home / "postgres.log", "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """A PostgreSQL server on 127.0.0.1 with a database `rows`; stopped after the tests."""
    server, stop = start(tmp_path_factory.mktemp("postgres"))
    try:
        yield server
    finally:
        stop()
