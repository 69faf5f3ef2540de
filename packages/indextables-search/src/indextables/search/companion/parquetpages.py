"""Read given rows of a Parquet file page by page: only the pages that hold them.

A companion hit names a file and a row. Parquet's offset index lists each
column chunk's data pages (byte offset, size, first row), so the rows of a few
hits need only the pages holding them (and the chunk's dictionary page). Per
column, those byte ranges are fetched (ranges closer than ``_HOLE`` bytes
coalesced into one ranged read) and laid out as a small Parquet file of their
own: the same page bytes, a footer listing one row group per row group read,
the column's schema element and its Arrow type (``ARROW:schema``). pyarrow
decodes that file; the hit rows are then taken from it. Decoding stays
pyarrow's, so every type comes back exactly as a whole-file read gives it. A
column whose hit pages were all cut down to their hits, of a type stored as its
Arrow layout (:mod:`.cutarrays`), skips the small file: its cut pages are laid
out as the array directly.

Served this way: top-level columns that are one Parquet leaf and not repeated
(every flat column), in files with an offset index and no encryption. The
others (nested columns: structs, lists, maps) are returned by name for the
row-group path of :mod:`.read`. Footers and offset indexes are kept per file
(location, size, modification time) in a bounded cache.
"""

from __future__ import annotations

import base64
import bisect
import dataclasses
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from indextables.search.boundedcache import BoundedCache
from indextables.search.companion.cutarrays import cut_array, laid_out_raw
from indextables.search.companion.pagethreads import run_ordered
from indextables.search.companion.slimpages import (
    CutParts,
    Dictionary,
    MappedDictionary,
    PageCodec,
    PageMaps,
    cut_parts,
    dictionary_encoded,
    encode_cut,
    read_dictionary,
)
from indextables.search.companion.thriftcompact import (
    BINARY,
    I32,
    I64,
    LIST,
    STRUCT,
    TList,
    TStruct,
    decode_struct,
    encode_struct,
)
from indextables.search.errors import CompanionError
from indextables.search.schema.plainarrow import plain_schema

__all__ = [
    "FileKey", "PageLocations", "PageRows", "ParquetFooter", "clear_footer_cache", "footer_of",
    "page_rows",
]  # fmt: skip

_MAGIC = b"PAR1"
_TAIL = 64 * 1024  # the first read of a footer: most footers fit
_HOLE = 256 * 1024  # ranges closer than this are read as one
_MAX_RANGE = 64 << 20
_CACHED_FOOTERS = 256
_REPEATED = 2
#: A page is cut down to its hits when they are at most 1/SLIM_SHARE of its rows.
SLIM_SHARE = 16
#: A column whose pages decoded whole (too many hits to be cut) hold more than this
#: share of its row groups' page bytes is left to the row-group read (which decodes
#: the same, with no page copies). Pages cut down to their hits do not count: a
#: needle with a hit in every page is still served page by page.
DENSE_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class FileKey:
    """Which file, as of which version: a footer is kept under it."""

    location: str
    size: int
    mtime_ns: int | None


@dataclass(frozen=True, slots=True)
class ParquetFooter:
    """A Parquet file's footer, decoded once.

    Attributes:
        meta: the ``FileMetaData`` struct as written.
        metadata: pyarrow's view of it (handed to ``pq.ParquetFile``, no second read).
        schema: the file's Arrow schema, as a whole-file read gives it, each type in
            its plain layout (:mod:`indextables.search.schema.plainarrow`: a
            ``string_view`` column is served as ``string``).
        group_starts: the first row of each row group.
        group_rows: the rows of each row group.
        leaves: top-level flat column name -> (its leaf index, its schema element).
        encrypted: the file or a column is encrypted (never served page by page).
        offsets: (row group, leaf) -> where its pages lie, filled on use.
        page_maps: page offset -> the page's block map (:mod:`.blockmap`), filled on use;
            None for a footer not kept (a map pays off on the page's next read).
    """

    meta: TStruct
    metadata: pq.FileMetaData
    schema: pa.Schema
    group_starts: tuple[int, ...]
    group_rows: tuple[int, ...]
    leaves: Mapping[str, tuple[int, TStruct]]
    encrypted: bool
    offsets: dict[tuple[int, int], PageLocations] = field(
        default_factory=dict, compare=False, repr=False
    )
    page_maps: PageMaps | None = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PageRows:
    """The rows :func:`page_rows` served, and the columns it left to the row-group path."""

    arrays: Mapping[str, pa.Array]
    rest: tuple[str, ...]


