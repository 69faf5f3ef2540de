"""A segment's ``.store`` file (the doc store) from Arrow columns, byte for byte Tantivy's.

Layout (Tantivy ``src/store``, read back by :mod:`...read.docstore`):

* each document is ``VInt(n)`` then, per stored value present, ``[u32 LE field id]
  [u8 type code][value]`` in the order of the field names' UTF-8 bytes (tantivy-py's
  documents keep their values by field name): text and bytes as ``VInt``
  length and bytes, u64/i64 8 bytes LE, f64 as its order-preserving u64, date as i64
  nanoseconds, bool one byte, ip (code 10) its IPv6 address's u128 in 16 bytes LE
  (IPv4 as ``::ffff:a.b.c.d``, :mod:`.ipvalues`); a null is no value; a list column's
  values follow one another as repeated values of the field (a null or empty list, or
  a null element, adds none), as Tantivy stores a multi-valued field; a JSON field's
  value (code 13) is its object's binary value as :mod:`.jsonfields` encodes it;
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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.splits.termdict.composite import with_footer
from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fieldnorm import FOOTER_JSON
from indextables.search.write.segwriter.impl import kernels
from indextables.search.write.segwriter.ipvalues import ip_bytes

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "StoredColumn",
    "StoredKind",
    "store_file",
]

StoredKind = Literal["text", "u64", "i64", "f64", "bool", "date", "bytes", "ip", "json"]

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
    "ip": 10,
    "json": 13,
}
# The kernel's width of a column whose values carry their own framing (a JSON object).
_RAW_WIDTH: Final = 255
_CHECKPOINT_PERIOD: Final = 8
_STORE_VERSION: Final = 2
_HIGHEST_BIT: Final = 1 << 63
_I64_MAX: Final = (1 << 63) - 1
_U32 = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class StoredColumn:
    """One stored field: its field id in the schema, its kind, one value per row (null:
    none). Dates are Arrow timestamps (any unit, stored as nanoseconds)."""

    name: str
    field_id: int
    kind: StoredKind
    values: pa.Array | pa.ChunkedArray


def _first_row(values: pa.Array, mask: object = None) -> int:
    # The first non-null row (or the first row ``mask`` marks): the row an error names.
    flags = values.is_valid() if mask is None else mask
    found = np.flatnonzero(np.asarray(flags, dtype=bool))
    return int(found[0]) if found.size else 0


def _bad_row(column: StoredColumn, values: pa.Array, reason: str, mask: object = None) -> None:
    row = _first_row(values, mask)
    raise SegmentWriteError(f"{column.name}: row {row}: not a {column.kind} value ({reason})")


def _combined(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    return values


def _fixed(column: StoredColumn, values: pa.Array) -> bytes:
    # One 8-byte (or, for bools, 1-byte) little-endian value per row, nulls as zeros.
    kind, t = column.kind, values.type
    if pa.types.is_dictionary(t):
        values, t = values.dictionary_decode(), t.value_type
    if kind == "bool":
        if not pa.types.is_boolean(t):
            if values.null_count < len(values):
                _bad_row(column, values, f"{t} is not a bool")
            return bytes(len(values))
        return np.asarray(pc.fill_null(values, False), dtype=np.uint8).tobytes()
    if kind == "f64":
        if not (pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t)):
            if values.null_count < len(values):
                _bad_row(column, values, f"{t} is not a number")
            return bytes(8 * len(values))
        floats = np.asarray(pc.fill_null(values, 0), dtype=np.float64)
        bits = floats.view(np.uint64)
        negative = (bits & np.uint64(_HIGHEST_BIT)) != 0
        ordered = np.where(negative, ~bits, bits ^ np.uint64(_HIGHEST_BIT))
        return ordered.astype("<u8").tobytes()
    if not (pa.types.is_integer(t) or pa.types.is_boolean(t)):
        if values.null_count < len(values):
            _bad_row(column, values, f"{t} is not an integer")
        return bytes(8 * len(values))
    if pa.types.is_boolean(t):
        values, t = values.cast(pa.uint8()), pa.uint8()
    if kind == "u64" and pa.types.is_signed_integer(t):
        negative = pc.fill_null(pc.less(values, 0), False)
        if pc.any(negative).as_py():
            _bad_row(column, values, "a negative value", negative)
    if kind != "u64" and t == pa.uint64():
        big = pc.fill_null(pc.greater(values, _I64_MAX), False)
        if pc.any(big).as_py():
            _bad_row(column, values, "past the i64 range", big)
    dtype = "<u8" if kind == "u64" else "<i8"
    return np.asarray(pc.fill_null(values, 0)).astype(dtype).tobytes()


def _variable(column: StoredColumn, values: pa.Array) -> tuple[bytes | memoryview, bytes]:
    # The value bytes and the int64 offsets of each row (nulls: empty).
    t = values.type
    text = column.kind == "text"
    if pa.types.is_dictionary(t):
        values, t = values.dictionary_decode(), t.value_type
    if text:
        ok = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)
        target = pa.large_string()
    else:
        ok = (
            pa.types.is_binary(t)
            or pa.types.is_large_binary(t)
            or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t)
        )
        target = pa.large_binary()
    if not ok:
        if values.null_count < len(values):
            _bad_row(column, values, f"{t} is not {'a string' if text else 'bytes'}")
        return b"", bytes(8 * (len(values) + 1))
    try:
        if text:
            values.validate(full=True)
        values = values.cast(target)
    except (pa.ArrowException, ValueError) as exc:
        raise SegmentWriteError(f"{column.name}: values Arrow cannot read ({exc})") from exc
    n = len(values)
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype="<i8", count=n + 1, offset=8 * values.offset)
    data = memoryview(buffers[2]).cast("B") if buffers[2] is not None else b""
    return data, offsets.tobytes()


def _prepared(column: StoredColumn, num_docs: int) -> tuple[bytes, int, object, bytes, bytes]:
    # A column as the kernel takes it: head, width, values, offsets, validity.
    if column.kind not in _TYPE_CODE:
        raise SegmentWriteError(f"{column.name}: no stored kind {column.kind!r}")
    if not 0 <= column.field_id < 1 << 32:
        raise SegmentWriteError(f"{column.name}: field id {column.field_id} is not a u32")
    head = _U32.pack(column.field_id) + bytes([_TYPE_CODE[column.kind]])
    values = column.values
    if len(values) != num_docs:
        raise SegmentWriteError(
            f"{column.name}: {len(values)} values for a segment of {num_docs} documents"
        )
    if column.kind == "date":
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
    array = _combined(values)
    valid = np.asarray(array.is_valid(), dtype=np.uint8).tobytes()
    if column.kind in ("text", "bytes"):
        data, offsets = _variable(column, array)
        return head, 0, data, offsets, valid
    if column.kind == "json":  # each row's object after its code (:mod:`.jsonfields`)
        data, offsets = _variable(column, array)
        return head, _RAW_WIDTH, data, offsets, valid
    if column.kind == "ip":
        return head, 16, _ip_values(column, array), b"", valid
    width = 1 if column.kind == "bool" else 8
    return head, width, _fixed(column, array), b"", valid


def _ip_values(column: StoredColumn, values: pa.Array) -> bytes:
    # 16 bytes per row: the address's u128 little-endian (its IPv6 bytes reversed), nulls zeros.
    if values.null_count == len(values):
        return bytes(16 * len(values))
    packed = ip_bytes(values, column.name)
    out = np.zeros((len(values), 16), dtype=np.uint8)
    out[np.asarray(values.is_valid(), dtype=bool)] = packed[:, ::-1]
    return out.tobytes()


def _is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def _list_elements(values: pa.Array) -> list[pa.Array]:
    """A list column as one column per list position: element ``k`` of each row's list
    (null where the list is null, shorter, or holds a null there)."""
    if pa.types.is_fixed_size_list(values.type):
        values = values.cast(pa.list_(values.type.value_field))
    lengths = np.asarray(pc.fill_null(pc.list_value_length(values), 0), dtype=np.int64)
    if not len(lengths) or not lengths.max():
        return []
    starts = np.asarray(values.offsets, dtype=np.int64)[:-1]
    flat = values.values
    out = []
    for k in range(int(lengths.max())):
        missing = lengths <= k
        indices = pa.array(np.where(missing, 0, starts + k), mask=missing)
        out.append(flat.take(indices))
    return out


def _prepared_values(
    column: StoredColumn, num_docs: int
) -> list[tuple[bytes, int, object, bytes, bytes]]:
    # A plain column is one kernel column; a list column one per list position, in order.
    if not _is_list(column.values.type):
        return [_prepared(column, num_docs)]
    if len(column.values) != num_docs:
        raise SegmentWriteError(
            f"{column.name}: {len(column.values)} values for a segment of {num_docs} documents"
        )
    elements = _list_elements(_combined(column.values))
    return [
        _prepared(StoredColumn(column.name, column.field_id, column.kind, e), num_docs)
        for e in elements
    ]


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
    columns = sorted(columns, key=lambda c: c.name.encode("utf-8", "surrogatepass"))
    prepared = [p for c in columns for p in _prepared_values(c, num_docs)]
    data = b"".join(p[0] for p in prepared)
    kinds = bytes(p[1] for p in prepared)
    parts = ([p[2] for p in prepared], [p[3] for p in prepared], [p[4] for p in prepared])
    del prepared  # the values are in ``data`` now: hold them once
    blocks, ends = kernels().store_blocks(
        data, kinds, *parts, num_docs, block_size, compressor == "lz4"
    )
    del data, parts
    skip = _SkipIndex()
    first_doc = begin = 0
    pairs = np.frombuffer(ends, dtype="<i8").reshape(-1, 2)
    for count, end in pairs.tolist():
        skip.insert(_Checkpoint(first_doc, first_doc + count, begin, end))
        first_doc += count
        begin = end
    tail = struct.pack("<IQB", _STORE_VERSION, len(blocks), _COMPRESSORS[compressor]) + bytes(15)
    # One copy of the compressed blocks for the body, one for the footer.
    body = b"".join((blocks, skip.serialize(), tail))
    del blocks
    return with_footer(body, FOOTER_JSON)
