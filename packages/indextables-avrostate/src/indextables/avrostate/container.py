"""Avro object-container framing: header, sync markers, blocks.

Reads a whole container (manifests are fetched in one GET) into its writer
schema, codec and raw blocks, and yields each block's decompressed bytes.
Records themselves are decoded elsewhere (``impl``), straight from those bytes.
Every malformation raises a typed error naming the file.
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import fastavro

from indextables.avrostate.codecs import (
    DEFAULT_ZSTD_LEVEL,
    SUPPORTED_CODECS,
    compress_block,
    decompress_block,
    encode_long,
)
from indextables.avrostate.errors import CorruptAvroFileError, UnsupportedCodecError

__all__ = [
    "MAGIC",
    "Block",
    "Container",
    "encode_container",
    "encode_long",
    "encode_records",
    "parse_container",
]

MAGIC: Final = b"Obj\x01"
SYNC_SIZE: Final = 16


@dataclass(frozen=True, slots=True)
class Block:
    """One data block as stored: its record count and compressed bytes."""

    count: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Container:
    """A parsed object container.

    Attributes:
        path: the file it came from (for error messages).
        schema: the writer schema (parsed JSON).
        codec: the block codec named in the header.
        blocks: the stored blocks, in order.
    """

    path: str
    schema: Any
    codec: str
    blocks: tuple[Block, ...]

    @property
    def num_records(self) -> int:
        """Total record count over every block."""
        return sum(block.count for block in self.blocks)

    def decompressed(self, first: int = 0, end: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yield ``(count, raw bytes)`` per block (``blocks[first:end]``), decompressing lazily."""
        for block in self.blocks[first:end]:
            try:
                yield block.count, decompress_block(self.codec, block.data)
            except ValueError as exc:
                raise CorruptAvroFileError(self.path, f"block does not decompress: {exc}") from exc


class _Cursor:
    """Bounds-checked reading of the framing varints and byte runs."""

    __slots__ = ("data", "path", "pos")

    def __init__(self, data: bytes, path: str) -> None:
        self.data = data
        self.path = path
        self.pos = 0

    def fail(self, problem: str) -> CorruptAvroFileError:
        return CorruptAvroFileError(self.path, f"{problem} at byte {self.pos}")

    def long(self) -> int:
        shift = 0
        n = 0
        data = self.data
        while True:
            if self.pos >= len(data):
                raise self.fail("truncated varint")
            byte = data[self.pos]
            self.pos += 1
            n |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (n >> 1) ^ -(n & 1)
            shift += 7
            if shift > 63:
                raise self.fail("varint longer than 10 bytes")

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise self.fail(f"truncated: need {size} bytes")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out

    def at_end(self) -> bool:
        return self.pos >= len(self.data)


def _read_meta(cur: _Cursor) -> dict[str, bytes]:
    meta: dict[str, bytes] = {}
    while True:
        count = cur.long()
        if count == 0:
            return meta
        if count < 0:
            cur.long()  # block byte size, unused
            count = -count
        for _ in range(count):
            key = cur.take(cur.long()).decode("utf-8", "replace")
            meta[key] = cur.take(cur.long())


def _parse_schema(meta: dict[str, bytes], path: str) -> Any:
    raw = meta.get("avro.schema")
    if raw is None:
        raise CorruptAvroFileError(path, "header has no avro.schema")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptAvroFileError(path, f"header schema is not JSON: {exc}") from exc


def parse_container(data: bytes, *, path: str) -> Container:
    """Parse an object container's header and split it into blocks.

    Raises:
        CorruptAvroFileError: bad magic, truncated header or block, bad sync marker.
        UnsupportedCodecError: the header names a codec we cannot decode.
    """
    if data[:4] != MAGIC:
        raise CorruptAvroFileError(path, f"not an Avro container (magic {data[:4]!r})")
    cur = _Cursor(data, path)
    cur.pos = 4
    meta = _read_meta(cur)
    schema = _parse_schema(meta, path)
    codec = meta.get("avro.codec", b"null").decode("utf-8", "replace") or "null"
    if codec not in SUPPORTED_CODECS:
        raise UnsupportedCodecError(path, f"unsupported codec {codec!r}")
    sync = cur.take(SYNC_SIZE)
    blocks: list[Block] = []
    while not cur.at_end():
        count = cur.long()
        if count < 0:
            raise cur.fail(f"negative block count {count}")
        block = cur.take(cur.long())
        if cur.take(SYNC_SIZE) != sync:
            raise cur.fail("sync marker mismatch")
        blocks.append(Block(count, block))
    return Container(path, schema, codec, tuple(blocks))


def _encode_bytes(value: bytes) -> bytes:
    return encode_long(len(value)) + value


def encode_container(
    schema: Any,
    blocks: Sequence[tuple[int, bytes]],
    *,
    codec: str = "zstandard",
    level: int | None = DEFAULT_ZSTD_LEVEL,
) -> bytes:
    """Frame already-encoded record blocks ``(count, raw bytes)`` into a container.

    Used by compaction to copy records without re-encoding them.
    """
    sync = os.urandom(SYNC_SIZE)
    meta = {
        b"avro.schema": json.dumps(schema, separators=(",", ":")).encode(),
        b"avro.codec": codec.encode(),
    }
    out = [MAGIC, encode_long(len(meta))]
    out += [_encode_bytes(k) + _encode_bytes(v) for k, v in meta.items()]
    out += [b"\x00", sync]
    for count, raw in blocks:
        stored = compress_block(codec, raw, level=level)
        out += [encode_long(count), encode_long(len(stored)), stored, sync]
    return b"".join(out)


def encode_records(
    schema: Any,
    records: Iterable[Any],
    *,
    codec: str = "zstandard",
    level: int | None = DEFAULT_ZSTD_LEVEL,
    block_bytes: int = 64 * 1024,
) -> bytes:
    """Encode records (fastavro) into a container whose header holds ``schema`` verbatim.

    fastavro would write its canonicalized schema (full names, no namespace);
    re-framing its uncompressed blocks keeps the header byte-for-byte the
    schema the reference writes.
    """
    out = io.BytesIO()
    fastavro.writer(
        out, _parsed(json.dumps(schema)), records, codec="null", sync_interval=block_bytes
    )
    plain = parse_container(out.getvalue(), path="<encoded>")
    return encode_container(
        schema, [(b.count, b.data) for b in plain.blocks], codec=codec, level=level
    )


@functools.lru_cache(maxsize=16)
def _parsed(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))
