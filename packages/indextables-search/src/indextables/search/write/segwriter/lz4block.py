"""LZ4 block compression as Tantivy's doc store does it (``lz4_flex``'s ``compress_into``).

LZ4's block format leaves the choice of matches to the compressor; to give the very
bytes Tantivy writes, this makes ``lz4_flex``'s choices: a 4,096-slot table of the
last position of each hash (16-bit slots and the hash of 4 bytes,
``(u32 * 2654435761) >> 16 >> 4``, for inputs under 65,535 bytes; 32-bit slots and the
hash of 8 bytes, ``((u64 << 24) * 889523592379) >> 48 >> 4``, above), position 0
hashed first, the search step growing by one every 32 misses, a candidate taken when
it is at most 65,535 bytes back and its 4 bytes equal, the match extended backwards
over pending literals and forwards up to 6 bytes before the end (``LAST_LITERALS`` + 1),
the position 2 bytes before the match's end hashed, no match searched past 12 bytes
before the end (``MFLIMIT``), and inputs under 13 bytes written as literals only.

The kernel (``_kernels.pyx``, without the GIL) and its pure twin (``_kernels_py``) make
the same bytes; ``INDEXTABLES_SEGWRITER_IMPL`` picks one (:mod:`.impl`).
"""

from __future__ import annotations

from indextables.search.write.segwriter.impl import kernels

__all__ = ["lz4_block"]


def lz4_block(src: bytes) -> bytes:
    """``src`` as one raw LZ4 block (no size header, no frame), the bytes ``lz4_flex`` makes."""
    result: bytes = kernels().lz4_block(src)
    return result
