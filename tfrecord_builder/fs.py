"""Files wherever they are: local paths through the os module (fast; atomic renames), URLs
(`s3://bucket/x`, `gs://...`, any scheme an installed fsspec filesystem serves) through fsspec.

The build writes a dataset into a staging place and publishes it. Locally that is a rename of a
folder. An object store has no rename: there each object is copied, and `dataset_info.json`,
written last, is the commit: a folder without it is no dataset (every reader refuses it).
"""
from __future__ import annotations

import functools
import io
import logging
import os
import posixpath
import re
import shutil
from typing import IO, Any, Callable, Iterator, TypeVar

from .atomic import AtomicFile, write_bytes
from .errors import UsageError

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# where a scheme's filesystem comes from, for the message when it is missing
T = TypeVar("T")
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
             "abfss": "adlfs", "hf": "huggingface_hub"}


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
    if not is_url(path):
        return open(path, mode)
    fs, inner = _fs(path)
    return fs.open(inner, mode)


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


def write_whole(path: str, data: bytes, *, sync: bool = True) -> str:
    """Writes `data` at `path` whole or not at all (locally its folder made if needed); returns `path`."""
    if not is_url(path):
        write_bytes(os.path.abspath(path), data, sync=sync)
        return path
    with open_file(path, "wb") as file:
        file.write(data)
    return path


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
