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

__all__ = [
    "GZIP_LEVEL",
    "MAX_LOG_BYTES",
    "MAX_LOG_RATIO",
    "PREFIX",
    "compress_log_bytes",
    "decompress_log_bytes",
]

PREFIX = b"\x01\x01"
GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6
# A log file may expand to at most MAX_LOG_RATIO times its stored size (JSON actions compress
# 5-30x), never below MIN_LOG_LIMIT and never above MAX_LOG_BYTES, so a small damaged or hostile
# file cannot make a reader allocate gigabytes.
MAX_LOG_RATIO = 500
MIN_LOG_LIMIT = 4 << 20
MAX_LOG_BYTES = 1 << 30


def log_limit(stored: int) -> int:
    """The most bytes a compressed log file of ``stored`` bytes may expand to."""
    return min(MAX_LOG_BYTES, max(MIN_LOG_LIMIT, stored * MAX_LOG_RATIO))


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
    """Every gzip member of ``data``, decompressed within :func:`log_limit`."""
    limit = log_limit(len(data))
    out = bytearray()
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += inflater.decompress(rest, limit + 1 - len(out))
            if len(out) > limit or inflater.unconsumed_tail:
                raise CorruptFileError(
                    path,
                    f"a {len(data)}-byte gzip stream expands past {limit} bytes "
                    f"(more than {MAX_LOG_RATIO}x): the file is corrupt",
                )
            if not inflater.eof:
                raise CorruptFileError(path, "truncated gzip stream")
            rest = inflater.unused_data
    except zlib.error as exc:
        raise CorruptFileError(path, f"damaged gzip stream: {exc}") from None
    return bytes(out)
