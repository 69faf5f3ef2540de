"""Block codecs round-trip, and a block that claims far more than it holds is refused."""

from __future__ import annotations

import os
import zlib

import pytest
import zstandard

from indextables.avrostate.codecs import (
    MAX_BLOCK_RATIO,
    SUPPORTED_CODECS,
    block_limit,
    compress_block,
    decompress_block,
)


@pytest.mark.parametrize("codec", SUPPORTED_CODECS)
def test_round_trip(codec: str) -> None:
    data = os.urandom(3000) + b"entry" * 20000
    assert decompress_block(codec, compress_block(codec, data)) == data
    assert decompress_block(codec, compress_block(codec, b"")) == b""


def test_zstd_frame_declaring_a_huge_size_is_refused() -> None:
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\0" * (256 << 20))
    assert len(bomb) * MAX_BLOCK_RATIO < 256 << 20
    with pytest.raises(ValueError, match="expands past"):
        decompress_block("zstandard", bomb)


def test_zstd_frame_without_content_size_is_capped_while_streaming() -> None:
    compressor = zstandard.ZstdCompressor().compressobj()
    bomb = compressor.compress(b"\0" * (64 << 20)) + compressor.flush()
    assert zstandard.frame_content_size(bomb) == -1
    with pytest.raises(ValueError, match="expands past"):
        decompress_block("zstandard", bomb)


def test_zstd_several_frames_and_no_content_size_within_the_cap() -> None:
    compressor = zstandard.ZstdCompressor().compressobj()
    one = compressor.compress(b"abc" * 1000) + compressor.flush()
    assert decompress_block("zstandard", one) == b"abc" * 1000


def test_deflate_bomb_is_refused() -> None:
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = deflater.compress(b"\0" * (128 << 20)) + deflater.flush()
    with pytest.raises(ValueError, match="expands past"):
        decompress_block("deflate", bomb)


def test_snappy_header_claiming_more_than_the_cap_is_refused() -> None:
    # A raw snappy block starts with its uncompressed length as a varint.
    claim = 1 << 29
    header = bytearray()
    n = claim
    while n >= 0x80:
        header.append((n & 0x7F) | 0x80)
        n >>= 7
    header.append(n)
    with pytest.raises(ValueError, match="expands past"):
        decompress_block("snappy", bytes(header) + b"\0" * 16)


def test_limit_has_a_floor_and_a_ceiling() -> None:
    assert block_limit(1) == 1 << 20
    assert block_limit(10 << 30) == 1 << 30
    assert block_limit(10_000) == 10_000 * MAX_BLOCK_RATIO
