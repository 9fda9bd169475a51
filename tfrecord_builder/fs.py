"""Files wherever they are: local paths through the os module (fast; atomic renames), URLs
(`s3://bucket/x`, `gs://...`, any scheme an installed fsspec filesystem serves) through fsspec.

The build writes a dataset into a staging place and publishes it. Locally that is a rename of a
folder. An object store has no rename: there each object is copied, and `dataset_info.json`,
written last, is the commit: a folder without it is no dataset (every reader refuses it).
"""
from __future__ import annotations

import functools
import glob
import io
import logging
import os
import posixpath
import re
import shutil
import socket
import urllib.parse
from datetime import datetime, timezone
from typing import IO, Any, Callable, Iterator, NamedTuple, TypeVar

from .atomic import AtomicFile, write_bytes
from .errors import UsageError

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# where a scheme's filesystem comes from, for the message when it is missing
T = TypeVar("T")
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
             "abfss": "adlfs", "hf": "huggingface_hub"}
# The schemes whose filesystem makes `pipe_file(mode="create")` a condition the store itself checks
# (S3's `If-None-Match: *`, GCS's `ifGenerationMatch=0`): of two writers, one gets FileExistsError.
# fsspec's fallback for the others looks, then writes: two writers between the two both win.
_CREATE_IN_STORE = {"s3", "s3a", "gs", "gcs"}
# An object's version as `info()` names it: it changes with every write of the object.
_VERSION_FIELD = {"s3": "ETag", "s3a": "ETag", "gs": "generation", "gcs": "generation"}
# `pipe_file`'s arguments for "only if the object is still this version", checked by the store
# (S3's `If-Match`). gcsfs's pipe_file takes no generation precondition (its upload's
# `ifGenerationMatch=N` would be gs://'s entry); a scheme not here can't be replaced conditionally.
GCS_CONNECT_SECONDS = 10.0
_IF_VERSION: dict[str, Callable[[str], dict[str, Any]]] = {
    "s3": lambda version: {"IfMatch": version}, "s3a": lambda version: {"IfMatch": version}}


def is_url(path: object) -> bool:
    return isinstance(path, str) and bool(URL.match(path))


def place_problem(path: object) -> str | None:
    """What is wrong with `path` as a place to read or write (a URL whose scheme no installed
    filesystem serves), or None."""
    if not is_url(path):
        return None
    scheme = str(path).split("://", 1)[0].lower()
    if scheme == "file":
        return None
    _emulator_settings()
    try:
        import fsspec

        fsspec.get_filesystem_class(scheme)
    except ImportError as error:
        package = _PACKAGES.get(scheme, str(error.name or "its fsspec filesystem"))
        return f"{path}: reading and writing {scheme}:// needs {package}: pip install {package}"
    except (ValueError, ModuleNotFoundError):
        return f"{path}: no filesystem for {scheme}:// is installed (fsspec knows none by that name)"
    return None


def _emulator_settings() -> None:
    """gcsfs (2025.5 on) asks each bucket's type over gRPC before its first use (hierarchical or
    zonal buckets take other calls); an emulator such as gcp-storage-emulator serves only JSON over
    HTTP, so the probe waits 60 s per bucket and per operation (an unknown type isn't cached), then
    falls back to the plain filesystem. With STORAGE_EMULATOR_HOST set we choose that plain
    filesystem at once through gcsfs's own switch, read when gcsfs is imported; a user's own
    setting of it wins."""
    if os.environ.get("STORAGE_EMULATOR_HOST"):
        os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    # gcsfs logs a failed request's traceback (logger.exception) before raising it; with no
    # logging configured Python prints that through its last-resort handler, above our one-line
    # error that already names the cause. A program that configures logging still gets them.
    logging.getLogger("gcsfs").addHandler(logging.NullHandler())


def _fs(path: str) -> tuple[Any, str]:
    import fsspec

    problem = place_problem(path)
    if problem:
        raise UsageError(problem)
    filesystem, inner = fsspec.core.url_to_fs(path)
    # fsspec caches listings per process: other processes (Beam's workers) write below our prefixes
    filesystem.invalidate_cache()
    return filesystem, inner


