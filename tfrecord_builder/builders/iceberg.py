"""`builder: iceberg`: the rows of an Apache Iceberg table (`table: db.name`, read with the
`pyiceberg` package from its catalog) at `snapshot: ID`, or at its current snapshot; one read
task per data file (with the delete files that apply to it).

The catalog is pyiceberg's: `catalog: {name, uri, warehouse}` in the spec (a SQL catalog, e.g.
`uri: sqlite:///catalog.db`, a path relative to the spec's folder), or, without `uri`, the
catalog `name` as pyiceberg's own configuration defines it (~/.pyiceberg.yaml, or the
environment's PYICEBERG_CATALOG__NAME__URI...), where a password belongs: never in the spec,
whose text the dataset's metadata keeps.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterator

import pyarrow as pa

from ..errors import DataError
from ..spec.fields import describe, unknown_key_message
from ..optional import imported
from .lake import DataFile, LakeBuilder


DEFAULT_CATALOG = "default"
CATALOG_KEYS = {"name": "the catalog's name in pyiceberg (default: default)",
                "uri": "a SQL catalog's database, e.g. sqlite:///catalog.db (relative to the spec's folder)",
                "warehouse": "the folder (or URI) new tables' files go to"}


class IcebergBuilder(LakeBuilder):
    """An Iceberg table's rows at one snapshot (`source.snapshot`, else the current one)."""

    SOURCE_KEYS = frozenset({"table", "snapshot", "catalog"})

    @classmethod
    def check_source(cls, source: Any, at: Any) -> None:
        """It names its table; a catalog has only the keys pyiceberg's SQL catalog is given here,
        and no password in its URI (the dataset's metadata keeps the spec)."""
        super().check_source(source, at)
        if not source.table:
            raise at.error("the iceberg builder needs `table: namespace.name`")
        if source.catalog is None:
            return
        for key, value in source.catalog.items():
            if key not in CATALOG_KEYS:
                raise (at / "catalog" / key).error(unknown_key_message(key, CATALOG_KEYS))
            if not isinstance(value, str) or not value:
                raise (at / "catalog" / key).error(f"expected text, received {describe(value)}")
        if re.match(r"[a-z][a-z0-9+.-]*://[^/@]*:[^/@]*@", source.catalog.get("uri", ""), re.IGNORECASE):
            raise (at / "catalog" / "uri").error("the URI holds a password, which the dataset's metadata would keep; "
                                                 "leave `uri` out and define the catalog in ~/.pyiceberg.yaml or "
                                                 "PYICEBERG_CATALOG__<NAME>__URI instead")
    READS_PATH = False

    def snapshot(self) -> dict[str, Any]:
        return {"format": "iceberg", "table": self.table_name(), "snapshot": self.version()}

    def table_name(self) -> str:
        return self.spec.source.table if self.spec is not None and self.spec.source.table else "iceberg"

    def _chosen_version(self) -> int:
        table = self._table()
        ids = [item.snapshot_id for item in table.snapshots()]
        asked = self.spec.source.snapshot if self.spec is not None else None
        if asked is None:
            current = table.current_snapshot()
            if current is None:
                raise DataError(f"{self.table_name()}: the table has no snapshot yet (nothing was written to it)")
            return current.snapshot_id
        if asked not in ids:
            there = ", ".join(map(str, ids)) if ids else "none"
            message = f"{self.table_name()}: no snapshot {asked}; the table's snapshots: {there}"
            raise self.spec.error(("source", "snapshot"), message) if self.spec is not None else DataError(message)
        return asked

    def _catalog(self) -> Any:
        given = dict(self.spec.source.catalog or {}) if self.spec is not None else {}
        return open_catalog(given, self.spec.base_dir if self.spec is not None else ".")

    def _table(self) -> Any:
        try:
            return load_table(self._catalog(), self.table_name())
        except MissingTable as error:
            raise self.spec.error(("source", "table"), str(error)) if self.spec is not None else error from None

    def _scan(self, version: int, columns: list[str] | None = None) -> Any:
        return self._table().scan(snapshot_id=version, selected_fields=tuple(columns) if columns else ("*",))

    def _schema(self, version: int) -> Any:
        from pyiceberg.io.pyarrow import schema_to_pyarrow

        return schema_to_pyarrow(self._scan(version).projection(), include_field_ids=False)

    def _planned(self, version: int, columns: tuple[str, ...]) -> tuple[Any, Any, dict[str, Any]]:
        """The table, its scan of `columns` at `version` and the scan's file tasks by data file,
        planned once a builder (a read of the manifests each: planned again for every data file,
        a table of n files cost n plans)."""
        plans = self.__dict__.setdefault("_plans", {})
        if (version, columns) not in plans:
            table = self._table()
            scan = table.scan(snapshot_id=version, selected_fields=columns)
            tasks = {task.file.file_path: task for task in planned(scan, self.table_name(), version)}
            plans[version, columns] = (table, scan, tasks)
        return plans[version, columns]

    def __getstate__(self) -> dict[str, Any]:
        """Sent to another process without its plans (the catalog's objects stay here)."""
        return {key: value for key, value in self.__dict__.items() if key != "_plans"}

    def _files(self, version: int) -> list[str]:
        return [task.file.file_path for task in planned(self._scan(version), self.table_name(), version)]

    def _file_batches(self, part: DataFile, columns: list[str], batch_size: int) -> Iterator[Any]:
        table, scan, tasks = self._planned(part.version, tuple(columns))
        task = tasks.get(part.file)
        if task is None:
            raise DataError(f"{self.table_name()}, snapshot {part.version}: no data file {part.file}")
        from pyiceberg.io.pyarrow import ArrowScan

        reader = ArrowScan(table.metadata, table.io, scan.projection(), scan.row_filter, scan.case_sensitive)
        try:
            yield from reader.to_record_batches([task])
        except (OSError, pa.ArrowException) as error:  # a data file missing or damaged
            raise DataError(f"{self.table_name()}, {part.file}: {_first_line(error)}") from None


