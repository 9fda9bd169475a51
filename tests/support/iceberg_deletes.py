"""Row-level deletes committed to an Iceberg table as delete files (merge-on-read), as Spark and
Flink write them: a position delete file (the data file's path and a row's position in it) or an
equality delete file (rows by the value of a column). pyiceberg (0.12) reads both kinds but writes
neither (its own `delete` rewrites data files), so this writes the Parquet delete file and commits
it in a manifest of delete files through pyiceberg's own snapshot producer."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as parquet
from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestContent, ManifestEntry,
                                ManifestEntryStatus, ManifestWriterV2)
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record

# the reserved field ids of a position delete file's two columns (the Iceberg spec's)
FILE_PATH_ID, POS_ID = b"2147483546", b"2147483545"


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:  # type: ignore[override]  # a method in pyiceberg's base, not a property
        return ManifestContent.DELETES


class _AddDeleteFiles(_FastAppendFiles):
    """A snapshot holding every manifest of its parent and one more, of delete files."""

    delete_files: list[DataFile]

    def _manifests(self) -> list[Any]:
        manifests = super()._manifests()
        metadata = self._transaction.table_metadata
        with _DeleteManifestWriter(spec=metadata.spec(), schema=metadata.schema(), output_file=self.new_manifest_output(),
                                   snapshot_id=self._snapshot_id, avro_compression=self._compression) as writer:
            for delete_file in self.delete_files:
                writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id,
                                                   sequence_number=None, file_sequence_number=None,
                                                   data_file=delete_file))
        return manifests + [writer.to_manifest_file()]


def _commit(table: Any, delete_file: DataFile) -> Any:
    delete_file.spec_id = table.metadata.default_spec_id
    with table.transaction() as transaction:
        producer = _AddDeleteFiles(operation=Operation.DELETE, transaction=transaction, io=table.io)
        producer.delete_files = [delete_file]
        producer.commit()
    return table.refresh()


def delete_positions(table: Any, data_file: str, positions: list[int], folder: Path) -> Any:
    """The rows at `positions` of `data_file` (its path as the table names it) deleted by a
    position delete file written into `folder`; the table at its new snapshot."""
    path = folder / f"position-deletes-{len(list(folder.glob('*deletes*')))}.parquet"
    schema = pa.schema([pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": FILE_PATH_ID}),
                        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": POS_ID})])
    parquet.write_table(pa.table({"file_path": [data_file] * len(positions), "pos": sorted(positions)}, schema), path)
    return _commit(table, DataFile.from_args(
        content=DataFileContent.POSITION_DELETES, file_path=f"file://{path}", file_format=FileFormat.PARQUET,
        partition=Record(), record_count=len(positions), file_size_in_bytes=os.path.getsize(path)))


def delete_equal(table: Any, column: str, values: list[Any], folder: Path) -> Any:
    """The rows whose `column` holds one of `values` deleted by an equality delete file written
    into `folder`; the table at its new snapshot."""
    field = table.schema().find_field(column)
    path = folder / f"equality-deletes-{len(list(folder.glob('*deletes*')))}.parquet"
    arrow_type = table.schema().as_arrow().field(column).type
    schema = pa.schema([pa.field(column, arrow_type, False, {b"PARQUET:field_id": str(field.field_id).encode()})])
    parquet.write_table(pa.table({column: values}, schema), path)
    return _commit(table, DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES, file_path=f"file://{path}", file_format=FileFormat.PARQUET,
        partition=Record(), record_count=len(values), file_size_in_bytes=os.path.getsize(path),
        equality_ids=[field.field_id]))
