"""Tantivy's delete files: a segment's alive bitset, ``<segment uuid hex>.<opstamp>.del``.

Layout (Tantivy's ``common::BitSet::serialize`` and ``directory::footer``), all
little-endian:

    [u32 max_doc][u64 word per 64 docs, ceil(max_doc / 64) words: bit d set = doc d alive]
    [footer JSON {"version":{...},"crc":u32}][u32 JSON length][u32 magic 1337]

The crc is CRC-32 (IEEE, ``zlib.crc32``) of the bytes before the footer; bits at
and above ``max_doc`` are zero. ``meta.json`` names the file through the
segment's ``"deletes": {"num_deleted_docs": n, "opstamp": o}``. The bytes written
here are those tantivy-py 0.27 writes for the same deletes (tested).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AliveBitset",
    "DeleteFileError",
    "delete_file_name",
    "encode_alive_bitset",
    "parse_alive_bitset",
]

_MAGIC = 1337
_U32 = struct.Struct("<I")
_TRAILER = struct.Struct("<II")
# The footer version tantivy-py 0.27 writes (Tantivy's crate version and index format).
_VERSION = {"major": 0, "minor": 27, "patch": 0, "index_format_version": 7}
_MAX_FOOTER = 50_000  # Tantivy's FOOTER_MAX_LEN


class DeleteFileError(ValueError):
    """A delete file that does not parse (the message says why)."""


@dataclass(frozen=True, slots=True)
class AliveBitset:
    """Which documents of one segment are alive.

    Attributes:
        max_doc: the segment's document count (alive and deleted).
        deleted: the deleted document ids.
    """

    max_doc: int
    deleted: frozenset[int]

    @property
    def num_deleted(self) -> int:
        """How many documents are deleted."""
        return len(self.deleted)

    def with_deleted(self, docs: Iterable[int]) -> AliveBitset:
        """This bitset with ``docs`` deleted as well (existing deletes are kept).

        Raises:
            DeleteFileError: a doc id outside ``[0, max_doc)``.
        """
        more = frozenset(docs)
        outside = [d for d in more if not 0 <= d < self.max_doc]
        if outside:
            raise DeleteFileError(
                f"doc id {min(outside)} outside the segment's {self.max_doc} documents"
            )
        return AliveBitset(self.max_doc, self.deleted | more)


def delete_file_name(segment_id: str, opstamp: int) -> str:
    """``<segment uuid hex>.<opstamp>.del`` (``segment_id`` as meta.json writes it)."""
    return f"{segment_id.replace('-', '')}.{opstamp}.del"


def encode_alive_bitset(bitset: AliveBitset) -> bytes:
    """The delete file's bytes for ``bitset`` (footer included)."""
    max_doc = bitset.max_doc
    if not 0 <= max_doc < 1 << 32:
        raise DeleteFileError(f"max_doc {max_doc} does not fit a u32")
    # Bit d of the little-endian u64 words is bit d % 8 of byte d // 8.
    words = (max_doc + 63) // 64
    alive = bytearray(b"\xff" * (max_doc // 8))
    if max_doc % 8:
        alive.append((1 << max_doc % 8) - 1)
    alive.extend(bytes(words * 8 - len(alive)))
    for doc in bitset.deleted:
        alive[doc >> 3] &= ~(1 << (doc & 7)) & 0xFF
    body = _U32.pack(max_doc) + bytes(alive)
    footer = json.dumps(
        {"version": _VERSION, "crc": zlib.crc32(body)}, separators=(",", ":")
    ).encode()
    return body + footer + _TRAILER.pack(len(footer), _MAGIC)


def parse_alive_bitset(data: bytes, *, name: str = "<delete file>") -> AliveBitset:
    """The bitset a delete file holds, its footer and checksum checked.

    Raises:
        DeleteFileError: a bad magic number, footer, checksum or length (naming ``name``).
    """
    if len(data) < _TRAILER.size + _U32.size:
        raise DeleteFileError(f"{name}: {len(data)} bytes, too short for a delete file")
    length, magic = _TRAILER.unpack_from(data, len(data) - _TRAILER.size)
    if magic != _MAGIC:
        raise DeleteFileError(f"{name}: footer magic {magic}, not {_MAGIC}")
    end = len(data) - _TRAILER.size
    if length > min(_MAX_FOOTER, end):
        raise DeleteFileError(f"{name}: footer length {length} exceeds the file")
    body = data[: end - length]
    try:
        footer = json.loads(data[end - length : end])
        crc = int(footer["crc"])
    except (ValueError, KeyError, TypeError) as error:
        raise DeleteFileError(f"{name}: footer does not parse: {error}") from None
    if zlib.crc32(body) != crc:
        raise DeleteFileError(f"{name}: checksum mismatch")
    if len(body) < _U32.size:
        raise DeleteFileError(f"{name}: no max_doc")
    (max_doc,) = _U32.unpack_from(body, 0)
    words = (max_doc + 63) // 64
    if len(body) != _U32.size + words * 8:
        raise DeleteFileError(
            f"{name}: {len(body) - _U32.size} bitset bytes, {words * 8} expected for "
            f"{max_doc} documents"
        )
    bits = body[_U32.size :]
    deleted = frozenset(
        at * 8 + bit
        for at, byte in enumerate(bits)
        if byte != 0xFF
        for bit in range(8)
        if not byte >> bit & 1 and at * 8 + bit < max_doc
    )
    return AliveBitset(max_doc, deleted)
