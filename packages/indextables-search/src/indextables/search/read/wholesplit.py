"""Every row of a split, each column from its fastest exact source (a whole-split read).

A read of a split's every document (no query, or only conditions on partition
columns) needs no search hits and no row-key lookups. Each column of the read
comes from:

- the log, for a partition column (a constant column);
- the split's Arrow copy (:mod:`.rowcopy`), read whole from the memory-mapped IPC
  file, only the asked columns, when the copy holds the column and its rows are
  in the documents' order (proved once per split from the row keys, see
  :func:`copy_in_doc_order`);
- else the doc stores, decoded in bulk run by run in doc id order
  (:func:`~indextables.search.read.bulkrows.whole_columns`).

Rows come out in (segment ordinal, doc id) order, the order of the per-hit
path, ``WHOLE_ROWS`` at most per batch (a run the decoder cut between its threads
comes out as one batch per thread's piece: no concatenation copies them). A split
this plan cannot serve exactly (deleted documents: fewer live documents than the
stores hold; a column only the per-document path reads, such as a non-stored fast
field or a JSON object; a clamped date whose exact value is in a copy out of doc
order; doc stores that do not parse) gets None from :func:`whole_split_batches`:
the caller reads it as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import tantivy

from indextables.search.boundedcache import BoundedCache
from indextables.search.read import bulkrows
from indextables.search.read.bulkrows import SplitStores
from indextables.search.read.docstore import DecodeSession, DocStoreError
from indextables.search.read.docstore.pool import DecoderThreads
from indextables.search.read.rowcopy import RowCopy
from indextables.search.schema.mapping import ROW_KEY_FIELD, FieldSpec
from indextables.search.schema.partitionvalues import partition_column
from indextables.search.splits.entryid import on_forget

__all__ = ["ENABLED", "WHOLE_ROWS", "copy_in_doc_order", "whole_split_batches"]

#: Rows per batch of a whole-split read (one doc-store run, one slice of the copy).
WHOLE_ROWS = 65_536
#: Whether whole-split reads are taken at all (tests compare with the per-hit path).
ENABLED = True
_ROW_MASK = np.uint64((1 << 32) - 1)


@dataclass(frozen=True, slots=True)
class _Sources:
    """Where each column of a whole-split read comes from (lowercase names)."""

    partitions: Mapping[str, str | None]
    copied: frozenset[str]
    decoded: tuple[pa.Field, ...]


def whole_split_batches(
    directory: str,
    identity: str,
    searcher: tantivy.Searcher,
    schema: pa.Schema,
    *,
    partition_values: Mapping[str, str | None],
    fields: Mapping[str, FieldSpec],
    copy: RowCopy | None,
    threads: DecoderThreads = "auto",
    session: DecodeSession | None = None,
) -> Iterator[pa.RecordBatch] | None:
    """Every row of the split at ``directory`` in ``schema``, or None when this read cannot
    serve it exactly (see the module docstring; nothing was read then).

    ``copy``: the split's Arrow copy resolved to its segments (None: no copy).
    ``threads`` and ``session``: as :func:`~indextables.search.read.bulkrows.bulk_columns`.
    """
    if not ENABLED or not bulkrows.enabled():
        return None
    try:
        stores = bulkrows.split_stores(directory, identity=identity)
    except (DocStoreError, OSError):
        return None
    counts = [store.num_docs for store in stores.stores]
    if sum(counts) != searcher.num_docs:
        return None  # deleted documents: only the searcher knows which are alive
    sources = _sources(
        directory, identity, searcher, schema, partition_values, fields, copy, stores
    )
    if sources is None:
        return None
    return _batches(stores, counts, schema, sources, copy, threads, session)


def _sources(
    directory: str,
    identity: str,
    searcher: tantivy.Searcher,
    schema: pa.Schema,
    partition_values: Mapping[str, str | None],
    fields: Mapping[str, FieldSpec],
    copy: RowCopy | None,
    stores: SplitStores,
) -> _Sources | None:
    partitions = {k.lower(): v for k, v in partition_values.items()}
    data = [f for f in schema if f.name.lower() not in partitions]
    stored = [f for f in data if _stored(fields, f.name.lower())]
    in_copy = {f.name.lower() for f in stored if copy is not None and copy.has(f.name)}
    if in_copy:
        assert copy is not None
        if not copy_in_doc_order(directory, identity, searcher, copy, stores):
            # A decoded date may stand for a clamped one whose value only the copy has:
            # the per-hit path takes it from there by row key.
            return None
    decoded = tuple(f for f in data if f.name.lower() not in in_copy)
    if bulkrows.served(stores, decoded) != {f.name.lower() for f in decoded}:
        return None  # a column only the per-document path reads
    return _Sources(partitions, frozenset(in_copy), decoded)


def _batches(
    stores: SplitStores,
    counts: list[int],
    schema: pa.Schema,
    sources: _Sources,
    copy: RowCopy | None,
    threads: DecoderThreads,
    session: DecodeSession | None,
) -> Iterator[pa.RecordBatch]:
    cursor = _CopyCursor(copy, sources.copied) if sources.copied and copy is not None else None
    try:
        for ordinal, count in enumerate(counts):
            for start in range(0, count, WHOLE_ROWS):
                stop = min(count, start + WHOLE_ROWS)
                pieces = bulkrows.whole_columns(
                    stores, ordinal, start, stop, sources.decoded, threads=threads, session=session
                )
                for bulk in pieces:
                    # A piece of the decoder's threads, or the whole run when nothing is
                    # decoded from the stores.
                    rows = len(next(iter(bulk.arrays.values()))) if bulk.arrays else stop - start
                    yield _batch(schema, sources, bulk, cursor, rows)
    finally:
        if cursor is not None:
            cursor.close()


def _batch(
    schema: pa.Schema,
    sources: _Sources,
    bulk: bulkrows.BulkColumns,
    cursor: _CopyCursor | None,
    rows: int,
) -> pa.RecordBatch:
    # The next ``rows`` rows: decoded columns from ``bulk``, copied ones from the cursor.
    copied = cursor.take(rows) if cursor is not None else {}
    arrays = []
    for arrow_field in schema:
        key = arrow_field.name.lower()
        if key in sources.partitions:
            value = sources.partitions[key]
            arrays.append(partition_column(value, arrow_field.type, rows))
        elif key in copied:
            arrays.append(_typed(copied[key], arrow_field.type))
        else:
            arrays.append(bulk.arrays[key])
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _typed(array: pa.Array, data_type: pa.DataType) -> pa.Array:
    return array if array.type == data_type else array.cast(data_type)


def _stored(fields: Mapping[str, FieldSpec], key: str) -> bool:
    spec = fields.get(key)
    return spec is None or spec.stored


class _CopyCursor:
    """The copy's rows in file order, some columns, handed out ``n`` rows at a time."""

    def __init__(self, copy: RowCopy, names: frozenset[str]) -> None:
        wanted = sorted(copy.columns[n] for n in names)
        self._path = copy.path
        self._source = pa.memory_map(copy.path)
        self._reader = pa.ipc.open_file(
            self._source, options=pa.ipc.IpcReadOptions(included_fields=wanted)
        )
        self._names = [n.lower() for n in self._reader.schema.names]
        self._next = 0
        self._held: pa.RecordBatch | None = None

    def take(self, rows: int) -> dict[str, pa.Array]:
        """The next ``rows`` rows of each column (lowercase name -> array)."""
        pieces: list[pa.RecordBatch] = []
        while rows > 0:
            if self._held is None or self._held.num_rows == 0:
                if self._next >= self._reader.num_record_batches:
                    raise DocStoreError(f"Arrow copy {self._path}: fewer rows than documents")
                self._held = self._reader.get_batch(self._next)
                self._next += 1
                continue
            piece = self._held.slice(0, rows)
            self._held = self._held.slice(piece.num_rows)
            pieces.append(piece)
            rows -= piece.num_rows
        if len(pieces) == 1:
            return dict(zip(self._names, pieces[0].columns, strict=True))
        table = pa.Table.from_batches(pieces, schema=self._reader.schema)
        return {n: table.column(i).combine_chunks() for i, n in enumerate(self._names)}

    def close(self) -> None:
        self._source.close()


