"""The split file: a Quickwit-style bundle of a Tantivy index directory.

Layout (all integers u32 little-endian)::

    [file 1][file 2]...[file n]              the index files, concatenated
    footer_start_offset:
    [magic 0x1812BEAE][version 1][JSON {"files": {name: {"start": s, "end": e}}}]
    [length of the three fields above]
    [hotcache][length of hotcache]           footer_end_offset == file size

Readers fetch the footer (from ``footer_start_offset`` to the end) in one
ranged read, then the byte ranges of the files they need. The hotcache (see
:mod:`indextables.protocol.hotcache`) lists the index files' lengths and
copies the regions needed to open the index: the reference's native reader
needs it; tantivy-py opens the unbundled directory without it.

A footer is read only when its declared range is sane and at most
:data:`MAX_FOOTER_BYTES` long: the offsets come from the log and the lengths
from the file's tail, and neither may make a reader allocate more than that.
"""

from __future__ import annotations

import functools
import json
import os
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.hotcache import build_hotcache, encode_hotcache
from indextables.protocol.store import ObjectStore

__all__ = [
    "MAX_FOOTER_BYTES",
    "SPLIT_FIELDS",
    "SPLIT_MAGIC",
    "SplitFooter",
    "bundle_order",
    "parse_split_footer",
    "read_split_footer",
    "unbundle_split",
    "write_split_bundle",
]

SPLIT_MAGIC: Final = 0x1812BEAE
SPLIT_VERSION: Final = 1
_U32: Final = struct.Struct("<I")
_TAIL_GUESS: Final = 64 * 1024
# The reference's bundles always end their file data with this (empty) entry.
SPLIT_FIELDS: Final = "split_fields"
_COPY_CHUNK: Final = 1 << 20
#: The longest footer (file table, hotcache and their lengths) a reader accepts. A
#: split's hotcache holds the regions needed to open the index: megabytes for splits
#: of many gigabytes; a declared footer beyond this is a damaged log or file.
MAX_FOOTER_BYTES: Final = 256 << 20


@dataclass(frozen=True, slots=True)
class SplitFooter:
    """Where each index file lives inside a split.

    Attributes:
        files: name -> (start, end) byte range in the split.
        footer_start_offset: where the bundle metadata begins.
        footer_end_offset: the split's size.
        hotcache: the hotcache bytes (opaque here).
    """

    files: Mapping[str, tuple[int, int]]
    footer_start_offset: int
    footer_end_offset: int
    hotcache: bytes


def _u32(data: bytes, offset: int, path: str) -> int:
    if offset < 0 or offset + 4 > len(data):
        raise CorruptFileError(path, "split footer is truncated")
    value: int = _U32.unpack_from(data, offset)[0]
    return value


def parse_split_footer(
    data: bytes, *, footer_start_offset: int, path: str = "<split>"
) -> SplitFooter:
    """Parse the footer of a split.

    Args:
        data: the bytes ``[footer_start_offset, file size)`` of the split, or
            the whole file (told apart by their length).
        footer_start_offset: where the footer begins in the split.
        path: the split's name, for error messages.

    Raises:
        CorruptFileError: bad magic, version, lengths or file table.
    """
    hotcache_length = _u32(data, len(data) - 4, path)
    meta_length_at = len(data) - 8 - hotcache_length
    meta_length = _u32(data, meta_length_at, path)
    meta_start = meta_length_at - meta_length
    if meta_start < 0:
        raise CorruptFileError(path, "split footer lengths exceed the data")
    file_size = footer_start_offset + (len(data) - meta_start)
    if meta_start not in (0, footer_start_offset):
        raise CorruptFileError(
            path, f"footer metadata does not start at offset {footer_start_offset}"
        )
    files = _file_table(data[meta_start:meta_length_at], path)
    _check_ranges(files, footer_start_offset, path)
    hotcache = data[meta_length_at + 4 : len(data) - 4]
    return SplitFooter(files, footer_start_offset, file_size, hotcache)