def _in_store(function: Callable[..., T]) -> Callable[..., T]:
    """`function` of a path; at a URL, the store's own failures (refused credentials, an endpoint
    that doesn't answer, botocore's and gcsfs's many kinds) become one UsageError naming the URL.
    A missing file stays FileNotFoundError: callers say what was expected there."""

    @functools.wraps(function)
    def call(path: str, *args: Any, **kwargs: Any) -> T:
        if not is_url(path):
            return function(path, *args, **kwargs)
        try:
            return function(path, *args, **kwargs)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, UsageError):
            raise
        except PermissionError as error:
            raise UsageError(f"{path}: access refused ({_first_line(error)})") from None
        except Exception as error:
            raise UsageError(f"{path}: can't reach the object store: {type(error).__name__}: "
                             f"{_first_line(error)}") from None

    return call


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def join(base: str, *parts: str) -> str:
    return posixpath.join(base, *parts) if is_url(base) else os.path.join(base, *parts)


def dirname(path: str) -> str:
    return posixpath.dirname(path.rstrip("/")) if is_url(path) else os.path.dirname(path)


def basename(path: str) -> str:
    return posixpath.basename(path.rstrip("/")) if is_url(path) else os.path.basename(path)


def absolute(path: str) -> str:
    return path.rstrip("/") if is_url(path) else os.path.abspath(path)


def resolve(path: str, folder: str) -> str:
    """`path` as written relative to `folder` (a spec's, a table's): a URL, or an absolute path,
    as it is; a local result normalised (`a/../b` is `b`)."""
    if is_url(path):
        return path
    if is_url(folder):
        return posixpath.join(folder, path)
    return os.path.normpath(os.path.join(folder, path))


@_in_store
def exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(path)
    fs, inner = _fs(path)
    return fs.exists(inner)


def pattern_files(path: str) -> list[str] | None:
    """The files a glob pattern (`ud/**/*.conllu`, `**` any folders deep) matches, sorted; None
    where `path` is no pattern (it names one file) or is a URL (a store's objects are named, not
    matched)."""
    if is_url(path) or not glob.has_magic(path):
        return None
    return sorted(match for match in glob.glob(path, recursive=True) if os.path.isfile(match))


@_in_store
def isdir(path: str) -> bool:
    if not is_url(path):
        return os.path.isdir(path)
    fs, inner = _fs(path)
    return fs.isdir(inner)


@_in_store
def size(path: str) -> int:
    """A file's size in bytes."""
    if not is_url(path):
        return os.path.getsize(path)
    filesystem, inner = _fs(path)
    return int(filesystem.size(inner))


@_in_store
def listdir(path: str) -> list[str]:
    """The names in a folder (an object store: below a prefix, one level)."""
    if not is_url(path):
        return os.listdir(path)
    fs, inner = _fs(path)
    return [posixpath.basename(entry.rstrip("/")) for entry in fs.ls(inner, detail=False)]


@_in_store
def open_file(path: str, mode: str = "rb") -> IO[Any]:
    """A file to read or write; a folder (in a store: a prefix) is IsADirectoryError in both places."""
    if not is_url(path):
        return open(path, mode)
    fs, inner = _fs(path)
    file = fs.open(inner, mode)
    # fsspec opens a prefix as an empty file, typed a directory in the details it read to size it
    if "r" in mode and (getattr(file, "details", None) or {}).get("type") == "directory":
        file.close()
        raise IsADirectoryError(path)
    return file


def read_bytes(path: str) -> bytes:
    """A whole file's bytes (a local path or a URL)."""
    if not is_url(path):  # (a photo of thousands: no wrapper, one test of the path)
        return _local_bytes(path)
    return _stored_bytes(path)


_FIRST_READ = 1 << 16  # most photos of a training set are smaller: read whole at once


