"""Pure-Python twin of the doc-store kernels (see ``_kernels.pyx``; both must agree exactly).

Format facts (Tantivy ``src/store`` and ``src/schema/document``): a block is
``[doc bytes...][u32 LE start offset per doc][u32 LE doc count]``; a document
is ``VInt(n)`` then ``n`` times ``[u32 LE field id][u8 type code][value]``.
Tantivy's VInt is little-endian groups of 7 bits whose LAST byte has the high
bit set. LZ4 blocks are ``[u32 LE uncompressed size][raw LZ4 block]``.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from indextables.search.read.docstore.errors import DocStoreError

__all__ = ["decode_block", "lz4_decompress", "read_vint"]

TEXT, U64, I64, FACET, BYTES, DATE, F64, EXT, JSON_OBJ, BOOL, IP, NULL, ARRAY, OBJECT = range(14)
_HIGHEST_BIT = 1 << 63
_MASK64 = (1 << 64) - 1
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")


def read_vint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode one Tantivy VInt at ``pos``; returns ``(value, next position)``."""
    result = 0
    shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise DocStoreError("doc store: truncated VInt")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DocStoreError("doc store: VInt longer than 10 bytes")


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


def _u64_to_f64(bits: int) -> float:
    bits = bits ^ _HIGHEST_BIT if bits & _HIGHEST_BIT else ~bits & _MASK64
    return float(_F64.unpack(_U64.pack(bits))[0])


def _need(data: bytes, pos: int, n: int, end: int) -> None:
    if pos + n > end:
        raise DocStoreError("doc store: value runs past the end of its document")


def _read_value(data: bytes, pos: int, end: int, version: int) -> tuple[int, Any, int]:
    """Decode one ``[type code][value]``; returns ``(code, python value, next position)``.

    Values: text -> str, u64/i64/date(ns)/ip(u128) -> int, f64 -> float,
    bool -> bool, bytes -> bytes, null -> None, array -> list, object -> dict.
    """
    _need(data, pos, 1, end)
    code = data[pos]
    pos += 1
    if code in (TEXT, FACET):
        n, pos = read_vint(data, pos)
        _need(data, pos, n, end)
        try:
            text = data[pos : pos + n].decode("utf-8")
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
        return code, _u64_to_f64(_U64.unpack_from(data, pos)[0]), pos + 8
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
        text = data[pos:end].decode("utf-8", errors="strict")
        try:
            value, used = json.JSONDecoder().raw_decode(text)
        except ValueError as exc:
            raise DocStoreError(f"doc store: bad legacy JSON object ({exc})") from exc
        return OBJECT, value, pos + len(text[:used].encode("utf-8"))
    if code == EXT:
        raise DocStoreError("doc store: pre-tokenized text values (type code 7) are not supported")
    raise DocStoreError(f"doc store: unknown value type code {code}")


def decode_block(
    block: bytes,
    doc_positions: list[int],
    slots: dict[int, int],
    num_slots: int,
    version: int,
) -> list[list[list[tuple[int, Any]]]]:
    """Decode the documents at ``doc_positions`` (indexes inside the block).

    Returns one row per requested position: ``num_slots`` lists of ``(type code,
    value)``, filled for each field id in ``slots`` (field id -> slot).
    """
    size = len(block)
    if size < 4:
        raise DocStoreError("doc store: block shorter than its doc count")
    count = _U32.unpack_from(block, size - 4)[0]
    index_start = size - 4 * (count + 1)
    if index_start < 0:
        raise DocStoreError("doc store: block doc count larger than the block")
    rows: list[list[list[tuple[int, Any]]]] = []
    for doc_pos in doc_positions:
        if doc_pos < 0 or doc_pos >= count:
            raise DocStoreError(f"doc store: doc position {doc_pos} outside its block of {count}")
        start = _U32.unpack_from(block, index_start + 4 * doc_pos)[0]
        end = (
            _U32.unpack_from(block, index_start + 4 * (doc_pos + 1))[0]
            if doc_pos + 1 < count
            else index_start
        )
        if start > end or end > index_start:
            raise DocStoreError("doc store: document offsets out of order")
        row: list[list[tuple[int, Any]]] = [[] for _ in range(num_slots)]
        nvals, pos = read_vint(block, start)
        for _ in range(nvals):
            _need(block, pos, 4, end)
            field = _U32.unpack_from(block, pos)[0]
            code, value, pos = _read_value(block, pos + 4, end, version)
            slot = slots.get(field)
            if slot is not None:
                row[slot].append((code, value))
        if pos != end:
            raise DocStoreError("doc store: document length does not match its values")
        rows.append(row)
    return rows