_footers: BoundedCache[FileKey, ParquetFooter] = BoundedCache(max_entries=_CACHED_FOOTERS)


def clear_footer_cache() -> None:
    """Forget every kept footer (tests)."""
    _footers.clear()


def footer_of(handle: pa.NativeFile, key: FileKey) -> ParquetFooter:
    """The footer of the open file ``handle`` (kept per ``key`` when it has a modification time).

    Raises:
        CompanionError: the file is not Parquet or its footer is damaged.
    """
    found = _footers.get(key)
    if found is not None:
        return found
    footer = _read_footer(handle, key)
    if key.mtime_ns is None:  # no version to key it by: never kept
        return dataclasses.replace(footer, page_maps=None)
    _footers.put(key, footer)
    return footer


def _read_footer(handle: pa.NativeFile, key: FileKey) -> ParquetFooter:
    size = key.size
    if size < 12:
        raise CompanionError(f"{key.location!r} is not a Parquet file ({size} bytes)")
    tail_size = min(size, _TAIL)
    tail = bytes(handle.read_at(tail_size, size - tail_size))
    length = int.from_bytes(tail[-8:-4], "little")
    magic = tail[-4:]
    if magic not in (_MAGIC, b"PARE") or length + 8 > size:
        raise CompanionError(f"{key.location!r} is not a Parquet file (no footer)")
    if length + 8 > len(tail):
        tail = bytes(handle.read_at(length + 8, size - length - 8))
    raw = tail[len(tail) - 8 - length : len(tail) - 8]
    encrypted = magic != _MAGIC
    meta = TStruct() if encrypted else decode_struct(raw)[0]
    try:
        footer_file = _MAGIC + tail[len(tail) - 8 - length :]
        metadata = pq.read_metadata(pa.BufferReader(footer_file))
        schema = plain_schema(pq.read_schema(pa.BufferReader(footer_file)))
    except (pa.ArrowException, OSError) as exc:
        raise CompanionError(f"{key.location!r}: its Parquet footer is damaged: {exc}") from None
    starts, rows, offset = [], [], 0
    for group in range(metadata.num_row_groups):
        starts.append(offset)
        count = metadata.row_group(group).num_rows
        rows.append(count)
        offset += count
    encrypted = (
        encrypted
        or meta.get(8) is not None
        or any(
            chunk.get(8) is not None or chunk.get(9) is not None
            for group in (meta.get(4) or TList(STRUCT)).items
            for chunk in group.get(1).items
        )
    )
    return ParquetFooter(
        meta=meta,
        metadata=metadata,
        schema=schema,
        group_starts=tuple(starts),
        group_rows=tuple(rows),
        leaves={} if encrypted else _flat_leaves(meta),
        encrypted=encrypted,
    )


def _flat_leaves(meta: TStruct) -> dict[str, tuple[int, TStruct]]:
    """Top-level columns that are one non-repeated leaf: name -> (leaf index, element)."""
    elements = meta.get(2).items
    found: dict[str, tuple[int, TStruct]] = {}
    leaf = 0
    position = 1
    for _ in range(elements[0].get(5, 0)):
        # walk one top-level subtree, counting its leaves
        element = elements[position]
        children = element.get(5, 0)
        if not children:
            if element.get(3) != _REPEATED and element.get(1) is not None:
                found[element.get(4).decode("utf-8", "replace")] = (leaf, element)
            leaf += 1
            position += 1
            continue
        pending = children
        position += 1
        while pending:
            child = elements[position]
            position += 1
            pending -= 1
            grand = child.get(5, 0)
            if grand:
                pending += grand
            else:
                leaf += 1
    return found


