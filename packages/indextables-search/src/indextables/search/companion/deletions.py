"""Rows of a source file that a Delta deletion vector deletes.

A deletion vector (Delta protocol, "Deletion Vectors") marks rows of one data
file as deleted by their position in the file (0-based, in the file's row
order). A companion never indexes those rows: :mod:`.build` adds only the live
runs of each batch (keeping each row's key, ``file number << 32 | row``), so a
search, a count and an aggregate agree with a reader that honours the vector.

The vectors are decoded by ``deltalake`` (``DeltaTable.deletion_vectors()``,
which resolves inline, relative and absolute vectors and checkpoints alike).
A vector's identity is a digest of the rows it deletes: a vector that changes
on an unchanged path changes the file's identity, so :mod:`.sync` re-indexes
its split.
"""

from __future__ import annotations

import bisect
import hashlib
from array import array
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.errors import CompanionSourceError

__all__ = ["DeletedRows", "delta_deletions"]


@dataclass(frozen=True, slots=True, eq=False)
class DeletedRows:
    """The sorted, distinct row positions a deletion vector deletes from one file.

    Attributes:
        rows: the deleted positions (0-based rows of the file), ascending.
    """

    rows: array[int]  # typecode "Q"

    @classmethod
    def from_selection(cls, selection: pa.Array) -> DeletedRows:
        """From a keep mask (True: the row is live); rows past its end are live."""
        keep = selection.cast(pa.bool_()).fill_null(True)
        deleted = pc.indices_nonzero(pc.invert(keep))
        return cls(array("Q", deleted.to_pylist()))

    @classmethod
    def from_rows(cls, rows: Any) -> DeletedRows:
        """From any iterable of row positions (sorted and made distinct here)."""
        return cls(array("Q", sorted({int(r) for r in rows})))

    @property
    def cardinality(self) -> int:
        """How many rows are deleted."""
        return len(self.rows)

    @property
    def identity(self) -> str:
        """A digest of the deleted rows: equal exactly when the same rows are deleted."""
        digest = hashlib.sha256(self.rows.tobytes()).hexdigest()[:32]
        return f"deleted={len(self.rows)}:{digest}"

    def live_runs(self, first_row: int, length: int) -> list[tuple[int, int]]:
        """The runs of live rows among rows ``first_row .. first_row + length - 1``, as
        ``(offset from first_row, run length)``, in order."""
        rows = self.rows
        position = bisect.bisect_left(rows, first_row)
        end = first_row + length
        runs = []
        start = first_row
        while position < len(rows) and rows[position] < end:
            deleted = rows[position]
            if deleted > start:
                runs.append((start - first_row, deleted - start))
            start = deleted + 1
            position += 1
        if start < end:
            runs.append((start - first_row, end - start))
        return runs


def delta_deletions(
    table: Any, files: Collection[str], relative: Callable[[str], str]
) -> dict[str, DeletedRows]:
    """The deleted rows of each file of a Delta table's snapshot that has a deletion vector.

    ``table`` is a ``deltalake.DeltaTable``; ``files`` are its data files' normalised
    relative paths (the keys of the answer); ``relative`` turns a file's path relative
    to the table URI (as deltalake spells it) into that form.

    Raises:
        CompanionSourceError: the installed deltalake cannot decode deletion vectors,
            or names a file that is not in the snapshot.
    """
    if not hasattr(table, "deletion_vectors"):
        raise CompanionSourceError(
            f"Delta table {table.table_uri!r} has deletion vectors and the installed "
            "deltalake cannot decode them (DeltaTable.deletion_vectors needs deltalake "
            ">= 1.6); a companion would return deleted rows: upgrade deltalake"
        )
    try:
        reader = pa.RecordBatchReader.from_stream(table.deletion_vectors())
        batches = list(reader)
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(
            f"the deletion vectors of Delta table {table.table_uri!r} cannot be read: {exc}"
        ) from None
    except Exception as exc:  # deltalake's own error types (DeltaError and its kinds)
        raise CompanionSourceError(
            f"the deletion vectors of Delta table {table.table_uri!r} cannot be read: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    table_uri = str(table.table_uri).rstrip("/") + "/"
    found: dict[str, DeletedRows] = {}
    for batch in batches:
        names = batch.column("filepath").to_pylist()
        vectors = batch.column("selection_vector")
        for number, uri in enumerate(names):
            text = str(uri)
            path = relative(text[len(table_uri) :] if text.startswith(table_uri) else text)
            if path not in files:
                raise CompanionSourceError(
                    f"Delta table {table.table_uri!r}: a deletion vector names {uri!r}, "
                    "which is not one of the snapshot's data files"
                )
            deleted = DeletedRows.from_selection(vectors[number].values)
            if deleted.cardinality:
                found[path] = deleted
    return found