def _file_table(meta: bytes, path: str) -> dict[str, tuple[int, int]]:
    if _u32(meta, 0, path) != SPLIT_MAGIC:
        raise CorruptFileError(path, f"bad split magic {meta[:4].hex()}")
    version = _u32(meta, 4, path)
    if version != SPLIT_VERSION:
        raise CorruptFileError(path, f"unsupported split bundle version {version}")
    try:
        table = json.loads(meta[8:])
        return {str(name): (int(r["start"]), int(r["end"])) for name, r in table["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise CorruptFileError(path, f"bad split file table: {exc!r}") from None


def _check_ranges(files: Mapping[str, tuple[int, int]], limit: int, path: str) -> None:
    for name, (start, end) in files.items():
        if not 0 <= start <= end <= limit:
            raise CorruptFileError(path, f"file {name!r} range {start}..{end} outside 0..{limit}")


def read_split_footer(
    store: ObjectStore,
    key: str,
    *,
    footer_start_offset: int | None = None,
    footer_end_offset: int | None = None,
) -> SplitFooter:
    """Read a split's footer from ``store``.

    With both offsets known this is one ranged read; otherwise the size comes
    from ``head`` and the tail is read (a second read if the guess was short).
    No read is longer than :data:`MAX_FOOTER_BYTES` (plus the tail guess).

    Raises:
        ObjectNotFoundError: no such split.
        CorruptFileError: the footer does not parse, its declared range is not
            within ``0 <= start < end`` or longer than :data:`MAX_FOOTER_BYTES`,
            or the split is shorter than the range.
    """
    if footer_start_offset is not None and footer_end_offset is not None:
        _check_footer_range(key, footer_start_offset, footer_end_offset)
        data = store.get_range(key, footer_start_offset, footer_end_offset)
        if len(data) != footer_end_offset - footer_start_offset:
            raise CorruptFileError(
                key,
                f"split ends at byte {footer_start_offset + len(data)}, before the footer "
                f"end {footer_end_offset} the log records",
            )
        return parse_split_footer(data, footer_start_offset=footer_start_offset, path=key)
    size = footer_end_offset if footer_end_offset is not None else store.head(key).size
    tail_start = max(0, size - _TAIL_GUESS)
    tail = store.get_range(key, tail_start, size)
    hotcache_length = _u32(tail, len(tail) - 4, key)
    _check_footer_length(key, 8 + hotcache_length, size)
    meta_at = len(tail) - 8 - hotcache_length
    if meta_at < 0:
        tail_start = max(0, size - 8 - hotcache_length - _TAIL_GUESS)
        tail = store.get_range(key, tail_start, size)
        meta_at = len(tail) - 8 - hotcache_length
    meta_length = _u32(tail, meta_at, key)
    _check_footer_length(key, 8 + hotcache_length + meta_length, size)
    start = tail_start + meta_at - meta_length
    if start < tail_start:
        tail = store.get_range(key, start, size)
        tail_start = start
    return parse_split_footer(tail[start - tail_start :], footer_start_offset=start, path=key)


def _check_footer_range(key: str, start: int, end: int) -> None:
    if not 0 <= start < end:
        raise CorruptFileError(key, f"footer range {start}..{end} recorded in the log is invalid")
    if end - start > MAX_FOOTER_BYTES:
        raise CorruptFileError(
            key,
            f"footer range {start}..{end} recorded in the log is {end - start} bytes, "
            f"more than the {MAX_FOOTER_BYTES} a split footer may have",
        )


def _check_footer_length(key: str, length: int, size: int) -> None:
    """The footer's lengths (from the file's tail) fit the file and the maximum."""
    if length > size or length > MAX_FOOTER_BYTES:
        raise CorruptFileError(
            key,
            f"split footer lengths say {length} bytes, more than the file's {size} "
            f"or the {MAX_FOOTER_BYTES} a split footer may have",
        )


def write_split_bundle(index_dir: str | os.PathLike[str], dest: BinaryIO) -> SplitFooter:
    """Bundle every file of a Tantivy index directory into ``dest``, as the reference lays it out.

    File order (see :func:`bundle_order`): the segment files, ``.managed.json``,
    ``meta.json``, any other files (such as our Arrow row copy), then an empty
    ``split_fields`` entry, which the reference's bundles always carry. The file
    table is compact JSON. The hotcache covers the index's own files
    (``meta.json``, ``.managed.json`` and the files of the segments ``meta.json``
    lists), not other files bundled alongside. Files are copied in bounded
    chunks; ``dest`` receives the whole split, positioned at its start.
    """
    root = Path(index_dir)
    names = [
        entry.name
        for entry in root.iterdir()
        if entry.is_file() and not entry.name.endswith(".lock") and entry.name != SPLIT_FIELDS
    ]
    members = _index_files(root, names)
    files: dict[str, tuple[int, int]] = {}
    offset = 0
    for name in bundle_order(names, members):
        with (root / name).open("rb") as source:
            size = _copy(source, dest)
        files[name] = (offset, offset + size)
        offset += size
    files[SPLIT_FIELDS] = (offset, offset)
    table = {"files": {n: {"start": s, "end": e} for n, (s, e) in files.items()}}
    meta = (
        _U32.pack(SPLIT_MAGIC)
        + _U32.pack(SPLIT_VERSION)
        + json.dumps(table, separators=(",", ":")).encode()
    )
    hotcache = encode_hotcache(
        build_hotcache(
            (name, end - start, functools.partial(_read_range, root / name))
            for name, (start, end) in files.items()
            if name in members
        )
    )
    dest.write(meta + _U32.pack(len(meta)) + hotcache + _U32.pack(len(hotcache)))
    end = offset + len(meta) + 8 + len(hotcache)
    return SplitFooter(files, offset, end, hotcache)


def bundle_order(names: Iterable[str], members: Iterable[str]) -> list[str]:
    """The order files are bundled in: segment files, ``.managed.json``, ``meta.json``, others.

    ``members`` are the index's own files; the rest (not read by Tantivy) come last,
    each group in name order.
    """
    index_files = set(members)
    rank = {".managed.json": 1, "meta.json": 2}

    def key(name: str) -> tuple[int, str]:
        if name not in index_files:
            return (3, name)
        return (rank.get(name, 0), name)

    return sorted(names, key=key)


def _copy(source: BinaryIO, dest: BinaryIO) -> int:
    size = 0
    while chunk := source.read(_COPY_CHUNK):
        dest.write(chunk)
        size += len(chunk)
    return size


def _index_files(root: Path, names: Iterable[str]) -> set[str]:
    """The names among ``names`` that belong to the Tantivy index in ``root``."""
    meta_path = root / "meta.json"
    if not meta_path.is_file():
        return set()
    segments = {
        str(segment.get("segment_id", "")).replace("-", "")
        for segment in json.loads(meta_path.read_text()).get("segments", [])
    }
    return {
        name
        for name in names
        if name in ("meta.json", ".managed.json") or name.split(".", 1)[0] in segments
    }


def _read_range(path: Path, start: int, stop: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(start)
        return handle.read(stop - start)


def unbundle_split(
    data: bytes, dest_dir: str | os.PathLike[str], *, path: str = "<split>"
) -> SplitFooter:
    """Write the index files of a whole split into ``dest_dir``.

    Raises:
        CorruptFileError: the footer does not parse or a name is unsafe.
    """
    footer = _footer_of_whole(data, path)
    target = Path(dest_dir)
    target.mkdir(parents=True, exist_ok=True)
    for name, (start, end) in footer.files.items():
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise CorruptFileError(path, f"unsafe file name {name!r} in split")
        (target / name).write_bytes(data[start:end])
    return footer


def _footer_of_whole(data: bytes, path: str) -> SplitFooter:
    hotcache_length = _u32(data, len(data) - 4, path)
    meta_at = len(data) - 8 - hotcache_length
    start = meta_at - _u32(data, meta_at, path)
    if start < 0:
        raise CorruptFileError(path, "split footer lengths exceed the data")
    return parse_split_footer(data[start:], footer_start_offset=start, path=path)
