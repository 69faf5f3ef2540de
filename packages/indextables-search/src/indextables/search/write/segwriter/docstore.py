"""A segment's ``.store`` file (the doc store) from Arrow columns, byte for byte Tantivy's.

Layout (Tantivy ``src/store``, read back by :mod:`...read.docstore`):

* each document is ``VInt(n)`` then, per stored value present, ``[u32 LE field id]
  [u8 type code][value]`` in the order of the field names' UTF-8 bytes (tantivy-py's
  documents keep their values by field name): text and bytes as ``VInt``
  length and bytes, u64/i64 8 bytes LE, f64 as its order-preserving u64, date as i64
  nanoseconds, bool one byte; a null is no value;
* documents are appended to a block, and the block is closed once its bytes plus
  8 bytes per document exceed the block size (Tantivy counts a ``usize`` per offset);
  a closed block is ``[documents][u32 LE start of each][u32 LE count]``, then
  compressed: LZ4 (:mod:`.lz4block`) as ``[u32 LE uncompressed size][LZ4 block]``,
  or kept as it is (``none``);
* the skip index: one checkpoint per block (first document, document count, byte
  range) in layers of 8 (a full block of 8 checkpoints in a layer adds one
  checkpoint to the layer above; at the end each layer's pending checkpoints are
  flushed, carrying one up), each layer's blocks as ``VInt(count) VInt(first doc)
  VInt(first byte)`` then ``VInt(docs) VInt(bytes)`` per checkpoint, the top layer
  first, after ``VInt(layers)`` and each layer's cumulative end;
* a 28-byte footer: u32 version 2, u64 offset of the skip index, u8 compressor id
  (0 none, 1 lz4), 15 zero bytes; then Tantivy's directory footer.

tantivy-py 0.27 defaults to LZ4 and 16,384-byte blocks; this project's splits use
4,096 (``options.DEFAULT_DOCSTORE_BLOCK_SIZE``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import pyarrow as pa

from indextables.search.splits.termdict.composite import with_footer
from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fieldnorm import FOOTER_JSON
from indextables.search.write.segwriter.lz4block import lz4_block

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "StoredColumn",
    "StoredKind",
    "store_file",
]

StoredKind = Literal["text", "u64", "i64", "f64", "bool", "date", "bytes"]

#: tantivy-py's default doc-store block size (``IndexSettings::docstore_blocksize``).
DEFAULT_BLOCK_SIZE: Final = 16384
_COMPRESSORS: Final = {"none": 0, "lz4": 1}
_TYPE_CODE: Final[dict[str, int]] = {
    "text": 0,
    "u64": 1,
    "i64": 2,
    "bytes": 4,
    "date": 5,
    "f64": 6,
    "bool": 9,
}
_CHECKPOINT_PERIOD: Final = 8
_STORE_VERSION: Final = 2
_HIGHEST_BIT: Final = 1 << 63
_MASK64: Final = (1 << 64) - 1
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")


@dataclass(frozen=True, slots=True)
class StoredColumn:
    """One stored field: its field id in the schema, its kind, one value per row (null:
    none). Dates are Arrow timestamps (any unit, stored as nanoseconds)."""

    name: str
    field_id: int
    kind: StoredKind
    values: pa.Array | pa.ChunkedArray


def _encoded(column: StoredColumn) -> list[bytes | None]:
    # Each row's ``[field id][type code][value]``, or None for a null.
    if column.kind not in _TYPE_CODE:
        raise SegmentWriteError(f"{column.name}: no stored kind {column.kind!r}")
    if not 0 <= column.field_id < 1 << 32:
        raise SegmentWriteError(f"{column.name}: field id {column.field_id} is not a u32")
    head = _U32.pack(column.field_id) + bytes([_TYPE_CODE[column.kind]])
    values = column.values
    kind = column.kind
    if kind == "date":
        if not pa.types.is_timestamp(values.type):
            raise SegmentWriteError(
                f"{column.name}: a date column must be timestamps, not {values.type}"
            )
        try:
            values = values.cast(pa.timestamp("ns", tz=values.type.tz)).cast(pa.int64())
        except pa.ArrowInvalid as exc:
            raise SegmentWriteError(
                f"{column.name}: a date outside the i64 nanoseconds Tantivy stores ({exc})"
            ) from exc
    try:
        items = values.to_pylist()
    except (UnicodeDecodeError, pa.ArrowException) as exc:
        raise SegmentWriteError(f"{column.name}: values Arrow cannot read ({exc})") from exc
    out: list[bytes | None] = []
    for row, value in enumerate(items):
        if value is None:
            out.append(None)
            continue
        try:
            out.append(head + _value_bytes(kind, value))
        except (TypeError, ValueError, OverflowError, struct.error) as exc:
            raise SegmentWriteError(
                f"{column.name}: row {row}: not a {kind} value ({exc})"
            ) from exc
    return out


def _value_bytes(kind: str, value: object) -> bytes:
    if kind in ("text", "bytes"):
        if kind == "text":
            if not isinstance(value, str):
                raise TypeError(f"{value!r} is not a string")
            data = value.encode("utf-8")
        else:
            if not isinstance(value, bytes | bytearray):
                raise TypeError(f"{value!r} is not bytes")
            data = bytes(value)
        prefix = bytearray()
        encode_vint(len(data), prefix)
        return bytes(prefix) + data
    if kind == "u64":
        return _U64.pack(value)
    if kind in ("i64", "date"):
        return _I64.pack(value)
    if kind == "f64":
        bits = _U64.unpack(_F64.pack(value))[0]
        return _U64.pack(bits ^ _HIGHEST_BIT if not bits & _HIGHEST_BIT else ~bits & _MASK64)
    if type(value) is not bool:
        raise TypeError(f"{value!r} is not a bool")
    return b"\x01" if value else b"\x00"


def _documents(columns: Sequence[StoredColumn], num_docs: int) -> Iterator[bytes]:
    columns = sorted(columns, key=lambda c: c.name.encode("utf-8", "surrogatepass"))
    encoded = [_encoded(c) for c in columns]
    for column, values in zip(columns, encoded, strict=True):
        if len(values) != num_docs:
            raise SegmentWriteError(
                f"{column.name}: {len(values)} values for a segment of {num_docs} documents"
            )
    for row in range(num_docs):
        present = [values[row] for values in encoded if values[row] is not None]
        head = bytearray()
        encode_vint(len(present), head)
        yield bytes(head) + b"".join(present)  # type: ignore[arg-type]


@dataclass(slots=True)
class _Checkpoint:
    doc_start: int
    doc_end: int
    byte_start: int
    byte_end: int


def _checkpoint_block(block: list[_Checkpoint], out: bytearray) -> None:
    encode_vint(len(block), out)
    encode_vint(block[0].doc_start, out)
    encode_vint(block[0].byte_start, out)
    for c in block:
        encode_vint(c.doc_end - c.doc_start, out)
        encode_vint(c.byte_end - c.byte_start, out)


class _SkipIndex:
    """Tantivy's ``SkipIndexBuilder``: layers of checkpoint blocks of 8."""

    def __init__(self) -> None:
        self._buffers: list[bytearray] = []
        self._pending: list[list[_Checkpoint]] = []

    def _flush(self, layer: int) -> _Checkpoint | None:
        block = self._pending[layer]
        if not block:
            return None
        buffer = self._buffers[layer]
        start = len(buffer)
        _checkpoint_block(block, buffer)
        up = _Checkpoint(block[0].doc_start, block[-1].doc_end, start, len(buffer))
        block.clear()
        return up

    def insert(self, checkpoint: _Checkpoint) -> None:
        layer = 0
        pointer: _Checkpoint | None = checkpoint
        while pointer is not None:
            if layer == len(self._pending):
                self._pending.append([])
                self._buffers.append(bytearray())
            self._pending[layer].append(pointer)
            full = len(self._pending[layer]) >= _CHECKPOINT_PERIOD
            pointer = self._flush(layer) if full else None
            layer += 1

    def serialize(self) -> bytes:
        last: _Checkpoint | None = None
        for layer in range(len(self._pending)):
            if last is not None:
                self._pending[layer].append(last)
            last = self._flush(layer)
        buffers = self._buffers[::-1]
        out = bytearray()
        encode_vint(len(buffers), out)
        end = 0
        for buffer in buffers:
            end += len(buffer)
            encode_vint(end, out)
        for buffer in buffers:
            out += buffer
        return bytes(out)


