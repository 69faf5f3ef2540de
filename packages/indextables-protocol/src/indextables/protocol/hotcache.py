"""The hotcache of a split bundle, in the format the reference writes.

A hotcache lets a reader open a split's index without a read per small
region: it records every file's length and copies of the byte ranges needed
to open the index. The reference's native reader requires it (a file missing
from its length table does not exist for that reader). Layout, little-endian
(``varint`` is unsigned LEB128), as found in every golden split::

    u32 magic 0x9875FC32 | u32 version 1 | u32 header length H
    header (H bytes):
        varint n, n x (varint name length, UTF-8 name, varint file length)
        varint m, m x (varint name length, UTF-8 name, varint body offset)
    body: per cached file, at its body offset:
        the cached bytes of its slices, one after the other
        slice index: varint file length, varint k,
                     k x (varint start, varint stop, varint address in the cached bytes)
        u64 length of the cached bytes

Slices are sorted by start and do not overlap. Entries keep the order they
were read in, so a parsed hotcache re-encodes to the same bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from indextables.protocol.errors import CorruptFileError

__all__ = [
    "HOTCACHE_MAGIC",
    "CachedFile",
    "CachedSlice",
    "Hotcache",
    "build_hotcache",
    "encode_hotcache",
    "parse_hotcache",
]

HOTCACHE_MAGIC: Final = 0x9875FC32
HOTCACHE_VERSION: Final = 1
_HEAD: Final = struct.Struct("<III")
_U64: Final = struct.Struct("<Q")
# Files up to this size are cached whole; of larger ones, the head and tail
# (where Tantivy keeps its footers and the indexes of its files).
WHOLE_FILE_LIMIT: Final = 16 << 10
EDGE_BYTES: Final = 8 << 10


@dataclass(frozen=True, slots=True)
class CachedSlice:
    """One cached byte range of a file.

    Attributes:
        start: first byte in the file.
        stop: end (exclusive) in the file.
        address: where its bytes start in the file's cached bytes.
    """

    start: int
    stop: int
    address: int


@dataclass(frozen=True, slots=True)
class CachedFile:
    """The cached parts of one file.

    Attributes:
        length: the whole file's length.
        slices: the cached ranges, sorted by start.
        data: their bytes.
    """

    length: int
    slices: tuple[CachedSlice, ...]
    data: bytes

    def read(self, start: int, stop: int) -> bytes | None:
        """Bytes ``[start, stop)`` of the file if one slice holds them all, else None."""
        for piece in self.slices:
            if piece.start <= start and stop <= piece.stop:
                at = piece.address + start - piece.start
                return self.data[at : at + stop - start]
        return None


@dataclass(frozen=True, slots=True)
class Hotcache:
    """A parsed hotcache.

    Attributes:
        file_lengths: (name, length) of every file of the split's index.
        files: (name, cached parts) of the files with a cache entry.
    """

    file_lengths: tuple[tuple[str, int], ...]
    files: tuple[tuple[str, CachedFile], ...]

    def cached(self, name: str) -> CachedFile | None:
        """The cached parts of ``name``, if it has an entry."""
        return dict(self.files).get(name)


class _Reader:
    def __init__(self, data: bytes, path: str) -> None:
        self.data, self.pos, self.path = data, 0, path

    def varint(self) -> int:
        value = shift = 0
        while True:
            if self.pos >= len(self.data):
                raise CorruptFileError(self.path, "hotcache ends inside a number")
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise CorruptFileError(self.path, "hotcache number is longer than 64 bits")

    def name(self) -> str:
        size = self.varint()
        raw = self.data[self.pos : self.pos + size]
        if len(raw) != size:
            raise CorruptFileError(self.path, "hotcache ends inside a file name")
        self.pos += size
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptFileError(self.path, "hotcache file name is not UTF-8") from None

    def pairs(self) -> list[tuple[str, int]]:
        return [(self.name(), self.varint()) for _ in range(self.varint())]


def parse_hotcache(data: bytes, *, path: str = "<split>") -> Hotcache:
    """Parse a hotcache.

    Raises:
        CorruptFileError: a bad magic or version, or lengths and offsets outside the data.
    """
    if len(data) < _HEAD.size:
        raise CorruptFileError(path, f"hotcache of {len(data)} bytes is too short")
    magic, version, header_length = _HEAD.unpack_from(data)
    if magic != HOTCACHE_MAGIC or version != HOTCACHE_VERSION:
        raise CorruptFileError(path, f"hotcache magic/version {magic:#x}/{version} not supported")
    body_start = _HEAD.size + header_length
    if body_start > len(data):
        raise CorruptFileError(path, "hotcache header exceeds the data")
    reader = _Reader(data[:body_start], path)
    reader.pos = _HEAD.size
    lengths = reader.pairs()
    offsets = reader.pairs()
    if reader.pos != body_start:
        raise CorruptFileError(path, "hotcache header length does not match its tables")
    body = data[body_start:]
    ends = [offset for _, offset in offsets[1:]] + [len(body)]
    files = []
    for (name, start), end in zip(offsets, ends, strict=True):
        if not 0 <= start <= end <= len(body):
            raise CorruptFileError(path, f"hotcache entry of {name!r} is outside the data")
        files.append((name, _parse_file(body[start:end], name, path)))
    return Hotcache(tuple(lengths), tuple(files))


def _parse_file(blob: bytes, name: str, path: str) -> CachedFile:
    if len(blob) < _U64.size:
        raise CorruptFileError(path, f"hotcache entry of {name!r} is too short")
    (size,) = _U64.unpack_from(blob, len(blob) - _U64.size)
    if size > len(blob) - _U64.size:
        raise CorruptFileError(path, f"hotcache entry of {name!r} claims {size} bytes")
    reader = _Reader(blob[: len(blob) - _U64.size], path)
    reader.pos = size
    length = reader.varint()
    slices = tuple(
        CachedSlice(reader.varint(), reader.varint(), reader.varint())
        for _ in range(reader.varint())
    )
    if reader.pos != len(blob) - _U64.size:
        raise CorruptFileError(path, f"hotcache entry of {name!r} has trailing bytes")
    for piece in slices:
        end = piece.address + piece.stop - piece.start
        if not (piece.start <= piece.stop <= length and end <= size):
            raise CorruptFileError(path, f"hotcache slice of {name!r} is out of range")
    return CachedFile(length, slices, blob[:size])


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _pairs(items: Sequence[tuple[str, int]]) -> bytes:
    parts = [_varint(len(items))]
    for name, number in items:
        raw = name.encode("utf-8")
        parts += [_varint(len(raw)), raw, _varint(number)]
    return b"".join(parts)


def _encode_file(cached: CachedFile) -> bytes:
    index = [_varint(cached.length), _varint(len(cached.slices))]
    for piece in cached.slices:
        index += [_varint(piece.start), _varint(piece.stop), _varint(piece.address)]
    return cached.data + b"".join(index) + _U64.pack(len(cached.data))


def encode_hotcache(cache: Hotcache) -> bytes:
    """Serialize ``cache`` (the inverse of :func:`parse_hotcache`)."""
    blobs = [_encode_file(cached) for _, cached in cache.files]
    offsets, at = [], 0
    for (name, _), blob in zip(cache.files, blobs, strict=True):
        offsets.append((name, at))
        at += len(blob)
    header = _pairs(cache.file_lengths) + _pairs(offsets)
    return _HEAD.pack(HOTCACHE_MAGIC, HOTCACHE_VERSION, len(header)) + header + b"".join(blobs)


ReadRange = Callable[[int, int], bytes]
"""``read(start, stop)``: bytes ``[start, stop)`` of one file."""


def build_hotcache(files: Iterable[tuple[str, int, ReadRange]]) -> Hotcache:
    """A hotcache for an index's files, given as ``(name, length, read)``.

    Every length is recorded. Files of at most :data:`WHOLE_FILE_LIMIT` bytes
    (``meta.json``, ``.managed.json``, small segment files) are cached whole;
    of a larger file, its first and last :data:`EDGE_BYTES` (where Tantivy
    keeps its footers and file indexes). A reader fetches any other range
    from the split itself.
    """
    lengths: list[tuple[str, int]] = []
    cached: list[tuple[str, CachedFile]] = []
    for name, length, read in files:
        lengths.append((name, length))
        cached.append((name, _cache_file(length, read)))
    return Hotcache(tuple(lengths), tuple(cached))


def _cache_file(length: int, read: ReadRange) -> CachedFile:
    if length == 0:
        return CachedFile(0, (), b"")
    if length <= WHOLE_FILE_LIMIT:
        return CachedFile(length, (CachedSlice(0, length, 0),), read(0, length))
    tail = length - EDGE_BYTES
    return CachedFile(
        length,
        (CachedSlice(0, EDGE_BYTES, 0), CachedSlice(tail, length, EDGE_BYTES)),
        read(0, EDGE_BYTES) + read(tail, length),
    )