def _local_bytes(path: str) -> bytes:
    """A local file's bytes in as few system calls as its size allows: a small one opened, read
    and closed (4 us a photo, where `open()`'s file objects cost 8 us), a larger one read on to the
    end. Errors are open's and read's."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        data = os.read(descriptor, _FIRST_READ)
        if len(data) < _FIRST_READ:  # a file's read comes short only at its end
            return data
        parts = [data, os.read(descriptor, max(os.fstat(descriptor).st_size - len(data), 0) + 1)]
        while parts[-1]:  # (one that grew meanwhile)
            parts.append(os.read(descriptor, 1 << 20))
        return b"".join(parts)
    finally:
        os.close(descriptor)


@_in_store
def _stored_bytes(url: str) -> bytes:
    with open_file(url) as file:
        return file.read()


def open_stream(path: str) -> io.BufferedReader:
    """A file to read front to back, with `peek`: a local file as `open` gives it; an object
    behind a 1 MiB buffer (fsspec's file has no `peek`, and each read of it is a Python call)."""
    if not is_url(path):
        return open(path, "rb")
    return io.BufferedReader(open_file(path), 1 << 20)


def path_or_file(path: str) -> str | IO[bytes]:
    """What to hand a library that opens files itself (pyarrow, gzip, bz2, lzma): a local path as
    it is (read natively, without a Python call per read); an object opened here (read by ranges),
    which the caller closes."""
    return path if not is_url(path) else open_file(path)


def open_whole(path: str, *, sync: bool = True) -> IO[bytes]:
    """A file to write whole or not at all, as a context manager: locally written aside and moved
    into place on leaving it without an error (AtomicFile; `sync`: fsynced first); in an object
    store the object itself, which appears whole once closed."""
    if not is_url(path):
        return AtomicFile(path, sync=sync)  # type: ignore[return-value]  # a context manager giving the file
    return open_file(path, "wb")


@_in_store  # an object is uploaded as it is closed, past open_file's own guard
def write_whole(path: str, data: bytes, *, sync: bool = True) -> str:
    """Writes `data` at `path` whole or not at all (locally its folder made if needed); returns `path`."""
    if not is_url(path):
        write_bytes(os.path.abspath(path), data, sync=sync)
        return path
    with open_file(path, "wb") as file:
        file.write(data)
    return path


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower()


def creates_in_store(url: str) -> bool:
    """Whether `create_exclusive` at `url` is one step of the store itself (so of two writers on two
    machines exactly one wins); a local path's O_EXCL is the kernel's."""
    return not is_url(url) or _scheme(url) in _CREATE_IN_STORE


@_in_store
def create_exclusive(path: str, data: bytes) -> bool:
    """Writes `data` at `path` only if nothing is there; False if something is. Locally O_EXCL;
    in a store a conditional create (see `creates_in_store`), whole or not at all."""
    if not is_url(path):
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        return True
    filesystem, inner = _fs(path)
    try:
        filesystem.pipe_file(inner, data, mode="create")
    except FileExistsError:
        return False
    return True


class Version(NamedTuple):
    """One write of an object: its tag (S3's ETag, GCS's generation) and when the store made it."""
    tag: str
    written: datetime


@_in_store
def version(url: str) -> Version | None:
    """The object at `url` as the store has it now, or None where there is none."""
    filesystem, inner = _fs(url)
    try:
        info = filesystem.info(inner)
    except FileNotFoundError:
        return None
    written = info.get("LastModified") or info.get("updated") or info.get("mtime")
    if written is None:
        try:
            written = filesystem.modified(inner)
        except NotImplementedError:  # no time known: it counts as written now (never stale)
            written = datetime.now(timezone.utc)
    if isinstance(written, (int, float)):  # a local file's
        written = datetime.fromtimestamp(written, timezone.utc)
    elif not isinstance(written, datetime):  # gcsfs's "2026-11-27T00:36:36.123Z"
        written = datetime.fromisoformat(str(written))
    if written.tzinfo is None:  # fsspec's own filesystems give UTC without saying so
        written = written.replace(tzinfo=timezone.utc)
    tag = info.get(_VERSION_FIELD.get(_scheme(url), "ETag"))
    return Version(str(tag if tag is not None else written.isoformat()), written)


@_in_store
def replace_if(url: str, data: bytes, tag: str) -> str | None:
    """Rewrites the object at `url` with `data` only if it is still the version `tag` (a
    compare-and-swap the store checks); its new tag, or None if it has changed or is gone.
    UsageError where the store offers no such condition (see `_IF_VERSION`)."""
    condition = _IF_VERSION.get(_scheme(url))
    if condition is None:
        raise UsageError(f"{url}: tfrecord-builder knows no conditional write for {_scheme(url)}:// to replace it "
                         "safely; remove it by hand once you know no build is using it")
    filesystem, inner = _fs(url)
    try:
        written = filesystem.pipe_file(inner, data, **condition(tag))
    except FileNotFoundError:
        return None
    except OSError as error:
        response = getattr(error.__cause__, "response", None) or {}
        if response.get("Error", {}).get("Code") == "PreconditionFailed":  # s3fs: OSError(EINVAL) from botocore's
            return None
        raise
    new = written.get(_VERSION_FIELD.get(_scheme(url), "ETag")) if isinstance(written, dict) else None
    if new is None:
        found = version(url)
        return found.tag if found is not None else None
    return str(new)


def makedirs(folder: str) -> None:
    """Makes a local folder and its parents (FileExistsError where a file is in the way); an
    object store has no folders, only the names of its objects: nothing to make there."""
    if not is_url(folder):
        os.makedirs(folder, exist_ok=True)


def remove(path: str) -> None:
    if not is_url(path):
        os.remove(path)
        return
    fs, inner = _fs(path)
    fs.rm(inner)


def rmtree(path: str) -> None:
    if not is_url(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    fs, inner = _fs(path)
    if fs.exists(inner):
        fs.rm(inner, recursive=True)


def upload(local: str, url: str) -> None:
    """Copies a local file to a URL."""
    fs, inner = _fs(url)
    fs.put_file(local, inner)


def copy(source: str, target: str) -> None:
    """Copies one object to another place in the same store (server-side where it can)."""
    fs, inner = _fs(source)
    fs.copy(inner, _fs(target)[1])


def walk_files(path: str) -> Iterator[str]:
    """Every file below a folder, as paths relative to it with `/`, sorted."""
    if not is_url(path):
        for root, _, files in os.walk(path):
            for name in files:
                yield os.path.relpath(os.path.join(root, name), path).replace(os.sep, "/")
        return
    fs, inner = _fs(path)
    prefix = inner.rstrip("/") + "/"
    for found in sorted(fs.find(inner)):
        yield found[len(prefix):] if found.startswith(prefix) else posixpath.basename(found)


def bucket(url: str) -> str:
    """The first part of a URL's path with its scheme (`s3://bucket`): what must exist to write there."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def store_problem(url: str) -> str | None:
    """What keeps us from writing below `url` (no such bucket, refused credentials, an endpoint
    that doesn't answer), found by writing and removing one small object; None if nothing does."""
    probe = join(url, ".tb-write-probe")
    unreachable = _gcs_unreachable(url)
    if unreachable:
        return unreachable
    try:
        fs, inner = _fs(bucket(url))
        try:
            fs.info(inner)
        except FileNotFoundError:
            return f"{bucket(url)}: no such bucket (or no right to see it)"
        with open_file(probe, "wb") as file:
            file.write(b"")
        remove(probe)
    except PermissionError as error:
        return f"{url}: access refused ({str(error).splitlines()[0]})"
    except UsageError:
        raise
    except Exception as error:  # botocore's own kinds: unreachable endpoint, refused credentials
        return f"{url}: can't write to the object store: {type(error).__name__}: {str(error).splitlines()[0]}"
    return None


def _gcs_unreachable(url: str) -> str | None:
    """For gs://, whether the endpoint (STORAGE_EMULATOR_HOST's, else Google's) takes a connection
    within GCS_CONNECT_SECONDS: gcsfs retries a connection it can't make six times with backoff,
    about a minute before it gives up."""
    if _scheme(url) not in ("gs", "gcs"):
        return None
    endpoint = os.environ.get("STORAGE_EMULATOR_HOST") or "https://storage.googleapis.com"
    place = urllib.parse.urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    port = place.port or (443 if place.scheme == "https" else 80)
    try:
        socket.create_connection((place.hostname or "", port), timeout=GCS_CONNECT_SECONDS).close()
    except OSError as error:
        return f"{url}: can't write to the object store: {endpoint} doesn't answer ({error.strerror or error})"
    return None


@_in_store
def files_below(url: str) -> dict[str, int]:
    """Every object below a URL's prefix, by its path relative to it (with `/`), with its size:
    one listing of the store, where a folder's walk would ask once per folder."""
    filesystem, inner = _fs(url)
    prefix = inner.rstrip("/") + "/"
    found = filesystem.find(inner, detail=True)
    return {name[len(prefix):]: int(entry.get("size") or 0) for name, entry in found.items()
            if name.startswith(prefix) and entry.get("type") != "directory"}


@_in_store
def subfolders(url: str) -> list[str]:
    """The names of the sub-prefixes right below a URL's prefix ("folders"), sorted."""
    filesystem, inner = _fs(url)
    return sorted(posixpath.basename(entry["name"].rstrip("/")) for entry in filesystem.ls(inner, detail=True)
                  if entry.get("type") == "directory")