def page_rows(
    handle: pa.NativeFile,
    footer: ParquetFooter,
    columns: Sequence[str],
    rows: Sequence[int],
    *,
    workers: int = 1,
) -> PageRows:
    """The values of ``rows`` (rows of the file, in this order) in ``columns``.

    Columns not served page by page (nested ones, files without an offset index,
    hits in nearly every page: :data:`DENSE_SHARE`) are left in :attr:`PageRows.rest`.
    ``workers`` > 1: dictionaries, page cuts and the columns' decoding run in that
    many batches on threads (:mod:`.pagethreads`); the result is the same.
    """
    # per distinct row once; per column only per page (an exact match has hits by the
    # ten thousand): each column's array comes back in the order of ``unique``
    unique = sorted(set(rows))
    by_group: dict[int, list[int]] = {}
    for row in unique:
        group, within = _place(footer, row)
        found = by_group.get(group)
        if found is None:
            by_group[group] = [within]
        else:
            found.append(within)
    groups = sorted(by_group)
    served = [c for c in columns if c in footer.leaves and not footer.encrypted]
    served = [c for c in served if _has_offset_index(footer, footer.leaves[c][0], groups)]
    _load_offset_indexes(handle, footer, [footer.leaves[c][0] for c in served], groups)
    planned = {name: _plan(footer, footer.leaves[name][0], by_group) for name in served}
    plans = {n: p for n, p in planned.items() if p is not None and p.share <= DENSE_SHARE}
    ranges = sorted({piece for plan in plans.values() for piece in plan.pieces})
    data = _read_ranges(handle, ranges)
    cuts = _cut_pages(footer, plans, data, workers)
    arrays: dict[str, pa.Array] = {}
    rest = [c for c in columns if c not in plans]
    names = list(plans)
    decoded_all = run_ordered(
        names,
        lambda name: (
            _direct(footer, name, plans[name], cuts)
            or _decode(footer, name, plans[name], data, cuts)
        ),
        weights=[sum(size for _, size in plans[name].pieces) for name in names],
        workers=workers,
    )
    # a hit's position in ``unique``; None when ``rows`` is ``unique`` (sorted, unique)
    take = None
    if len(unique) != len(rows) or any(a != b for a, b in zip(unique, rows, strict=True)):
        rank = {row: number for number, row in enumerate(unique)}
        take = pa.array([rank[row] for row in rows], pa.int64())
    for name, decoded in zip(names, decoded_all, strict=True):
        if decoded is None:
            rest.append(name)
            continue
        array, order = decoded
        if order is not None:
            positions = pa.array(order, pa.int64())
            array = array.take(positions if take is None else positions.take(take))
        elif take is not None:
            array = array.take(take)
        arrays[name] = array
    return PageRows(arrays=arrays, rest=tuple(c for c in columns if c in rest))


@dataclass(frozen=True, slots=True)
class _Cuts:
    """The pages cut down to their hits: (column, row group, page offset) -> the cut
    page's parts (None: decode it whole); a page absent was never to be cut. ``codecs``:
    (column, row group) -> how its pages are compressed and encoded (None: not cut)."""

    pages: Mapping[tuple[str, int, int], CutParts | None]
    codecs: Mapping[tuple[str, int], PageCodec | None]


