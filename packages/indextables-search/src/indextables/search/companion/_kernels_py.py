"""Pure twin of ``_kernels``: Parquet PLAIN byte-array starts, cutting a data page
down to a few rows (definition levels, RLE/bit-packed hybrid, PLAIN values), the
64 KiB blocks of a Snappy stream with the values starting in each, and cut pages laid
out as Arrow buffers.

Both twins must agree exactly, errors included: damage or anything unread raises
ValueError (the caller then decodes the page whole).
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Sequence
from typing import Any

__all__ = [
    "SNAPPY_BLOCK", "CutParts", "PageHeaderFields", "arrow_parts", "block_value_starts",
    "byte_array_starts", "cut_page", "hybrid_at", "mapped_cut", "page_header", "snappy_blocks",
    "snappy_inflate",
]  # fmt: skip

_MAX_RUN = 1 << 31  # a longer run is damage (a page holds at most 2**31 values)
_DAMAGED = "a Parquet page's runs or values run past their page"
_TOO_WIDE = "a Parquet page's bit width is over 32"
_ROWS = "the page rows to cut are not sorted, unique and within the page"
_INDEX = "a Parquet page's dictionary index is past its dictionary"
_OFFSETS = "cut values over 2 GiB do not fit int32 offsets"
_SNAPPY_DAMAGED = "a Snappy stream is damaged or not of its stated size"

Bytes = bytes | bytearray | memoryview


def byte_array_starts(data: Bytes, count: int) -> bytes:
    """``count + 1`` little-endian int64 positions: where each of the first ``count``
    PLAIN BYTE_ARRAY values (4-byte length, bytes) starts, then where the last ends.

    Raises:
        ValueError: the values run past ``data``.
    """
    size = len(data)
    position = 0
    starts = []
    unpack = struct.Struct("<I").unpack_from
    for _ in range(count):
        if position + 4 > size:
            raise ValueError("PLAIN byte-array values run past their page")
        starts.append(position)
        position += 4 + unpack(data, position)[0]
        if position > size:
            raise ValueError("PLAIN byte-array values run past their page")
    starts.append(position)
    return struct.pack(f"<{count + 1}q", *starts)


def _varint(data: Bytes, position: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError(_DAMAGED)
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, position
        shift += 7


def _next_run(data: Bytes, width: int, position: int) -> tuple[bool, int, int, int]:
    """One run of an RLE/bit-packed hybrid of ``width`` bits at ``position``:
    ``(packed, rows, payload, position after it)``: a bit-packed run's bits start at
    ``payload``; a repeated run's value is ``payload``."""
    header, position = _varint(data, position)
    if header >> 1 >= _MAX_RUN:
        raise ValueError(_DAMAGED)
    if header & 1:
        span = (header >> 1) * width
        if position + span > len(data):
            raise ValueError(_DAMAGED)
        return True, (header >> 1) * 8, position, position + span
    value_bytes = (width + 7) // 8
    if position + value_bytes > len(data):
        raise ValueError(_DAMAGED)
    value = int.from_bytes(data[position : position + value_bytes], "little")
    return False, header >> 1, value, position + value_bytes


def _hybrid(data: Bytes, width: int, wanted: Sequence[int]) -> list[int]:
    if not wanted:
        return []
    if not 0 <= width <= 32:
        raise ValueError(_TOO_WIDE)
    found: list[int] = []
    count = len(wanted)
    index = start = position = 0
    mask = (1 << width) - 1
    while index < count:
        packed, size, payload, position = _next_run(data, width, position)
        if packed:
            while index < count and wanted[index] < start + size:
                if width:
                    bit = (wanted[index] - start) * width
                    first, last = bit >> 3, (bit + width - 1) >> 3
                    word = int.from_bytes(data[payload + first : payload + last + 1], "little")
                    found.append(word >> (bit & 7) & mask)
                else:
                    found.append(0)
                index += 1
        else:
            while index < count and wanted[index] < start + size:
                found.append(payload)
                index += 1
        start += size
    return found


