"""Pure-Python twin of the doc-store kernels (see ``_kernels.pyx``; both must agree exactly).

Format facts (Tantivy ``src/store`` and ``src/schema/document``): a block is
``[doc bytes...][u32 LE start offset per doc][u32 LE doc count]``; a document
is ``VInt(n)`` then ``n`` times ``[u32 LE field id][u8 type code][value]``.
Tantivy's VInt is little-endian groups of 7 bits whose LAST byte has the high
bit set. LZ4 blocks are ``[u32 LE uncompressed size][raw LZ4 block]``.

:class:`ColumnBuilder` decodes documents straight into Arrow column buffers
(validity bitmaps, 32-bit offsets, value bytes); values of fields that were
not asked for are skipped by their length, never decoded.
"""

from __future__ import annotations

import bisect
import json
import struct
from collections.abc import Sequence
from typing import Any

from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.splits.vint import decode_vint

__all__ = [
    "KIND_CODES",
    "Checkpoints",
    "ColumnBuilder",
    "SlotBuffers",
    "lz4_decompress",
    "read_vint",
]

TEXT, U64, I64, FACET, BYTES, DATE, F64, EXT, JSON_OBJ, BOOL, IP, NULL, ARRAY, OBJECT = range(14)
# Output column kinds (slot kinds) and the stored type code each accepts.
K_TEXT, K_U64, K_I64, K_F64, K_BOOL, K_DATE, K_BYTES, K_IP, K_JSON = range(9)
KIND_CODES: dict[int, tuple[int, ...]] = {
    K_TEXT: (TEXT,),
    K_U64: (U64,),
    K_I64: (I64,),
    K_F64: (F64,),
    K_BOOL: (BOOL,),
    K_DATE: (DATE,),
    K_BYTES: (BYTES,),
    K_IP: (IP,),
    K_JSON: (OBJECT, JSON_OBJ),
}
_FIXED_WIDTH = {K_U64: 8, K_I64: 8, K_F64: 8, K_DATE: 8, K_IP: 16}
_VAR_WIDTH = (K_TEXT, K_BYTES, K_JSON)
_HIGHEST_BIT = 1 << 63
_MASK64 = (1 << 64) - 1
_MAX_OFFSET = (1 << 31) - 1
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")

#: One column's buffers: (rows, null count, validity bitmap or None, list offsets
#: (multi-valued slots) or None, value offsets (text, bytes, json) or None,
#: value bytes (bit-packed for bool), number of values).
SlotBuffers = tuple[int, int, bytes | None, bytes | None, bytes | None, bytes, int]