def _cut_pages(
    footer: ParquetFooter,
    plans: Mapping[str, _Plan],
    data: Mapping[tuple[int, int], memoryview],
    workers: int,
) -> _Cuts:
    """Every page of ``plans`` with few enough hits cut down to them (the work that
    runs without the GIL: decompression and the kernel), in ``workers`` batches."""
    codecs = {
        (name, part.group): _codec(footer, name, part.group)
        for name, plan in plans.items()
        for part in plan.groups
    }
    wanted_dictionaries: list[tuple[str, _Group]] = []
    for name, plan in plans.items():
        for part in plan.groups:
            if codecs[(name, part.group)] is None:
                continue
            # the dictionary (often ~1 MB of strings) only for a cut page of its indices:
            # a writer falls back to PLAIN pages once its dictionary is full
            if part.prefix is not None and any(
                len(page.hits) * SLIM_SHARE <= page.rows
                and dictionary_encoded(data[(page.offset, page.size)])
                for page in part.pages
            ):
                wanted_dictionaries.append((name, part))

    def dictionary_of(unit: tuple[str, _Group]) -> Dictionary | MappedDictionary | None:
        name, part = unit
        codec = codecs[(name, part.group)]
        assert part.prefix is not None
        assert codec is not None
        return read_dictionary(data[part.prefix], codec, footer.page_maps, part.prefix[0])

    found = run_ordered(
        wanted_dictionaries,
        dictionary_of,
        weights=[part.prefix[1] if part.prefix else 0 for _, part in wanted_dictionaries],
        workers=workers,
    )
    dictionaries = {
        (name, part.group): dictionary
        for (name, part), dictionary in zip(wanted_dictionaries, found, strict=True)
    }
    wanted_pages: list[tuple[str, int, _Page]] = []
    for name, plan in plans.items():
        for part in plan.groups:
            if codecs[(name, part.group)] is None:
                continue
            for page in part.pages:
                if len(page.hits) * SLIM_SHARE <= page.rows:
                    wanted_pages.append((name, part.group, page))

    def cut(unit: tuple[str, int, _Page]) -> CutParts | None:
        name, group, page = unit
        codec = codecs[(name, group)]
        assert codec is not None
        return cut_parts(
            data[(page.offset, page.size)], page.hits, codec, dictionaries.get((name, group)),
            footer.page_maps, page.offset,
        )  # fmt: skip

    slims = run_ordered(
        wanted_pages, cut, weights=[page.size for _, _, page in wanted_pages], workers=workers
    )
    return _Cuts(
        {
            (name, group, page.offset): slim
            for (name, group, page), slim in zip(wanted_pages, slims, strict=True)
        },
        codecs,
    )


def _codec(footer: ParquetFooter, name: str, group: int) -> PageCodec | None:
    leaf, element = footer.leaves[name]
    return PageCodec.of(_chunk(footer, group, leaf).get(3), element)


def _place(footer: ParquetFooter, row: int) -> tuple[int, int]:
    group = bisect.bisect_right(footer.group_starts, row) - 1
    if group < 0 or row - footer.group_starts[group] >= footer.group_rows[group]:
        raise CompanionError(f"row {row} is past the end of a Parquet file the index names")
    return group, row - footer.group_starts[group]


def _chunk(footer: ParquetFooter, group: int, leaf: int) -> TStruct:
    chunk: TStruct = footer.meta.get(4).items[group].get(1).items[leaf]
    return chunk


def _has_offset_index(footer: ParquetFooter, leaf: int, groups: Sequence[int]) -> bool:
    for group in groups:
        chunk = _chunk(footer, group, leaf)
        if chunk.get(4) is None or not chunk.get(5) or chunk.get(3) is None:
            return False
    return True


def _load_offset_indexes(
    handle: pa.NativeFile, footer: ParquetFooter, leaves: Sequence[int], groups: Sequence[int]
) -> None:
    wanted: dict[tuple[int, int], tuple[int, int]] = {}
    for leaf in leaves:
        for group in groups:
            if (group, leaf) not in footer.offsets:
                chunk = _chunk(footer, group, leaf)
                wanted[(group, leaf)] = (int(chunk.get(4)), int(chunk.get(5)))
    if not wanted:
        return
    data = _read_ranges(handle, sorted(set(wanted.values())))
    for place, piece in wanted.items():
        index, _ = decode_struct(data[piece])
        footer.offsets[place] = PageLocations.of(
            [(int(p.get(1)), int(p.get(2)), int(p.get(3))) for p in index.get(1).items]
        )


@dataclass(frozen=True, slots=True)
class PageLocations:
    """A column chunk's offset index, decoded once (kept on the footer).

    Attributes:
        pages: each data page's (byte offset, size, first row in the row group).
        firsts: each page's first row (for a bisect).
        size: the pages' bytes.
    """

    pages: tuple[tuple[int, int, int], ...]
    firsts: tuple[int, ...]
    size: int

    @staticmethod
    def of(pages: Sequence[tuple[int, int, int]]) -> PageLocations:
        """The locations of ``pages`` (offset, size, first row) in file order."""
        return PageLocations(
            tuple(pages), tuple(first for _, _, first in pages), sum(size for _, size, _ in pages)
        )


