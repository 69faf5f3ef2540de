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
v1). Later reads of the page decompress the block where a wanted value starts
(and the next ones only while the value runs on), and walk the values from that
block's first one. Maps are kept on the file's cached
footer (:class:`~.parquetpages.ParquetFooter`), so they live and die with the
file version they describe (location, size, modification time).

Reading by a map is one call of a compiled kernel (``_kernels.mapped_cut``, without
the GIL held: a Snappy decoder of its own that stops at the last wanted value, the
values walk and the cut page's levels), so it is done only where that kernel is
built (:data:`COMPILED`; its pure twin serves the tests).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

try:
    from indextables.search.companion._kernels import block_value_starts, snappy_blocks

    #: Whether pages are mapped: the pure twins' walks cost more than they save.
    COMPILED = True
except ImportError:  # not built: the pure twin
    from indextables.search.companion._kernels_py import block_value_starts, snappy_blocks

    COMPILED = False

__all__ = ["COMPILED", "BlockMap", "map_page"]


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
    ``body``, whose PLAIN BYTE_ARRAY values start at ``at`` (None: a single block, its
    blocks do not decompress alone, or its values do not fill the rest of ``body``)."""
    found = snappy_blocks(compressed)
    if found is None:
        return None
    total, offsets = found
    blocks = len(offsets) // 8
    if total != len(body) or blocks < 2:  # one block: nothing to leave out
        return None
    try:
        pairs = memoryview(block_value_starts(body[at:], at, blocks)).cast("q")
    except ValueError:
        return None
    return BlockMap(
        total=total,
        offsets=memoryview(offsets).cast("q"),
        first_value=array("q", pairs[0::2].tolist()),
        first_offset=array("q", pairs[1::2].tolist()),
        levels=bytes(levels) if levels is not None else None,
    )