def hybrid_at(data: Bytes, width: int, wanted: Sequence[int]) -> bytes:
    """Little-endian int64 values at the sorted positions ``wanted`` of an
    RLE/bit-packed hybrid of ``width`` bits (0..32).

    Raises:
        ValueError: the runs end before the last wanted value, or ``width`` is over 32.
    """
    found = _hybrid(data, width, wanted)
    return struct.pack(f"<{len(found)}q", *found)


def _levels(data: Bytes, rows: Sequence[int]) -> list[int]:
    """Per row: -1 when null, else its index among the page's non-null values
    (definition levels of bit width 1)."""
    picks: list[int] = []
    count = len(rows)
    index = start = before = position = 0
    while index < count:
        packed, size, payload, position = _next_run(data, 1, position)
        if packed:
            bits = int.from_bytes(data[payload : payload + size // 8], "little")
            while index < count and rows[index] < start + size:
                offset = rows[index] - start
                if bits >> offset & 1:
                    picks.append(before + (bits & ((1 << offset) - 1)).bit_count())
                else:
                    picks.append(-1)
                index += 1
            before += bits.bit_count()
        else:
            while index < count and rows[index] < start + size:
                picks.append(before + rows[index] - start if payload else -1)
                index += 1
            if payload:
                before += size
        start += size
    return picks


def _spans(
    values: Bytes,
    wanted: list[int],
    *,
    dictionary_encoded: bool,
    width: int,
    starts: Sequence[int] | None,
    dictionary_size: int,
    dictionary_count: int,
) -> list[tuple[int, int]]:
    """Where each wanted value lies: in the dictionary, or in ``values`` (PLAIN)."""
    if not wanted:
        return []
    if dictionary_encoded:
        if len(values) < 1:
            raise ValueError(_DAMAGED)
        spans = []
        for item in _hybrid(values[1:], values[0], wanted):
            if not 0 <= item < dictionary_count:
                raise ValueError(_INDEX)
            if width:
                if (item + 1) * width > dictionary_size:
                    raise ValueError(_DAMAGED)
                spans.append((item * width, (item + 1) * width))
            else:
                if starts is None or item + 1 >= len(starts):
                    raise ValueError(_INDEX)
                begin, end = starts[item], starts[item + 1]
                if begin < 0 or end > dictionary_size or end < begin:
                    raise ValueError(_DAMAGED)
                spans.append((begin, end))
        return spans
    if width:
        if (wanted[-1] + 1) * width > len(values):
            raise ValueError(_DAMAGED)
        return [(i * width, (i + 1) * width) for i in wanted]
    spans = []
    position = value = index = 0
    size = len(values)
    while index < len(wanted):
        if position + 4 > size:
            raise ValueError(_DAMAGED)
        length = int.from_bytes(values[position : position + 4], "little")
        if size - position - 4 < length:
            raise ValueError(_DAMAGED)
        while index < len(wanted) and wanted[index] == value:
            spans.append((position, position + 4 + length))
            index += 1
        position += 4 + length
        value += 1
    return spans


def cut_page(
    levels: Bytes,
    values: Bytes,
    rows: Sequence[int],
    count: int,
    *,
    optional: bool,
    dictionary_encoded: bool,
    width: int,
    dictionary: Bytes | None = None,
    starts: Sequence[int] | None = None,
    dictionary_count: int = 0,
) -> tuple[bytes, bytes, int]:
    """A data page's ``rows`` (sorted, unique, below ``count``, its value count),
    cut out: ``(levels, values, nulls)`` of a v2 page of those rows alone, PLAIN.

    ``levels``: the page's definition levels (RLE/bit-packed hybrid of bit width 1,
    no length prefix; read only when ``optional``). ``values``: its (decompressed)
    values section, PLAIN or (``dictionary_encoded``) a bit width byte then the
    hybrid of dictionary indices. ``width``: bytes of a fixed-width value, 0 for
    BYTE_ARRAY (then ``starts``: ``dictionary_count + 1`` positions of the
    dictionary's PLAIN values). The result's levels are one bit-packed run of the
    rows' levels, its values the present rows' PLAIN values (length prefix kept).

    Raises:
        ValueError: damage, an index past the dictionary, or bad ``rows``.
    """
    previous = -1
    for row in rows:
        if row <= previous or row >= count:
            raise ValueError(_ROWS)
        previous = row
    if dictionary_encoded and dictionary is None:
        raise ValueError("a dictionary-encoded page needs its dictionary")
    picks = _levels(levels, rows) if optional else list(rows)
    wanted = [pick for pick in picks if pick >= 0]
    source = dictionary if dictionary_encoded and dictionary is not None else values
    spans = _spans(
        values,
        wanted,
        dictionary_encoded=dictionary_encoded,
        width=width,
        starts=starts,
        dictionary_size=len(dictionary) if dictionary is not None else 0,
        dictionary_count=dictionary_count,
    )
    body = b"".join(bytes(source[begin:end]) for begin, end in spans)
    level_bytes = _level_run(picks) if optional else b""
    return level_bytes, body, len(rows) - len(wanted)


def _level_run(picks: Sequence[int]) -> bytes:
    """One bit-packed run of definition levels: 1 where ``picks`` names a value."""
    groups = (len(picks) + 7) // 8
    header = bytearray()
    value = groups << 1 | 1
    while value > 0x7F:
        header.append(value & 0x7F | 0x80)
        value >>= 7
    header.append(value)
    bits = sum(1 << number for number, pick in enumerate(picks) if pick >= 0)
    return bytes(header) + bits.to_bytes(groups, "little")


#: What :func:`page_header` returns: ``(used, kind, uncompressed_size, compressed_size,
#: num_values, encoding, definition_level_encoding, definition_levels_byte_length,
#: repetition_levels_byte_length, is_compressed)``; None where the header has no such field.
PageHeaderFields = tuple[
    int, int, int | None, int | None, int | None, int | None, int | None, int | None,
    int | None, bool,
]  # fmt: skip

_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3
_HEADER_DAMAGED = "a Parquet page header is damaged"


def page_header(data: Bytes) -> PageHeaderFields:
    """The fields of the Parquet ``PageHeader`` at the start of ``data`` (thrift compact
    protocol) that cutting a page needs, and the bytes the header took. The data page
    header (v1 or v2) or dictionary page header read is the one the page's type names.

    Raises:
        ValueError: the header is truncated or damaged, or lacks its type's header.
    """
    from indextables.search.companion.thriftcompact import decode_struct
    from indextables.search.errors import CompanionError

    try:
        header, used = decode_struct(memoryview(data))
    except CompanionError:
        raise ValueError(_HEADER_DAMAGED) from None
    kind = _int(header, 1)
    if kind is None:
        raise ValueError(_HEADER_DAMAGED)
    sizes = (_int(header, 2), _int(header, 3))
    if kind == _DATA_PAGE:
        info = _sub(header, 5)
        return (
            used, kind, *sizes, _int(info, 1), _int(info, 2), _int(info, 3), None, None, True,
        )  # fmt: skip
    if kind == _DICTIONARY_PAGE:
        info = _sub(header, 7)
        return used, kind, *sizes, _int(info, 1), _int(info, 2), None, None, None, True
    if kind == _DATA_PAGE_V2:
        info = _sub(header, 8)
        found = info.fields.get(7)
        compressed = True if found is None or found[0] != 1 else bool(found[1])
        return (
            used, kind, *sizes, _int(info, 1), _int(info, 4), None, _int(info, 5),
            _int(info, 6), compressed,
        )  # fmt: skip
    return used, kind, *sizes, None, None, None, None, None, True


def _int(struct_: Any, fid: int) -> int | None:
    """The field when it is an integer (None: absent); ValueError: out of the i32 range."""
    found = struct_.fields.get(fid)
    if found is None or found[0] not in (4, 5, 6):  # I16, I32, I64
        return None
    if not -(2**31) <= found[1] < 2**31:
        raise ValueError(_HEADER_DAMAGED)
    return int(found[1])


def _sub(header: Any, fid: int) -> Any:
    found = header.fields.get(fid)
    if found is None or found[0] != 12:  # STRUCT
        raise ValueError(_HEADER_DAMAGED)
    return found[1]


#: Bytes of output each block of a Snappy stream covers (the reference compressor's
#: fragment: every Snappy writer in use compresses 64 KiB fragments independently).
SNAPPY_BLOCK = 1 << 16


def _element(data: Bytes, position: int) -> tuple[bool, int, int, int] | None:
    """The Snappy element whose tag is at ``position``: ``(literal, length, back, next)``,
    ``next`` past its tag (a literal's bytes start there); None: truncated."""
    size = len(data)
    tag = data[position]
    kind = tag & 3
    if kind == 0:
        length = tag >> 2
        if length < 60:
            position += 1
        else:
            extra = length - 59
            if position + 1 + extra > size:
                return None
            length = int.from_bytes(data[position + 1 : position + 1 + extra], "little")
            position += 1 + extra
        length += 1
        if length > size - position:
            return None
        return True, length, 0, position
    extra = (1, 2, 4)[kind - 1]
    if position + 1 + extra > size:
        return None
    if kind == 1:
        length = (tag >> 2 & 7) + 4
        back = (tag >> 5) << 8 | data[position + 1]
    else:
        length = (tag >> 2) + 1
        back = int.from_bytes(data[position + 1 : position + 1 + extra], "little")
    return False, length, back, position + 1 + extra


def _snappy_size(data: Bytes) -> tuple[int, int] | None:
    """A raw Snappy stream's preamble: ``(uncompressed size, where its elements start)``
    (None: truncated, or a varint of more than 5 bytes)."""
    total = shift = position = 0
    while True:
        if position >= len(data) or shift > 28:
            return None
        byte = data[position]
        position += 1
        total |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return total, position


def snappy_blocks(data: Bytes) -> tuple[int, bytes] | None:
    """Where each 64 KiB block of a raw Snappy stream's output starts in ``data``.

    Returns ``(uncompressed size, offsets)``, the offsets little-endian int64, one per
    block (its first element's position in ``data``), when every element (literal or
    copy) lies inside one block and every copy reads only its own block: then each
    block decompresses alone. None otherwise, and for a damaged stream.
    """
    size = len(data)
    preamble = _snappy_size(data)
    if preamble is None:
        return None
    total, position = preamble
    offsets: list[int] = []
    out = 0
    while position < size:
        if out % SNAPPY_BLOCK == 0 and out // SNAPPY_BLOCK == len(offsets):
            offsets.append(position)
        found = _element(data, position)
        if found is None:
            return None
        literal, length, back, position = found
        if literal:
            position += length
        block_start = out - out % SNAPPY_BLOCK
        if not literal and (back == 0 or out - back < block_start):
            return None  # a copy reaching before its block (or a damaged offset)
        out += length
        if out > total or out - block_start > SNAPPY_BLOCK:
            return None  # past the stated size, or across a block's end
    if out != total:
        return None
    return total, struct.pack(f"<{len(offsets)}q", *offsets)


def block_value_starts(values: Bytes, at: int, blocks: int) -> bytes:
    """Per 64 KiB block of a page body whose PLAIN BYTE_ARRAY values (``values``, the
    rest of the body) start at body offset ``at``: the index of the first value
    starting in or after the block, and that value's body offset (the values' count
    and end when none does). Little-endian int64 pairs, ``blocks`` of them.

    Raises:
        ValueError: the values do not end exactly at the end of ``values``.
    """
    size = len(values)
    out: list[int] = []
    position = index = 0
    for block in range(blocks):
        boundary = max(block * SNAPPY_BLOCK - at, 0)
        while position < boundary and position < size:
            position = _skip_value(values, position)
            index += 1
        if position > size:
            raise ValueError(_DAMAGED)
        out += (index, position + at)
    while position < size:
        position = _skip_value(values, position)
    if position != size:
        raise ValueError(_DAMAGED)
    return struct.pack(f"<{len(out)}q", *out)


def _skip_value(values: Bytes, position: int) -> int:
    """Where the PLAIN BYTE_ARRAY value at ``position`` ends (ValueError: its length
    runs out)."""
    if position + 4 > len(values):
        raise ValueError(_DAMAGED)
    return position + 4 + int.from_bytes(values[position : position + 4], "little")


class _Inflater:
    """A Snappy stream's elements decoded on demand, from ``position`` of ``source``
    (no preamble), into an output of at most ``capacity`` bytes."""

    def __init__(self, source: Bytes, position: int, capacity: int) -> None:
        self.source = source
        self.position = position
        self.capacity = capacity
        self.out = bytearray()

    def need(self, upto: int) -> None:
        """Decode until ``upto`` bytes are out (ValueError: the stream ends first, is
        damaged, or a copy reaches before the output's start)."""
        source, out = self.source, self.out
        if upto > self.capacity:
            raise ValueError(_DAMAGED)
        while len(out) < upto:
            if self.position >= len(source):
                raise ValueError(_DAMAGED)
            found = _element(source, self.position)
            if found is None:
                raise ValueError(_DAMAGED)
            literal, length, back, position = found
            if length > self.capacity - len(out):
                raise ValueError(_DAMAGED)
            if literal:
                out += source[position : position + length]
                self.position = position + length
                continue
            self.position = position
            if back == 0 or back > len(out):
                raise ValueError(_DAMAGED)
            for _ in range(length):
                out.append(out[-back])


def snappy_inflate(data: Bytes, size: int) -> memoryview:
    """The raw Snappy stream ``data`` decompressed whole, ``size`` bytes (a view of
    ``data`` when the stream is one literal: an incompressible input's).

    Raises:
        ValueError: damage, a preamble stating another size, or input left over.
    """
    preamble = _snappy_size(data)
    # a Snappy element yields at most 64 bytes from 3: a larger stated size is damage
    if preamble is None or preamble[0] != size or size > 32 * len(data):
        raise ValueError(_SNAPPY_DAMAGED)
    # one literal making the whole output is its own output: a view of it, no copy
    found = _element(data, preamble[1]) if size and preamble[1] < len(data) else None
    if found is not None and found[0] and found[1] == size and found[3] + size == len(data):
        return memoryview(data).cast("B")[found[3] : found[3] + size]
    inflater = _Inflater(data, preamble[1], size)
    try:
        inflater.need(size)
    except ValueError:
        raise ValueError(_SNAPPY_DAMAGED) from None
    if len(inflater.out) != size or inflater.position != len(data):
        raise ValueError(_SNAPPY_DAMAGED)
    return memoryview(inflater.out)


def mapped_cut(
    compressed: Bytes,
    offsets: Sequence[int],
    first_value: Sequence[int],
    first_offset: Sequence[int],
    total: int,
    levels: Bytes,
    rows: Sequence[int],
    count: int,
    optional: bool,
) -> tuple[bytes, bytes, int] | None:
    """:func:`cut_page`'s ``(levels, values, nulls)`` for a page of PLAIN BYTE_ARRAY
    values whose Snappy-compressed part ``compressed`` (its decompressed size ``total``)
    decompresses by 64 KiB blocks: ``offsets`` (where each block starts in
    ``compressed``), ``first_value`` and ``first_offset`` (each block's first value
    starting in it or after, and where) as :func:`snappy_blocks` and
    :func:`block_value_starts` give them. Only the blocks holding the rows' values are
    decompressed, each only as far as its last wanted value. None: those blocks are more
    than half the page's (decompress it whole instead).

    Raises:
        ValueError: damage, or bad ``rows``.
    """
    previous = -1
    for row in rows:
        if row <= previous or row >= count:
            raise ValueError(_ROWS)
        previous = row
    if len(first_value) != len(offsets) or len(first_offset) != len(offsets):
        raise ValueError(_DAMAGED)
    picks = _levels(levels, rows) if optional else list(rows)
    wanted = [pick for pick in picks if pick >= 0]
    homes = []
    for value in wanted:
        home = bisect.bisect_right(first_value, value) - 1
        if home < 0:
            raise ValueError(_DAMAGED)
        homes.append(home)
    if 2 * len(set(homes)) > len(offsets):
        return None
    body = bytearray()
    start = 0
    while start < len(wanted):
        first = last = homes[start]
        stop = start + 1
        while stop < len(wanted) and homes[stop] <= last + 1:
            last = homes[stop]
            stop += 1
        if not 0 <= offsets[first] <= len(compressed):
            raise ValueError(_DAMAGED)
        inflater = _Inflater(compressed, offsets[first], total - (first << 16))
        position = first_offset[first] - (first << 16)
        value = first_value[first]
        if position < 0:
            raise ValueError(_DAMAGED)
        for index in range(start, stop):
            while True:
                inflater.need(position + 4)
                length = int.from_bytes(inflater.out[position : position + 4], "little")
                inflater.need(position + 4 + length)
                if value == wanted[index]:
                    break
                position += 4 + length
                value += 1
            body += inflater.out[position : position + 4 + length]
            position += 4 + length
            value += 1
        start = stop
    return _level_run(picks) if optional else b"", bytes(body), len(rows) - len(wanted)


#: A cut page as the cut kernels give it: ``(rows, nulls, levels, values)``.
CutParts = tuple[int, int, Bytes, Bytes]


def arrow_parts(
    pages: Sequence[CutParts], optional: bool, width: int, large: bool
) -> tuple[bytes | None, bytes, bytes | None, int]:
    """Cut pages laid end to end as the buffers of one Arrow array.

    Each page is ``(rows, nulls, levels, values)`` as :func:`cut_page` and
    :func:`mapped_cut` give them: ``levels`` an RLE/bit-packed hybrid of bit width 1
    (one level a row; read only when ``optional``), ``values`` the PLAIN values of the
    rows that are not null. Returns ``(validity, values, data, nulls)``: the validity
    bitmap (None when no row is null); for ``width`` > 0 the fixed-width values (a
    null's slot zeroed) and data None; for byte arrays (``width`` 0) the offsets (int32,
    int64 when ``large``) and the bytes.

    Raises:
        ValueError: a page's levels or values disagree with its counts, or int32
            offsets would overflow.
    """
    for rows, nulls, _, _ in pages:
        if rows < 0 or not 0 <= nulls <= rows:
            raise ValueError(_DAMAGED)
    if not width and not large and sum(len(page[3]) for page in pages) > 0x7FFFFFFF:
        raise ValueError(_OFFSETS)
    valid: list[bool] = []
    fixed = bytearray()
    data = bytearray()
    ends = [0]
    for rows, nulls, levels, body in pages:
        if optional:
            present = [pick >= 0 for pick in _levels(levels, range(rows))]
        else:
            present = [True] * rows
        if rows - present.count(True) != nulls:
            raise ValueError(_DAMAGED)
        position = 0
        for flag in present:
            if width:
                if flag:
                    if position + width > len(body):
                        raise ValueError(_DAMAGED)
                    fixed += body[position : position + width]
                    position += width
                else:
                    fixed += bytes(width)
                continue
            if flag:
                if position + 4 > len(body):
                    raise ValueError(_DAMAGED)
                length = int.from_bytes(body[position : position + 4], "little")
                if len(body) - position - 4 < length:
                    raise ValueError(_DAMAGED)
                data += body[position + 4 : position + 4 + length]
                position += 4 + length
            ends.append(len(data))
        if position != len(body):
            raise ValueError(_DAMAGED)
        valid += present
    missing = valid.count(False)
    bitmap = None
    if missing:
        bits = sum(1 << number for number, flag in enumerate(valid) if flag)
        bitmap = bits.to_bytes((len(valid) + 7) // 8, "little")
    if width:
        return bitmap, bytes(fixed), None, missing
    offsets = struct.pack(f"<{len(ends)}{'q' if large else 'i'}", *ends)
    return bitmap, offsets, bytes(data), missing