class _Page(NamedTuple):
    """One data page holding hits: its byte range, first row, rows, and the hit rows in it
    (a tuple: a needle plans a few thousand of them per search)."""

    offset: int
    size: int
    first: int
    rows: int
    hits: array[int]  # rows within the page, sorted, unique


@dataclass(frozen=True, slots=True)
class _Group:
    """One row group of a column's small file: its dictionary page range and pages."""

    group: int
    prefix: tuple[int, int] | None
    pages: tuple[_Page, ...]


@dataclass(frozen=True, slots=True)
class _Plan:
    groups: tuple[_Group, ...]
    pieces: frozenset[tuple[int, int]]
    share: float  # of the row groups' page bytes, those of the pages decoded whole


def _plan(footer: ParquetFooter, leaf: int, by_group: Mapping[int, Sequence[int]]) -> _Plan | None:
    """Which pages of ``leaf`` hold the rows (``by_group``: row group -> its rows,
    sorted, unique); None: an offset index that does not cover its row group from row 0."""
    groups = sorted(by_group)
    for group in groups:
        listed = footer.offsets[(group, leaf)].pages
        if not listed or listed[0][2] != 0:
            return None
    parts: list[_Group] = []
    pieces: set[tuple[int, int]] = set()
    chosen = every = 0
    for group in groups:
        located = footer.offsets[(group, leaf)]
        locations, firsts = located.pages, located.firsts
        rows = by_group[group]
        every += located.size
        meta = _chunk(footer, group, leaf).get(3)
        chunk_start = int(meta.get(9))
        if meta.get(11) is not None and 0 < int(meta.get(11)) < chunk_start:
            chunk_start = int(meta.get(11))
        prefix = None
        if chunk_start < locations[0][0]:
            prefix = (chunk_start, locations[0][0] - chunk_start)
            pieces.add(prefix)
        pages: list[_Page] = []
        index = 0
        group_rows = footer.group_rows[group]
        while index < len(rows):  # page by page: a bisect for each page holding hits
            page = bisect.bisect_right(firsts, rows[index]) - 1
            offset, size, first = locations[page]
            last = firsts[page + 1] if page + 1 < len(firsts) else group_rows
            stop = bisect.bisect_left(rows, last, index)
            hits = array("q", [row - first for row in rows[index:stop]])
            index = stop
            pages.append(_Page(offset, size, first, last - first, hits))
            pieces.add((offset, size))
            if len(hits) * SLIM_SHARE > last - first:  # decoded whole, not cut
                chosen += size
        parts.append(_Group(group, prefix, tuple(pages)))
    return _Plan(tuple(parts), frozenset(pieces), chosen / max(1, every))


def _read_ranges(
    handle: pa.NativeFile, ranges: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], memoryview]:
    """``(offset, size) -> bytes``: one ranged read per run of ranges closer than ``_HOLE``."""
    found: dict[tuple[int, int], memoryview] = {}
    index = 0
    ordered = sorted(ranges)
    while index < len(ordered):
        begin = ordered[index][0]
        end = ordered[index][0] + ordered[index][1]
        stop = index + 1
        while stop < len(ordered):
            offset, size = ordered[stop]
            if offset - end > _HOLE or max(end, offset + size) - begin > _MAX_RANGE:
                break
            end = max(end, offset + size)
            stop += 1
        buffer = memoryview(handle.read_at(end - begin, begin)).cast("B")
        if len(buffer) != end - begin:
            raise CompanionError("a Parquet file is shorter than its footer says")
        for offset, size in ordered[index:stop]:
            found[(offset, size)] = buffer[offset - begin : offset - begin + size]
        index = stop
    return found


def _direct(
    footer: ParquetFooter, name: str, plan: _Plan, cuts: _Cuts
) -> tuple[pa.Array, None] | None:
    """The plan's pages of column ``name`` as one array straight from their cut parts
    (:mod:`.cutarrays`), a row a hit in the plan's order (None: a page was not cut, or
    the column's type is not laid out as its PLAIN bytes)."""
    arrow_type = footer.schema.field(name).type
    element = footer.leaves[name][1]
    pages: list[CutParts] = []
    codec = None
    for part in plan.groups:
        found = cuts.codecs[(name, part.group)]
        if found is None or (codec is not None and found != codec):
            return None
        codec = found
        for page in part.pages:
            slim = cuts.pages.get((name, part.group, page.offset))
            if slim is None:
                return None
            pages.append(slim)
    if codec is None or not laid_out_raw(arrow_type, element, codec):
        return None
    array = cut_array(pages, arrow_type, codec)
    return None if array is None else (array, None)