class MissingTable(DataError):
    """No such table in the catalog (the message names those there are)."""


def open_catalog(given: dict[str, str], base_dir: str) -> Any:
    """The catalog `given` names (the spec's `catalog:` keys; a SQLite catalog's file and a
    warehouse folder relative to `base_dir`), opened by pyiceberg."""
    catalogs: Any = imported("pyiceberg.catalog")
    if catalogs is None:
        raise DataError("iceberg sources need the pyiceberg package: pip install 'tfrecord-builder[lake]'")
    given = dict(given)
    name = given.pop("name", DEFAULT_CATALOG)
    if "uri" in given:
        given["uri"] = _local_uri(given["uri"], base_dir)
        given.setdefault("type", "sql")
    if "warehouse" in given:
        given["warehouse"] = _local_warehouse(given["warehouse"], base_dir)
    try:
        return catalogs.load_catalog(name, **given)
    except Exception as error:  # pyiceberg's own kinds; its message names the key, never a password
        raise DataError(f"iceberg catalog `{name}`: can't be opened: {_first_line(error)}") from None


def load_table(catalog: Any, name: str) -> Any:
    """The table `name` (`namespace.name`) of the catalog; MissingTable naming those there are."""
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    try:
        return catalog.load_table(name)
    except (NoSuchTableError, NoSuchNamespaceError, ValueError):
        raise MissingTable(_missing(catalog, name)) from None
    except Exception as error:  # the catalog's database can't be read
        raise DataError(f"{name}: can't be read from the catalog: {_first_line(error)}") from None


def _missing(catalog: Any, name: str) -> str:
    namespace = name.rpartition(".")[0]
    try:
        tables = [".".join(item) for item in catalog.list_tables(namespace)] if namespace else []
    except Exception:  # no such namespace either: name those there are
        tables = []
    if tables:
        there = f"the catalog's tables in `{namespace}`: {', '.join(sorted(tables))}"
    else:
        namespaces = [".".join(item) for item in catalog.list_namespaces()]
        there = f"the catalog's namespaces: {', '.join(sorted(namespaces)) or 'none'}"
    return f"no table `{name}` in the iceberg catalog; {there}"


def table_batches(table: Any, snapshot_id: int) -> tuple[Any, Iterator[Any]]:
    """The Arrow schema of the table at a snapshot and its rows as Arrow record batches (every
    data file, its delete files applied), as the build's tasks read them."""
    from pyiceberg.io.pyarrow import ArrowScan, schema_to_pyarrow

    scan = table.scan(snapshot_id=snapshot_id)
    reader = ArrowScan(table.metadata, table.io, scan.projection(), scan.row_filter, scan.case_sensitive)
    return (schema_to_pyarrow(scan.projection(), include_field_ids=False),
            reader.to_record_batches(planned(scan, ".".join(table.name()), snapshot_id)))


def planned(scan: Any, name: str, snapshot_id: int) -> list[Any]:
    """The scan's file tasks, each data file with the delete files that apply to it; a table with
    equality deletes (Flink's and others' row-level deletes by value), which pyiceberg can't apply,
    refused in one line rather than read with the deleted rows in it."""
    try:
        return list(scan.plan_files())
    except (ValueError, NotImplementedError) as error:
        if "equality delete" not in str(error):
            raise
        raise DataError(f"{name}, snapshot {snapshot_id}: the table has equality delete files, which pyiceberg can't "
                        "apply yet; compact the table so they are applied to its data files (Spark's "
                        "`CALL system.rewrite_data_files`), or read a snapshot from before them") \
            from None


def _local_uri(uri: str, base_dir: str) -> str:
    """A SQLite catalog's file relative to the spec's folder (`sqlite:///catalog.db`); any other
    URI as it is."""
    prefix = "sqlite:///"
    if uri.startswith(prefix) and not uri.startswith(prefix + "/") and uri != prefix + ":memory:":
        return prefix + os.path.join(os.path.abspath(base_dir), uri[len(prefix):])
    return uri


def _local_warehouse(warehouse: str, base_dir: str) -> str:
    """A warehouse folder relative to the spec's folder, as a file:// URI; a URI as it is."""
    if "://" in warehouse:
        return warehouse
    return "file://" + os.path.join(os.path.abspath(base_dir), os.path.expanduser(warehouse))


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
