"""Decode stored documents in bulk into an Arrow record batch.

Hits are sorted and grouped per block so each block is decompressed once (and
kept in a :class:`BlockCache` across calls when one is given); the kernels
write every value straight into Arrow buffers, and the columns are built with
``pa.Array.from_buffers``. Rows come out in the order of ``doc_ids``
(duplicates allowed).
"""

from __future__ import annotations

import bisect
import ipaddress
import itertools
import struct
import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import pyarrow as pa

from indextables.search.read.docstore import _kernels_py as codes
from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.read.docstore.impl import kernels
from indextables.search.read.docstore.pool import (
    THREAD_SETTINGS,
    DecoderThreads,
    executor,
    workers,
)
from indextables.search.read.docstore.store import StoreIndex

__all__ = [
    "BlockCache",
    "DecodeSession",
    "FieldKind",
    "FieldSpec",
    "StorePart",
    "decode_docs",
    "decode_parts",
]

FieldKind = Literal["text", "u64", "i64", "f64", "bool", "date", "bytes", "ip", "json"]

_ARROW: Final[dict[str, pa.DataType]] = {
    "text": pa.string(),
    "u64": pa.uint64(),
    "i64": pa.int64(),
    "f64": pa.float64(),
    "bool": pa.bool_(),
    "date": pa.timestamp("ns", tz="UTC"),
    "bytes": pa.binary(),
    "ip": pa.string(),
    "json": pa.string(),
}
_SLOT_KIND: Final[dict[str, int]] = {
    "text": codes.K_TEXT,
    "u64": codes.K_U64,
    "i64": codes.K_I64,
    "f64": codes.K_F64,
    "bool": codes.K_BOOL,
    "date": codes.K_DATE,
    "bytes": codes.K_BYTES,
    "ip": codes.K_IP,
    "json": codes.K_JSON,
}
# The Arrow type of the kernels' buffers where it differs from the column's.
_BUFFER_TYPE: Final[dict[str, pa.DataType]] = {"ip": pa.binary(16)}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One output column: the stored field's name, its kind, list-valued or not."""

    name: str
    kind: FieldKind
    multi: bool = False

    def arrow_type(self) -> pa.DataType:
        base = _ARROW[self.kind]
        return pa.list_(base) if self.multi else base


#: What a remembered miss of a store of unknown block size is charged (a lookup outside
#: a decode session, for a store no session has described): Tantivy's block size as
#: this project writes it (``options.DEFAULT_DOCSTORE_BLOCK_SIZE``).
ASSUMED_BLOCK_BYTES: Final = 4096


