"""One field's dictionary in the SSTable form (dict type 2, what the reference reads and writes).

``[block]...[u32 0][index][u64 fst_len][u64 index_offset][u64 num_terms][u32 3][u32 dict type 2]``

With two or more blocks the index is an fst map (each block's last key,
shortened toward the next block's first key -> block id) followed by a
BlockAddrStore; with one block or none it is empty (``fst_len == 0``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import zstandard

from indextables.search.splits.termdict import impl
from indextables.search.splits.termdict._kernels_py import pack_keys
from indextables.search.splits.termdict.blockaddr import BlockAddr, encode_block_addrs
from indextables.search.splits.termdict.errors import TermDictError
from indextables.search.splits.termdict.model import FieldTerms

__all__ = [
    "DICT_TYPE_SSTABLE",
    "SSTABLE_VERSION",
    "SSTableLayout",
    "decode_sstable_dict",
    "encode_sstable_dict",
    "sstable_layout",
    "shorten_between",
]

DICT_TYPE_SSTABLE: Final = 2
SSTABLE_VERSION: Final = 3
ZSTD_LEVEL: Final = 3
_TAIL: Final = struct.Struct("<QQII")
_END_MARKER: Final = b"\x00\x00\x00\x00"


@dataclass(frozen=True, slots=True)
class SSTableLayout:
    """The parts of one SSTable-form dictionary, located but not yet decoded."""

    main: bytes
    index_offset: int
    num_terms: int
    version: int
    fst: bytes
    block_store: bytes


def _compress(payload: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(payload)


def _decompress(payload: bytes) -> bytes:
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    except zstandard.ZstdError as exc:
        raise TermDictError(f"SSTable block does not decompress: {exc}") from exc


def sstable_layout(blob: bytes) -> SSTableLayout:
    """Locate the blocks, index fst and BlockAddrStore of one SSTable dictionary."""
    if len(blob) < _TAIL.size + 4:
        raise TermDictError(f"SSTable dictionary of {len(blob)} bytes is shorter than its footer")
    dict_type = struct.unpack_from("<I", blob, len(blob) - 4)[0]
    if dict_type != DICT_TYPE_SSTABLE:
        raise TermDictError(f"dictionary type {dict_type} is not the SSTable form (2)")
    main = blob[:-4]
    index_offset, num_terms, version = struct.unpack_from("<QQI", main, len(main) - 20)
    if version not in (2, 3):
        raise TermDictError(f"SSTable version {version} is not 2 or 3")
    index_end = len(main) - 20
    if not 4 <= index_offset <= index_end:
        raise TermDictError(f"SSTable index offset {index_offset} outside the dictionary")
    fst = block_store = b""
    if version == 3:
        if index_end - index_offset < 8:
            raise TermDictError("SSTable v3 index is shorter than its fst length")
        fst_len = struct.unpack_from("<Q", main, index_end - 8)[0]
        if fst_len > index_end - 8 - index_offset:
            raise TermDictError(f"SSTable index fst length {fst_len} exceeds the index")
        fst = main[index_offset : index_offset + fst_len]
        block_store = main[index_offset + fst_len : index_end - 8]
    return SSTableLayout(main, index_offset, num_terms, version, fst, block_store)


def decode_sstable_dict(blob: bytes) -> FieldTerms:
    """Read one SSTable-form dictionary (its blocks; the index is not needed)."""
    layout = sstable_layout(blob)
    key_data, key_ends, cols, _blocks = impl.kernels().sst_decode(
        layout.main, layout.index_offset, _decompress
    )
    if len(key_ends) != layout.num_terms:
        raise TermDictError(
            f"SSTable holds {len(key_ends)} terms, its footer says {layout.num_terms}"
        )
    return FieldTerms(key_data, key_ends, *cols)


def shorten_between(left: bytes, right: bytes) -> bytes:
    """tantivy's ``find_shorter_str_in_between``: a short key k with left <= k < right."""
    common = 0
    limit = min(len(left), len(right))
    while common < limit and left[common] == right[common]:
        common += 1
    if common == len(left):
        return left
    for pos in range(common + 1, len(left)):
        if left[pos] != 0xFF:
            return left[:pos] + bytes((left[pos] + 1,))
    return left


def _key(terms: FieldTerms, ordinal: int) -> bytes:
    start = terms.key_ends[ordinal - 1] if ordinal else 0
    return terms.key_data[start : terms.key_ends[ordinal]]


def _index(blocks: Sequence[tuple[bytes, int, int, int]], terms: FieldTerms) -> tuple[bytes, int]:
    if len(blocks) <= 1:
        return b"", 0
    index_keys = [
        shorten_between(last, _key(terms, blocks[i + 1][3])) if i + 1 < len(blocks) else last
        for i, (last, _start, _end, _first) in enumerate(blocks)
    ]
    key_data, key_ends = pack_keys(index_keys)
    fst = impl.kernels().fst_build(key_data, key_ends, None)
    store = encode_block_addrs([BlockAddr(start, end, first) for _k, start, end, first in blocks])
    return fst + store, len(fst)


def encode_sstable_dict(terms: FieldTerms) -> bytes:
    """Write one SSTable-form dictionary exactly as tantivy with ``quickwit`` does (v3)."""
    body: bytes
    body, blocks = impl.kernels().sst_encode(
        terms.key_data, terms.key_ends, terms.columns(), _compress
    )
    index, fst_len = _index(blocks, terms)
    index_offset = len(body) + 4
    tail = struct.pack(
        "<QQQII", fst_len, index_offset, len(terms), SSTABLE_VERSION, DICT_TYPE_SSTABLE
    )
    return body + _END_MARKER + index + tail
