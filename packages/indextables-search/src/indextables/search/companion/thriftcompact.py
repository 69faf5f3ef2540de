"""A lossless reader and writer of Thrift's compact protocol, as Parquet's footer uses it.

Structs decode to :class:`TStruct` (field id -> ``(type, value)``), lists to
:class:`TList`, so a footer can be read, a few fields changed or dropped, and
written back with every other field as it was (unknown fields included).
Only what Parquet needs is typed; the encoding follows the Thrift compact
protocol specification (zigzag varints, field-id deltas, packed list headers).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from indextables.search.errors import CompanionError
from indextables.search.splits.vint import decode_leb128, encode_leb128

__all__ = ["I32", "I64", "LIST", "STRUCT", "TList", "TStruct", "decode_struct", "encode_struct"]

BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)
_DEPTH_LIMIT = 64


@dataclass(slots=True)
class TList:
    """A Thrift list or set: its element type and elements."""

    element_type: int
    items: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class TStruct:
    """A Thrift struct: field id -> ``(compact type, value)``; booleans are typed ``BOOL_TRUE``."""

    fields: dict[int, tuple[int, Any]] = field(default_factory=dict)

    def get(self, fid: int, default: Any = None) -> Any:
        """The value of field ``fid`` (``default`` when absent)."""
        found = self.fields.get(fid)
        return default if found is None else found[1]

    def set(self, fid: int, kind: int, value: Any) -> None:
        """Set field ``fid`` to ``value`` of compact type ``kind``."""
        self.fields[fid] = (kind, value)

    def drop(self, *fids: int) -> None:
        """Remove the fields ``fids`` (absent ones are ignored)."""
        for fid in fids:
            self.fields.pop(fid, None)

    def copy(self) -> TStruct:
        """A shallow copy (values are shared)."""
        return TStruct(dict(self.fields))


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data).cast("B")
        self.pos = 0

    def byte(self) -> int:
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        value, self.pos = decode_leb128(
            self.data, self.pos, error=CompanionError, context="a Parquet footer"
        )
        return value

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise CompanionError("a Parquet footer is truncated")
        value = bytes(self.data[self.pos : self.pos + size])
        self.pos += size
        return value

    def value(self, kind: int, depth: int) -> Any:
        if kind in (BOOL_TRUE, BOOL_FALSE):  # inside a list: one byte
            return self.byte() == BOOL_TRUE
        if kind == BYTE:
            return struct.unpack("b", self.take(1))[0]
        if kind in (I16, I32, I64):
            return self.zigzag()
        if kind == DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if kind == BINARY:
            return self.take(self.varint())
        if kind in (LIST, SET):
            header = self.byte()
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            return TList(element, [self.value(element, depth + 1) for _ in range(size)])
        if kind == MAP:
            size = self.varint()
            types = self.byte() if size else 0
            return [
                (self.value(types >> 4, depth + 1), self.value(types & 0x0F, depth + 1))
                for _ in range(size)
            ]
        if kind == STRUCT:
            return self.struct(depth + 1)
        raise CompanionError(f"a Parquet footer holds an unknown Thrift type {kind}")

    def struct(self, depth: int = 0) -> TStruct:
        if depth > _DEPTH_LIMIT:
            raise CompanionError("a Parquet footer nests too deeply")
        fields: dict[int, tuple[int, Any]] = {}
        last = 0
        while True:
            header = self.byte()
            if header == 0:
                return TStruct(fields)
            kind, delta = header & 0x0F, header >> 4
            fid = last + delta if delta else self.zigzag()
            if kind in (BOOL_TRUE, BOOL_FALSE):
                fields[fid] = (BOOL_TRUE, kind == BOOL_TRUE)
            else:
                fields[fid] = (kind, self.value(kind, depth))
            last = fid


def decode_struct(data: bytes | memoryview) -> tuple[TStruct, int]:
    """The struct at the start of ``data`` and the number of bytes it took.

    Raises:
        CompanionError: the bytes are not a compact-protocol struct.
    """
    reader = _Reader(data)
    try:
        return reader.struct(), reader.pos
    except (IndexError, struct.error):
        raise CompanionError("a Parquet footer is truncated") from None


def _zigzag(out: bytearray, value: int) -> None:
    encode_leb128((value << 1) ^ (value >> 63) if value < 0 else value << 1, out)


def _value(out: bytearray, kind: int, value: Any) -> None:
    if kind in (BOOL_TRUE, BOOL_FALSE):
        out.append(BOOL_TRUE if value else BOOL_FALSE)
    elif kind == BYTE:
        out += struct.pack("b", value)
    elif kind in (I16, I32, I64):
        _zigzag(out, value)
    elif kind == DOUBLE:
        out += struct.pack("<d", value)
    elif kind == BINARY:
        encode_leb128(len(value), out)
        out += value
    elif kind in (LIST, SET):
        size = len(value.items)
        if size < 15:
            out.append(size << 4 | value.element_type)
        else:
            out.append(0xF0 | value.element_type)
            encode_leb128(size, out)
        for item in value.items:
            _value(out, value.element_type, item)
    elif kind == MAP:
        encode_leb128(len(value), out)
        if value:
            raise CompanionError("writing Thrift maps is not supported")
    elif kind == STRUCT:
        _struct(out, value)
    else:
        raise CompanionError(f"cannot write Thrift type {kind}")


def _struct(out: bytearray, value: TStruct) -> None:
    last = 0
    for fid in sorted(value.fields):
        kind, item = value.fields[fid]
        wire = (BOOL_TRUE if item else BOOL_FALSE) if kind in (BOOL_TRUE, BOOL_FALSE) else kind
        if 0 < fid - last <= 15:
            out.append((fid - last) << 4 | wire)
        else:
            out.append(wire)
            _zigzag(out, fid)
        if kind not in (BOOL_TRUE, BOOL_FALSE):
            _value(out, kind, item)
        last = fid
    out.append(0)


def encode_struct(value: TStruct) -> bytes:
    """``value`` in the compact protocol."""
    out = bytearray()
    _struct(out, value)
    return bytes(out)
