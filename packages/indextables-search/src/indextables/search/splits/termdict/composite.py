"""tantivy's file footer and composite file: the envelope around each field's dictionary.

A segment file is ``[body][footer JSON][u32 JSON length][u32 magic 1337]``;
the JSON carries the writer's version and the CRC-32 of the body. A composite
body is the per-field blobs back to back, then a directory (``VInt n``, then
per entry ``VInt offset delta``, ``u32 field``, ``VInt idx``) and its u32
length. tantivy's VInt marks the *last* byte with 0x80 (the opposite of LEB128).
"""

from __future__ import annotations

import itertools
import json
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from indextables.search.splits.termdict.errors import TermDictError
from indextables.search.splits.vint import decode_vint, encode_vint

__all__ = [
    "FOOTER_MAGIC",
    "FieldBlob",
    "join_composite",
    "split_composite",
    "split_footer",
    "with_footer",
]

FOOTER_MAGIC: Final = 1337
_U32: Final = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class FieldBlob:
    """One entry of a composite file: a field id, its index and its bytes."""

    field: int
    idx: int
    data: bytes


def split_footer(data: bytes) -> tuple[bytes, bytes]:
    """Split a segment file into (body, footer JSON), checking magic and CRC."""
    if len(data) < 8 or _U32.unpack_from(data, len(data) - 4)[0] != FOOTER_MAGIC:
        raise TermDictError("not a tantivy segment file: the footer magic 1337 is missing")
    json_len = _U32.unpack_from(data, len(data) - 8)[0]
    if json_len + 8 > len(data):
        raise TermDictError(f"footer JSON length {json_len} exceeds the file ({len(data)} bytes)")
    body = data[: len(data) - 8 - json_len]
    raw = data[len(data) - 8 - json_len : len(data) - 8]
    try:
        crc = json.loads(raw)["crc"]
    except (ValueError, KeyError, TypeError) as exc:
        raise TermDictError(f"unreadable file footer JSON {raw[:200]!r}") from exc
    if crc != zlib.crc32(body):
        raise TermDictError(f"file footer CRC {crc} does not match the body ({zlib.crc32(body)})")
    return body, raw


def with_footer(body: bytes, footer_json: bytes) -> bytes:
    """Append a footer to ``body``: the given footer's fields, its CRC recomputed."""
    footer = json.loads(footer_json)
    footer["crc"] = zlib.crc32(body)
    raw = json.dumps(footer, separators=(",", ":")).encode()
    return body + raw + _U32.pack(len(raw)) + _U32.pack(FOOTER_MAGIC)


def _read_vint(data: bytes, pos: int) -> tuple[int, int]:
    return decode_vint(data, pos, error=TermDictError, context="composite file directory")


def split_composite(body: bytes) -> list[FieldBlob]:
    """The entries of a composite body, in the order its directory lists them."""
    if len(body) < 4:
        raise TermDictError("composite file shorter than its directory length")
    dir_len = _U32.unpack_from(body, len(body) - 4)[0]
    dir_start = len(body) - 4 - dir_len
    if dir_start < 0:
        raise TermDictError(f"composite directory length {dir_len} exceeds the file")
    directory = body[dir_start : len(body) - 4]
    count, pos = _read_vint(directory, 0)
    offsets: list[int] = []
    addrs: list[tuple[int, int]] = []
    offset = 0
    for _ in range(count):
        delta, pos = _read_vint(directory, pos)
        if pos + 4 > len(directory):
            raise TermDictError("composite file directory: truncated field id")
        field = _U32.unpack_from(directory, pos)[0]
        idx, pos = _read_vint(directory, pos + 4)
        offset += delta
        offsets.append(offset)
        addrs.append((field, idx))
    if pos != len(directory):
        raise TermDictError("composite file directory has trailing bytes")
    offsets.append(dir_start)
    if any(a > b for a, b in itertools.pairwise(offsets)):
        raise TermDictError("composite file directory offsets are not increasing")
    return [
        FieldBlob(field, idx, body[offsets[i] : offsets[i + 1]])
        for i, (field, idx) in enumerate(addrs)
    ]


def join_composite(blobs: Sequence[FieldBlob]) -> bytes:
    """A composite body holding ``blobs`` in order (tantivy's ``CompositeWrite``)."""
    out = bytearray()
    directory = bytearray()
    encode_vint(len(blobs), directory)
    previous = 0
    for blob in blobs:
        encode_vint(len(out) - previous, directory)
        previous = len(out)
        directory += _U32.pack(blob.field)
        encode_vint(blob.idx, directory)
        out += blob.data
    return bytes(out) + bytes(directory) + _U32.pack(len(directory))
