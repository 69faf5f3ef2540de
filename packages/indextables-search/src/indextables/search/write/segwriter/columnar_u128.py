"""Tantivy's u128 compact-space codec (ip columns), byte for byte (``column_values/u128_based``).

The distinct values' gaps (each at least 3 values wide between two values, plus the
space below the minimum and above the maximum) are removed from the u128 space while
that pays: gaps are taken largest first (Rust's ``BinaryHeap`` order, ties included,
is replayed exactly), staged until the compact space needs fewer bits, and kept once
the bits saved over all values exceed 36 bits per staged gap, or always while the
space needs more than 32 bits. The rest of the space is a list of covered ranges
numbered from 1 (0 is kept for null).

Layout: ``VInt`` count, u8 codec 1, each value's compact number bitpacked at the
width of the largest (:func:`.columnar_codecs.bitpack`), then the footer: u64 0
(flags), ``VInt`` min, max and count, u8 width, ``VInt`` the range count and per
range its start and end as deltas from the previous bound; ``u32`` the footer length.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Sequence
from typing import Final

import numpy as np

from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter.columnar_codecs import bitpack, num_bits

__all__ = ["compact_space_values"]

_U128_MAX: Final = (1 << 128) - 1
_COST_PER_BLANK: Final = 36
_CODEC_COMPACT_SPACE: Final = 1
_U64_MASK: Final = (1 << 64) - 1
_U32_MASK: Final = (1 << 32) - 1
_U56_MASK: Final = (1 << 56) - 1
_U128_GROUPS: Final = 19  # 7-bit groups of a u128

Blank = tuple[int, int]  # inclusive range


def _size(blank: Blank) -> int:
    return blank[1] - blank[0] + 1


class _RustMaxHeap:
    """``std::collections::BinaryHeap`` ordered by blank size: its exact push/pop order."""

    def __init__(self) -> None:
        self.data: list[Blank] = []

    def _sift_up(self, start: int, pos: int) -> None:
        data = self.data
        element = data[pos]
        while pos > start:
            parent = (pos - 1) // 2
            if _size(element) <= _size(data[parent]):
                break
            data[pos] = data[parent]
            pos = parent
        data[pos] = element

    def push(self, blank: Blank) -> None:
        self.data.append(blank)
        self._sift_up(0, len(self.data) - 1)

    def pop(self) -> Blank:
        data = self.data
        item = data.pop()
        if data:
            item, data[0] = data[0], item
            end = len(data)
            element = data[0]
            pos = 0
            child = 1
            while child <= max(end - 2, 0) and end >= 2:
                child += _size(data[child]) <= _size(data[child + 1])
                data[pos] = data[child]
                pos = child
                child = 2 * pos + 1
            if child == end - 1:
                data[pos] = data[child]
                pos = child
            data[pos] = element
            self._sift_up(0, pos)
        return item

    def __len__(self) -> int:
        return len(self.data)


def _kept(sizes: Sequence[int], amplitude: int, total: int) -> tuple[int, int]:
    """How many gaps (popped largest first, of these sizes) are removed, and how many
    were staged and left at the end (Tantivy's loop, which only sizes decide)."""
    bits = amplitude.bit_length()
    kept = staged = staged_sum = 0
    for size in sizes:
        staged += 1
        staged_sum += size
        new_amplitude = amplitude - staged_sum
        new_bits = new_amplitude.bit_length()
        if bits == new_bits:
            continue
        saved = (bits - new_bits) * total
        if bits <= 32 and staged * _COST_PER_BLANK >= saved:
            continue
        amplitude, bits = new_amplitude, new_bits
        kept += staged
        staged = staged_sum = 0
    return kept, staged


def _objects(values: Sequence[int]) -> np.ndarray:
    """``values`` (Python ints, any size) as a numpy object array (C loops, no copies)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _removed_gaps(
    firsts: np.ndarray,
    lasts: np.ndarray,
    sizes: np.ndarray,
    amplitude: int,
    total: int,
    edges: bool,
) -> list[Blank]:
    """The gaps (``firsts[i]..lasts[i]``, ``sizes[i]`` wide) removed from the space: the
    first ones Rust's heap pops.

    The heap pops gaps by decreasing size, so the removed ones are the largest, unless
    the last one removed ties with one kept: only then does the heap's own order of
    equal gaps decide, and it is replayed exactly.
    """
    ordered = sorted(sizes.tolist(), reverse=True)
    kept, staged = _kept(ordered, amplitude, total)
    if not edges and not kept and staged:
        kept = 1  # Tantivy keeps the first gap staged when nothing else is removed
    if not kept:
        return []
    if kept == len(ordered) or ordered[kept - 1] != ordered[kept]:
        chosen = (sizes >= ordered[kept - 1]).astype(bool)
        return list(zip(firsts[chosen].tolist(), lasts[chosen].tolist(), strict=True))
    heap = _RustMaxHeap()
    for gap in zip(firsts.tolist(), lasts.tolist(), strict=True):
        heap.push(gap)
    return [heap.pop() for _ in range(kept)]


def _compact_space(unique: Sequence[int] | np.ndarray, total: int) -> list[Blank]:
    """The covered ranges (inclusive) of ``unique`` (sorted distinct values)."""
    if not isinstance(unique, np.ndarray):
        unique = _objects(unique)
    blanks: list[Blank] = []
    if len(unique):
        low, high = int(unique[0]), int(unique[-1])
        # A gap between two neighbours holds at least 3 values: they differ by 4 or more.
        steps = unique[1:] - unique[:-1]
        wide = (steps >= 4).astype(bool)
        firsts = unique[:-1][wide] + 1
        sizes = steps[wide] - 1
        lasts = firsts + sizes - 1
        amplitude = min(high - low + 1, _U128_MAX)
        if low != 0:
            blanks.append((0, low - 1))
        if high != _U128_MAX:
            blanks.append((high + 1, _U128_MAX))
        blanks += _removed_gaps(firsts, lasts, sizes, amplitude, total, bool(blanks))
    blanks.sort(key=lambda b: b[0])
    covered: list[Blank] = []
    if blanks and blanks[0][0] != 0:
        covered.append((0, blanks[0][0] - 1))
    covered += [(left[1] + 1, right[0] - 1) for left, right in itertools.pairwise(blanks)]
    if blanks and blanks[-1][1] != _U128_MAX:
        covered.append((blanks[-1][1] + 1, _U128_MAX))
    return covered or [(0, 0)]


def _u64s(values: np.ndarray) -> np.ndarray:
    """``values`` (ints below 2^64, objects) as u64 (numpy casts objects through i64)."""
    low = (values & _U32_MASK).astype(np.uint64)
    return low | ((values >> 32).astype(np.uint64) << np.uint64(32))


def _sortable(values: np.ndarray) -> np.ndarray:
    """``values`` (u128 objects) as 16 big-endian bytes each, which numpy orders as the
    numbers (bytewise; a fixed width, so the trailing zero bytes numpy drops still sort
    first)."""
    pair = np.empty((len(values), 2), dtype=">u8")
    pair[:, 0] = _u64s(values >> 64)
    pair[:, 1] = _u64s(values & _U64_MASK)
    return pair.view("S16").ravel()


def _vints(values: np.ndarray) -> bytes:
    """The VInts of ``values`` (non-negative ints below 2^128, objects) one after another."""
    groups = np.empty((len(values), _U128_GROUPS), dtype=np.uint8)
    # Three pieces of 8, 8 and 3 groups (56, 56 and 16 bits: each fits an i64).
    for piece, first in enumerate(range(0, _U128_GROUPS, 8)):
        part = ((values >> (56 * piece)) & _U56_MASK).astype(np.uint64)
        for k in range(first, min(first + 8, _U128_GROUPS)):
            shifted = part >> np.uint64(7 * (k - first))
            groups[:, k] = (shifted & np.uint64(0x7F)).astype(np.uint8)
    places = np.arange(_U128_GROUPS)
    last = np.where(groups != 0, places, 0).max(axis=1, initial=0)
    groups[np.arange(len(values)), last] |= 0x80
    return bytes(groups[places[None, :] <= last[:, None]].tobytes())


def compact_space_values(values: Sequence[int]) -> bytes:
    """The u128 column values of ``values`` (each 0 <= v < 2^128), as tantivy-py writes them."""
    given = _objects(values)
    unique = _objects(sorted(set(values)))
    covered = _compact_space(unique, len(values))
    starts = _objects([start for start, _end in covered])
    ends = _objects([end for _start, end in covered])
    compact_starts = np.cumsum(np.concatenate([[1], (ends - starts + 1)[:-1]]).astype(object))
    amplitude = int(compact_starts[-1]) + int(ends[-1] - starts[-1])
    width = num_bits(amplitude)
    # Each value's range (the last start at or below it), then its number in the range.
    pos = np.searchsorted(_sortable(starts), _sortable(given), side="right") - 1
    compact = _u64s(given - starts[pos] + compact_starts[pos])
    out = bytearray()
    encode_vint(len(values), out)
    out.append(_CODEC_COMPACT_SPACE)
    out += bitpack(compact, width)
    footer = bytearray(struct.pack("<Q", 0))
    encode_vint(int(unique[0]) if len(unique) else 0, footer)
    encode_vint(int(unique[-1]) if len(unique) else 0, footer)
    encode_vint(len(values), footer)
    footer.append(width)
    encode_vint(len(covered), footer)
    # Per range: its start from the previous range's end (the first from 0), its length.
    bounds = np.empty(2 * len(covered), dtype=object)
    bounds[0::2] = starts - np.concatenate([[0], ends[:-1]]).astype(object)
    bounds[1::2] = ends - starts
    footer += _vints(bounds)
    out += footer
    out += struct.pack("<I", len(footer))
    return bytes(out)
