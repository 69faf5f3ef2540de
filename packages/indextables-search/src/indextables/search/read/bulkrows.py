"""Columns of a search's hits decoded in bulk from a split's doc stores.

The split reader's stored-document columns, equal to what one ``searcher.doc()``
per hit and :func:`~indextables.search.read.convert.column_from_docs` give,
but decoded block by block straight into Arrow (:mod:`.docstore`). Only the
(stored type, column type) pairs whose conversion is known to be exact are
served here; the others (JSON objects, unusual casts) stay on the per-document
path. Each unbundled split's stores are opened once (memory-mapped) and kept
with their decompressed-block caches for later reads.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import mmap
import operator
import os
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from indextables.search.boundedcache import BoundedCache
from indextables.search.read.convert import TANTIVY_MAX_MICROS, TANTIVY_MIN_MICROS
from indextables.search.read.docstore import (
    BlockCache,
    DecodeSession,
    DocStoreError,
    FieldKind,
    FieldSpec,
    StoreIndex,
    StorePart,
    decode_parts,
    decode_runs,
    impl,
    read_store,
)
from indextables.search.read.docstore.pool import DecoderThreads
from indextables.search.schema import columntypes as ct
from indextables.search.splits.entryid import content_identity, on_forget

__all__ = [
    "BulkColumns",
    "SplitStores",
    "bulk_columns",
    "enabled",
    "search_session",
    "served",
    "split_stores",
    "whole_columns",
]

# meta.json field type -> the decoder's kind.
_KINDS: Final[dict[str, FieldKind]] = {
    "text": "text",
    "i64": "i64",
    "u64": "u64",
    "f64": "f64",
    "bool": "bool",
    "date": "date",
    "bytes": "bytes",
    "ip_addr": "ip",
}
# Decompressed doc-store blocks kept per process, across splits and searches. A
# block enters on its second recent miss, so a repeated search that fits is served
# from here, while one touching more blocks than fit (the 20M-row exact match:
# ~32,000 4K blocks, ~131 MB) decodes each block only up to its last hit, never
# churning it.
_BLOCKS = BlockCache(max_bytes=64 << 20)
# Splits whose doc stores stay parsed per process (an entry is the stores' mmaps and
# block checkpoints, ~24 bytes per block): a table's every split, up to this many, so
# a repeated search never parses a skip index again.
_OPEN_STORES = 256
_MICROS_PER_DAY = 86_400_000_000


def enabled() -> bool:
    """False when ``INDEXTABLES_DOCSTORE_IMPL=off`` (rows from tantivy-py, one doc at a time)."""
    return os.environ.get(impl.IMPL_ENV, "").strip().lower() != "off"


@dataclass(frozen=True, slots=True)
class SplitStores:
    """The doc stores of one unbundled split, one per segment ordinal.

    Attributes:
        stores: the parsed stores (blocks memory-mapped), in meta.json segment order.
        fields: stored field name -> (field id, meta.json type).
        key: the split's identity in the process-wide block cache.
    """

    stores: tuple[StoreIndex, ...]
    fields: Mapping[str, tuple[int, str]]
    key: Hashable


_open: BoundedCache[tuple[int, str, str], SplitStores] = BoundedCache(max_entries=_OPEN_STORES)


@on_forget
def _forget(directory: str) -> None:
    _open.evict_if(lambda key: key[1] == directory)
    _BLOCKS.clear()  # blocks are keyed by a store's key; a failed read is rare


def split_stores(directory: str, *, identity: str | None = None) -> SplitStores:
    """The doc stores of the unbundled split at ``directory`` (kept open for later reads).

    Kept, with their decompressed blocks, by the directory's content identity
    (:func:`~indextables.search.splits.entryid.content_identity`, or ``identity``
    when the caller took it already): a directory re-created with other
    contents never meets the blocks of what was there before.

    Raises:
        DocStoreError: a store that cannot be parsed, or one that disagrees with meta.json.
    """
    key = (os.getpid(), directory, identity or content_identity(directory))
    found = _open.get(key)
    if found is not None:
        return found
    opened = _open_stores(directory, key)
    _open.put(key, opened)
    return opened


@contextlib.contextmanager
def search_session() -> Iterator[DecodeSession]:
    """A view of the process's block cache shared by every bulk decode of one search
    (pass it to :func:`bulk_columns`), whose first misses are remembered when the
    search ends, and only when all of them fit in the cache (see
    :func:`~indextables.search.read.docstore.decode_parts`). Thread-safe: a search
    reading several splits at once shares one."""
    session = _BLOCKS.session()
    try:
        yield session
    finally:
        session.close()


def release_pages(directory: str, *, identity: str | None = None) -> None:
    """Drop the pages of a split's doc stores from this process's resident memory.

    For a full scan's end: every block of the split was read once and the next
    read of it is not likely soon. The stores stay mapped and open; the file's
    pages stay in the OS page cache, and a later read maps them back in (a minor
    fault each). Without this, a scan of a table's every split kept all their
    stores resident in the process (RSS grew by the table's doc-store bytes).
    """
    found = _open.get((os.getpid(), directory, identity or content_identity(directory)))
    if found is None:
        return
    for store in found.stores:
        owner = getattr(store.data, "obj", None)
        if isinstance(owner, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            owner.madvise(mmap.MADV_DONTNEED)


def _open_stores(directory: str, key: Hashable) -> SplitStores:
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
        meta = json.load(source)
    fields: dict[str, tuple[int, str]] = {}
    for field_id, entry in enumerate(meta.get("schema", [])):
        if (entry.get("options") or {}).get("stored"):
            fields[str(entry["name"])] = (field_id, str(entry.get("type")))
    stores = []
    for segment in meta.get("segments", []):
        path = os.path.join(directory, str(segment["segment_id"]).replace("-", "") + ".store")
        store = read_store(_map(path))
        if store.num_docs != segment.get("max_doc", store.num_docs):
            raise DocStoreError(
                f"doc store {path}: {store.num_docs} documents, meta.json says "
                f"{segment.get('max_doc')}"
            )
        stores.append(store)
    return SplitStores(tuple(stores), fields, key)


def _map(path: str) -> Any:
    try:
        with open(path, "rb") as source:
            if os.fstat(source.fileno()).st_size == 0:
                return b""
            return mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise DocStoreError(f"doc store {path}: cannot be read ({exc})") from exc


@dataclass(frozen=True, slots=True)
class BulkColumns:
    """Columns decoded in bulk for a batch of hits.

    Attributes:
        arrays: lowercase column name -> the column, typed to the read schema.
        clamped_dates: lowercase names of date columns holding a value at an end
            of Tantivy's date span (their exact value may be in the Arrow copy).
    """

    arrays: Mapping[str, pa.Array]
    clamped_dates: frozenset[str]


def _supported(kind: FieldKind, target: pa.DataType) -> bool:
    if kind == "text" or kind == "ip":
        return ct.is_string(target)
    if kind in ("i64", "u64"):
        return ct.is_integral(target)
    if kind == "f64":
        return ct.is_floating(target)
    if kind == "bool":
        return ct.is_boolean(target)
    if kind == "bytes":
        return ct.is_binary(target)
    if kind == "date":
        return bool(pa.types.is_date32(target)) or bool(
            pa.types.is_timestamp(target) and target.unit == "us"
        )
    return False


def bulk_columns(
    stores: SplitStores,
    addresses: Sequence[Any],
    columns: Sequence[pa.Field],
    *,
    threads: DecoderThreads = "auto",
    session: DecodeSession | None = None,
) -> BulkColumns:
    """The ``columns`` this decoder can serve exactly, at ``addresses`` (in that order).

    Columns not stored in the split, and (stored type, column type) pairs not
    served in bulk, are left out of the result. ``threads``: see
    :func:`~indextables.search.read.docstore.decode_parts`; ``session``: the
    search's (:func:`search_session`), else this decode's own.

    Raises:
        DocStoreError: a store that cannot be decoded (the caller falls back).
    """
    specs, targets = _served(stores, columns)
    if not specs:
        return BulkColumns({}, frozenset())
    parts: list[StorePart] = []
    for ordinal, docs in segment_runs(addresses):
        if not 0 <= ordinal < len(stores.stores):
            raise DocStoreError(f"segment ordinal {ordinal} outside the split's doc stores")
        parts.append(StorePart(stores.stores[ordinal], docs, _BLOCKS, (stores.key, ordinal)))
    batch = decode_parts(parts, specs, threads=threads, session=session)
    return _typed(batch, specs, targets)


def served(stores: SplitStores, columns: Sequence[pa.Field]) -> frozenset[str]:
    """The lowercase names of the ``columns`` :func:`bulk_columns` serves from ``stores``."""
    _, targets = _served(stores, columns)
    return frozenset(t.name.lower() for t in targets.values())


def whole_columns(
    stores: SplitStores,
    ordinal: int,
    start: int,
    stop: int,
    columns: Sequence[pa.Field],
    *,
    threads: DecoderThreads = "auto",
    session: DecodeSession | None = None,
) -> list[BulkColumns]:
    """The ``columns`` :func:`bulk_columns` serves, for documents ``start .. stop - 1`` of
    segment ``ordinal`` in doc id order (a run of a whole-split read: no addresses), as
    the pieces the decoder's threads decoded, in row order (each its own arrays: not
    concatenated, which would copy every buffer once more).

    Raises:
        DocStoreError: a store that cannot be decoded, or a run outside the segment.
    """
    if not 0 <= ordinal < len(stores.stores):
        raise DocStoreError(f"segment ordinal {ordinal} outside the split's doc stores")
    specs, targets = _served(stores, columns)
    if not specs or stop <= start:
        return [BulkColumns({}, frozenset())]
    part = StorePart(stores.stores[ordinal], range(start, stop), _BLOCKS, (stores.key, ordinal))
    batches = decode_runs([part], specs, threads=threads, session=session)
    return [_typed(batch, specs, targets) for batch in batches]


def _served(
    stores: SplitStores, columns: Sequence[pa.Field]
) -> tuple[dict[int, FieldSpec], dict[int, pa.Field]]:
    """The decoder's specs of the ``columns`` served in bulk, and their read fields, by field id."""
    specs: dict[int, FieldSpec] = {}
    targets: dict[int, pa.Field] = {}
    for column in columns:
        found = stores.fields.get(column.name)
        if found is None:
            continue
        field_id, meta_type = found
        kind = _KINDS.get(meta_type)
        if kind is None or not _supported(kind, column.type) or field_id in specs:
            continue
        specs[field_id] = FieldSpec(column.name, kind)
        targets[field_id] = column
    return specs, targets