def store_file(
    columns: Sequence[StoredColumn],
    num_docs: int,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    compressor: Literal["lz4", "none"] = "lz4",
) -> bytes:
    """The ``.store`` file (directory footer included) of ``num_docs`` documents holding
    the stored ``columns`` (each document's values ordered by field name, as tantivy-py
    orders them)."""
    if compressor not in _COMPRESSORS:
        raise SegmentWriteError(f"compressor: {compressor!r} is not one of lz4, none")
    if block_size < 0:
        raise SegmentWriteError(f"block_size: {block_size} is negative")
    if num_docs < 0 or num_docs >= 1 << 31:
        raise SegmentWriteError(f"num_docs: {num_docs} outside a segment's document range")
    out = bytearray()
    skip = _SkipIndex()
    block = bytearray()
    starts: list[int] = []
    first_doc = 0

    def close_block() -> None:
        nonlocal first_doc
        if not block:
            return
        for start in starts:
            block.extend(_U32.pack(start))
        block.extend(_U32.pack(len(starts)))
        data = bytes(block)
        if compressor == "lz4":
            data = _U32.pack(len(data)) + lz4_block(data)
        begin = len(out)
        out.extend(data)
        skip.insert(_Checkpoint(first_doc, first_doc + len(starts), begin, len(out)))
        first_doc += len(starts)
        block.clear()
        starts.clear()

    for document in _documents(columns, num_docs):
        starts.append(len(block))
        block.extend(document)
        if len(block) >= 1 << 32:
            raise SegmentWriteError("a document of 4 GiB or more does not fit a store block")
        if len(block) + 8 * len(starts) > block_size:
            close_block()
    close_block()
    offset = len(out)
    out += skip.serialize()
    out += struct.pack("<IQB", _STORE_VERSION, offset, _COMPRESSORS[compressor]) + bytes(15)
    return with_footer(bytes(out), FOOTER_JSON)
