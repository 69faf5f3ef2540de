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

A split built by MERGE SPLITS holds its sources' segments unchanged, so the
row keys of a source's documents count that source's record batches: its
copy is the sources' copies one after the other, marked
:data:`ROW_KEYS_SEGMENTED`, and :data:`SEGMENT_BATCHES_METADATA` records, for
each segment id, the number of record batches before its source's. A hit's
row key is then ``(offset of its segment + batch) << 32 | row``. (A reader
that knows only :data:`ROW_KEYS_LAYOUT` takes such a copy as unkeyed and
decodes stored documents: never a wrong row.)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.splits.entryid import content_identity, on_forget

ROW_KEYS_METADATA = b"indextables.rowkeys"
ROW_KEYS_LAYOUT = b"batch<<32|row"
ROW_KEYS_SEGMENTED = b"(segment batches+batch)<<32|row"
SEGMENT_BATCHES_METADATA = b"indextables.segmentbatches"
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
_NUMERIC = (FieldKind.I64, FieldKind.F64, FieldKind.BOOL)
_ROW_MASK = (1 << 32) - 1


def copy_metadata() -> dict[bytes, bytes]:
    """The schema metadata of an Arrow copy whose rows documents reach by row key."""
    return {ROW_KEYS_METADATA: ROW_KEYS_LAYOUT}


def segmented_metadata(offsets: Mapping[str, int]) -> dict[bytes, bytes]:
    """The schema metadata of a merged copy: segment id (32 hex digits) -> batch offset."""
    text = json.dumps(dict(sorted(offsets.items())), separators=(",", ":"))
    return {ROW_KEYS_METADATA: ROW_KEYS_SEGMENTED, SEGMENT_BATCHES_METADATA: text.encode()}


def segment_batches(metadata: Mapping[bytes, bytes] | None) -> dict[str, int] | None:
    """The segment id -> batch offset map of a copy's schema metadata (None: plain keys).

    Raises:
        ValueError: a segmented copy whose map does not parse.
    """
    found = metadata or {}
    if found.get(ROW_KEYS_METADATA) != ROW_KEYS_SEGMENTED:
        return None
    table: Any = json.loads(found.get(SEGMENT_BATCHES_METADATA, b"null"))
    if not isinstance(table, dict):
        raise ValueError("the segment batch offsets of a merged Arrow copy are missing")
    return {str(k): int(v) for k, v in table.items()}


def segment_key(segment_id: str) -> str:
    """A segment id as its files name it (32 hex digits, no dashes)."""
    return segment_id.replace("-", "").lower()


def exact_in_docs(spec: FieldSpec | None, data_type: pa.DataType) -> bool:
    """True when a column's stored documents give back exactly what was written."""
    if spec is None or spec.kind not in _EXACT_IN_DOCS:
        return False
    return not (ct.is_nested(data_type) or ct.is_decimal(data_type))


def in_copy(spec: FieldSpec, data_type: pa.DataType, *, mode: str) -> bool:
    """Whether a writer in ``indexWriter.arrowCopy`` mode ``mode`` copies this column.

    Every mode copies the stored columns the doc store cannot give back exactly
    and date columns (a date beyond Tantivy's span is stored clamped). ``numeric``
    adds integer, float and boolean columns; ``all`` every stored column.
    """
    if not spec.stored:
        return False
    if mode == "all" or spec.kind is FieldKind.DATE or not exact_in_docs(spec, data_type):
        return True
    return mode == "numeric" and spec.kind in _NUMERIC


@dataclass(frozen=True, slots=True)
class RowCopy:
    """The Arrow copy of one split, opened for reads by row key.

    Attributes:
        path: the Arrow IPC file.
        columns: lowercase column name -> field index in the file.
        keyed: whether the split's documents carry row keys.
        segment_batches: a merged copy's segment id -> batch offset (None: plain keys).
        offsets: per segment ordinal, the batch offset of its row keys (see :meth:`resolved`).
    """

    path: str
    columns: Mapping[str, int]
    keyed: bool
    segment_batches: Mapping[str, int] | None = None
    offsets: tuple[int, ...] = ()

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

    def resolved(self, segment_ids: Sequence[str]) -> RowCopy:
        """This copy with the batch offset of each segment ordinal (``segment_ids``: meta.json's
        segments in order, as Tantivy numbers them).

        A merged copy naming no offset for one of the split's segments is not keyed.
        """
        if self.segment_batches is None or not self.keyed:
            return self
        try:
            offsets = tuple(self.segment_batches[segment_key(s)] for s in segment_ids)
        except KeyError:
            return dataclasses.replace(self, keyed=False)
        return dataclasses.replace(self, offsets=offsets)

    def row_keys(self, keys: Sequence[int], segment_ords: Sequence[int]) -> list[int]:
        """The copy's row keys of documents with row keys ``keys`` in segments ``segment_ords``."""
        if self.segment_batches is None:
            return list(keys)
        offsets = self.offsets
        return [k + (offsets[o] << 32) for k, o in zip(keys, segment_ords, strict=True)]

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


@on_forget
def _forget(directory: str) -> None:
    _open_copy.cache_clear()


@functools.lru_cache(maxsize=64)
def _open_copy(path: str, size: int, identity: str) -> RowCopy:
    with pa.memory_map(path) as source:
        schema = pa.ipc.open_file(source).schema
    metadata = schema.metadata or {}
    layout = metadata.get(ROW_KEYS_METADATA)
    try:
        batches = segment_batches(metadata)
    except (ValueError, TypeError):
        layout, batches = None, None  # an unreadable map: read stored documents instead
    return RowCopy(
        path=path,
        columns={n.lower(): i for i, n in enumerate(schema.names)},
        keyed=layout in (ROW_KEYS_LAYOUT, ROW_KEYS_SEGMENTED),
        segment_batches=batches,
    )