def read_vint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode one Tantivy VInt at ``pos``; returns ``(value, next position)``."""
    return decode_vint(data, pos, error=DocStoreError, context="doc store")


def lz4_decompress(src: bytes, size: int) -> bytes:
    """Decompress one raw LZ4 block (no frame) that must expand to exactly ``size`` bytes."""
    out = bytearray()
    pos = 0
    end = len(src)
    while pos < end:
        token = src[pos]
        pos += 1
        lit = token >> 4
        if lit == 15:
            while True:
                if pos >= end:
                    raise DocStoreError("doc store: truncated LZ4 literal length")
                b = src[pos]
                pos += 1
                lit += b
                if b != 255:
                    break
        if pos + lit > end:
            raise DocStoreError("doc store: LZ4 literals run past the block")
        out += src[pos : pos + lit]
        pos += lit
        if pos >= end:
            break
        if pos + 2 > end:
            raise DocStoreError("doc store: truncated LZ4 match offset")
        offset = src[pos] | (src[pos + 1] << 8)
        pos += 2
        mlen = token & 15
        if mlen == 15:
            while True:
                if pos >= end:
                    raise DocStoreError("doc store: truncated LZ4 match length")
                b = src[pos]
                pos += 1
                mlen += b
                if b != 255:
                    break
        mlen += 4
        start = len(out) - offset
        if offset == 0 or start < 0:
            raise DocStoreError("doc store: LZ4 match offset outside the output")
        if offset >= mlen:
            out += out[start : start + mlen]
        else:
            for i in range(mlen):
                out.append(out[start + i])
        if len(out) > size:
            raise DocStoreError("doc store: LZ4 block expands past its declared size")
    if len(out) != size:
        raise DocStoreError(
            f"doc store: LZ4 block expanded to {len(out)} bytes, its header says {size}"
        )
    return bytes(out)


def _u64_to_f64_bits(bits: int) -> int:
    # Tantivy stores f64 as an order-preserving u64; undo it, keeping the exact bits.
    return bits ^ _HIGHEST_BIT if bits & _HIGHEST_BIT else ~bits & _MASK64


def _need(data: bytes, pos: int, n: int, end: int) -> None:
    if pos + n > end:
        raise DocStoreError("doc store: value runs past the end of its document")


def _read_value(data: bytes, pos: int, end: int, version: int) -> tuple[int, Any, int]:
    """Decode one ``[type code][value]`` as Python; returns ``(code, value, next position)``.

    Used for JSON objects (and the arrays inside them). Values: text -> str,
    u64/i64/date(ns)/ip(u128) -> int, f64 -> float, bool -> bool, bytes ->
    bytes, null -> None, array -> list, object -> dict.
    """
    _need(data, pos, 1, end)
    code = data[pos]
    pos += 1
    if code in (TEXT, FACET):
        n, pos = read_vint(data, pos)
        _need(data, pos, n, end)
        try:
            text = bytes(data[pos : pos + n]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocStoreError(f"doc store: invalid UTF-8 in a stored string ({exc})") from exc
        return code, text, pos + n
    if code == U64:
        _need(data, pos, 8, end)
        return code, _U64.unpack_from(data, pos)[0], pos + 8
    if code == I64:
        _need(data, pos, 8, end)
        return code, _I64.unpack_from(data, pos)[0], pos + 8
    if code == F64:
        _need(data, pos, 8, end)
        bits = _u64_to_f64_bits(_U64.unpack_from(data, pos)[0])
        return code, float(_F64.unpack(_U64.pack(bits))[0]), pos + 8
    if code == DATE:
        _need(data, pos, 8, end)
        value = _I64.unpack_from(data, pos)[0]
        return code, value if version >= 2 else value * 1000, pos + 8
    if code == BYTES:
        n, pos = read_vint(data, pos)
        _need(data, pos, n, end)
        return code, bytes(data[pos : pos + n]), pos + n
    if code == BOOL:
        _need(data, pos, 1, end)
        b = data[pos]
        if b > 1:
            raise DocStoreError(f"doc store: invalid bool byte {b}")
        return code, b == 1, pos + 1
    if code == IP:
        _need(data, pos, 16, end)
        return code, int.from_bytes(data[pos : pos + 16], "little"), pos + 16
    if code == NULL:
        return code, None, pos
    if code in (ARRAY, OBJECT):
        n, pos = read_vint(data, pos)
        items: list[Any] = []
        for _ in range(n):
            _, item, pos = _read_value(data, pos, end, version)
            items.append(item)
        if code == ARRAY:
            return code, items, pos
        if n % 2:
            raise DocStoreError("doc store: object with an odd number of keys and values")
        obj: dict[str, Any] = {}
        for i in range(0, n, 2):
            key = items[i]
            if not isinstance(key, str):
                raise DocStoreError("doc store: object key is not a string")
            obj[key] = items[i + 1]
        return code, obj, pos
    if code == JSON_OBJ:
        # Deprecated: serde_json text; its end is only known by parsing it.
        try:
            text = bytes(data[pos:end]).decode("utf-8", errors="strict")
            value, used = json.JSONDecoder().raw_decode(text)
        except ValueError as exc:
            raise DocStoreError(f"doc store: bad legacy JSON object ({exc})") from exc
        return OBJECT, value, pos + len(text[:used].encode("utf-8"))
    if code == EXT:
        raise DocStoreError("doc store: pre-tokenized text values (type code 7) are not supported")
    raise DocStoreError(f"doc store: unknown value type code {code}")


def _skip_value(data: bytes, pos: int, end: int, version: int) -> int:
    """The position after the value at ``pos`` (``[type code][value]``), nothing decoded."""
    _need(data, pos, 1, end)
    code = data[pos]
    pos += 1
    if code in (TEXT, FACET, BYTES):
        n, pos = read_vint(data, pos)
        _need(data, pos, n, end)
        return pos + n
    if code in (U64, I64, F64, DATE):
        _need(data, pos, 8, end)
        return pos + 8
    if code == BOOL:
        _need(data, pos, 1, end)
        return pos + 1
    if code == IP:
        _need(data, pos, 16, end)
        return pos + 16
    if code == NULL:
        return pos
    if code in (ARRAY, OBJECT):
        n, pos = read_vint(data, pos)
        if code == OBJECT and n % 2:
            raise DocStoreError("doc store: object with an odd number of keys and values")
        for _ in range(n):
            pos = _skip_value(data, pos, end, version)
        return pos
    return _read_value(data, pos - 1, end, version)[2]


def json_text(value: Any) -> bytes:
    """A decoded JSON object as the JSON text the column holds (both twins use this)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _Bits:
    """A growing little-endian bitmap (Arrow's layout)."""

    __slots__ = ("count", "data")

    def __init__(self) -> None:
        self.data = bytearray()
        self.count = 0

    def append(self, bit: bool) -> None:
        if self.count & 7 == 0:
            self.data.append(0)
        if bit:
            self.data[self.count >> 3] |= 1 << (self.count & 7)
        self.count += 1


