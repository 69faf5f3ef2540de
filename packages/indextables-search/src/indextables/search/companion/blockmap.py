"""Decompress only the 64 KiB blocks of a Snappy page that hold the wanted values.

A companion needle has a hit or two in most pages of a long text column; each
such page (~600 KB of PLAIN strings, ~100 KB compressed) used to be decompressed
whole for those few values. Every Snappy writer in use (Google's library, behind
parquet-mr, Arrow and Spark; the Rust ``snap`` crate, behind parquet-rs and
delta-rs) compresses its input in independent 64 KiB fragments: no copy reaches
back into an earlier fragment and no element straddles two. A block of output
then decompresses alone from its own compressed bytes, given a preamble stating
its size.

The first time a page is decompressed whole, :func:`map_page` checks that
property on the stream itself (:func:`snappy_blocks`: a stream that breaks it
is never mapped) and notes where each block's compressed bytes start and which
PLAIN value first starts in each block (:func:`block_value_starts`), plus the
page's definition levels when they are compressed with the values (data page
v1). Later reads of the page (:func:`hit_values`) decompress the block where a
wanted value starts (and the next ones only while the value runs on), and walk
the values from that block's first one. Maps are kept on the file's cached
footer (:class:`~.parquetpages.ParquetFooter`), so they live and die with the
file version they describe (location, size, modification time).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.search.splits.vint import encode_leb128

try:
    from indextables.search.companion._kernels import (
        SNAPPY_BLOCK,
        block_value_starts,
        byte_array_starts,
        snappy_blocks,
    )

    #: Whether pages are mapped: the pure twins' walks cost more than they save.
    COMPILED = True
except ImportError:  # not built: the pure twin
    from indextables.search.companion._kernels_py import (
        SNAPPY_BLOCK,
        block_value_starts,
        byte_array_starts,
        snappy_blocks,
    )

    COMPILED = False

__all__ = ["COMPILED", "BlockMap", "hit_values", "map_page"]

_BITS = SNAPPY_BLOCK.bit_length() - 1


@dataclass(frozen=True, slots=True)
class BlockMap:
    """Where a Snappy page's blocks and the PLAIN values starting in them lie.

    Attributes:
        total: the decompressed size of the compressed part.
        offsets: per block, where its compressed bytes start in the compressed part.
        first_value: per block, the index of the first value starting in or after it
            (the page's value count when none does).
        first_offset: per block, that value's offset in the decompressed part.
        levels: a v1 page's definition levels (compressed with its values); None for
            a column without nulls or a v2 page (whose levels are stored apart).
    """

    total: int
    offsets: Sequence[int]
    first_value: Sequence[int]
    first_offset: Sequence[int]
    levels: bytes | None


def map_page(
    compressed: memoryview, body: memoryview, at: int, levels: memoryview | None
) -> BlockMap | None:
    """The map of a page's Snappy-compressed part ``compressed``, decompressed as
    ``body``, whose PLAIN BYTE_ARRAY values start at ``at`` (None: its blocks do not
    decompress alone, or its values do not fill the rest of ``body``)."""
    found = snappy_blocks(compressed)
    if found is None:
        return None
    total, offsets = found
    if total != len(body):
        return None
    blocks = len(offsets) // 8
    try:
        pairs = memoryview(block_value_starts(body[at:], at, blocks)).cast("q")
    except ValueError:
        return None
    return BlockMap(
        total=total,
        offsets=memoryview(offsets).cast("q"),
        first_value=pairs[0::2].tolist(),
        first_offset=pairs[1::2].tolist(),
        levels=bytes(levels) if levels is not None else None,
    )


def hit_values(
    compressed: memoryview, known: BlockMap, wanted: Sequence[int], codec: pa.Codec
) -> list[memoryview] | None:
    """The PLAIN values (length prefix kept) at the value indices ``wanted`` (sorted,
    unique), from the blocks of ``compressed`` that hold them; None when those are
    more than half the page's blocks (decompressing it whole is then cheaper).

    Raises:
        ValueError: a value runs past the page (damage: decode the page whole).
    """
    blocks = len(known.offsets)
    first_value = known.first_value
    # the last block whose first value is at or before a wanted one: that value starts
    # in this block (a block where no value starts is never chosen)
    homes = [bisect.bisect_right(first_value, value) - 1 for value in wanted]
    needed = sorted(set(homes))
    if 2 * len(needed) > blocks:
        return None
    found: list[memoryview] = []
    index = 0
    while index < len(wanted):
        # one run of consecutive blocks holding wanted values, decompressed at once
        first = last = homes[index]
        stop = index + 1
        while stop < len(wanted) and homes[stop] <= last + 1:
            last = homes[stop]
            stop += 1
        group = wanted[index:stop]
        base = first_value[first]
        end = last + 1
        while True:
            data = _blocks(compressed, known, first, end, codec)
            start = known.first_offset[first] - (first << _BITS)
            try:
                starts = memoryview(byte_array_starts(data[start:], group[-1] - base + 1))
            except ValueError:
                if end >= blocks:
                    raise
                end += 1  # the last wanted value runs on into the next block
                continue
            break
        positions = starts.cast("q")
        for value in group:
            begin = start + positions[value - base]
            found.append(data[begin : start + positions[value - base + 1]])
        index = stop
    return found


def _blocks(
    compressed: memoryview, known: BlockMap, first: int, stop: int, codec: pa.Codec
) -> memoryview:
    """Blocks ``first`` to ``stop`` (exclusive) decompressed."""
    begin = known.offsets[first]
    end = known.offsets[stop] if stop < len(known.offsets) else len(compressed)
    size = min(stop << _BITS, known.total) - (first << _BITS)
    preamble = bytearray()
    encode_leb128(size, preamble)
    stream = bytes(preamble) + bytes(compressed[begin:end])
    return memoryview(codec.decompress(stream, size)).cast("B")