def _typed(
    batch: pa.RecordBatch, specs: Mapping[int, FieldSpec], targets: Mapping[int, pa.Field]
) -> BulkColumns:
    """A decoded batch's columns typed to their read fields."""
    arrays: dict[str, pa.Array] = {}
    clamped: set[str] = set()
    for field_id, spec in specs.items():
        target = targets[field_id]
        decoded = batch.column(spec.name)
        if spec.kind == "date":
            typed, at_end = _date_typed(decoded, target.type)
            if at_end:
                clamped.add(target.name.lower())
            arrays[target.name.lower()] = typed
        elif decoded.type == target.type:
            arrays[target.name.lower()] = decoded  # a cast to its own type still costs ~10 us
        else:
            arrays[target.name.lower()] = decoded.cast(target.type)
    return BulkColumns(arrays, frozenset(clamped))


def segment_runs(addresses: Sequence[Any]) -> list[tuple[int, list[int]]]:
    """``addresses`` (with ``segment_ord`` and ``doc``) cut into runs of one segment:
    ``(segment ordinal, doc ids)`` in order, a segment met again starting a new run.

    The attributes are read by ``map`` and the runs found by comparing neighbours
    in C (no Python statement per hit: ~0.4 us a hit before, 40 ms for the 20M-row
    exact match's hits).
    """
    if not addresses:
        return []
    ordinals = list(map(_SEGMENT_ORD, addresses))
    docs = list(map(_DOC, addresses))
    # The positions where the segment changes: compare each ordinal with the next one
    # (compress: no Python frame per hit, as a comprehension over them had).
    changes = list(
        itertools.compress(range(1, len(ordinals)), map(operator.ne, ordinals, ordinals[1:]))
    )
    bounds = [0, *changes, len(ordinals)]
    return [(ordinals[lo], docs[lo:hi]) for lo, hi in itertools.pairwise(bounds)]