class _Column:
    __slots__ = (
        "bits",
        "data",
        "field_id",
        "kind",
        "list_offsets",
        "multi",
        "name",
        "nulls",
        "offsets",
        "rows",
        "validity",
        "values",
    )

    def __init__(self, kind: int, multi: bool, name: str, field_id: int) -> None:
        self.kind = kind
        self.multi = multi
        self.name = name
        self.field_id = field_id
        self.validity = _Bits()
        self.nulls = 0
        self.rows = 0
        self.list_offsets = bytearray(_I32.pack(0)) if multi else None
        self.offsets = bytearray(_I32.pack(0)) if kind in _VAR_WIDTH else None
        self.data = bytearray()
        self.bits = _Bits()
        self.values = 0

    def _put_var(self, chunk: bytes) -> None:
        assert self.offsets is not None
        self.data += chunk
        if len(self.data) > _MAX_OFFSET:
            raise DocStoreError(
                f"fields: column {self.name!r} holds more than 2 GiB in one batch; "
                "decode fewer documents at a time"
            )
        self.offsets += _I32.pack(len(self.data))

    def append(self, block: bytes, pos: int, end: int, version: int) -> int:
        """Append the value whose payload starts at ``pos``; the next position."""
        kind = self.kind
        self.values += 1
        if kind in (K_TEXT, K_BYTES):
            n, pos = read_vint(block, pos)
            _need(block, pos, n, end)
            self._put_var(block[pos : pos + n])
            return pos + n
        if kind == K_JSON:
            _, value, pos = _read_value(block, pos - 1, end, version)
            self._put_var(json_text(value))
            return pos
        if kind == K_BOOL:
            _need(block, pos, 1, end)
            b = block[pos]
            if b > 1:
                raise DocStoreError(f"doc store: invalid bool byte {b}")
            self.bits.append(b == 1)
            return pos + 1
        if kind == K_IP:
            _need(block, pos, 16, end)
            self.data += block[pos : pos + 16]
            return pos + 16
        _need(block, pos, 8, end)
        if kind == K_F64:
            self.data += _U64.pack(_u64_to_f64_bits(_U64.unpack_from(block, pos)[0]))
        elif kind == K_DATE and version < 2:
            self.data += _I64.pack(
                (_I64.unpack_from(block, pos)[0] * 1000 + (1 << 63)) % (1 << 64) - (1 << 63)
            )
        else:
            self.data += block[pos : pos + 8]
        return pos + 8

    def end_row(self, count: int) -> None:
        self.rows += 1
        self.validity.append(count > 0)
        if count == 0:
            self.nulls += 1
        if self.multi:
            assert self.list_offsets is not None
            self.list_offsets += _I32.pack(self.values)
            return
        if count == 0:
            self.values += 1
            if self.offsets is not None:
                self.offsets += _I32.pack(len(self.data))
            elif self.kind == K_BOOL:
                self.bits.append(False)
            else:
                self.data += bytes(_FIXED_WIDTH[self.kind])

    def finish(self) -> SlotBuffers:
        data = bytes(self.bits.data) if self.kind == K_BOOL else bytes(self.data)
        return (
            self.rows,
            self.nulls,
            bytes(self.validity.data) if self.nulls else None,
            bytes(self.list_offsets) if self.list_offsets is not None else None,
            bytes(self.offsets) if self.offsets is not None else None,
            data,
            self.values,
        )


