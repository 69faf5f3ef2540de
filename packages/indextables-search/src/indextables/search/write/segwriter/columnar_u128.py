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

import bisect
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


def _removed_gaps(gaps: list[Blank], amplitude: int, total: int, edges: bool) -> list[Blank]:
    """The gaps removed from the space: the first ones Rust's heap pops.

    The heap pops gaps by decreasing size, so the removed ones are the largest, unless
    the last one removed ties with one kept: only then does the heap's own order of
    equal gaps decide, and it is replayed exactly.
    """
    sizes = sorted((_size(g) for g in gaps), reverse=True)
    kept, staged = _kept(sizes, amplitude, total)
    if not edges and not kept and staged:
        kept = 1  # Tantivy keeps the first gap staged when nothing else is removed
    if not kept:
        return []
    if kept == len(sizes) or sizes[kept - 1] != sizes[kept]:
        least = sizes[kept - 1]
        return [g for g in gaps if _size(g) >= least]
    heap = _RustMaxHeap()
    for gap in gaps:
        heap.push(gap)
    return [heap.pop() for _ in range(kept)]


def _compact_space(unique: Sequence[int], total: int) -> list[Blank]:
    """The covered ranges (inclusive) of ``unique`` (sorted distinct values)."""
    blanks: list[Blank] = []
    if unique:
        low, high = unique[0], unique[-1]
        gaps = [
            (first + 1, second - 1)
            for first, second in itertools.pairwise(unique)
            if (second - 1) - (first + 1) >= 2
        ]
        amplitude = min(high - low + 1, _U128_MAX)
        if low != 0:
            blanks.append((0, low - 1))
        if high != _U128_MAX:
            blanks.append((high + 1, _U128_MAX))
        blanks += _removed_gaps(gaps, amplitude, total, bool(blanks))
    blanks.sort(key=lambda b: b[0])
    covered: list[Blank] = []
    if blanks and blanks[0][0] != 0:
        covered.append((0, blanks[0][0] - 1))
    covered += [(left[1] + 1, right[0] - 1) for left, right in itertools.pairwise(blanks)]
    if blanks and blanks[-1][1] != _U128_MAX:
        covered.append((blanks[-1][1] + 1, _U128_MAX))
    return covered or [(0, 0)]


def compact_space_values(values: Sequence[int]) -> bytes:
    """The u128 column values of ``values`` (each 0 <= v < 2^128), as tantivy-py writes them."""
    unique = sorted(set(values))
    covered = _compact_space(unique, len(values))
    starts = [start for start, _end in covered]
    compact_starts = []
    next_compact = 1
    for start, end in covered:
        compact_starts.append(next_compact)
        next_compact += end - start + 1
    amplitude = compact_starts[-1] + (covered[-1][1] - covered[-1][0])
    width = num_bits(amplitude)
    compact = np.empty(len(values), dtype=np.uint64)
    for i, value in enumerate(values):
        pos = bisect.bisect_right(starts, value) - 1
        compact[i] = compact_starts[pos] + value - starts[pos]
    out = bytearray()
    encode_vint(len(values), out)
    out.append(_CODEC_COMPACT_SPACE)
    out += bitpack(compact, width)
    footer = bytearray(struct.pack("<Q", 0))
    encode_vint(unique[0] if unique else 0, footer)
    encode_vint(unique[-1] if unique else 0, footer)
    encode_vint(len(values), footer)
    footer.append(width)
    encode_vint(len(covered), footer)
    previous = 0
    for start, end in covered:
        encode_vint(start - previous, footer)
        encode_vint(end - start, footer)
        previous = end
    out += footer
    out += struct.pack("<I", len(footer))
    return bytes(out)