_SEGMENT_ORD = operator.attrgetter("segment_ord")
_DOC = operator.attrgetter("doc")


def _date_typed(decoded: pa.Array, target: pa.DataType) -> tuple[pa.Array, bool]:
    """A decoded date column (``timestamp[ns, UTC]``) as ``target`` (``timestamp[us, tz]``
    or ``date32``), and whether a valid value lies at an end of Tantivy's date span.

    tantivy-py builds its datetime from the UTC time of day: nanoseconds floored to
    microseconds (and a date32 is the micros floored to days). Computed with numpy over
    the value buffer in a few passes (pyarrow compute took ~7 calls, ~0.3 ms a split
    whatever its hits); null slots keep their validity bit and read as 0 underneath.
    """
    count, offset = len(decoded), decoded.offset
    validity, data = decoded.buffers()[:2]
    if data is None or count == 0:
        return pa.array([], type=target), False
    ns = np.frombuffer(data, dtype=np.int64, count=offset + count)
    micros = ns // 1000  # numpy's integer // floors, as tantivy-py does
    nulls = decoded.null_count
    clamped = False
    if nulls < count:
        valid = micros[offset:]
        if nulls:
            bits = np.frombuffer(validity, dtype=np.uint8)
            mask = np.unpackbits(bits, bitorder="little")[offset : offset + count]
            valid = valid[mask.view(np.bool_)]
        clamped = bool(valid.min() <= TANTIVY_MIN_MICROS or valid.max() >= TANTIVY_MAX_MICROS)
    if pa.types.is_date32(target):
        # |ns| < 2**63 -> |days| < 106,752: always an int32.
        days = (micros // _MICROS_PER_DAY).astype(np.int32)
        values, arrow_type = pa.py_buffer(days), pa.date32()
    else:
        values, arrow_type = pa.py_buffer(micros), pa.timestamp("us", tz=target.tz)
    typed = pa.Array.from_buffers(
        arrow_type, count, [validity, values], null_count=nulls, offset=offset
    )
    return typed, clamped