def _decode(
    footer: ParquetFooter,
    name: str,
    plan: _Plan,
    data: Mapping[tuple[int, int], memoryview],
    cuts: _Cuts,
) -> tuple[pa.Array, list[int] | None] | None:
    """The plan's pages of column ``name`` decoded by pyarrow, and the position in the
    result of each hit in the plan's order (None: the result holds the hits alone, in
    that order); None: leave the column to row groups. A page with few hits is cut
    down to them (:mod:`.slimpages`, done before: ``cuts``); the others are decoded
    whole."""
    leaf, element = footer.leaves[name]
    body: list[bytes | memoryview] = [_MAGIC]
    length = len(_MAGIC)
    row_groups = []
    total = 0
    # Each hit's position in the result; None while every page so far was cut (the hits
    # are then the result, in order), so a column of cut pages builds no list.
    order: list[int] | None = None
    for part in plan.groups:
        meta = _chunk(footer, part.group, leaf).get(3).copy()
        pieces: list[bytes | memoryview] = []
        raw = False
        rows = 0
        for page in part.pages:
            slim = cuts.pages.get((name, part.group, page.offset))
            if slim is not None:
                pieces.append(encode_cut(slim))
                if order is not None:
                    order.extend(range(total + rows, total + rows + len(page.hits)))
                rows += len(page.hits)
            else:
                raw = True
                if order is None:
                    order = list(range(total + rows))  # the hits of the cut pages before
                pieces.append(data[(page.offset, page.size)])
                at = total + rows
                order.extend([at + hit for hit in page.hits])
                rows += page.rows
        start = length
        if raw and part.prefix is not None:
            body.append(data[part.prefix])
            length += part.prefix[1]
            meta.set(11, I64, start)
        else:
            meta.drop(11)
        meta.set(9, I64, length)
        for piece in pieces:
            body.append(piece)
            length += len(piece)
        size = length - start
        meta.set(5, I64, rows)
        meta.set(7, I64, size)
        encodings = meta.get(2)
        if encodings is not None:
            kinds = set(encodings.items) | {0, 3}  # PLAIN, RLE: the cut pages'
            meta.set(2, LIST, TList(I32, sorted(kinds)))
        meta.drop(10, 12, 13, 14, 15, 16, 17)
        column = TStruct({2: (I64, start), 3: (STRUCT, meta)})
        row_groups.append(
            TStruct(
                {
                    1: (LIST, TList(STRUCT, [column])),
                    2: (I64, size),
                    3: (I64, rows),
                }
            )
        )
        total += rows
    root = footer.meta.get(2).items[0].copy()
    root.set(5, I32, 1)
    arrow_schema = pa.schema([footer.schema.field(name)])
    key_value = TStruct(
        {
            1: (BINARY, b"ARROW:schema"),
            2: (BINARY, base64.b64encode(arrow_schema.serialize().to_pybytes())),
        }
    )
    meta = TStruct(
        {
            1: (I32, footer.meta.get(1, 1)),
            2: (LIST, TList(STRUCT, [root, element])),
            3: (I64, total),
            4: (LIST, TList(STRUCT, row_groups)),
            5: (LIST, TList(STRUCT, [key_value])),
        }
    )
    created_by = footer.meta.get(6)
    if created_by is not None:
        meta.set(6, BINARY, created_by)
    encoded = encode_struct(meta)
    body += [encoded, len(encoded).to_bytes(4, "little"), _MAGIC]
    try:
        with pq.ParquetFile(pa.BufferReader(b"".join(body)), pre_buffer=False) as small:
            table = small.read(use_threads=False)
    except (pa.ArrowException, OSError):
        return None
    if table.num_rows != total or table.num_columns != 1:
        return None
    column = table.column(0)
    if column.type != footer.schema.field(name).type:
        return None
    return column.combine_chunks(), order
