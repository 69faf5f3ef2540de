"""The SSTable structural checker finds each kind of violation (and passes sound dictionaries)."""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Iterator
from types import ModuleType

import pytest
import zstandard

from indextables.search.splits.termdict import (
    TermDictError,
    check_sstable_term_file,
    impl,
    sstable_problems,
)
from indextables.search.splits.termdict._kernels_py import pack_keys
from indextables.search.splits.termdict.blockaddr import (
    BlockAddr,
    decode_block_addrs,
    encode_block_addrs,
)
from indextables.search.splits.termdict.composite import FieldBlob, join_composite, with_footer
from indextables.search.splits.termdict.model import FieldTerms
from indextables.search.splits.termdict.sstform import encode_sstable_dict, sstable_layout

IMPLS = ["python"] if os.environ.get(impl.IMPL_ENV) == "python" else ["cython", "python"]


def _arrays(cols: tuple[list[int], ...]) -> tuple[array[int], ...]:
    return tuple(array("Q", col) for col in cols)


def _fst(module: ModuleType, keys: list[bytes]) -> bytes:
    return module.fst_build(*pack_keys(keys))  # type: ignore[no-any-return]


def _sst(module: ModuleType, keys: list[bytes], cols: tuple[list[int], ...]) -> bytes:
    body, _blocks = module.sst_encode(*pack_keys(keys), _arrays(cols), None)
    return body  # type: ignore[no-any-return]


_FOOTER = b'{"version":{"major":0,"minor":23,"patch":0,"index_format_version":7},"crc":0}'


@pytest.fixture(params=IMPLS)
def twin(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    """Run the test with one kernel implementation."""
    with impl.using(request.param) as module:
        yield module


def _terms(count: int, width: int = 12) -> FieldTerms:
    keys = [f"{i:0{width}d}".encode() for i in range(count)]
    return FieldTerms.from_keys(
        keys, [[1] * count, [4 * i for i in range(count)], [4] * count, [0] * count, [0] * count]
    )


def _tail(fst_len: int, index_offset: int, count: int, version: int = 3) -> bytes:
    return struct.pack("<QQQII", fst_len, index_offset, count, version, 2)


def _block(payload: bytes, *, flag: int = 0) -> bytes:
    return struct.pack("<IB", len(payload) + 1, flag) + payload


def test_sound_dictionaries_pass(twin: ModuleType) -> None:
    for count in (0, 1, 500, 20_000):
        assert sstable_problems(encode_sstable_dict(_terms(count))) == []


def test_many_blocks_are_indexed(twin: ModuleType) -> None:
    blob = encode_sstable_dict(_terms(20_000))
    layout = sstable_layout(blob)
    assert layout.fst
    assert len(decode_block_addrs(layout.block_store)) > 1


def test_wrong_type_and_version_are_reported(twin: ModuleType) -> None:
    blob = encode_sstable_dict(_terms(3))
    assert sstable_problems(blob[:-4] + struct.pack("<I", 1))
    old = blob[:-8] + struct.pack("<II", 2, 2)
    assert any("version 2" in p for p in sstable_problems(old))


def test_early_cut_is_reported(twin: ModuleType) -> None:
    first = _sst(twin, [b"a"], ([1], [0], [1], [0], [0]))
    second = _sst(twin, [b"b"], ([1], [1], [1], [0], [0]))
    blocks = first + second
    store = encode_block_addrs([BlockAddr(0, len(first), 0), BlockAddr(len(first), len(blocks), 1)])
    fst = _fst(twin, [b"a", b"b"])
    blob = blocks + bytes(4) + fst + store + _tail(len(fst), len(blocks) + 4, 2)
    problems = sstable_problems(blob)
    assert any("cut with only" in p for p in problems), problems


def test_missing_index_and_bad_addresses_are_reported(twin: ModuleType) -> None:
    blob = encode_sstable_dict(_terms(20_000))
    layout = sstable_layout(blob)
    no_index = layout.main[: layout.index_offset] + bytes(8) + _tail(0, layout.index_offset, 20_000)
    assert any("fst_len is 0" in p for p in sstable_problems(no_index))
    addrs = decode_block_addrs(layout.block_store)
    shifted = [BlockAddr(a.start, a.end, a.first_ordinal + 1) for a in addrs]
    tampered = (
        layout.main[: layout.index_offset]
        + layout.fst
        + encode_block_addrs(shifted)
        + _tail(len(layout.fst), layout.index_offset, 20_000)
    )
    assert any("BlockAddrStore" in p for p in sstable_problems(tampered))


def test_index_key_past_the_next_block_is_reported(twin: ModuleType) -> None:
    blob = encode_sstable_dict(_terms(20_000))
    layout = sstable_layout(blob)
    keys = [b"\xff" * (i + 1) for i in range(len(decode_block_addrs(layout.block_store)))]
    fst = _fst(twin, keys)
    tampered = (
        layout.main[: layout.index_offset]
        + fst
        + layout.block_store
        + _tail(len(fst), layout.index_offset, 20_000)
    )
    assert any("next block's first key" in p for p in sstable_problems(tampered))


def test_compression_rules_are_checked(twin: ModuleType) -> None:
    payload = _sst(twin, [b"a"], ([1], [0], [1], [0], [0]))[5:]
    small = zstandard.ZstdCompressor(level=3).compress(payload)
    blocks = _block(small, flag=1)
    blob = blocks + bytes(4) + _tail(0, len(blocks) + 4, 1)
    assert any("zstd on a" in p for p in sstable_problems(blob))
    big = _terms(600, width=6)
    raw, _ = twin.sst_encode(big.key_data, big.key_ends, big.columns(), None)
    assert len(raw) - 5 > 2048
    blob = raw + bytes(4) + _tail(0, len(raw) + 4, 600)
    assert any("left uncompressed" in p for p in sstable_problems(blob))


def test_whole_file_check_names_the_file_and_field(twin: ModuleType) -> None:
    good = encode_sstable_dict(_terms(5))
    bad = good[:-4] + struct.pack("<I", 1)
    data = with_footer(join_composite([FieldBlob(0, 0, good), FieldBlob(3, 0, bad)]), _FOOTER)
    with pytest.raises(TermDictError, match=r"x\.term: field 3: "):
        check_sstable_term_file(data, name="x.term")
    check_sstable_term_file(with_footer(join_composite([FieldBlob(0, 0, good)]), _FOOTER))
