"""The two SSTables of Tantivy's columnar format (``sstable`` crate, v3), byte for byte.

* the **column directory** (``RangeSSTable``): key ``column name, 0x00, column type
  code`` -> the column's byte range in the columnar file;
* a str/bytes column's **dictionary** (``VoidSSTable``): the column's distinct values,
  sorted bytewise; a value's ordinal is its rank.

Blocks of keys close once their key bytes pass 4,000 (``keep``/``add`` lengths as one
nibble-packed byte under 16 each, else ``0x01`` and two LEB128 numbers; the first key of
a block keeps nothing). A block is ``[u32 length + 1][u8 0][values][keys]``, or zstd
level 3 (``[u8 1]``) when over 2,048 bytes and compression shrinks it (tantivy-py 0.27
builds the columnar crate with ``zstd-compression``). Range values per block: LEB128
the number of offsets, then each offset's LEB128 delta from the previous (the first
from 0); void values are nothing. Then ``u32 0`` (the end marker), the index (with two
blocks or more: an fst of each block's shortened last key -> block number, then the
``BlockAddrStore``), ``u64`` the fst's length, ``u64`` the index offset, ``u64`` the key
count and ``u32 3``. The index pieces are the term dictionaries' own
(:mod:`indextables.search.splits.termdict`).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

import zstandard

from indextables.search.splits.termdict import impl as termdict_impl
from indextables.search.splits.termdict._kernels_py import pack_keys
from indextables.search.splits.termdict.blockaddr import BlockAddr, encode_block_addrs
from indextables.search.splits.termdict.sstform import shorten_between
from indextables.search.splits.vint import encode_leb128

__all__ = ["range_sstable", "void_sstable"]

_BLOCK_LEN: Final = 4000
_ZSTD_MIN: Final = 2048
_ZSTD_LEVEL: Final = 3
_VERSION: Final = 3


def _common_prefix(left: bytes, right: bytes) -> int:
    limit = min(len(left), len(right))
    i = 0
    while i < limit and left[i] == right[i]:
        i += 1
    return i


def _write_block(out: bytearray, payload: bytes) -> None:
    if len(payload) > _ZSTD_MIN:
        packed = zstandard.ZstdCompressor(level=_ZSTD_LEVEL).compress(payload)
        if len(packed) < len(payload):
            out += struct.pack("<IB", len(packed) + 1, 1)
            out += packed
            return
    out += struct.pack("<IB", len(payload) + 1, 0)
    out += payload


def _range_values(ranges: Sequence[tuple[int, int]]) -> bytes:
    offsets = [ranges[0][0]] + [end for _start, end in ranges] if ranges else []
    out = bytearray()
    encode_leb128(len(offsets), out)
    previous = 0
    for offset in offsets:
        encode_leb128(offset - previous, out)
        previous = offset
    return bytes(out)


def _sstable(keys: Sequence[bytes], ranges: Sequence[tuple[int, int]] | None) -> bytes:
    out = bytearray()
    blocks: list[tuple[bytes, int, int, int]] = []  # last key, start, end, first ordinal
    keybuf = bytearray()
    first = 0
    previous = b""

    def flush(stop: int) -> None:
        values = b"" if ranges is None else _range_values(ranges[first:stop])
        start = len(out)
        _write_block(out, values + bytes(keybuf))
        blocks.append((keys[stop - 1], start, len(out), first))

    for i, key in enumerate(keys):
        keep = _common_prefix(previous, key)
        add = len(key) - keep
        if keep < 16 and add < 16:
            keybuf.append(keep | (add << 4))
        else:
            keybuf.append(1)
            encode_leb128(keep, keybuf)
            encode_leb128(add, keybuf)
        keybuf += key[keep:]
        previous = key
        if len(keybuf) > _BLOCK_LEN:
            flush(i + 1)
            first = i + 1
            previous = b""
            keybuf = bytearray()
    if keybuf:
        flush(len(keys))
    out += b"\x00\x00\x00\x00"
    index_offset = len(out)
    fst_len = 0
    if len(blocks) > 1:
        index_keys = [
            shorten_between(last, keys[blocks[i + 1][3]]) if i + 1 < len(blocks) else last
            for i, (last, _start, _end, _first) in enumerate(blocks)
        ]
        key_data, key_ends = pack_keys(index_keys)
        fst = termdict_impl.kernels().fst_build(key_data, key_ends, None)
        fst_len = len(fst)
        out += fst
        out += encode_block_addrs([BlockAddr(s, e, f) for _k, s, e, f in blocks])
    out += struct.pack("<QQQI", fst_len, index_offset, len(keys), _VERSION)
    return bytes(out)


def void_sstable(keys: Sequence[bytes]) -> bytes:
    """A dictionary of ``keys`` (strictly increasing bytes), without values."""
    return _sstable(keys, None)


def range_sstable(keys: Sequence[bytes], ranges: Sequence[tuple[int, int]]) -> bytes:
    """The column directory: each key (strictly increasing) with its contiguous byte range."""
    return _sstable(keys, ranges)