class Checkpoints:
    """One LZ4 doc store's blocks for :meth:`ColumnBuilder.add_lz4_parts`: block ``b`` is
    ``data[byte_starts[b]:byte_ends[b]]`` and holds documents ``doc_starts[b]`` to
    ``doc_ends[b] - 1``. Built once per store and kept; the sequences are read where
    they are (a ``StoreIndex``'s are views of C ``int64`` arrays, which the Cython twin
    reads in place too)."""

    __slots__ = ("byte_ends", "byte_starts", "doc_ends", "doc_starts", "view")

    def __init__(
        self,
        data: Any,
        doc_starts: Sequence[int],
        doc_ends: Sequence[int],
        byte_starts: Sequence[int],
        byte_ends: Sequence[int],
    ) -> None:
        if not len(doc_starts) == len(doc_ends) == len(byte_starts) == len(byte_ends):
            raise ValueError("doc_starts, doc_ends, byte_starts and byte_ends differ in length")
        self.view = memoryview(data).cast("B")
        self.doc_starts = doc_starts
        self.doc_ends = doc_ends
        self.byte_starts = byte_starts
        self.byte_ends = byte_ends

    def __len__(self) -> int:
        return len(self.doc_starts)

    def block_of(self, doc: int, lo: int = 0) -> int:
        """The last block from ``lo`` on whose first document is at or before ``doc``
        (``lo`` when there is none): the block holding ``doc`` when one does."""
        if lo < 0 or lo > len(self.doc_starts):
            raise ValueError("lo outside the blocks")
        return max(lo, bisect.bisect_right(self.doc_starts, doc, lo) - 1)


