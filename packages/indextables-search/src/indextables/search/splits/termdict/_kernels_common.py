"""Constants and small types shared by both kernel twins (``_kernels`` and ``_kernels_py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from indextables.search.splits.termdict.errors import TermDictError

__all__ = [
    "COMMON_INPUTS",
    "COMMON_INPUTS_INV",
    "Compress",
    "Decompress",
    "FST_VERSION",
    "KernelError",
    "REGISTRY_CELLS",
    "REGISTRY_ROWS",
    "SST_BLOCK_LEN",
    "SST_ZSTD_MIN",
    "TIS_BLOCK_LEN",
]

KernelError = TermDictError

Compress = Callable[[bytes], bytes]
Decompress = Callable[[bytes], bytes]

#: The fst binary format version tantivy-fst 0.5 writes (fst 0.3 format).
FST_VERSION: Final = 2
#: tantivy-fst's node dedup registry: 10,000 buckets of 2 cells, LRU within a bucket.
REGISTRY_ROWS: Final = 10_000
REGISTRY_CELLS: Final = 2
#: Terms per TermInfoStore block (FST form).
TIS_BLOCK_LEN: Final = 256
#: An SSTable block is cut once its keys section is longer than this.
SST_BLOCK_LEN: Final = 4000
#: An SSTable block payload is zstd-compressed only when longer than this.
SST_ZSTD_MIN: Final = 2048

# tantivy-fst's table of frequent input bytes: COMMON_INPUTS[byte] is the byte's
# rank; ranks 0..62 are encoded inside a node's state byte as rank + 1.
COMMON_INPUTS: Final[tuple[int, ...]] = (
    84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
    100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115,
    116, 80, 117, 118, 79, 39, 30, 81, 75, 74, 82, 57, 66, 16, 12, 2,
    19, 20, 21, 27, 32, 29, 35, 36, 37, 34, 24, 73, 119, 23, 120, 40,
    83, 44, 48, 42, 43, 49, 46, 62, 61, 47, 69, 68, 58, 56, 55, 59,
    51, 72, 54, 45, 52, 64, 65, 63, 71, 67, 70, 77, 121, 78, 122, 31,
    123, 4, 25, 9, 17, 1, 26, 22, 13, 7, 50, 38, 14, 15, 10, 3,
    8, 60, 6, 5, 0, 18, 33, 11, 41, 28, 53, 124, 125, 126, 76, 127,
    *range(128, 256),
)  # fmt: skip

COMMON_INPUTS_INV: Final[tuple[int, ...]] = tuple(
    sorted(range(256), key=lambda byte: COMMON_INPUTS[byte])
)
