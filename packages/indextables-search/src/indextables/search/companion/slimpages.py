"""Cut a Parquet data page down to a few of its rows, for pyarrow to decode.

A page holding a hit is otherwise decoded whole. Here its bytes are
decompressed (pyarrow's codecs), its definition levels and (for dictionary
pages) its dictionary indices are read at the hit rows only, and the hit
values are written into a new, uncompressed ``DATA_PAGE_V2`` of those rows
alone, PLAIN-encoded: pyarrow still does every type conversion, from the
values as they were stored. Served: top-level flat columns of every physical
type but BOOLEAN, PLAIN and dictionary (``PLAIN_DICTIONARY``/``RLE_DICTIONARY``)
encodings, data pages v1 and v2, the codecs pyarrow reads (none, Snappy, gzip,
Brotli, Zstandard, LZ4 raw). Anything else returns None: the page is then
decoded whole. Where PLAIN byte-array values start is found by a compiled
kernel (``_kernels``, with a pure twin).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.search.companion.thriftcompact import (
    BOOL_TRUE,
    I32,
    STRUCT,
    TStruct,
    decode_struct,
    encode_struct,
)
from indextables.search.errors import CompanionError
from indextables.search.splits.vint import decode_leb128

try:
    from indextables.search.companion._kernels import byte_array_starts
except ImportError:  # not built: the pure twin
    from indextables.search.companion._kernels_py import byte_array_starts

__all__ = ["Dictionary", "PageCodec", "read_dictionary", "slim_page"]

_CODECS = {0: None, 1: "snappy", 2: "gzip", 4: "brotli", 6: "zstd", 7: "lz4_raw"}
_WIDTHS = {1: 4, 2: 8, 3: 12, 4: 4, 5: 8}  # INT32, INT64, INT96, FLOAT, DOUBLE
_BYTE_ARRAY, _FIXED = 6, 7
_PLAIN, _PLAIN_DICTIONARY, _RLE, _RLE_DICTIONARY = 0, 2, 3, 8
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3


class _Unsupported(Exception):
    """This page is decoded whole instead."""


# what reading a page this module does not understand (or a damaged one) raises:
# the page is then decoded whole by pyarrow, which reports real damage itself
_FAILURES = (
    _Unsupported, ValueError, IndexError, TypeError, CompanionError, pa.ArrowException, zlib.error,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PageCodec:
    """What decoding a column chunk's pages needs: codec, physical type, levels."""

    codec: str | None
    physical: int
    width: int  # bytes of a fixed-width value; 0 for BYTE_ARRAY
    optional: bool

    @staticmethod
    def of(meta: TStruct, element: TStruct) -> PageCodec | None:
        """For a chunk's ``ColumnMetaData`` and its leaf's ``SchemaElement`` (None: unsupported)."""
        codec = meta.get(4, 0)
        physical = meta.get(1)
        if codec not in _CODECS or element.get(3, 0) not in (0, 1):
            return None
        if physical == _FIXED:
            width = int(element.get(2) or 0)
            if width <= 0:
                return None
        elif physical == _BYTE_ARRAY:
            width = 0
        elif physical in _WIDTHS:
            width = _WIDTHS[physical]
        else:
            return None  # BOOLEAN
        return PageCodec(_CODECS[codec], physical, width, element.get(3, 0) == 1)


@dataclass(frozen=True, slots=True)
class Dictionary:
    """A chunk's dictionary page: its values, each PLAIN-encoded (length prefix included)."""

    values: memoryview
    count: int
    width: int  # bytes of a fixed-width value; 0: positions in ``starts``
    starts: memoryview | None = None  # int64 positions, count + 1 of them

    def value(self, index: int) -> bytes:
        if not 0 <= index < self.count:
            raise _Unsupported
        if self.starts is None:
            return bytes(self.values[index * self.width : (index + 1) * self.width])
        return bytes(self.values[self.starts[index] : self.starts[index + 1]])