class ColumnBuilder:
    """Decodes documents of decompressed blocks into Arrow column buffers, one row each.

    Args:
        kinds: the slot kind (``K_*``) of each output column.
        multi: whether each column is list-valued.
        field_ids: the stored field id of each column.
        names: each column's name (for error messages).
        version: the doc store version (1 keeps dates in microseconds).
    """

    def __init__(
        self,
        kinds: Sequence[int],
        multi: Sequence[bool],
        field_ids: Sequence[int],
        names: Sequence[str],
        version: int,
    ) -> None:
        for f in field_ids:
            if f < 0 or f > 0x7FFFFFFF:
                raise DocStoreError(f"fields: field id {f} is not a stored field id")
        self._cols = [
            _Column(k, bool(m), n, f)
            for k, m, n, f in zip(kinds, multi, names, field_ids, strict=True)
        ]
        self._slots = {f: i for i, f in enumerate(field_ids)}
        self._version = version
        #: Bytes of LZ4 blocks decompressed by :meth:`add_lz4` (whole blocks here).
        self.decompressed = 0
        #: LZ4 blocks :meth:`add_lz4` decompressed whole (here: every block not cached).
        self.whole_blocks = 0

    def add(self, block: bytes, doc_ids: Sequence[int], lo: int, hi: int, first_doc: int) -> None:
        """Append one row per ``doc_ids[lo:hi]``: documents ``doc - first_doc`` of ``block``."""
        size = len(block)
        if size < 4:
            raise DocStoreError("doc store: block shorter than its doc count")
        count = _U32.unpack_from(block, size - 4)[0]
        index_start = size - 4 * (count + 1)
        if index_start < 0:
            raise DocStoreError("doc store: block doc count larger than the block")
        cols = self._cols
        slots = self._slots
        version = self._version
        for i in range(lo, hi):
            doc_pos = doc_ids[i] - first_doc
            if doc_pos < 0 or doc_pos >= count:
                raise DocStoreError(
                    f"doc store: doc position {doc_pos} outside its block of {count}"
                )
            start = _U32.unpack_from(block, index_start + 4 * doc_pos)[0]
            end = (
                _U32.unpack_from(block, index_start + 4 * (doc_pos + 1))[0]
                if doc_pos + 1 < count
                else index_start
            )
            if start > end or end > index_start:
                raise DocStoreError("doc store: document offsets out of order")
            counts = [0] * len(cols)
            nvals, pos = read_vint(block, start)
            for _ in range(nvals):
                _need(block, pos, 5, end)
                field = _U32.unpack_from(block, pos)[0]
                code = block[pos + 4]
                slot = slots.get(field)
                if slot is None or code == NULL:
                    pos = _skip_value(block, pos + 4, end, version)
                    continue
                col = cols[slot]
                if code not in KIND_CODES[col.kind]:
                    if code > OBJECT:
                        raise DocStoreError(f"doc store: unknown value type code {code}")
                    raise DocStoreError(
                        f"fields: field {col.field_id} ({col.name!r}) holds a value of "
                        f"type code {code}, not {KIND_NAMES[col.kind]}"
                    )
                counts[slot] += 1
                if not col.multi and counts[slot] > 1:
                    pos = _skip_value(block, pos + 4, end, version)
                else:
                    pos = col.append(block, pos + 5, end, version)
            if pos != end:
                raise DocStoreError("doc store: document length does not match its values")
            for slot, col in enumerate(cols):
                if not col.multi and counts[slot] > 1:
                    raise DocStoreError(
                        f"fields: field {col.field_id} ({col.name!r}) has "
                        f"{counts[slot]} values; declare it multi=True"
                    )
            for slot, col in enumerate(cols):
                col.end_row(counts[slot])

    def add_lz4(
        self,
        data: Any,
        doc_starts: Sequence[int],
        doc_ends: Sequence[int],
        byte_starts: Sequence[int],
        byte_ends: Sequence[int],
        doc_ids: Sequence[int],
        cache: Any = None,
        cache_key: Any = None,
    ) -> None:
        """Append one row per ``doc_ids`` (sorted) of an LZ4 doc store: block ``b`` is
        ``data[byte_starts[b]:byte_ends[b]]`` (``[u32 size][LZ4 block]``) and holds
        documents ``doc_starts[b]`` to ``doc_ends[b] - 1``. One part of
        :meth:`add_lz4_parts`.
        """
        self.add_lz4_parts(
            [(Checkpoints(data, doc_starts, doc_ends, byte_starts, byte_ends), doc_ids, cache_key)],
            cache,
        )

    def add_lz4_parts(
        self, parts: Sequence[tuple[Checkpoints, Sequence[int], Any]], cache: Any = None
    ) -> None:
        """Append one row per doc id of each part ``(checkpoints, doc_ids (sorted),
        cache_key)``, the parts one after the other. A part's doc ids are a list or a
        ``range`` (a run of a whole-store read).

        ``cache`` (a ``BlockCache``) is asked once for every touched block of every part
        (after all of them are checked): ``lookup_many(cache_key, blocks)`` for one part,
        ``lookup_parts([(cache_key, blocks), ...])`` for several. Each answer is the
        block's bytes, True (decompress whole and ``put`` it under ``(cache_key, b)``) or
        False. The twin decompresses every other block whole too; the Cython kernel
        stops at the block's last wanted document. Same rows either way.
        """
        groups: list[tuple[int, int, int, int]] = []
        asks: list[tuple[Any, list[int]]] = []
        for p, (cp, doc_ids, cache_key) in enumerate(parts):
            i, n, block, start = 0, len(doc_ids), 0, len(groups)
            while i < n:  # the touched blocks and each one's hits doc_ids[lo:hi], checked
                doc = doc_ids[i]
                block = cp.block_of(doc, block)
                if not cp.doc_starts or doc < cp.doc_starts[block] or doc >= cp.doc_ends[block]:
                    raise DocStoreError(f"doc_ids: {doc} outside the store's blocks")
                hi = bisect.bisect_left(doc_ids, cp.doc_ends[block], i, n)
                begin, end = cp.byte_starts[block], cp.byte_ends[block]
                if begin < 0 or end > len(cp.view) or end - begin < 4:
                    raise DocStoreError(f"doc store: block {block} shorter than its size header")
                groups.append((p, block, i, hi))
                i = hi
            if cache is not None and len(groups) > start:
                asks.append((cache_key, [g[1] for g in groups[start:]]))
        answers: list[Any] = [False] * len(groups)
        if len(asks) == 1:
            answers = cache.lookup_many(*asks[0])
        elif asks:
            answers = cache.lookup_parts(asks)
        for (p, block, lo, hi), found in zip(groups, answers, strict=True):
            cp, doc_ids, cache_key = parts[p]
            first = cp.doc_starts[block]
            if isinstance(found, bytes):
                self.add(found, doc_ids, lo, hi, first)
                continue
            begin, end = cp.byte_starts[block], cp.byte_ends[block]
            size = _U32.unpack_from(cp.view, begin)[0]
            whole = lz4_decompress(bytes(cp.view[begin + 4 : end]), size)
            if found:
                cache.put((cache_key, block), whole)
            self.add(whole, doc_ids, lo, hi, first)
            self.decompressed += size
            self.whole_blocks += 1

    def finish(self, *, owned: bool = False) -> list[SlotBuffers]:
        """The buffers of every column, in slot order.

        ``owned``: the Cython kernel then hands its C buffers over without a copy (as
        ``OwnedBuffer`` objects: the buffer protocol and ``isascii``); here they are
        bytes either way.
        """
        del owned
        return [col.finish() for col in self._cols]


KIND_NAMES = {
    K_TEXT: "text",
    K_U64: "u64",
    K_I64: "i64",
    K_F64: "f64",
    K_BOOL: "bool",
    K_DATE: "date",
    K_BYTES: "bytes",
    K_IP: "ip",
    K_JSON: "json",
}
