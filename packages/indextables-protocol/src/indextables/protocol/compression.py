"""The byte framing of log files: ``0x01 0x01`` + gzip, raw gzip, or plain.

The reference writes version files and legacy checkpoints as the two bytes
``0x01`` (framing version) and ``0x01`` (gzip) followed by a gzip stream; the
native writer writes a bare gzip stream; old tables hold plain JSON. Readers
tell them apart by the first bytes.
"""

from __future__ import annotations

import gzip
import zlib

from indextables.protocol.errors import CorruptFileError

__all__ = ["GZIP_LEVEL", "PREFIX", "compress_log_bytes", "decompress_log_bytes"]

PREFIX = b"\x01\x01"
GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6


def compress_log_bytes(data: bytes, *, compress: bool = True, level: int = GZIP_LEVEL) -> bytes:
    """Frame ``data`` as the reference does: prefix + gzip, or plain when ``compress`` is off."""
    if not compress:
        return data
    # mtime=0 keeps the output a pure function of the input.
    return PREFIX + gzip.compress(data, compresslevel=level, mtime=0)


def decompress_log_bytes(data: bytes, *, path: str) -> bytes:
    """Return the JSON bytes of a log file in any of the three framings.

    Raises:
        CorruptFileError: a gzip stream is truncated or damaged, or the
            prefix names an unknown codec.
    """
    if data.startswith(PREFIX):
        return _gunzip(data[2:], path=path)
    if data.startswith(GZIP_MAGIC):
        return _gunzip(data, path=path)
    if data[:1] == b"\x01":
        raise CorruptFileError(path, f"unknown compression codec byte {data[1:2]!r}")
    return data


def _gunzip(data: bytes, *, path: str) -> bytes:
    try:
        return gzip.decompress(data)
    except EOFError:
        raise CorruptFileError(path, "truncated gzip stream") from None
    except (OSError, zlib.error) as exc:
        raise CorruptFileError(path, f"damaged gzip stream: {exc}") from None
