"""Tantivy's u64 column-values codecs (``columnar/src/column_values/u64_based``), byte for byte.

A column's values, already mapped to u64 (order-preserving), are written as one codec
byte and the codec's bytes, the codec being the one of the allowed codecs whose
estimated size is smallest (the first of equal estimates):

* the stats, shared by every codec: ``VInt`` min, ``VInt`` gcd of the differences to the
  first value (1 when there are none), ``VInt`` (max - min) / gcd, ``VInt`` count;
* **bitpacked** (code 0): each ``(value - min) / gcd`` at the width of
  ``(max - min) / gcd`` (widths above 56 bits become 64), LSB first in little-endian
  u64 words, the last word cut to its bytes; estimated as the stats plus those bytes;
* **linear** (code 1): a line (``VInt`` slope, ``VInt`` intercept, u8 width) fitted on
  the first 512 values, then each value's wrapping offset to the line bitpacked;
  applicable from 512 values on;
* **blockwise linear** (code 2): per block of 512 values, ``(value - min) / gcd``
  less the block's line, bitpacked at the block's width (one bit stream for all
  blocks), then each block's line and width and ``u32`` their byte length; its
  estimate fits the lines on the raw values and deducts ``floor(log2 gcd) * count / 8``
  computed in f32, as Tantivy does.

The line (``Line::train``) takes its slope from the first and last values (0 when they
are 2^31 or more apart) in 32.32 fixed point, its intercept the wrapping residual that
is smallest after shifting by ``first - (2^32 - 1)``. Everything is vectorised with
numpy's wrapping u64 arithmetic.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from indextables.search.splits.vint import encode_vint

__all__ = [
    "CODEC_BITPACKED",
    "CODEC_BLOCKWISE_LINEAR",
    "CODEC_LINEAR",
    "U64Array",
    "bitpack",
    "column_values",
    "num_bits",
    "vint_len",
]

U64Array = npt.NDArray[np.uint64]

CODEC_BITPACKED: Final = 0
CODEC_LINEAR: Final = 1
CODEC_BLOCKWISE_LINEAR: Final = 2
_BLOCK: Final = 512
_MID_POINT: Final = np.uint64((1 << 32) - 1)
_HALF_SPACE: Final = np.uint64(((1 << 64) - 1) // 2)
_U64_MAX: Final = np.uint64((1 << 64) - 1)
_PACK_CHUNK: Final = 1 << 16  # values per bitpacking step (a multiple of 8)
_F32 = struct.Struct("<f")


def vint_len(value: int) -> int:
    """Bytes of Tantivy's VInt of ``value``."""
    return max(1, -(-int(value).bit_length() // 7))


def num_bits(value: int) -> int:
    """``compute_num_bits``: the bit length, or 64 above 56 bits."""
    bits = int(value).bit_length()
    return bits if bits <= 56 else 64


def bitpack(values: U64Array, width: int) -> bytes:
    """``BitPacker``: each value at ``width`` bits, LSB first, cut to the last byte used."""
    n = len(values)
    if width == 0 or n == 0:
        return b""
    le = np.ascontiguousarray(values, dtype="<u8")
    if width == 64:
        return le.tobytes()
    if width % 8 == 0:
        return le.view(np.uint8).reshape(n, 8)[:, : width // 8].tobytes()
    parts = []
    for start in range(0, n, _PACK_CHUNK):
        chunk = le[start : start + _PACK_CHUNK]
        bits = np.unpackbits(chunk.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
        parts.append(np.packbits(bits[:, :width].reshape(-1), bitorder="little").tobytes())
    return b"".join(parts)


def _max_bits(values: U64Array) -> int:
    return num_bits(int(values.max())) if len(values) else 0


@dataclass(frozen=True, slots=True)
class _Stats:
    min_value: int
    max_value: int
    gcd: int
    count: int

    def encode(self) -> bytes:
        out = bytearray()
        encode_vint(self.min_value, out)
        encode_vint(self.gcd, out)
        encode_vint((self.max_value - self.min_value) // self.gcd, out)
        encode_vint(self.count, out)
        return bytes(out)

    @property
    def num_bytes(self) -> int:
        return (
            vint_len(self.min_value)
            + vint_len(self.gcd)
            + vint_len((self.max_value - self.min_value) // self.gcd)
            + vint_len(self.count)
        )


def _stats(values: U64Array) -> _Stats:
    if len(values) == 0:
        return _Stats(0, 0, 1, 0)
    first = values[0]
    diffs = np.where(values >= first, values - first, first - values)
    gcd = int(np.gcd.reduce(diffs)) if len(diffs) > 1 else 0
    return _Stats(int(values.min()), int(values.max()), gcd or 1, len(values))


def _lin(xs: U64Array, slopes: U64Array) -> U64Array:
    """The linear part of ``Line::eval``: ``((x * slope) >> 32) as i32``, sign-extended."""
    low = ((xs * slopes) >> np.uint64(32)).astype(np.uint32)
    return low.view(np.int32).astype(np.int64).view(np.uint64)


def _train(rows: U64Array) -> tuple[U64Array, U64Array]:
    """``Line::train`` on each row of a 2-D array (rows of equal length): (slopes, intercepts)."""
    k, n = rows.shape
    if n <= 1:
        return np.zeros(k, np.uint64), np.zeros(k, np.uint64)
    y0 = rows[:, 0]
    y1 = rows[:, n - 1]
    dy = y1 - y0
    positive = dy <= np.uint64(1 << 63)
    abs_dy = np.where(positive, dy, y0 - y1)
    small = abs_dy < np.uint64(1 << 31)
    abs_slope = (np.where(small, abs_dy, np.uint64(0)) << np.uint64(32)) // np.uint64(n - 1)
    slopes = np.where(small, np.where(positive, abs_slope, _U64_MAX - abs_slope), np.uint64(0))
    slopes = slopes.astype(np.uint64)
    xs = np.arange(n, dtype=np.uint64)[None, :]
    residuals = rows - _lin(xs, slopes[:, None])
    shift = (y0 - _MID_POINT)[:, None]
    best = np.argmin(residuals - shift, axis=1)
    intercepts = residuals[np.arange(k), best]
    return slopes, intercepts


def _blocks(values: U64Array) -> list[U64Array]:
    """The values as 2-D arrays of full 512-value blocks, then the last partial block."""
    full = len(values) // _BLOCK * _BLOCK
    out = []
    if full:
        out.append(values[:full].reshape(-1, _BLOCK))
    if full < len(values):
        out.append(values[full:].reshape(1, -1))
    return out


def _residual_widths(rows: U64Array) -> tuple[U64Array, U64Array, list[int], U64Array]:
    slopes, intercepts = _train(rows)
    xs = np.arange(rows.shape[1], dtype=np.uint64)[None, :]
    residuals = rows - (intercepts[:, None] + _lin(xs, slopes[:, None]))
    widths = [num_bits(int(m)) for m in residuals.max(axis=1)]
    return slopes, intercepts, widths, residuals


def _blockwise_estimate(values: U64Array, stats: _Stats) -> int:
    meta = data = 0
    for rows in _blocks(values):
        slopes, intercepts, widths, _ = _residual_widths(rows)
        n = rows.shape[1]
        for slope, intercept, width in zip(slopes, intercepts, widths, strict=True):
            data += (width * n + 7) // 8
            meta += 1 + vint_len(int(slope)) + vint_len(int(intercept))
    estimate = 4 + stats.num_bytes + meta + data
    if stats.gcd > 1:
        log2 = math.floor(_f32(math.log2(_int_to_f32(stats.gcd))))
        gain = _f32(log2 * _int_to_f32(stats.count))
        gain = _f32(gain / 8.0)
        estimate = max(0, estimate - int(gain))
    return estimate


def _int_to_f32(value: int) -> float:
    """``value as f32``: rounded once to 24 significant bits, ties to even."""
    shift = value.bit_length() - 24
    if shift <= 0:
        return float(value)
    q, r = divmod(value, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return float(q << shift)


def _f32(value: float) -> float:
    result: float = _F32.unpack(_F32.pack(value))[0]
    return result


def _blockwise_encode(values: U64Array, stats: _Stats) -> bytes:
    shifted = (values - np.uint64(stats.min_value)) // np.uint64(stats.gcd)
    data = []
    meta = bytearray()
    for rows in _blocks(shifted):
        slopes, intercepts, widths, residuals = _residual_widths(rows)
        for slope, intercept, width, row in zip(slopes, intercepts, widths, residuals, strict=True):
            data.append(bitpack(row, width))
            encode_vint(int(slope), meta)
            encode_vint(int(intercept), meta)
            meta.append(width)
    return stats.encode() + b"".join(data) + bytes(meta) + struct.pack("<I", len(meta))


def _bitpacked_width(stats: _Stats) -> int:
    return num_bits((stats.max_value - stats.min_value) // stats.gcd)


def _bitpacked_encode(values: U64Array, stats: _Stats) -> bytes:
    shifted = (values - np.uint64(stats.min_value)) // np.uint64(stats.gcd)
    return stats.encode() + bitpack(shifted, _bitpacked_width(stats))


def _linear_line(values: U64Array) -> tuple[int, int, int] | None:
    """The linear codec's (slope, intercept, width), or None under 512 values."""
    if len(values) < _BLOCK:
        return None
    slopes, intercepts = _train(values[:_BLOCK].reshape(1, -1))
    slope, intercept = slopes[:1], intercepts[:1]
    xs = np.arange(len(values), dtype=np.uint64)
    deviations = values + _HALF_SPACE - (intercept + _lin(xs, slope))
    low, high = int(deviations.min()), int(deviations.max())
    final = (int(intercept[0]) + low - int(_HALF_SPACE)) % (1 << 64)
    return int(slope[0]), final, num_bits(high - low)


def _linear_encode(values: U64Array, stats: _Stats, line: tuple[int, int, int]) -> bytes:
    slope, intercept, width = line
    xs = np.arange(len(values), dtype=np.uint64)
    line_values = np.uint64(intercept) + _lin(xs, np.array([slope], dtype=np.uint64))
    head = bytearray(stats.encode())
    encode_vint(slope, head)
    encode_vint(intercept, head)
    head.append(width)
    return bytes(head) + bitpack(values - line_values, width)


def column_values(values: U64Array, *, linear: bool = False) -> bytes:
    """The codec byte and bytes of ``values`` (u64), as ``serialize_u64_based_column_values``.

    The allowed codecs are bitpacked and blockwise linear (a column's values), or
    bitpacked and linear with ``linear=True`` (a multivalued index's start offsets).
    """
    values = np.ascontiguousarray(values, dtype=np.uint64)
    stats = _stats(values)
    bitpacked = stats.num_bytes + (stats.count * _bitpacked_width(stats) + 7) // 8
    if linear:
        line = _linear_line(values)
        if line is not None:
            estimate = stats.num_bytes + vint_len(line[0]) + vint_len(line[1]) + 1
            estimate += (line[2] * stats.count + 7) // 8
            if estimate < bitpacked:
                return bytes((CODEC_LINEAR,)) + _linear_encode(values, stats, line)
        return bytes((CODEC_BITPACKED,)) + _bitpacked_encode(values, stats)
    if _blockwise_estimate(values, stats) < bitpacked:
        return bytes((CODEC_BLOCKWISE_LINEAR,)) + _blockwise_encode(values, stats)
    return bytes((CODEC_BITPACKED,)) + _bitpacked_encode(values, stats)
