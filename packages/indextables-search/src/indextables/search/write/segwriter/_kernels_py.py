"""Pure-Python twin of the segment writer's Cython kernels (``_kernels.pyx``).

Same functions, same results, same errors; the tests run both.

``tokenize`` turns a column of UTF-8 values into its tokens the way Tantivy's
analyzers do (see :mod:`.tokenize` for the rules), returning four buffers: the
token bytes, their ``int64`` offsets (a leading 0, one end per token), the
``uint32`` position of each token within its value and the ``int64`` row it
came from, all little-endian.
"""

from __future__ import annotations

import re
import sys
from array import array
from typing import Final

from indextables.search.write.segwriter._unicodetables import ALPHANUMERIC, LOWERCASE, WHITESPACE
from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = ["MODE_RAW", "MODE_SIMPLE", "MODE_WHITESPACE", "NOGIL", "lz4_block", "tokenize"]

MODE_SIMPLE = 0
MODE_WHITESPACE = 1
MODE_RAW = 2
NOGIL = False


def _char_class(ranges: tuple[tuple[int, int], ...], negate: bool) -> re.Pattern[str]:
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )
    return re.compile(f"[{'^' if negate else ''}{parts}]+")


_RUNS = {
    MODE_SIMPLE: _char_class(ALPHANUMERIC, negate=False),
    MODE_WHITESPACE: _char_class(WHITESPACE, negate=True),
}
_LOWER = dict(LOWERCASE)


def _checked_offsets(offsets: memoryview, size: int, rows: int) -> None:
    if len(offsets) != rows + 1:
        raise SegmentWriteError(f"{len(offsets)} offsets for {rows} rows (expected {rows + 1})")
    previous = 0
    for row in range(rows + 1):
        value = offsets[row]
        if value < previous or value > size:
            raise SegmentWriteError(
                f"row {max(row - 1, 0)}: offset {value} out of order or past the {size} data bytes"
            )
        previous = value


def tokenize(
    data: bytes | memoryview,
    offsets: bytes | memoryview,
    valid: bytes | memoryview,
    mode: int,
    limit: int,
) -> tuple[bytes, bytes, bytes, bytes]:
    """The tokens of every valid row (see the module docstring for the buffers).

    Args:
        data: the values' UTF-8 bytes, one after the other.
        offsets: ``int64`` little-endian, one start per row and the final end.
        valid: one byte per row, 0 for a null (no tokens).
        mode: :data:`MODE_SIMPLE`, :data:`MODE_WHITESPACE` or :data:`MODE_RAW`.
        limit: a token of this many UTF-8 bytes or more (lowercased) is dropped, its
            position left unused; 0 for no limit.

    Raises:
        SegmentWriteError: a value is not UTF-8, offsets out of order or range, an
            unknown mode.
    """
    source = memoryview(data).cast("B")
    bounds = memoryview(offsets).cast("B").cast("q")
    flags = memoryview(valid).cast("B")
    if mode not in (MODE_SIMPLE, MODE_WHITESPACE, MODE_RAW):
        raise SegmentWriteError(f"unknown tokenizer mode {mode}")
    _checked_offsets(bounds, len(source), len(flags))
    out = bytearray()
    ends = array("q", [0])
    positions = array("I")
    rows = array("q")
    runs = _RUNS.get(mode)
    for row in range(len(flags)):
        if not flags[row]:
            continue
        raw = bytes(source[bounds[row] : bounds[row + 1]])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SegmentWriteError(f"row {row}: not UTF-8 at byte {exc.start}") from None
        if runs is None:
            if limit and len(raw) >= limit:
                continue
            out += raw
            ends.append(len(out))
            positions.append(0)
            rows.append(row)
            continue
        for position, match in enumerate(runs.finditer(text)):
            token = match.group().translate(_LOWER).encode("utf-8")
            if limit and len(token) >= limit:
                continue
            out += token
            ends.append(len(out))
            positions.append(position)
            rows.append(row)
    if sys.byteorder != "little":  # pragma: no cover - the buffers are little-endian
        for part in (ends, positions, rows):
            part.byteswap()
    return bytes(out), ends.tobytes(), positions.tobytes(), rows.tobytes()


# LZ4 blocks as lz4_flex makes them (see ``lz4block`` for the rules).
_MFLIMIT: Final = 12
_END_OFFSET: Final = 6
_MIN_LENGTH: Final = _MFLIMIT + 1
_MAX_DISTANCE: Final = (1 << 16) - 1
_MINMATCH: Final = 4
_SMALL_INPUT: Final = (1 << 16) - 1
_MASK32: Final = (1 << 32) - 1
_MASK64: Final = (1 << 64) - 1


def _length_bytes(out: bytearray, n: int) -> None:
    # The bytes after a nibble of 15: 255s, then the rest.
    full, rest = divmod(n, 255)
    out += b"\xff" * full
    out.append(rest)


def _last_literals(out: bytearray, src: bytes, start: int) -> None:
    length = len(src) - start
    out.append(min(length, 15) << 4)
    if length >= 15:
        _length_bytes(out, length - 15)
    out += src[start:]


def lz4_block(src: bytes) -> bytes:
    """``src`` as one raw LZ4 block (no size header, no frame), the bytes ``lz4_flex`` makes."""
    n = len(src)
    out = bytearray()
    if n < _MIN_LENGTH:
        _last_literals(out, src, 0)
        return bytes(out)
    table = [0] * 4096
    small = n < _SMALL_INPUT
    from_bytes = int.from_bytes

    def slot(pos: int) -> int:
        if small:
            return (((from_bytes(src[pos : pos + 4], "little") * 2654435761) & _MASK32) >> 16) >> 4
        word = (from_bytes(src[pos : pos + 8], "little") << 24) & _MASK64
        return ((word * 889523592379) & _MASK64) >> 52

    last_check = n - _MFLIMIT
    match_end = n - _END_OFFSET
    literal_start = 0
    table[slot(0)] = 0
    cur = 1
    while True:
        misses = 1 << 5
        next_cur = cur
        while True:
            step = misses >> 5
            misses += 1
            cur = next_cur
            next_cur += step
            if cur > last_check:
                _last_literals(out, src, literal_start)
                return bytes(out)
            h = slot(cur)
            candidate = table[h]
            table[h] = cur
            if cur - candidate > _MAX_DISTANCE:
                continue
            if src[candidate : candidate + 4] == src[cur : cur + 4]:
                break
        while candidate > 0 and cur > literal_start and src[cur - 1] == src[candidate - 1]:
            cur -= 1
            candidate -= 1
        literals = cur - literal_start
        offset = cur - candidate
        cur += _MINMATCH
        candidate += _MINMATCH
        start = cur
        # Extend the match: whole 64-byte runs first, then byte by byte.
        while cur + 64 <= match_end and src[cur : cur + 64] == src[candidate : candidate + 64]:
            cur += 64
            candidate += 64
        while cur < match_end and src[cur] == src[candidate]:
            cur += 1
            candidate += 1
        duplicate = cur - start
        table[slot(cur - 2)] = cur - 2
        out.append((min(literals, 15) << 4) | min(duplicate, 15))
        if literals >= 15:
            _length_bytes(out, literals - 15)
        out += src[literal_start : literal_start + literals]
        out += offset.to_bytes(2, "little")
        if duplicate >= 15:
            _length_bytes(out, duplicate - 15)
        literal_start = cur
