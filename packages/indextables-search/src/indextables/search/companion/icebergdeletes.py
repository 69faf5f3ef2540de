"""Rows of an Iceberg table's data files that its delete files delete.

Iceberg's merge-on-read deletes come in two kinds (Iceberg spec, "Delete Formats"):

- position delete files: rows ``(file_path, pos)``, each deleting the row at 0-based
  position ``pos`` of the data file ``file_path``. They are applied here like a
  Delta deletion vector: the deleted rows of each data file become a
  :class:`~.deletions.DeletedRows`, never indexed, and part of the file's identity
  (a delete that changes a file's deleted rows re-indexes it at the next sync);
- equality delete files: rows deleted by their column values. They are refused with
  an error naming the file (pyiceberg cannot plan them either).

pyiceberg matches delete files to data files (by sequence number and partition);
this module reads the position delete files it names (Parquet; the ``file_path`` and
``pos`` columns) through the source's filesystem, each file once per listing.
Deletion vectors in Puffin files (Iceberg v3) and ORC delete files are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.companion.deletions import DeletedRows
from indextables.search.errors import CompanionSourceError

__all__ = ["equality_delete_files", "equality_error", "position_deletions"]

_COLUMNS = ["file_path", "pos"]


def position_deletions(
    tasks: Iterable[Any], read_parquet: Callable[[str, list[str]], pa.Table]
) -> dict[str, DeletedRows]:
    """The deleted rows of each data file of pyiceberg's scan ``tasks`` that has any.

    Keys are the data files' paths as the table's metadata spells them.
    ``read_parquet(path, columns)`` reads a delete file's columns.

    Raises:
        CompanionSourceError: an equality delete file, a delete file in a format other
            than Parquet, or one that cannot be read (each named).
    """
    from pyiceberg.manifest import DataFileContent, FileFormat

    read: dict[str, dict[str, list[int]]] = {}
    found: dict[str, DeletedRows] = {}
    for task in tasks:
        data_path = str(task.file.file_path)
        positions: list[int] = []
        for delete in task.delete_files:
            path = str(delete.file_path)
            if delete.content == DataFileContent.EQUALITY_DELETES:
                raise equality_error([path])
            if delete.file_format != FileFormat.PARQUET:
                kind = getattr(delete.file_format, "value", delete.file_format)
                raise CompanionSourceError(
                    f"Iceberg delete file {path!r} is in {kind} format: only "
                    "Parquet position delete files are applied (Puffin deletion vectors and "
                    "ORC delete files are not read yet)"
                )
            if path not in read:
                read[path] = _by_data_file(_read(path, read_parquet))
            positions.extend(read[path].get(data_path, ()))
        if positions:
            found[data_path] = DeletedRows.from_rows(positions)
    return found


def _by_data_file(rows: pa.Table) -> dict[str, list[int]]:
    """A position delete file's rows grouped by the data file they delete from."""
    grouped = rows.filter(pc.is_valid(rows.column("pos"))).group_by("file_path")
    lists = grouped.aggregate([("pos", "list")])
    return dict(
        zip(
            lists.column("file_path").to_pylist(),
            lists.column("pos_list").to_pylist(),
            strict=True,
        )
    )


def _read(path: str, read_parquet: Callable[[str, list[str]], pa.Table]) -> pa.Table:
    try:
        rows = read_parquet(path, _COLUMNS)
    except CompanionSourceError:
        raise
    except (OSError, pa.ArrowException, KeyError) as exc:
        raise CompanionSourceError(
            f"Iceberg position delete file {path!r} cannot be read: {exc}"
        ) from None
    try:
        return pa.table(
            {
                "file_path": rows.column("file_path").cast(pa.string()),
                "pos": rows.column("pos").cast(pa.int64()),
            }
        )
    except (KeyError, pa.ArrowException):
        raise CompanionSourceError(
            f"Iceberg position delete file {path!r} has no file_path/pos columns"
        ) from None


def equality_delete_files(table: Any, snapshot: Any) -> list[str]:
    """The equality delete files live in ``snapshot`` of the pyiceberg ``table``."""
    from pyiceberg.manifest import DataFileContent, ManifestContent

    found = []
    for manifest in snapshot.manifests(table.io):
        if manifest.content != ManifestContent.DELETES:
            continue
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.data_file.content == DataFileContent.EQUALITY_DELETES:
                found.append(str(entry.data_file.file_path))
    return sorted(found)


def equality_error(paths: list[str]) -> CompanionSourceError:
    """The error for a table with equality delete files (named)."""
    shown = ", ".join(repr(p) for p in paths[:5])
    more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
    return CompanionSourceError(
        f"Iceberg equality delete file(s) {shown}{more}: companion indexes apply position "
        "deletes only (rows deleted by column values cannot be masked by position); "
        "rewrite the table's data files (e.g. Spark's rewrite_data_files) and sync again"
    )
