"""Block codecs of the Avro object container, and their fastavro registration.

fastavro 1.13 wants ``backports.zstd`` for ``zstandard``; we register codecs
built on the ``zstandard`` package (and snappy on ``cramjam``) instead, so an
install never depends on a backport. :func:`register_fastavro_codecs` runs
when this module is imported.
"""

from __future__ import annotations

import binascii
import io
import threading
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO, Final, Literal

import cramjam
import zstandard

__all__ = [
    "DEFAULT_ZSTD_LEVEL",
    "MAX_BLOCK_BYTES",
    "MAX_BLOCK_RATIO",
    "Codec",
    "SUPPORTED_CODECS",
    "compress_block",
    "decompress_block",
    "encode_long",
    "register_fastavro_codecs",
]

Codec = Literal["zstandard", "snappy", "deflate", "null"]
SUPPORTED_CODECS: Final = ("zstandard", "snappy", "deflate", "null")
DEFAULT_ZSTD_LEVEL: Final = 3

# Decompression is capped so a small corrupt or hostile block cannot claim gigabytes: a block
# may expand to at most MAX_BLOCK_RATIO times its stored size (real manifests expand ~4-10x),
# never below MIN_BLOCK_LIMIT and never above MAX_BLOCK_BYTES.
MAX_BLOCK_RATIO: Final = 1000
MIN_BLOCK_LIMIT: Final = 1 << 20
MAX_BLOCK_BYTES: Final = 1 << 30


def block_limit(stored: int) -> int:
    """The most bytes a block of ``stored`` bytes may decompress to."""
    return min(MAX_BLOCK_BYTES, max(MIN_BLOCK_LIMIT, stored * MAX_BLOCK_RATIO))


def _too_large(codec: str, stored: int, limit: int) -> ValueError:
    return ValueError(
        f"{codec}: a {stored}-byte block expands past {limit} bytes "
        f"(more than {MAX_BLOCK_RATIO}x): the block is corrupt"
    )


# A ZstdDecompressor must not be shared between threads (manifests are read in parallel).
_LOCAL: Final = threading.local()


def _dctx() -> zstandard.ZstdDecompressor:
    dctx = getattr(_LOCAL, "dctx", None)
    if dctx is None:
        dctx = _LOCAL.dctx = zstandard.ZstdDecompressor()
    return dctx


def compress_block(codec: str, data: bytes, *, level: int | None = None) -> bytes:
    """Compress one block's bytes as the container stores them.

    Raises:
        ValueError: ``codec`` is not supported.
    """
    if codec == "zstandard":
        return zstandard.ZstdCompressor(
            level=DEFAULT_ZSTD_LEVEL if level is None else level
        ).compress(data)
    if codec == "null":
        return data
    if codec == "snappy":
        # Avro's snappy framing: raw snappy, then the big-endian CRC32 of the input.
        crc = (binascii.crc32(data) & 0xFFFFFFFF).to_bytes(4, "big")
        return bytes(cramjam.snappy.compress_raw(data)) + crc
    if codec == "deflate":
        compressor = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, -15)
        return compressor.compress(data) + compressor.flush()
    raise ValueError(f"unsupported Avro codec {codec!r}")


def decompress_block(codec: str, data: bytes) -> bytes:
    """Decompress one block's stored bytes.

    Raises:
        ValueError: ``codec`` is not supported, or the data does not decompress.
    """
    limit = block_limit(len(data))
    if codec == "zstandard":
        return _zstd_decompress(data, limit)
    if codec == "null":
        return data
    if codec == "snappy":
        return _snappy_decompress(data, limit)
    if codec == "deflate":
        return _deflate_decompress(data, limit)
    raise ValueError(f"unsupported Avro codec {codec!r}")


def _deflate_decompress(data: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(-15)
    try:
        out = inflater.decompress(data, limit)
    except zlib.error as exc:
        raise ValueError(f"deflate: {exc}") from exc
    if inflater.unconsumed_tail:
        raise _too_large("deflate", len(data), limit)
    return out


def _zstd_decompress(data: bytes, limit: int) -> bytes:
    try:
        declared = zstandard.frame_content_size(data)
    except zstandard.ZstdError as exc:
        raise ValueError(f"zstandard: {exc}") from exc
    if declared > limit:
        raise _too_large("zstandard", len(data), limit)
    if declared >= 0:
        try:
            return _dctx().decompress(data, max_output_size=limit)
        except zstandard.ZstdError:
            pass  # e.g. several frames: read them as a stream below
    try:
        # Frames written without a content size need the streaming reader.
        with _dctx().stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
            out: bytes = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise ValueError(f"zstandard: {exc}") from exc
    if len(out) > limit:
        raise _too_large("zstandard", len(data), limit)
    return out


def _snappy_decompress(data: bytes, limit: int) -> bytes:
    if len(data) < 4:
        raise ValueError("snappy: block shorter than its CRC")
    declared = _snappy_length(data)
    if declared > limit:
        raise _too_large("snappy", len(data), limit)
    try:
        out = bytes(cramjam.snappy.decompress_raw(data[:-4]))
    except Exception as exc:  # cramjam raises its own DecompressionError
        raise ValueError(f"snappy: {exc}") from exc
    if binascii.crc32(out) & 0xFFFFFFFF != int.from_bytes(data[-4:], "big"):
        raise ValueError("snappy: CRC mismatch")
    return out


def _snappy_length(data: bytes) -> int:
    """The uncompressed length a raw snappy block declares (its leading varint)."""
    length = shift = 0
    for byte in data[:5]:
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return length
        shift += 7
    raise ValueError("snappy: damaged length header")


def encode_long(value: int) -> bytes:
    """Encode ``value`` as an Avro zig-zag varint."""
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_long(fo: BinaryIO) -> int:
    shift = 0
    n = 0
    while True:
        byte = fo.read(1)
        if not byte:
            raise EOFError("truncated block length")
        n |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return (n >> 1) ^ -(n & 1)
        shift += 7


def _fastavro_writer(codec: str) -> Callable[..., None]:
    def write_block(encoder: Any, block_bytes: bytes, compression_level: int | None) -> None:
        data = compress_block(codec, block_bytes, level=compression_level)
        # fastavro's Cython writer passes the output file, its Python twin an encoder.
        if hasattr(encoder, "write_long"):
            encoder.write_long(len(data))
            encoder._fo.write(data)
        else:
            encoder.write(encode_long(len(data)))
            encoder.write(data)

    return write_block


def _fastavro_reader(codec: str) -> Callable[[Any], io.BytesIO]:
    def read_block(decoder: Any) -> io.BytesIO:
        if hasattr(decoder, "read_long"):
            length = decoder.read_long()
            data = decoder.read_fixed(length)
        else:
            length = _read_long(decoder)
            data = decoder.read(length)
        return io.BytesIO(decompress_block(codec, data))

    return read_block


def register_fastavro_codecs() -> None:
    """Make fastavro (Cython and pure) read and write zstandard and snappy."""
    import fastavro._read
    import fastavro._read_py
    import fastavro._write
    import fastavro._write_py

    # The compiled modules' stubs do not declare these tables: reach them through vars().
    for codec in ("zstandard", "snappy"):
        for module in (fastavro._write, fastavro._write_py):
            vars(module)["BLOCK_WRITERS"][codec] = _fastavro_writer(codec)
        for module in (fastavro._read, fastavro._read_py):
            vars(module)["BLOCK_READERS"][codec] = _fastavro_reader(codec)


register_fastavro_codecs()
