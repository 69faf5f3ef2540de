"""Structural invariants of SSTable term dictionaries, checked the way the reference builds them.

:func:`sstable_problems` lists what is wrong with one field's dictionary;
:func:`check_sstable_term_file` checks every field of a whole ``.term`` file
and raises with the full list. Splits we write must pass; the golden
reference splits do.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from indextables.search.splits.termdict import impl
from indextables.search.splits.termdict._kernels_py import unpack_keys
from indextables.search.splits.termdict.blockaddr import decode_block_addrs
from indextables.search.splits.termdict.composite import split_composite, split_footer
from indextables.search.splits.termdict.errors import TermDictError
from indextables.search.splits.termdict.sstform import (
    SSTABLE_VERSION,
    _compress,
    _decompress,
    sstable_layout,
)

__all__ = ["check_sstable_term_file", "sstable_problems"]

_BLOCK_LEN = 4000
_ZSTD_MIN = 2048


def _key_entry_len(previous: bytes, key: bytes) -> int:
    keep = 0
    limit = min(len(previous), len(key))
    while keep < limit and previous[keep] == key[keep]:
        keep += 1
    add = len(key) - keep
    if keep < 16 and add < 16:
        return 1 + add
    return 1 + _leb_len(keep) + _leb_len(add) + add


def _leb_len(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def _cut_problems(keys: Sequence[bytes], counts: Sequence[int]) -> list[str]:
    problems = []
    first = 0
    for number, count in enumerate(counts):
        sizes = []
        previous = b""
        for key in keys[first : first + count]:
            sizes.append(_key_entry_len(previous, key))
            previous = key
        total = sum(sizes)
        if total - sizes[-1] > _BLOCK_LEN:
            problems.append(
                f"block {number}: keys section passed {_BLOCK_LEN} bytes before its last key"
            )
        if number + 1 < len(counts) and total <= _BLOCK_LEN:
            problems.append(f"block {number}: cut with only {total} bytes of keys")
        first += count
    return problems


def _compression_problems(
    main: bytes, blocks: Sequence[tuple[int, int, int, bool, int]]
) -> list[str]:
    problems = []
    for number, (start, stop, payload_len, compressed, _count) in enumerate(blocks):
        stored = stop - start - 5
        if compressed and (payload_len <= _ZSTD_MIN or stored >= payload_len):
            problems.append(
                f"block {number}: zstd on a {payload_len}-byte payload stored in {stored}"
            )
        shrinks = payload_len > _ZSTD_MIN and len(_compress(main[start + 5 : stop])) < payload_len
        if not compressed and shrinks:
            problems.append(f"block {number}: {payload_len}-byte payload left uncompressed")
    return problems


def _index_problems(
    layout_fst: bytes,
    store: bytes,
    keys: Sequence[bytes],
    blocks: Sequence[tuple[int, int, int, bool, int]],
) -> list[str]:
    if len(blocks) <= 1:
        return (
            [] if not layout_fst and not store else ["single-block SSTable with a non-empty index"]
        )
    if not layout_fst:
        return [f"{len(blocks)} blocks but fst_len is 0"]
    problems = []
    key_data, key_ends, block_ids = impl.kernels().fst_entries(layout_fst)
    index_keys = unpack_keys(key_data, key_ends)
    if list(block_ids) != list(range(len(blocks))):
        problems.append("index fst does not map its keys to block ids 0..n-1 in order")
    addrs = decode_block_addrs(store)
    firsts = []
    ordinal = 0
    for _start, _stop, _len, _comp, count in blocks:
        firsts.append(ordinal)
        ordinal += count
    real = [
        (start, stop, first) for (start, stop, *_rest), first in zip(blocks, firsts, strict=True)
    ]
    if [(a.start, a.end, a.first_ordinal) for a in addrs] != real:
        problems.append("BlockAddrStore ranges or first ordinals differ from the real blocks")
    for number, index_key in enumerate(index_keys[: len(blocks)]):
        last = keys[firsts[number] + blocks[number][4] - 1]
        if index_key < last:
            problems.append(f"block {number}: index key sorts before the block's last key")
        if number + 1 < len(blocks) and not index_key < keys[firsts[number + 1]]:
            problems.append(f"block {number}: index key is not below the next block's first key")
    return problems


def sstable_problems(blob: bytes) -> list[str]:
    """Every structural problem of one SSTable-form field dictionary (empty when sound)."""
    try:
        layout = sstable_layout(blob)
        key_data, key_ends, _cols, blocks = impl.kernels().sst_decode(
            layout.main, layout.index_offset, _decompress
        )
        keys = unpack_keys(key_data, key_ends)
    except TermDictError as exc:
        return [str(exc)]
    problems = []
    if layout.version != SSTABLE_VERSION:
        problems.append(f"SSTable version {layout.version}, expected {SSTABLE_VERSION}")
    if layout.num_terms != len(keys):
        problems.append(f"footer says {layout.num_terms} terms, blocks hold {len(keys)}")
    if any(a >= b for a, b in itertools.pairwise(keys)):
        problems.append("keys do not strictly increase")
    if blocks:
        problems += _cut_problems(keys, [block[4] for block in blocks])
    problems += _compression_problems(layout.main, blocks)
    problems += _index_problems(layout.fst, layout.block_store, keys, blocks)
    return problems


def check_sstable_term_file(data: bytes, *, name: str = "<.term>") -> None:
    """Check every field dictionary of a whole ``.term`` file is a sound SSTable (dict type 2, v3).

    Raises:
        TermDictError: naming ``name``, each field and each problem found.
    """
    body, _footer = split_footer(data)
    problems = []
    for blob in split_composite(body):
        problems += [f"field {blob.field}: {problem}" for problem in sstable_problems(blob.data)]
    if problems:
        raise TermDictError(f"{name}: " + "; ".join(problems))
