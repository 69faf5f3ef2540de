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
decoded whole. The per-page loops (definition levels, the RLE/bit-packed
hybrid of dictionary indices, PLAIN values, the new page's levels and values)
are one call of a compiled kernel (``_kernels.cut_page``, without the GIL
held; the pure twin ``_kernels_py`` when not built), and so is reading the
page's Thrift header (``_kernels.page_header``); the cut page's header is
written directly. A Snappy page of PLAIN strings read before is not decompressed
whole again: its map (:mod:`.blockmap`, kept per page in ``maps``) names the
64 KiB blocks holding the hits, and only those are decompressed. :func:`cut_parts`
gives a cut page before it is written as a page (its levels and values), for
:mod:`.cutarrays` to lay out as Arrow buffers directly.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.search.companion import blockmap
from indextables.search.companion.blockmap import BlockMap, map_page
from indextables.search.companion.thriftcompact import TStruct
from indextables.search.errors import CompanionError
from indextables.search.splits.vint import encode_leb128

try:
    from indextables.search.companion._kernels import (
        byte_array_starts,
        cut_page,
        mapped_cut,
        page_header,
        snappy_inflate,
    )
except ImportError:  # not built: the pure twin (Snappy pages go to pyarrow's codec)
    snappy_inflate = None  # type: ignore[assignment]
    from indextables.search.companion._kernels_py import (
        byte_array_starts,
        cut_page,
        mapped_cut,
        page_header,
    )

__all__ = [
    "CutParts", "Dictionary", "MappedDictionary", "PageCodec", "PageMaps", "cut_parts",
    "dictionary_encoded", "encode_cut", "read_dictionary",
]  # fmt: skip

#: A file's page maps: page offset -> its map (None: the page cannot be mapped).
PageMaps = MutableMapping[int, BlockMap | None]

#: A page cut down to its rows: ``(rows, nulls, levels, values)``, the definition levels
#: of those rows (an RLE/bit-packed hybrid of bit width 1; empty for a required column)
#: and the PLAIN values of the ones not null.
CutParts = tuple[int, int, bytes, bytes]

_CODECS = {0: None, 1: "snappy", 2: "gzip", 4: "brotli", 6: "zstd", 7: "lz4_raw"}
_WIDTHS = {1: 4, 2: 8, 3: 12, 4: 4, 5: 8}  # INT32, INT64, INT96, FLOAT, DOUBLE
_BYTE_ARRAY, _FIXED = 6, 7
_PLAIN, _PLAIN_DICTIONARY, _RLE, _RLE_DICTIONARY = 0, 2, 3, 8
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3


class _Unsupported(Exception):
    """This page is decoded whole instead."""


class _Whole(Exception):
    """This mapped page's hits lie in most of its blocks: it is decompressed whole."""


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


@dataclass(slots=True)
class MappedDictionary:
    """A chunk's Snappy dictionary page of strings, read by its block map: only the
    entries a cut page names are decompressed (:func:`_by_dictionary_map`). ``whole``
    keeps it decompressed once a page named entries in most of its blocks."""

    compressed: memoryview
    known: BlockMap
    count: int
    whole: Dictionary | None = None


def read_dictionary(
    page: memoryview, codec: PageCodec, maps: PageMaps | None = None, at: int = 0
) -> Dictionary | MappedDictionary | None:
    """The dictionary page at the start of ``page`` (None: not one this module reads).

    ``maps``: the file's page maps, ``at`` the page's offset in the file; a Snappy
    dictionary of strings is mapped the first time and not decompressed whole later.
    """
    try:
        used, kind, uncompressed, compressed, values, encoding, *_ = page_header(page)
        if kind != _DICTIONARY_PAGE:
            return None
        if encoding is None:
            encoding = _PLAIN
        if encoding not in (_PLAIN, _PLAIN_DICTIONARY) or values is None:
            return None
        count = values
        stored = _stored(page, used, compressed)
        mappable = (
            maps is not None and blockmap.COMPILED and codec.codec == "snappy" and not codec.width
        )
        known = maps.get(at, _UNKNOWN) if maps is not None and mappable else None
        if isinstance(known, BlockMap):
            return MappedDictionary(stored, known, count)
        body = _decompress(stored, uncompressed, codec.codec)
        if codec.width:
            if count * codec.width > len(body):
                return None
            return Dictionary(body, count, codec.width)
        starts = memoryview(byte_array_starts(body, count)).cast("q")
        if known is _UNKNOWN and maps is not None:
            maps[at] = map_page(stored, body, 0, None)
        return Dictionary(body, count, 0, starts)
    except _FAILURES:
        return None


def dictionary_encoded(page: memoryview) -> bool:
    """Whether the data page at the start of ``page`` holds dictionary indices (True too
    when its header cannot be read: the dictionary is then read as before)."""
    try:
        encoding = page_header(page)[5]
    except ValueError:
        return True
    return encoding in (_PLAIN_DICTIONARY, _RLE_DICTIONARY)


def _stored(page: memoryview, used: int, compressed: int | None) -> memoryview:
    if compressed is None or compressed < 0:
        raise _Unsupported
    return page[used : used + compressed]


def _decompress(data: memoryview, size: int | None, codec: str | None) -> memoryview:
    if codec is None:
        return data
    if size is None or size < 0:
        raise _Unsupported
    if codec == "gzip":
        return memoryview(zlib.decompress(data, 31))
    if codec == "snappy" and snappy_inflate is not None:
        # the kernel: a small page decoded holding the GIL, no codec call in between
        return snappy_inflate(data, size)
    return memoryview(_codec(codec).decompress(data, int(size))).cast("B")


_local = threading.local()


def _codec(name: str) -> pa.Codec:
    """This thread's pyarrow codec ``name``: made once (``pa.decompress`` makes one per
    call, ~15 us of a ~35 us small-page Snappy decompression)."""
    codecs: dict[str, pa.Codec] | None = getattr(_local, "codecs", None)
    if codecs is None:
        codecs = _local.codecs = {}
    found = codecs.get(name)
    if found is None:
        found = codecs[name] = pa.Codec(name)
    return found


def cut_parts(
    page: memoryview,
    rows: Sequence[int],
    codec: PageCodec,
    dictionary: Dictionary | MappedDictionary | None,
    maps: PageMaps | None = None,
    at: int = 0,
) -> CutParts | None:
    """Page ``page`` cut down to ``rows`` (sorted, unique, rows within the page): the
    levels and PLAIN values of those rows alone (:func:`encode_cut` writes them as an
    uncompressed ``DATA_PAGE_V2``).

    ``maps``: the file's page maps, ``at`` the page's offset in the file; a Snappy
    page of PLAIN strings is mapped the first time and read by its map later.
    None: the page uses something this module does not read (decode it whole).
    """
    try:
        return _slim(page, rows, codec, dictionary, maps, at)
    except _FAILURES:
        return None


def encode_cut(parts: CutParts) -> bytes:
    """The uncompressed ``DATA_PAGE_V2`` of a cut page."""
    return _encode(*parts)


_UNKNOWN = object()


def _slim(
    page: memoryview,
    rows: Sequence[int],
    codec: PageCodec,
    dictionary: Dictionary | MappedDictionary | None,
    maps: PageMaps | None,
    at: int,
) -> CutParts:
    (
        used, kind, uncompressed, compressed, values_count, encoding, level_encoding,
        def_length, rep_length, is_compressed,
    ) = page_header(page)  # fmt: skip
    stored = _stored(page, used, compressed)
    if values_count is None:
        raise _Unsupported
    count = values_count
    # a Snappy page of PLAIN strings: read by its map when it has one, mapped when not
    known: object = None
    if (
        maps is not None and blockmap.COMPILED and codec.codec == "snappy" and codec.width == 0
        and encoding == _PLAIN and (kind == _DATA_PAGE or (kind == _DATA_PAGE_V2 and is_compressed))
    ):  # fmt: skip
        known = maps.get(at, _UNKNOWN)
        if isinstance(known, BlockMap):
            try:
                return _by_map(stored, rows, codec, known, kind, count, def_length)
            except _Whole:
                known = None
            except _FAILURES:
                known = None  # read the page whole below, which reports real damage
    if kind == _DATA_PAGE:
        body = _decompress(stored, uncompressed, codec.codec)
        position = 0
        if codec.optional:
            if level_encoding != _RLE:
                raise _Unsupported
            length = int.from_bytes(body[:4], "little")
            levels = body[4 : 4 + length]
            position = 4 + length
        else:
            levels = None
        values = body[position:]
        if known is _UNKNOWN and maps is not None:
            maps[at] = map_page(stored, body, position, levels)
    elif kind == _DATA_PAGE_V2:
        if def_length is None or rep_length is None or def_length < 0 or uncompressed is None:
            raise _Unsupported
        if rep_length:
            raise _Unsupported
        levels = stored[:def_length] if codec.optional else None
        packed = stored[def_length:]
        if is_compressed and codec.codec is not None:
            values = _decompress(packed, uncompressed - def_length, codec.codec)
            if known is _UNKNOWN and maps is not None:
                maps[at] = map_page(packed, values, 0, None)
        else:
            values = packed
    else:
        raise _Unsupported
    if encoding not in (_PLAIN, _PLAIN_DICTIONARY, _RLE_DICTIONARY):
        raise _Unsupported
    wanted = rows if isinstance(rows, array) else array("q", rows)
    if encoding != _PLAIN and isinstance(dictionary, MappedDictionary):
        if dictionary.whole is None:
            try:
                return _by_dictionary_map(levels, values, wanted, count, codec, dictionary)
            except _Whole:  # its entries lie in most of its blocks
                pass
        dictionary = _whole(dictionary)
    if encoding == _PLAIN:
        width, values_of, starts, entries = codec.width, None, None, 0
    elif dictionary is None or isinstance(dictionary, MappedDictionary):
        raise _Unsupported
    else:
        width, values_of, starts = dictionary.width, dictionary.values, dictionary.starts
        entries = dictionary.count
    level_bytes, body_bytes, nulls = cut_page(
        levels if levels is not None else b"",
        values,
        wanted,
        count,
        optional=codec.optional,
        dictionary_encoded=encoding != _PLAIN,
        width=width,
        dictionary=values_of,
        starts=starts,
        dictionary_count=entries,
    )
    return len(rows), nulls, level_bytes, body_bytes


def _by_dictionary_map(
    levels: memoryview | None,
    values: memoryview,
    rows: array[int],
    count: int,
    codec: PageCodec,
    dictionary: MappedDictionary,
) -> CutParts:
    """The cut page of ``rows`` of a page of dictionary indices, the entries they name
    taken from the blocks of the mapped dictionary that hold them."""
    # the kernel's fixed-width path over the identity dictionary 0..n-1 yields each
    # present row's index (checked against the dictionary's size), levels and nulls
    level_bytes, picked, nulls = cut_page(
        levels if levels is not None else b"", values, rows, count, optional=codec.optional,
        dictionary_encoded=True, width=8, dictionary=_identity(dictionary.count),
        dictionary_count=dictionary.count,
    )  # fmt: skip
    indices = memoryview(picked).cast("q")
    unique = sorted(set(indices))
    known = dictionary.known
    found = mapped_cut(
        dictionary.compressed, known.offsets, known.first_value, known.first_offset,
        known.total, b"", array("q", unique), dictionary.count, False,
    )  # fmt: skip
    if found is None:
        raise _Whole
    entries = found[1]
    starts = memoryview(byte_array_starts(entries, len(unique))).cast("q")
    where = {index: number for number, index in enumerate(unique)}
    body = b"".join(entries[starts[where[index]] : starts[where[index] + 1]] for index in indices)
    return len(rows), nulls, level_bytes, body


def _whole(dictionary: MappedDictionary) -> Dictionary:
    """A mapped dictionary decompressed whole (once: kept on it for its other pages)."""
    if dictionary.whole is None:
        body = _decompress(dictionary.compressed, dictionary.known.total, "snappy")
        starts = memoryview(byte_array_starts(body, dictionary.count)).cast("q")
        dictionary.whole = Dictionary(body, dictionary.count, 0, starts)
    return dictionary.whole


_identities = b""


def _identity(count: int) -> bytes:
    """Little-endian int64 0, 1, ..., at least ``count`` of them (kept, grown on need:
    the module name is rebound to a new bytes object, so a thread keeps its own)."""
    global _identities
    found = _identities
    if len(found) < 8 * count:
        found = _identities = array("q", range(max(count, len(found) // 4))).tobytes()
    return found


def _by_map(
    stored: memoryview,
    rows: Sequence[int],
    codec: PageCodec,
    known: BlockMap,
    kind: int,
    count: int,
    def_length: int | None,
) -> CutParts:
    """The cut page of ``rows`` from the blocks of a mapped page that hold them."""
    levels: bytes | memoryview | None
    if kind == _DATA_PAGE:
        levels, compressed = known.levels, stored
    else:
        if def_length is None or def_length < 0:
            raise _Unsupported
        levels, compressed = stored[:def_length], stored[def_length:]
    if codec.optional and levels is None:
        raise _Unsupported
    wanted = rows if isinstance(rows, array) else array("q", rows)
    found = mapped_cut(
        compressed, known.offsets, known.first_value, known.first_offset, known.total,
        levels if levels is not None else b"", wanted, count, codec.optional,
    )  # fmt: skip
    if found is None:
        raise _Whole
    level_bytes, body, nulls = found
    return len(rows), nulls, level_bytes, body


def _encode(count: int, nulls: int, levels: bytes, body: bytes) -> bytes:
    """A v2 data page of ``count`` rows, uncompressed, PLAIN values.

    Its ``PageHeader`` is written directly in the compact protocol (every field an
    i32 but ``is_compressed``, ids ascending by one: one byte ``delta << 4 | type``
    then the zigzag varint), byte for byte what ``thriftcompact.encode_struct`` writes.
    """
    size = _i32(len(levels) + len(body))
    rows = _i32(count)
    return b"".join(
        (
            b"\x15\x06\x15",  # field 1, i32: type (3, v2); field 2, i32: uncompressed size
            size,
            b"\x15",  # field 3: compressed size
            size,
            b"\x5c\x15",  # field 8 (delta 5), struct: data_page_header_v2; its field 1
            rows,
            b"\x15",  # 2: nulls
            _i32(nulls),
            b"\x15",  # 3: rows
            rows,
            b"\x15\x00\x15",  # 4: encoding PLAIN; 5: definition levels' bytes
            _i32(len(levels)),
            b"\x15\x00\x12\x00\x00",  # 6: no repetition levels; 7 is_compressed false; ends
            levels,
            body,
        )
    )


#: The zigzag varints of 0..63 (one byte each).
_SMALL_I32 = [bytes((value << 1,)) for value in range(64)]


def _i32(value: int) -> bytes:
    """The compact protocol's zigzag varint of a non-negative i32."""
    if value < 64:
        return _SMALL_I32[value]
    out = bytearray()
    encode_leb128(value << 1, out)
    return bytes(out)
