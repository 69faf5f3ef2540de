"""Tantivy's VInt, the one variable-length integer of its file formats (pure Python).

A u64 in little-endian groups of 7 bits; the high bit marks the *last* byte (the
opposite of LEB128, whose high bit marks a continued byte: Parquet's Thrift, its
RLE/bit-packed run headers and the sstable crate's keep/add lengths use that one, also
here as :func:`encode_leb128`/:func:`decode_leb128`). A u64 takes at most 10 bytes in
either.

The compiled kernels keep their own inline loops (hot paths); their pure-Python twins
and every other pure reader and writer use this module. Decoding failures are raised
as the caller's own error type (``error``), the message prefixed by what was being
read (``context``), so each format keeps reporting its damage as it always has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias

__all__ = [
    "MAX_VINT_BYTES",
    "Bytes",
    "decode_leb128",
    "decode_vint",
    "encode_leb128",
    "encode_vint",
    "vint_bytes",
]

#: The longest VInt a u64 needs (10 x 7 bits >= 64 bits).
MAX_VINT_BYTES: Final = 10
_LAST_SHIFT: Final = 7 * (MAX_VINT_BYTES - 1)

Bytes: TypeAlias = "bytes | bytearray | memoryview"


def encode_vint(value: int, out: bytearray) -> None:
    """Append the VInt of ``value`` (a non-negative int) to ``out``."""
    while value >= 0x80:
        out.append(value & 0x7F)
        value >>= 7
    out.append(value | 0x80)


def vint_bytes(value: int) -> bytes:
    """The VInt of ``value`` as bytes."""
    out = bytearray()
    encode_vint(value, out)
    return bytes(out)


def decode_vint(
    data: Bytes,
    pos: int,
    end: int | None = None,
    *,
    error: Callable[[str], Exception],
    context: str,
) -> tuple[int, int]:
    """Decode the VInt starting at ``data[pos]``; returns ``(value, next position)``.

    ``end`` (default ``len(data)``) bounds the read. A VInt that runs past ``end`` or is
    longer than :data:`MAX_VINT_BYTES` raises ``error(f"{context}: ...")``.
    """
    return _decode_7bit(data, pos, end, 0x80, "VInt", error, context)


def encode_leb128(value: int, out: bytearray) -> None:
    """Append the unsigned LEB128 of ``value`` (high bit set on every byte but the last)."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def decode_leb128(
    data: Bytes,
    pos: int,
    end: int | None = None,
    *,
    error: Callable[[str], Exception],
    context: str,
) -> tuple[int, int]:
    """Decode the unsigned LEB128 at ``data[pos]``; returns ``(value, next position)``.

    Failures as :func:`decode_vint`'s: past ``end`` or over :data:`MAX_VINT_BYTES` bytes
    raises ``error(f"{context}: ...")``.
    """
    return _decode_7bit(data, pos, end, 0, "LEB128 varint", error, context)


def _decode_7bit(
    data: Bytes,
    pos: int,
    end: int | None,
    last: int,
    name: str,
    error: Callable[[str], Exception],
    context: str,
) -> tuple[int, int]:
    # Both encodings: 7-bit groups, little end first; the high bit of the last byte is
    # ``last`` (0x80 for Tantivy's VInt, 0 for LEB128).
    if end is None:
        end = len(data)
    result = 0
    shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if (byte & 0x80) == last:
            return result, pos
        if shift == _LAST_SHIFT:
            raise error(f"{context}: {name} longer than {MAX_VINT_BYTES} bytes")
        shift += 7
    raise error(f"{context}: truncated {name}")
