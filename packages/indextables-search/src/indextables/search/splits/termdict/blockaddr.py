"""The SSTable v3 index's BlockAddrStore: every block's byte range and first ordinal.

Blocks are grouped in chunks of 128. A chunk's 36-byte meta holds its first
block's start and ordinal plus, for the rest, a slope and a bit width; the
chunk data bit-packs each later block's deviation from ``slope * i`` (shifted
to be non-negative), then the chunk's last end. The slope heuristic is
tantivy's ``find_best_slope``, kept so our bytes equal the reference's.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from indextables.search.splits.termdict.errors import TermDictError

__all__ = ["BlockAddr", "decode_block_addrs", "encode_block_addrs"]

STORE_BLOCK_LEN: Final = 128
_META: Final = struct.Struct("<QQQIIBBH")
_U32_MAX: Final = 0xFFFF_FFFF


@dataclass(frozen=True, slots=True)
class BlockAddr:
    """Where one SSTable block lives: ``[start, end)`` and its first term ordinal."""

    start: int
    end: int
    first_ordinal: int


def _num_bits(value: int) -> int:
    bits = value.bit_length()
    return bits if bits <= 56 else 64


def _best_slope(points: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """tantivy's heuristic: a slope through the lowest- and highest-slope points."""
    min_idx, min_val, min_slope = 1, 0, _U32_MAX
    max_idx, max_val, max_slope = 1, 0, 0
    for index, value in points:
        slope = (value // index) & _U32_MAX
        if slope <= min_slope:
            min_idx, min_val, min_slope = index, value, slope
        if slope >= max_slope:
            max_idx, max_val, max_slope = index, value, slope
    denominator = min_idx + max_idx
    slope = ((min_val + max_val + denominator // 2) // denominator) & _U32_MAX
    deviation = max((abs(value - slope * index) for index, value in points), default=0)
    return slope, _num_bits(deviation) + 1


def encode_block_addrs(blocks: Sequence[BlockAddr]) -> bytes:
    """``u64 metas length | metas | bit-packed data`` for ``blocks``."""
    metas = bytearray()
    data = bytearray()
    for first in range(0, len(blocks), STORE_BLOCK_LEN):
        chunk = blocks[first : first + STORE_BLOCK_LEN]
        ref = chunk[0]
        starts = [block.start - ref.start for block in chunk]
        ordinals = [block.first_ordinal - ref.first_ordinal for block in chunk]
        last_end = chunk[-1].end - ref.start
        range_points = list(enumerate([*starts, last_end]))[1:]
        range_slope, range_bits = _best_slope(range_points)
        ord_slope, ord_bits = _best_slope(list(enumerate(ordinals))[1:])
        range_shift = 1 << (range_bits - 1)
        ord_shift = 1 << (ord_bits - 1)
        metas += _META.pack(
            len(data), ref.start, ref.first_ordinal, range_slope, ord_slope, ord_bits, range_bits,
            len(chunk) - 1,
        )  # fmt: skip
        acc = 0
        pos = 0
        for i in range(1, len(chunk)):
            acc |= (starts[i] - range_slope * i + range_shift) << pos
            pos += range_bits
            acc |= (ordinals[i] - ord_slope * i + ord_shift) << pos
            pos += ord_bits
        acc |= (last_end - range_slope * len(chunk) + range_shift) << pos
        pos += range_bits
        data += acc.to_bytes((pos + 7) // 8, "little")
    return struct.pack("<Q", len(metas)) + bytes(metas) + bytes(data)


def _bits(data: bytes, addr: int, nbits: int) -> int:
    start = addr >> 3
    return (int.from_bytes(data[start : start + 9], "little") >> (addr & 7)) & ((1 << nbits) - 1)


def decode_block_addrs(store: bytes) -> list[BlockAddr]:
    """Every block's address, as a reader of ``store`` sees it."""
    if len(store) < 8:
        raise TermDictError("BlockAddrStore shorter than its 8-byte header")
    metas_len = struct.unpack_from("<Q", store, 0)[0]
    if metas_len % _META.size or 8 + metas_len > len(store):
        raise TermDictError(
            f"BlockAddrStore metas length {metas_len} is not a whole number of metas"
        )
    data = store[8 + metas_len :]
    blocks: list[BlockAddr] = []
    for at in range(8, 8 + metas_len, _META.size):
        offset, ref_start, ref_ord, r_slope, o_slope, o_bits, r_bits, count = _META.unpack_from(
            store, at
        )
        if not (1 <= r_bits <= 56 and 1 <= o_bits <= 56):
            raise TermDictError(f"BlockAddrStore chunk with bit widths {r_bits}/{o_bits}")
        r_shift, o_shift = 1 << (r_bits - 1), 1 << (o_bits - 1)
        width = r_bits + o_bits
        base = offset * 8
        if (base + count * width + r_bits + 7) // 8 > len(data):
            raise TermDictError("BlockAddrStore chunk data is truncated")
        starts = [ref_start]
        ordinals = [ref_ord]
        for i in range(1, count + 1):
            at_bits = base + (i - 1) * width
            starts.append(ref_start + _bits(data, at_bits, r_bits) + r_slope * i - r_shift)
            ordinals.append(ref_ord + _bits(data, at_bits + r_bits, o_bits) + o_slope * i - o_shift)
        starts.append(
            ref_start + _bits(data, base + count * width, r_bits) + r_slope * (count + 1) - r_shift
        )
        blocks.extend(BlockAddr(starts[i], starts[i + 1], ordinals[i]) for i in range(count + 1))
    return blocks
