"""A split's Arrow copy of its rows: exact values for every column Tantivy cannot hold exactly.

Each split this package writes carries, beside the Tantivy files, an Arrow
IPC file of the stored columns exactly as they were handed over (decimals,
binary, nested values, dates of any year, float bits). Every document holds a
hidden fast field, its *row key* (``batch << 32 | row``: the record batch and
row of its row in that file), so a read served from search hits fetches such
columns by key instead of decoding stored documents. Only the record batches
that hold hits, and only the columns asked for, are decompressed.

Copies written before row keys existed are marked by the absence of
:data:`ROW_KEYS_METADATA` in their schema; their searched reads decode stored
documents as before.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.splits.entryid import content_identity

ROW_KEYS_METADATA = b"indextables.rowkeys"
ROW_KEYS_LAYOUT = b"batch<<32|row"
# Field kinds whose stored values read back exactly (dates: unless clamped, see convert).
_EXACT_IN_DOCS = (
    FieldKind.I64,
    FieldKind.F64,
    FieldKind.BOOL,
    FieldKind.DATE,
    FieldKind.STRING,
    FieldKind.TEXT,
    FieldKind.BYTES,
)
_ROW_MASK = (1 << 32) - 1


def copy_metadata() -> dict[bytes, bytes]:
    """The schema metadata of an Arrow copy whose rows documents reach by row key."""
    return {ROW_KEYS_METADATA: ROW_KEYS_LAYOUT}


def exact_in_docs(spec: FieldSpec | None, data_type: pa.DataType) -> bool:
    """True when a column's stored documents give back exactly what was written."""
    if spec is None or spec.kind not in _EXACT_IN_DOCS:
        return False
    return not (ct.is_nested(data_type) or ct.is_decimal(data_type))


@dataclass(frozen=True, slots=True)
class RowCopy:
    """The Arrow copy of one split, opened for reads by row key.

    Attributes:
        path: the Arrow IPC file.
        columns: lowercase column name -> field index in the file.
        keyed: whether the split's documents carry row keys.
    """

    path: str
    columns: Mapping[str, int]
    keyed: bool

    @classmethod
    def open(cls, path: str, *, identity: str | None = None) -> RowCopy | None:
        """The copy at ``path``, or None when the split has none.

        Opening an IPC file reads its footer (~20 ms for a 2M-row copy of 200
        record batches on a loaded machine, more than a selective search): the
        result is kept per path, size and content identity of the split
        directory holding it (:func:`~indextables.search.splits.entryid.content_identity`,
        or ``identity`` when the caller took it already), never by inode.
        """
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return None
        return _open_copy(path, size, identity or content_identity(os.path.dirname(path)))

    def has(self, name: str) -> bool:
        """True when the copy holds column ``name`` (case-insensitive)."""
        return name.lower() in self.columns

    def take(self, names: Sequence[str], keys: Sequence[int]) -> dict[str, pa.Array]:
        """Columns ``names`` (lowercase keys) at the rows of ``keys``, in the order of ``keys``."""
        wanted = sorted({n.lower() for n in names})
        order = sorted(range(len(keys)), key=keys.__getitem__)
        groups: dict[int, list[int]] = {}
        for position in order:
            groups.setdefault(keys[position] >> 32, []).append(keys[position] & _ROW_MASK)
        fields = [self.columns[n] for n in wanted]
        options = pa.ipc.IpcReadOptions(included_fields=fields)
        with pa.memory_map(self.path) as source:
            reader = pa.ipc.open_file(source, options=options)
            pieces = [reader.get_batch(b).take(pa.array(rows)) for b, rows in groups.items()]
            by_name = {n.lower(): i for i, n in enumerate(reader.schema.names)}
            table = pa.Table.from_batches(pieces, schema=reader.schema)
        inverse = [0] * len(keys)
        for rank, position in enumerate(order):
            inverse[position] = rank
        positions = pa.array(inverse, type=pa.int64())
        return {n: table.column(by_name[n]).combine_chunks().take(positions) for n in wanted}


@functools.lru_cache(maxsize=64)
def _open_copy(path: str, size: int, identity: str) -> RowCopy:
    with pa.memory_map(path) as source:
        schema = pa.ipc.open_file(source).schema
    metadata = schema.metadata or {}
    return RowCopy(
        path=path,
        columns={n.lower(): i for i, n in enumerate(schema.names)},
        keyed=metadata.get(ROW_KEYS_METADATA) == ROW_KEYS_LAYOUT,
    )
