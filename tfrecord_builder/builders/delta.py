"""`builder: delta`: the rows of a Delta Lake table (a folder, read with the `deltalake`
package) at `version: N`, or at its latest version; one read task per data file."""
from __future__ import annotations

from typing import Any, Iterator

import pyarrow as pa

from .. import fs
from ..errors import DataError
from ..optional import imported
from .lake import DataFile, LakeBuilder



class DeltaBuilder(LakeBuilder):
    """A Delta table's rows at one version (`source.version`, else the latest)."""

    SOURCE_KEYS = frozenset({"version"})
    READS_FOLDER = True

    def snapshot(self) -> dict[str, Any]:
        return {"format": "delta", "version": self.version()}

    def table_name(self) -> str:
        return fs.basename(self.path.rstrip("/")) if self.path else "delta"

    def _chosen_version(self) -> int:
        latest = self._opened(None).version()
        asked = self.spec.source.version if self.spec is not None else None
        if asked is None:
            return latest
        if not 0 <= asked <= latest:
            raise self._error(f"{self.table_name()}: no version {asked}; the table's versions are 0 to {latest}")
        try:
            self._opened(asked)
        except DataError:  # an early version whose log was cleaned up
            raise self._error(f"{self.table_name()}: version {asked} can no longer be read (its log was removed); "
                              f"the table's latest version is {latest}") from None
        return asked

    def _error(self, message: str) -> Exception:
        if self.spec is not None:
            return self.spec.error(("source", "version"), message)
        return DataError(message)

    def _opened(self, version: int | None) -> Any:
        deltalake: Any = imported("deltalake")
        if deltalake is None:
            raise DataError("delta sources need the deltalake package: pip install 'tfrecord-builder[lake]'")
        if self.path is None:
            raise DataError("DeltaBuilder: the source needs a `path`, the table's folder")
        try:
            return deltalake.DeltaTable(self.path, version=version)
        except Exception as error:  # deltalake's TableNotFoundError, DeltaError...: its own kinds
            raise DataError(f"{self.path}: not a readable Delta table: {str(error).splitlines()[0]}") from None

    def _dataset(self, version: int) -> Any:
        try:
            return self._opened(version).to_pyarrow_dataset()
        except DataError:
            raise
        except Exception as error:  # a feature of the table deltalake can't give as Arrow (deletion vectors)
            raise DataError(f"{self.table_name()}, version {version}: can't be read as Arrow: "
                            f"{str(error).splitlines()[0]}") from None

    def _schema(self, version: int) -> Any:
        return self._dataset(version).schema

    def _files(self, version: int) -> list[str]:
        return [fragment.path for fragment in self._dataset(version).get_fragments()]

    def _file_batches(self, part: DataFile, columns: list[str], batch_size: int) -> Iterator[Any]:
        dataset = self._dataset(part.version)
        fragment = next((item for item in dataset.get_fragments() if item.path == part.file), None)
        if fragment is None:
            raise DataError(f"{self.table_name()}, version {part.version}: no data file {part.file}")
        import pyarrow.dataset as arrow_dataset

        scanner = arrow_dataset.Scanner.from_fragment(fragment, schema=dataset.schema, columns=columns,
                                                      batch_size=batch_size)
        try:
            yield from scanner.to_batches()
        except (OSError, pa.ArrowException) as error:  # a data file missing (vacuumed) or damaged
            raise DataError(f"{self.table_name()}, {part.file}: {str(error).splitlines()[0]}") from None