def read_dictionary(page: memoryview, codec: PageCodec) -> Dictionary | None:
    """The dictionary page at the start of ``page`` (None: not one this module reads)."""
    try:
        header, used = decode_struct(page)
        if header.get(1) != _DICTIONARY_PAGE:
            return None
        info = header.get(7)
        if info is None or info.get(2, _PLAIN) not in (_PLAIN, _PLAIN_DICTIONARY):
            return None
        count = int(info.get(1))
        body = _decompress(page[used : used + header.get(3)], header.get(2), codec.codec)
        if codec.width:
            if count * codec.width > len(body):
                return None
            return Dictionary(body, count, codec.width)
        starts = memoryview(byte_array_starts(body, count)).cast("q")
        return Dictionary(body, count, 0, starts)
    except _FAILURES:
        return None


def _decompress(data: memoryview, size: int, codec: str | None) -> memoryview:
    if codec is None:
        return data
    if codec == "gzip":
        return memoryview(zlib.decompress(data, 31))
    return memoryview(pa.decompress(data, int(size), codec=codec)).cast("B")


def slim_page(
    page: memoryview,
    rows: Sequence[int],
    codec: PageCodec,
    dictionary: Dictionary | None,
) -> bytes | None:
    """A ``DATA_PAGE_V2`` holding only ``rows`` (sorted, unique, rows within the page).

    None: the page uses something this module does not read (decode it whole).
    """
    try:
        return _slim(page, rows, codec, dictionary)
    except _FAILURES:
        return None


def _slim(
    page: memoryview, rows: Sequence[int], codec: PageCodec, dictionary: Dictionary | None
) -> bytes:
    header, used = decode_struct(page)
    kind = header.get(1)
    stored = page[used : used + header.get(3)]
    if kind == _DATA_PAGE:
        info = header.get(5)
        count = int(info.get(1))
        encoding = info.get(2)
        body = _decompress(stored, header.get(2), codec.codec)
        position = 0
        if codec.optional:
            if info.get(3) != _RLE:
                raise _Unsupported
            length = int.from_bytes(body[:4], "little")
            levels = body[4 : 4 + length]
            position = 4 + length
        else:
            levels = None
        values = body[position:]
    elif kind == _DATA_PAGE_V2:
        info = header.get(8)
        count = int(info.get(1))
        encoding = info.get(4)
        def_length, rep_length = int(info.get(5)), int(info.get(6))
        if rep_length:
            raise _Unsupported
        levels = stored[:def_length] if codec.optional else None
        packed = stored[def_length:]
        compressed = info.get(7, True)
        if compressed and codec.codec is not None:
            values = _decompress(packed, header.get(2) - def_length, codec.codec)
        else:
            values = packed
    else:
        raise _Unsupported
    present = _present(levels, rows, count) if levels is not None else None
    # the value index of each present row
    picks: list[int | None] = []
    for number, row in enumerate(rows):
        if row >= count:
            raise _Unsupported
        picks.append(row if present is None else present[number])
    wanted = [p for p in picks if p is not None]
    if encoding == _PLAIN:
        chosen = _plain_values(values, wanted, codec)
    elif encoding in (_PLAIN_DICTIONARY, _RLE_DICTIONARY):
        if dictionary is None or not len(values):
            raise _Unsupported
        width = values[0]
        indices = _hybrid_at(values[1:], width, wanted)
        chosen = [dictionary.value(i) for i in indices]
    else:
        raise _Unsupported
    return _encode(picks, chosen, codec.optional)