class BlockCache:
    """Decompressed blocks, least recently used dropped past ``max_bytes``.

    Thread-safe. Blocks are keyed by ``(store key, block number)``: one cache
    may serve several stores when each :class:`StorePart` names its store
    with a distinct ``cache_key`` (the default key, None, suits one store).

    Admission (:meth:`lookup`): a block enters the cache the second time it is
    missed while its first miss is still remembered. Misses are remembered by
    the bytes of their blocks (each store's own block size, which a decode
    tells the cache: ``StoreIndex.block_bytes``), the newest up to
    ``max_bytes``; a decode's misses are remembered only when their blocks
    would fit in the cache. A repeated search whose blocks fit is served from
    the cache from its third run on, whatever the block size; a search
    touching more than that (which would only churn the cache) decodes its
    blocks partly, never whole for the cache.
    """

    def __init__(self, *, max_bytes: int = 8 << 20) -> None:
        self._max = max_bytes
        self._size = 0
        # Blocks are held under one int each, (store number << 32) | block: hashing a
        # ``(key, block)`` tuple (a nested tuple of strings) twice per block was ~40%
        # of a lookup.
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        # Recent first misses, oldest first (a plain dict: trimmed by rebuilding, below),
        # and the bytes of their blocks.
        self._seen: dict[int, None] = {}
        self._seen_bytes = 0
        self._stores: dict[Hashable, int] = {}
        # Each store's block bytes, by store number (ASSUMED_BLOCK_BYTES until told).
        self._block_bytes: list[int] = []
        # As many bytes of misses as the cache holds: a repeated read whose blocks fit
        # is admitted, one cycling through more than that never (each first miss is
        # forgotten before its repeat), so it decodes partly instead of churning.
        self._remember_bytes = max(max_bytes, 0)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _base(self, key: Hashable, sizes: Mapping[Hashable, int] | None = None) -> int:
        # Under the lock: the slot number of block 0 of the store named ``key``; a store
        # first met takes its block bytes from ``sizes`` (a session's), else the assumed.
        number = self._stores.setdefault(key, len(self._stores))
        if number == len(self._block_bytes):
            size = sizes.get(key, 0) if sizes else 0
            self._block_bytes.append(size if size > 0 else ASSUMED_BLOCK_BYTES)
        return number << 32

    def _charge(self, slot: int) -> int:
        # Under the lock: the bytes a remembered miss of ``slot`` is charged.
        return self._block_bytes[slot >> 32]

    def _slot(self, block: tuple[Hashable, int]) -> int:
        key, number = block
        if not 0 <= number < 1 << 32:
            raise DocStoreError(f"doc store: block number {number} out of range")
        return self._base(key) | number

    def get(self, block: tuple[Hashable, int]) -> bytes | None:
        with self._lock:
            slot = self._slot(block)
            found = self._blocks.get(slot)
            if found is not None:
                self._blocks.move_to_end(slot)
            return found

    def lookup(self, block: tuple[Hashable, int]) -> bytes | bool:
        """The cached block; else True to decode it whole and :meth:`put` it (it was
        missed recently), or False (first miss, remembered: decode only what is needed)."""
        with self._lock:
            return self._lookup(self._slot(block))

    def lookup_many(
        self,
        key: Hashable,
        blocks: Sequence[int],
        *,
        missed: list[int] | None = None,
        charges: list[int] | None = None,
        sizes: Mapping[Hashable, int] | None = None,
    ) -> list[bytes | bool]:
        """:meth:`lookup` of ``(key, b)`` for each of ``blocks``, in order, under one lock
        (the kernels ask once per store part, not once per block).

        With ``missed`` and ``charges`` (a :class:`DecodeSession`'s), a first miss
        and its block bytes are appended there instead of being remembered now: the
        session remembers its misses at its end, and only when their blocks fit.
        ``sizes``: block bytes by store key, for a store the cache meets first.
        """
        answers: list[bytes | bool] = []
        with self._lock:
            kept, seen = self._blocks, self._seen
            base = self._base(key, sizes)
            if missed is not None:
                slots = [base | number for number in blocks]
                runs = [(len(slots), self._block_bytes[base >> 32])]
                return self._lookup_slots(slots, runs, missed, charges)
            for number in blocks:  # _lookup inlined: this runs once per touched block
                slot = base | number
                found = kept.get(slot)
                if found is not None:
                    kept.move_to_end(slot)
                    self.hits += 1
                    answers.append(found)
                    continue
                self.misses += 1
                if self._max <= 0:
                    answers.append(False)
                elif slot in seen:
                    del seen[slot]
                    self._seen_bytes -= self._block_bytes[slot >> 32]
                    answers.append(True)
                else:
                    seen[slot] = None
                    self._seen_bytes += self._block_bytes[slot >> 32]
                    answers.append(False)
            self._trim()
        return answers

    def lookup_parts(
        self,
        asks: Sequence[tuple[Hashable, Sequence[int]]],
        *,
        missed: list[int] | None = None,
        charges: list[int] | None = None,
        sizes: Mapping[Hashable, int] | None = None,
    ) -> list[bytes | bool]:
        """:meth:`lookup_many` of several stores' blocks at once: ``asks`` is ``(key,
        blocks)`` per store part, the answers come in that order, flat (the kernels ask
        once per split, not once per part). ``missed``, ``charges``, ``sizes``: as
        :meth:`lookup_many`'s.
        """
        if missed is None:
            return [a for key, blocks in asks for a in self.lookup_many(key, blocks, sizes=sizes)]
        with self._lock:
            slots: list[int] = []
            runs: list[tuple[int, int]] = []
            for key, blocks in asks:
                base = self._base(key, sizes)
                slots.extend(map(base.__or__, blocks))
                runs.append((len(blocks), self._block_bytes[base >> 32]))
            return self._lookup_slots(slots, runs, missed, charges)

    def _lookup_slots(
        self,
        slots: list[int],
        runs: list[tuple[int, int]],
        missed: list[int],
        charges: list[int] | None,
    ) -> list[bytes | bool]:
        # Under the lock. Found in C passes over the blocks (a Python statement per block
        # cost ~0.5 us): a large scattered read usually finds nothing, a repeated small
        # one everything.
        kept, seen = self._blocks, self._seen
        cached: list[Any] = list(map(kept.get, slots))
        hits = len(cached) - cached.count(None)
        self.hits += hits
        self.misses += len(slots) - hits
        if hits == len(slots):
            deque(map(kept.move_to_end, slots), maxlen=0)  # in C: no statement per block
            return cached
        if not hits and not any(map(seen.__contains__, slots)):
            missed.extend(slots)
            if charges is not None:  # per part, not per block: runs of one store's size
                for count, charge in runs:
                    charges.extend(itertools.repeat(charge, count))
            return [False] * len(slots)
        answers: list[bytes | bool] = []
        for slot, got in zip(slots, cached, strict=True):
            if got is not None:
                kept.move_to_end(slot)
                answers.append(got)
            elif slot in seen:
                del seen[slot]
                self._seen_bytes -= self._block_bytes[slot >> 32]
                answers.append(True)
            else:
                missed.append(slot)
                if charges is not None:
                    charges.append(self._block_bytes[slot >> 32])
                answers.append(False)
        return answers

    def session(self, block_bytes: Mapping[Hashable, int] | None = None) -> DecodeSession:
        """A view of this cache for one decode (see :class:`DecodeSession`);
        ``block_bytes``: each store key's block size (``StoreIndex.block_bytes``)."""
        return DecodeSession(self, block_bytes)

    def remember(self, missed: Sequence[int], charges: Sequence[int] | None = None) -> None:
        """Remember the first misses ``missed`` (slots from :meth:`lookup_many`, in order;
        ``charges``: each one's block bytes, else its store's), unless their blocks would
        not fit in the cache: a repeat of the same read would admit them only to push
        each other out (and every block before them)."""
        if self._max <= 0 or not missed:
            return
        with self._lock:
            if len(missed) * min(self._block_bytes) > self._max:
                return  # too many at any of the sizes: not counted one by one
            if charges is None:
                # Each slot's store number (slot >> 32) -> its block bytes, in C.
                charges = list(map(self._block_bytes.__getitem__, map((32).__rrshift__, missed)))
            nbytes = sum(charges)
            if nbytes > self._max:
                return
            # In C. A slot remembered twice is counted twice (the bound is approximate).
            self._seen.update(dict.fromkeys(missed))
            self._seen_bytes += nbytes
            self._trim()

    def _trim(self) -> None:
        # Under the lock. The oldest misses past the byte bound are dropped by rebuilding
        # the dict in C once it holds a quarter more (popping them one by one cost ~0.2 us
        # each; so did a running sum of each entry's bytes, so the newest are kept by
        # their average size: exact for stores of one block size).
        bound, total = self._remember_bytes, self._seen_bytes
        if total <= bound + bound // 4:
            return
        seen = self._seen
        count = len(seen)
        keep = count * bound // total
        self._seen = dict.fromkeys(itertools.islice(seen, count - keep, None))
        self._seen_bytes = total * keep // count if count else 0

    def _lookup(self, slot: int) -> bytes | bool:
        found = self._blocks.get(slot)
        if found is not None:
            self._blocks.move_to_end(slot)
            self.hits += 1
            return found
        self.misses += 1
        if self._max <= 0:
            return False
        if slot in self._seen:
            del self._seen[slot]
            self._seen_bytes -= self._charge(slot)
            return True
        self._seen[slot] = None
        self._seen_bytes += self._charge(slot)
        self._trim()
        return False

    def put(self, block: tuple[Hashable, int], data: bytes) -> None:
        if len(data) > self._max:
            return
        with self._lock:
            slot = self._slot(block)
            if slot in self._blocks:
                return
            self._blocks[slot] = data
            self._size += len(data)
            while self._size > self._max:
                _, dropped = self._blocks.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        """Drop every block (and every remembered miss)."""
        with self._lock:
            self._blocks.clear()
            self._seen.clear()
            self._seen_bytes = 0
            self._stores.clear()
            self._block_bytes.clear()
            self._size = 0

    def __len__(self) -> int:
        return len(self._blocks)

    @property
    def remembered(self) -> int:
        """Recent first misses remembered (a second miss of one admits its block)."""
        return len(self._seen)

    @property
    def remembered_bytes(self) -> int:
        """Bytes of the blocks whose first misses are remembered (at most ``max_bytes``
        once trimmed)."""
        return self._seen_bytes

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks held."""
        return self._size


class DecodeSession:
    """A :class:`BlockCache` as one decode sees it (the kernels' ``cache`` argument).

    Lookups answer as the cache's own (cached bytes; True for a block missed
    recently; False), but first misses are collected and remembered by
    :meth:`close`, all of them or, when their blocks would not fit in the cache,
    none: recording each such miss only to push it out again within the same
    decode cost ~0.6 us a block (the 20M-row exact match touches ~32,000
    blocks). ``block_bytes``: each store key's block size, what its misses are
    charged. Thread-safe (chunks of one decode share it).
    """

    __slots__ = ("_block_bytes", "_cache", "_charges", "_missed")

    def __init__(
        self, cache: BlockCache, block_bytes: Mapping[Hashable, int] | None = None
    ) -> None:
        self._cache = cache
        self._block_bytes: dict[Hashable, int] = dict(block_bytes or {})
        self._missed: list[int] = []
        self._charges: list[int] = []

    @property
    def cache(self) -> BlockCache:
        """The cache this session looks blocks up in."""
        return self._cache

    def describe(self, block_bytes: Mapping[Hashable, int]) -> None:
        """Add stores' block sizes (store key -> bytes) for a session shared by several
        decodes (a search's: see :func:`decode_parts`)."""
        self._block_bytes.update(block_bytes)

    def lookup_many(self, key: Hashable, blocks: Sequence[int]) -> list[bytes | bool]:
        return self._cache.lookup_many(
            key, blocks, missed=self._missed, charges=self._charges, sizes=self._block_bytes
        )

    def lookup_parts(self, asks: Sequence[tuple[Hashable, Sequence[int]]]) -> list[bytes | bool]:
        return self._cache.lookup_parts(
            asks, missed=self._missed, charges=self._charges, sizes=self._block_bytes
        )

    def put(self, block: tuple[Hashable, int], data: bytes) -> None:
        self._cache.put(block, data)

    def close(self) -> None:
        """Remember this decode's first misses (see the class docstring)."""
        missed, self._missed = self._missed, []
        charges, self._charges = self._charges, []
        self._cache.remember(missed, charges)


def _ip_text(value: int) -> str:
    # Tantivy stores every IP as an IPv6 u128 (IPv4 as ::ffff:a.b.c.d), as tantivy-py prints it.
    addr = ipaddress.IPv6Address(value)
    mapped = addr.ipv4_mapped
    return f"::ffff:{mapped}" if mapped is not None else str(addr)


def _decompress(store: StoreIndex, block: int, mod: Any) -> bytes:
    raw = store.data[store.byte_starts[block] : store.byte_ends[block]]
    if store.compressor == "none":
        return bytes(raw)
    if len(raw) < 4:
        raise DocStoreError(f"doc store: block {block} shorter than its size header")
    size = struct.unpack_from("<I", raw, 0)[0]
    if store.compressor == "lz4":
        return bytes(mod.lz4_decompress(raw[4:], size))
    import zstandard

    out = zstandard.ZstdDecompressor().decompress(bytes(raw[4:]), max_output_size=size)
    if len(out) != size:
        raise DocStoreError(f"doc store: zstd block {block} expanded to the wrong size")
    return bytes(out)


def _block(
    store: StoreIndex, block: int, mod: Any, cache: BlockCache | None, key: Hashable
) -> bytes:
    if cache is None:
        return _decompress(store, block, mod)
    data = cache.get((key, block))
    if data is None:
        data = _decompress(store, block, mod)
        cache.put((key, block), data)
    return data


def _array(spec: FieldSpec, buffers: codes.SlotBuffers) -> pa.Array:
    rows, nulls, validity, list_offsets, offsets, data, values = buffers
    value_type = _BUFFER_TYPE.get(spec.kind, _ARROW[spec.kind])
    value_buffers = [None, pa.py_buffer(data)]
    if offsets is not None:
        value_buffers.insert(1, pa.py_buffer(offsets))
    valid = pa.py_buffer(validity) if validity is not None else None
    if list_offsets is None:
        value_buffers[0] = valid
        array = pa.Array.from_buffers(value_type, rows, value_buffers, null_count=nulls)
    else:
        child = pa.Array.from_buffers(value_type, values, value_buffers, null_count=0)
        if spec.kind == "ip":
            child = _ip_column(child)
        array = pa.Array.from_buffers(
            pa.list_(child.type), rows, [valid, pa.py_buffer(list_offsets)], nulls, children=[child]
        )
        return array
    return _ip_column(array) if spec.kind == "ip" else array


def _ip_column(raw: pa.Array) -> pa.Array:
    texts = [None if v is None else _ip_text(int.from_bytes(v, "little")) for v in raw.to_pylist()]
    return pa.array(texts, type=pa.string())


def _ascii(spec: FieldSpec, buffers: codes.SlotBuffers) -> bool:
    # Whether a text column's value bytes are all ASCII (then valid UTF-8 however the
    # offsets cut them): isascii (bytes' or the kernel's OwnedBuffer's) reads 8 bytes a
    # step, Arrow's full check is slower.
    data = buffers[5]
    return spec.kind in ("text", "json") and bool(data.isascii())


def _check_text(array: pa.Array, spec: FieldSpec, *, ascii_only: bool = False) -> None:
    # Every string valid UTF-8 (and the offsets inside the data): in full, unless every
    # value byte is ASCII, when the cheap structural check suffices.
    try:
        if ascii_only:
            array.validate()
        else:
            array.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise DocStoreError(
            f"doc store: invalid UTF-8 in a stored string of field {spec.name!r} ({exc})"
        ) from exc


def decode_docs(
    store: StoreIndex,
    doc_ids: Sequence[int],
    fields: Mapping[int, FieldSpec],
    *,
    cache: BlockCache | None = None,
) -> pa.RecordBatch:
    """Decode ``doc_ids`` into one column per entry of ``fields`` (field id -> spec).

    A field absent from a document is null. A single-valued spec meeting several
    values, or a stored value whose type code does not match the spec's kind,
    raises :class:`DocStoreError` naming the field. ``cache`` keeps decompressed
    blocks of this store for later calls.
    """
    return decode_parts([StorePart(store, doc_ids, cache)], fields)


@dataclass(frozen=True, slots=True)
class StorePart:
    """Documents of one store to decode (see :func:`decode_parts`)."""

    store: StoreIndex
    doc_ids: Sequence[int]
    cache: BlockCache | None = None
    cache_key: Hashable = None


def decode_parts(
    parts: Sequence[StorePart],
    fields: Mapping[int, FieldSpec],
    *,
    threads: DecoderThreads = "auto",
    session: DecodeSession | None = None,
) -> pa.RecordBatch:
    """One batch of the documents of several stores (the segments of a split): the
    parts' rows one after the other, each part's in the order of its ``doc_ids``.

    The stores must share one schema (field ids) and doc store version. A large
    decode of LZ4 stores runs in chunks on the decoder's worker threads
    (:mod:`.pool`) when the Cython kernels are in use and ``threads`` allows it
    (``auto``: unless the machine is busy; ``on``; ``off``).

    ``session``: a session of the parts' cache shared by every decode of one
    search (its owner closes it when the search ends), so the search's first
    misses are remembered together, only when all of them fit in the cache. A
    search over many splits, each decoded apart, otherwise remembered each
    split's misses (each fitting) only to forget them before its repeat came
    back to them (the 20M-row exact match: ~37,800 misses, ~12 ms a search).
    Without it each decode has its own session.
    """
    pieces, names, inverse = _decode(parts, fields, threads, session)
    arrays = [
        pieces[0][k] if len(pieces) == 1 else pa.concat_arrays([p[k] for p in pieces])
        for k in range(len(names))
    ]
    batch = pa.RecordBatch.from_arrays(arrays, names=names)
    if inverse is not None:
        batch = batch.take(pa.array(inverse, type=pa.int64()))
    return batch


def decode_runs(
    parts: Sequence[StorePart],
    fields: Mapping[int, FieldSpec],
    *,
    threads: DecoderThreads = "auto",
    session: DecodeSession | None = None,
) -> list[pa.RecordBatch]:
    """:func:`decode_parts` of parts whose doc ids are sorted (runs of a whole-store read),
    as the batches its threads decoded, in row order, not concatenated into one: laid end
    to end they are :func:`decode_parts`' batch, without the copy a concatenation makes.

    Raises:
        DocStoreError: as :func:`decode_parts`, and for a part whose doc ids are not sorted.
    """
    pieces, names, inverse = _decode(parts, fields, threads, session)
    if inverse is not None:
        raise DocStoreError("decode_runs: a part's doc ids are not sorted")
    return [pa.RecordBatch.from_arrays(arrays, names=names) for arrays in pieces]


def _decode(
    parts: Sequence[StorePart],
    fields: Mapping[int, FieldSpec],
    threads: DecoderThreads,
    session: DecodeSession | None,
) -> tuple[list[list[pa.Array]], list[str], list[int] | None]:
    # Each chunk's arrays (text checked), the columns' names, and the permutation back to
    # the parts' order (None: sorted already).
    if threads not in THREAD_SETTINGS:
        raise DocStoreError(f"threads: expected one of auto, on, off, not {threads!r}")
    mod = kernels()
    field_ids = list(fields)
    specs = [fields[fid] for fid in field_ids]
    versions = {part.store.version for part in parts}
    if len(versions) > 1:
        raise DocStoreError(f"doc stores of versions {sorted(versions)} in one decode")
    version = versions.pop() if versions else 2
    inverse: list[int] | None = None
    total = 0
    ordered_parts: list[tuple[StorePart, Sequence[int]]] = []
    for part in parts:
        if _is_run(part.doc_ids):
            # A run of consecutive documents (a whole-store read): sorted already, and the
            # kernels take the range itself (no Python int per document).
            if inverse is not None:
                inverse.extend(range(total, total + len(part.doc_ids)))
            ordered_parts.append((part, part.doc_ids))
            total += len(part.doc_ids)
            continue
        # A list is taken as it is (its items go to the kernels as integers: anything else
        # raises TypeError there); another sequence is read into one. Re-making a list of
        # ints item by item cost ~50 ns a hit (~1 ms a 20,000-hit search).
        ids = part.doc_ids if type(part.doc_ids) is list else list(map(int, part.doc_ids))
        ordered = sorted(ids)
        if ordered != ids and inverse is None:
            inverse = list(range(total))
        if inverse is not None:
            rank = sorted(range(len(ids)), key=ids.__getitem__)
            placed = [0] * len(ids)
            for r, position in enumerate(rank):
                placed[position] = total + r
            inverse.extend(placed)
        ordered_parts.append((part, ordered))
        total += len(ids)
    chunks = _chunks(ordered_parts, total, mod, threads)
    # One session per cache: the decode's first misses are remembered at its end, each
    # charged its store's block size.
    sessions: dict[int, DecodeSession] = {}
    owned: list[DecodeSession] = []
    for cache in {id(p.cache): p.cache for p in parts if p.cache is not None}.values():
        sizes = {p.cache_key: p.store.block_bytes for p in parts if p.cache is cache}
        if session is not None and session.cache is cache:
            session.describe(sizes)
            sessions[id(cache)] = session
        else:
            sessions[id(cache)] = cache.session(sizes)
            owned.append(sessions[id(cache)])

    def decode(chunk: list[tuple[StorePart, Sequence[int]]]) -> list[tuple[pa.Array, bool]]:
        builder = mod.ColumnBuilder(
            [_SLOT_KIND[s.kind] for s in specs],
            [s.multi for s in specs],
            field_ids,
            [s.name for s in specs],
            version,
        )
        _add_chunk(builder, chunk, mod, sessions)
        return [
            (_array(spec, b), _ascii(spec, b))
            # owned: the kernel's buffers become the arrays' own (no copy into bytes).
            for spec, b in zip(specs, builder.finish(owned=True), strict=True)
        ]

    try:
        if len(chunks) == 1:
            pieces = [decode(chunks[0])]
        else:
            futures = [executor().submit(decode, chunk) for chunk in chunks[1:]]
            pieces = [decode(chunks[0])] + [f.result() for f in futures]
    finally:
        for own in owned:
            own.close()
    for piece in pieces:
        for spec, (array, ascii_only) in zip(specs, piece, strict=True):
            if spec.kind in ("text", "json"):
                _check_text(array, spec, ascii_only=ascii_only)
    arrays = [[array for array, _ in piece] for piece in pieces]
    return arrays, [spec.name for spec in specs], inverse


#: Fewest hits of one decode worth splitting over threads (each chunk then
#: decompresses hundreds of blocks, far more than a thread hand-over costs).
THREAD_MIN_HITS = 2048


def _is_run(doc_ids: Sequence[int]) -> bool:
    # A range of consecutive doc ids (type, not isinstance: a subclass may order otherwise).
    return type(doc_ids) is range and doc_ids.step == 1


def _chunks(
    parts: list[tuple[StorePart, Sequence[int]]], total: int, mod: Any, threads: DecoderThreads
) -> list[list[tuple[StorePart, Sequence[int]]]]:
    # Contiguous chunks of about equal hits (a part may be cut anywhere), so
    # the chunks' rows laid end to end keep the parts' order.
    if total < THREAD_MIN_HITS or not getattr(mod, "NOGIL", False):
        return [parts]  # small: not even the load average is read
    count = workers(threads)
    if count < 2 or not all(p.store.compressor == "lz4" for p, _ in parts):
        return [parts]
    size = -(-total // count)
    chunks: list[list[tuple[StorePart, Sequence[int]]]] = [[]]
    room = size
    for part, ordered in parts:
        start = 0
        while start < len(ordered):
            take = min(room, len(ordered) - start)
            chunks[-1].append((part, ordered[start : start + take]))
            start += take
            room -= take
            if room == 0:
                if len(chunks) < count:
                    chunks.append([])
                room = size
    return [c for c in chunks if c]


def _add_part(
    builder: Any,
    part: StorePart,
    ids: Sequence[int],
    mod: Any,
    session: DecodeSession | None = None,
) -> None:
    store, cache, key = part.store, part.cache, part.cache_key
    if not ids:
        return
    _check_range(store, ids)
    if store.compressor == "lz4":
        # One call for the whole part: blocks found, decompressed only as far as the
        # last wanted document (unless the cache admits them) and decoded in the kernel.
        builder.add_lz4_parts(
            [(checkpoints(store, mod), ids, key)], session if session is not None else cache
        )
        return
    starts, ends = store.doc_starts, store.doc_ends
    ids = ids if isinstance(ids, list) else list(ids)  # builder.add takes a list
    lo, n, block = 0, len(ids), 0
    while lo < n:
        block = bisect.bisect_right(starts, ids[lo], block) - 1
        hi = bisect.bisect_left(ids, ends[block], lo, n)
        builder.add(_block(store, block, mod, cache, key), ids, lo, hi, starts[block])
        lo = hi


def _add_chunk(
    builder: Any,
    chunk: list[tuple[StorePart, Sequence[int]]],
    mod: Any,
    sessions: Mapping[int, DecodeSession],
) -> None:
    # The LZ4 parts sharing one cache go to the kernel in one call (one cache lookup for
    # all their blocks): a Python round per part was ~20 us, ~75 parts a 10-split search.
    run: list[tuple[Any, Sequence[int], Hashable]] = []
    run_cache: Any = None
    for part, ids in chunk:
        if not ids:
            continue
        asker = sessions.get(id(part.cache)) if part.cache is not None else None
        if part.store.compressor != "lz4":
            if run:
                builder.add_lz4_parts(run, run_cache)
                run = []
            _add_part(builder, part, ids, mod, asker)
            continue
        _check_range(part.store, ids)
        if run and asker is not run_cache:
            builder.add_lz4_parts(run, run_cache)
            run = []
        run_cache = asker
        run.append((checkpoints(part.store, mod), ids, part.cache_key))
    if run:
        builder.add_lz4_parts(run, run_cache)


def _check_range(store: StoreIndex, ids: Sequence[int]) -> None:
    # ``ids`` sorted: a DocStoreError naming the first doc id outside the store.
    total = store.num_docs
    if ids[0] < 0 or ids[0] >= total:
        store.block_of(ids[0])
    if ids[-1] >= total:
        store.block_of(ids[-1])


def checkpoints(store: StoreIndex, mod: Any) -> Any:
    """The kernels' ``Checkpoints`` of an LZ4 ``store`` (built once per store and module:
    a view of the store's own checkpoint arrays, with what the kernels check of them)."""
    name = mod.__name__
    found = store.kernel_views.get(name)
    if found is None:
        found = mod.Checkpoints(
            store.data, store.doc_starts, store.doc_ends, store.byte_starts, store.byte_ends
        )
        store.kernel_views[name] = found
    return found
