"""``splits.vint``: tantivy's VInt (high bit marks the LAST byte), encode and decode."""

from __future__ import annotations

import random

import pytest

from indextables.search.read.docstore import _kernels_py as docstore_py
from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.splits.vint import (
    MAX_VINT_BYTES,
    decode_leb128,
    decode_vint,
    encode_leb128,
    encode_vint,
    vint_bytes,
)


class _Damaged(ValueError):
    pass


def _decode(data: bytes, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    return decode_vint(data, pos, end, error=_Damaged, context="test blob")


EDGES = [0, 1, 2**7 - 1, 2**7, 2**14 - 1, 2**14, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1]


@pytest.mark.parametrize("value", EDGES)
def test_edge_values_round_trip(value: int) -> None:
    raw = vint_bytes(value)
    assert len(raw) == max(1, -(-value.bit_length() // 7))
    assert _decode(raw) == (value, len(raw))


def test_known_bytes_mark_the_last_byte() -> None:
    # The opposite of LEB128: the high bit is on the final byte only.
    assert vint_bytes(0) == b"\x80"
    assert vint_bytes(127) == b"\xff"
    assert vint_bytes(128) == b"\x00\x81"
    assert vint_bytes(300) == b"\x2c\x82"
    assert len(vint_bytes(2**64 - 1)) == MAX_VINT_BYTES


def test_random_values_round_trip_back_to_back() -> None:
    rng = random.Random(20261127)
    values = EDGES + [rng.getrandbits(rng.randint(1, 64)) for _ in range(2000)]
    out = bytearray(b"junk")
    for value in values:
        encode_vint(value, out)
    pos = 4
    decoded = []
    for _ in values:
        value, pos = _decode(bytes(out), pos)
        decoded.append(value)
    assert decoded == values
    assert pos == len(out)


def test_decodes_from_a_memoryview_at_an_offset() -> None:
    raw = memoryview(b"\x01\x02" + vint_bytes(2**32) + b"\x99")
    assert _decode(raw, 2) == (2**32, 2 + len(vint_bytes(2**32)))


@pytest.mark.parametrize("value", [2**7, 2**32, 2**63 - 1])
def test_truncated_input_raises_the_callers_error(value: int) -> None:
    raw = vint_bytes(value)[:-1]
    with pytest.raises(_Damaged, match=r"^test blob: truncated VInt$"):
        _decode(raw)


def test_end_bounds_the_read() -> None:
    raw = vint_bytes(2**20) + vint_bytes(5)
    with pytest.raises(_Damaged, match="truncated VInt"):
        _decode(raw, 0, len(vint_bytes(2**20)) - 1)
    with pytest.raises(_Damaged, match="truncated VInt"):
        _decode(b"", 0)


def test_longer_than_a_u64_raises() -> None:
    # Ten continued bytes: no u64 needs an eleventh, so this is damage, not a big number.
    with pytest.raises(_Damaged, match=r"^test blob: VInt longer than 10 bytes$"):
        _decode(b"\x7f" * 10 + b"\x81")
    assert _decode(b"\x7f" * 9 + b"\x81") == ((1 << 63) | (2**63 - 1), 10)


def test_docstore_twin_raises_its_own_error_type() -> None:
    assert docstore_py.read_vint(vint_bytes(2**40), 0) == (2**40, 6)
    with pytest.raises(DocStoreError, match="doc store: truncated VInt"):
        docstore_py.read_vint(b"\x00\x00", 0)
    with pytest.raises(DocStoreError, match="longer than 10 bytes"):
        docstore_py.read_vint(b"\x00" * 11, 0)


@pytest.mark.parametrize("value", [0, 1, 2**7 - 1, 2**7, 300, 2**32, 2**63 - 1, 2**64 - 1])
def test_leb128_round_trip_and_known_bytes(value: int) -> None:
    out = bytearray(b"x")
    encode_leb128(value, out)
    assert all(b & 0x80 for b in out[1:-1])
    assert not out[-1] & 0x80  # LEB128: the high bit marks a continued byte
    assert decode_leb128(out, 1, error=_Damaged, context="t") == (value, len(out))
    assert len(out) - 1 <= MAX_VINT_BYTES


def test_leb128_matches_the_standard_encoding_and_fails_as_damage() -> None:
    out = bytearray()
    encode_leb128(624485, out)
    assert bytes(out) == b"\xe5\x8e\x26"  # the textbook LEB128 example
    with pytest.raises(_Damaged, match=r"^t: truncated LEB128 varint$"):
        decode_leb128(b"\xe5\x8e", 0, error=_Damaged, context="t")
    with pytest.raises(_Damaged, match="truncated"):
        decode_leb128(b"\xe5\x8e\x26", 0, 2, error=_Damaged, context="t")
    with pytest.raises(_Damaged, match=r"^t: LEB128 varint longer than 10 bytes$"):
        decode_leb128(b"\xff" * 11, 0, error=_Damaged, context="t")