def _present(levels: memoryview, rows: Sequence[int], count: int) -> list[int | None]:
    """Per row: None when null, else its index among the page's non-null values
    (definition levels of bit width 1, RLE/bit-packed hybrid)."""
    found: list[int | None] = []
    wanted = iter(rows)
    row = next(wanted, None)
    start = 0  # first level of the current run
    before = 0  # non-null values before the run
    position = 0
    while row is not None:
        if position >= len(levels) or start >= count:
            raise _Unsupported
        header, position = _varint(levels, position)
        if header & 1:  # bit-packed: groups of 8 levels, one bit each
            size = (header >> 1) * 8
            bits = int.from_bytes(levels[position : position + size // 8], "little")
            position += size // 8
            while row is not None and row < start + size:
                offset = row - start
                if bits >> offset & 1:
                    found.append(before + (bits & ((1 << offset) - 1)).bit_count())
                else:
                    found.append(None)
                row = next(wanted, None)
            before += (
                bits.bit_count()
                if start + size <= count
                else (bits & ((1 << (count - start)) - 1)).bit_count()
            )
        else:  # a run of one level
            size = header >> 1
            value = levels[position] if size else 0
            position += 1
            while row is not None and row < start + size:
                found.append(before + row - start if value else None)
                row = next(wanted, None)
            if value:
                before += size
        start += size
    return found


def _varint(data: memoryview, position: int) -> tuple[int, int]:
    """A run header of the RLE/bit-packed hybrid (LEB128)."""
    return decode_leb128(data, position, error=CompanionError, context="a Parquet page run")


def _hybrid_at(data: memoryview, width: int, wanted: Sequence[int]) -> list[int]:
    """Values at the sorted positions ``wanted`` of an RLE/bit-packed hybrid of ``width`` bits."""
    if not wanted:
        return []
    if width > 32:
        raise _Unsupported
    found: list[int] = []
    index = 0
    start = 0
    position = 0
    mask = (1 << width) - 1
    value_bytes = (width + 7) // 8
    while index < len(wanted):
        if position >= len(data):
            raise _Unsupported
        header, position = _varint(data, position)
        if header & 1:
            size = (header >> 1) * 8
            span = (header >> 1) * width
            chunk = data[position : position + span]
            position += span
            while index < len(wanted) and wanted[index] < start + size:
                bit = (wanted[index] - start) * width
                word = int.from_bytes(chunk[bit // 8 : bit // 8 + value_bytes + 1], "little")
                found.append(word >> (bit % 8) & mask)
                index += 1
        else:
            size = header >> 1
            value = int.from_bytes(data[position : position + value_bytes], "little")
            position += value_bytes
            while index < len(wanted) and wanted[index] < start + size:
                found.append(value)
                index += 1
        start += size
    return found


def _plain_values(values: memoryview, wanted: Sequence[int], codec: PageCodec) -> list[bytes]:
    if not wanted:
        return []
    if codec.width:
        width = codec.width
        if (wanted[-1] + 1) * width > len(values):
            raise _Unsupported
        return [bytes(values[i * width : (i + 1) * width]) for i in wanted]
    starts = memoryview(byte_array_starts(values, max(wanted) + 1)).cast("q")
    return [bytes(values[starts[i] : starts[i + 1]]) for i in wanted]


def _encode(picks: Sequence[int | None], chosen: Sequence[bytes], optional: bool) -> bytes:
    """A v2 data page of ``len(picks)`` rows, uncompressed, PLAIN values."""
    count = len(picks)
    levels = b""
    if optional:
        bits = 0
        for number, pick in enumerate(picks):
            if pick is not None:
                bits |= 1 << number
        groups = (count + 7) // 8
        header = bytearray()
        value = groups << 1 | 1
        while value > 0x7F:
            header.append(value & 0x7F | 0x80)
            value >>= 7
        header.append(value)
        levels = bytes(header) + bits.to_bytes(groups, "little")
    body = b"".join(chosen)
    size = len(levels) + len(body)
    info = TStruct(
        {
            1: (I32, count),
            2: (I32, count - len(chosen)),
            3: (I32, count),
            4: (I32, _PLAIN),
            5: (I32, len(levels)),
            6: (I32, 0),
            7: (BOOL_TRUE, False),
        }
    )
    header_struct = TStruct(
        {1: (I32, _DATA_PAGE_V2), 2: (I32, size), 3: (I32, size), 8: (STRUCT, info)}
    )
    return encode_struct(header_struct) + levels + body