def copy_in_doc_order(
    directory: str,
    identity: str,
    searcher: tantivy.Searcher,
    copy: RowCopy,
    stores: SplitStores,
) -> bool:
    """True when the copy's rows, in file order, are the split's documents in (segment, doc)
    order: every document's row key names the copy row at its own position.

    Decided from every document's row key (a fast field) and the copy's batch sizes,
    once per split content identity (splits never change): ~0.4 us a document.
    """
    if not copy.keyed:
        return False
    counts = tuple(s.num_docs for s in stores.stores)
    key = (directory, identity, copy.path, copy.offsets, counts)
    found = _orders.get(key)
    if found is None:
        found = _in_order(searcher, copy, counts)
        _orders.put(key, found)
    return found


_orders: BoundedCache[tuple[object, ...], bool] = BoundedCache(max_entries=256)


@on_forget
def _forget(directory: str) -> None:
    _orders.evict_if(lambda key: key[0] == directory)


def _in_order(searcher: tantivy.Searcher, copy: RowCopy, counts: tuple[int, ...]) -> bool:
    sizes = _batch_rows(copy.path)
    if sum(sizes) != sum(counts) or any(size >= 1 << 32 for size in sizes):
        return False
    expected = np.concatenate(
        [np.zeros(0, np.uint64)]
        + [
            (np.uint64(b) << np.uint64(32)) + np.arange(n, dtype=np.uint64)
            for b, n in enumerate(sizes)
        ]
    )
    address = tantivy.DocAddress
    found: list[np.ndarray] = []
    for ordinal, count in enumerate(counts):
        if count == 0:
            continue
        addresses = list(map(address, itertools.repeat(ordinal, count), range(count)))
        values = searcher.fast_field_values(ROW_KEY_FIELD, addresses)
        if any(v is None for v in values):
            return False
        keys = np.asarray(values, dtype=np.uint64)
        if copy.segment_batches is not None:
            if ordinal >= len(copy.offsets):
                return False
            keys = keys + (np.uint64(copy.offsets[ordinal]) << np.uint64(32))
        found.append(keys)
    keys = np.concatenate(found) if found else np.zeros(0, np.uint64)
    return bool(np.array_equal(keys, expected))


def _batch_rows(path: str) -> list[int]:
    """The row count of each record batch of an Arrow IPC file (one column read per batch)."""
    options = pa.ipc.IpcReadOptions(included_fields=[0])
    with pa.memory_map(path) as source:
        reader = pa.ipc.open_file(source, options=options)
        return [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
