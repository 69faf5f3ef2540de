"""LZ4 block compression as Tantivy's doc store does it (``lz4_flex``'s ``compress_into``).

LZ4's block format leaves the choice of matches to the compressor; to give the very
bytes Tantivy writes, this makes ``lz4_flex``'s choices: a 4,096-slot table of the
last position of each hash (16-bit slots and the hash of 4 bytes,
``(u32 * 2654435761) >> 16 >> 4``, for inputs under 65,535 bytes; 32-bit slots and the
hash of 8 bytes, ``((u64 << 24) * 889523592379) >> 48 >> 4``, above), position 0
hashed first, the search step growing by one every 32 misses, a candidate taken when
it is at most 65,535 bytes back and its 4 bytes equal, the match extended backwards
over pending literals and forwards up to 6 bytes before the end (``LAST_LITERALS`` + 1),
the position 2 bytes before the match's end hashed, no match searched past 12 bytes
before the end (``MFLIMIT``), and inputs under 13 bytes written as literals only.

Pure Python (no kernel yet): a 16 KiB block takes milliseconds.
"""

from __future__ import annotations

from typing import Final

__all__ = ["lz4_block"]

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
