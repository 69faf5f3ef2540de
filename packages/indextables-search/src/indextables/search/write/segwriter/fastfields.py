"""A segment's ``.fast`` file (Tantivy's columnar fast fields) from Arrow columns, byte for byte.

The file is one columnar (``columnar/src/columnar``) then Tantivy's directory footer:

``[column]... [column directory sstable][u64 its length][u32 max_doc][u32 2][02 71 77 42]``

Columns are written in the order of (name bytes, column type code) (i64 0, u64 1,
f64 2, bytes 3, str 4, bool 5, ip 6, date 7) and the directory maps
``name 0x00 code`` to each column's byte range (:mod:`.columnar_sstable`). A column is
``[column index][values][u32 column index length]`` (:mod:`.columnar_index`,
:mod:`.columnar_codecs`); a str or bytes column is ``[dictionary][that column of
ordinals][u32 dictionary length]``, its dictionary the sorted distinct values; an ip
column's values are the u128 compact-space codec (:mod:`.columnar_u128`).

Values are mapped to u64 in order: u64 as is, i64 and dates with the sign bit flipped,
f64 by its bits (sign bit flipped when clear, all bits flipped when set: every NaN
pattern kept), bool 0/1. Dates are Arrow timestamps taken as nanoseconds then
truncated toward zero to the field's fast precision (Tantivy's default, and
tantivy-py's only one, is seconds). A null (or an empty or null list, or a null
element of a list) records no value; a row with one value or none makes the column
full (every row one value) or optional, a list with several values multivalued.
Every fast field of the schema has its column, even without any value.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.splits.termdict.composite import with_footer
from indextables.search.write.segwriter.columnar_codecs import U64Array, column_values
from indextables.search.write.segwriter.columnar_index import (
    FULL,
    multivalued_index,
    optional_index,
)
from indextables.search.write.segwriter.columnar_sstable import range_sstable, void_sstable
from indextables.search.write.segwriter.columnar_u128 import compact_space_values
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fieldnorm import FOOTER_JSON
from indextables.search.write.segwriter.ipvalues import ip_bytes

__all__ = [
    "COLUMN_TYPE_CODES",
    "MAX_FAST_BYTES",
    "DatePrecision",
    "FastField",
    "FastKind",
    "fast_file",
]

FastKind = Literal["u64", "i64", "f64", "bool", "date", "ip", "str", "bytes"]
DatePrecision = Literal["seconds", "milliseconds", "microseconds", "nanoseconds"]

#: Tantivy's ``ColumnType`` codes, the last byte of a column's directory key.
COLUMN_TYPE_CODES: Final[dict[str, int]] = {
    "i64": 0,
    "u64": 1,
    "f64": 2,
    "bytes": 3,
    "str": 4,
    "bool": 5,
    "ip": 6,
    "date": 7,
}
_PRECISION_NANOS: Final[dict[str, int]] = {
    "seconds": 1_000_000_000,
    "milliseconds": 1_000_000,
    "microseconds": 1_000,
    "nanoseconds": 1,
}
_SCHEMA_KINDS: Final[dict[str, str]] = {
    "u64": "u64",
    "i64": "i64",
    "f64": "f64",
    "bool": "bool",
    "date": "date",
    "ip": "ip",
    "bytes": "bytes",
    "text": "str",
}
_SIGN: Final = np.uint64(1 << 63)
#: The longest fast text or bytes value Tantivy keeps; a longer one is cut to this.
MAX_FAST_BYTES: Final = 65535
_COLUMNAR_FOOTER: Final = struct.pack("<I", 2) + bytes((2, 113, 119, 66))
_U32 = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class FastField:
    """One fast field: its name (the column's), its kind and, for dates, its fast precision."""

    name: str
    kind: FastKind
    precision: DatePrecision = "seconds"

    def __post_init__(self) -> None:
        if self.kind not in COLUMN_TYPE_CODES:
            raise SegmentWriteError(f"fast field {self.name!r}: unknown kind {self.kind!r}")
        if self.precision not in _PRECISION_NANOS:
            raise SegmentWriteError(
                f"fast field {self.name!r}: unknown date precision {self.precision!r}"
            )

    @classmethod
    def from_schema(cls, name: str, field_type: str, options: Mapping[str, Any]) -> FastField:
        """The fast field of a ``meta.json`` schema entry (``name``, ``type``, ``options``).

        A text field's fast column holds its raw values: a fast tokenizer other than
        ``raw`` is refused (:class:`SegmentWriteError`), as are JSON and facet fields.
        """
        kind = _SCHEMA_KINDS.get(field_type)
        if kind is None:
            raise SegmentWriteError(f"fast field {name!r}: {field_type!r} fields are not written")
        fast = options.get("fast")
        if kind == "str" and isinstance(fast, Mapping):
            tokenizer = fast.get("with_tokenizer")
            if tokenizer not in (None, "raw"):
                raise SegmentWriteError(
                    f"fast field {name!r}: the fast tokenizer {tokenizer!r} is not written "
                    "(only raw values)"
                )
        precision = str(options.get("precision", "seconds"))
        return cls(name, kind, precision)  # type: ignore[arg-type]


class SchemaField(Protocol):
    """A schema field as the segment assembler has it (``segment.SegmentField``)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def options(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class _Values:
    """A column's values in row order (flattened for lists) and each row's value count."""

    flat: pa.Array
    counts: npt.NDArray[np.uint32]


def _values(field: FastField, column: pa.Array | pa.ChunkedArray, max_doc: int) -> _Values:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if len(array) != max_doc:
        raise SegmentWriteError(
            f"fast field {field.name!r}: {len(array)} values for {max_doc} documents"
        )
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        flat = array.flatten()
        parents = np.asarray(pc.list_parent_indices(array), dtype=np.int64)
        valid = np.asarray(flat.is_valid(), dtype=bool)
        counts = np.bincount(parents[valid], minlength=max_doc).astype(np.uint32)
        return _Values(flat.filter(pa.array(valid)), counts)
    counts = np.asarray(array.is_valid(), dtype=bool).astype(np.uint32)
    return _Values(array.drop_null(), counts)


def _cast(field: FastField, values: pa.Array, target: pa.DataType) -> pa.Array:
    try:
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SegmentWriteError(
            f"fast field {field.name!r}: {values.type} values do not fit {field.kind}: {exc}"
        ) from exc


def _numbers(array: pa.Array, dtype: str) -> npt.NDArray[Any]:
    return np.asarray(array.fill_null(0) if array.null_count else array).astype(dtype, copy=False)


def _check_type(field: FastField, values: pa.Array, ok: bool) -> None:
    if not ok:
        raise SegmentWriteError(
            f"fast field {field.name!r}: an Arrow {values.type} column is not a {field.kind} column"
        )


def _u64_values(field: FastField, values: pa.Array) -> U64Array:
    kind, typ = field.kind, values.type
    if kind in ("u64", "i64"):
        _check_type(field, values, pa.types.is_integer(typ))
        if kind == "u64":
            return _numbers(_cast(field, values, pa.uint64()), "uint64")
        return _numbers(_cast(field, values, pa.int64()), "int64").view(np.uint64) ^ _SIGN
    if kind == "f64":
        _check_type(field, values, pa.types.is_floating(typ))
        bits = _numbers(_cast(field, values, pa.float64()), "float64").view(np.uint64)
        negative = (bits >> np.uint64(63)).astype(bool)
        return np.where(negative, ~bits, bits ^ _SIGN)
    if kind == "bool":
        _check_type(field, values, pa.types.is_boolean(typ))
        return _numbers(_cast(field, values, pa.uint8()), "uint64")
    if kind == "date":
        _check_type(field, values, pa.types.is_timestamp(typ))
        nanos = _numbers(_cast(field, values, pa.timestamp("ns")), "int64")
        step = _PRECISION_NANOS[field.precision]
        if step > 1:
            nanos = nanos - np.fmod(nanos, np.int64(step))
        return nanos.view(np.uint64) ^ _SIGN
    raise AssertionError(kind)  # pragma: no cover - every u64 kind is handled above


def _binary_values(field: FastField, values: pa.Array) -> pa.Array:
    typ = values.type
    if field.kind == "str":
        _check_type(field, values, pa.types.is_string(typ) or pa.types.is_large_string(typ))
    else:
        _check_type(
            field,
            values,
            pa.types.is_binary(typ)
            or pa.types.is_large_binary(typ)
            or pa.types.is_fixed_size_binary(typ),
        )
    binary = values.cast(pa.large_binary())
    if len(binary) and pc.max(pc.binary_length(binary)).as_py() > MAX_FAST_BYTES:
        # Tantivy's columnar dictionary keeps a value's first 65,535 bytes (its arena
        # hash map's keys have a u16 length): longer values are cut, equal prefixes merge.
        binary = pc.binary_slice(binary, 0, MAX_FAST_BYTES)
    return binary


def _index(counts: npt.NDArray[np.uint32], max_doc: int) -> bytes:
    if len(counts) and int(counts.max()) > 1:
        return multivalued_index(counts, max_doc)
    rows = np.flatnonzero(counts).astype(np.uint32)
    if len(rows) == max_doc:
        return bytes((FULL,))
    return optional_index(rows, max_doc)


def _u64_column(index: bytes, values: U64Array) -> bytes:
    return index + column_values(values) + _U32.pack(len(index))


def _dictionary_column(field: FastField, values: _Values, max_doc: int) -> bytes:
    binary = _binary_values(field, values.flat)
    keys = sorted(pc.unique(binary).to_pylist())
    ords = np.asarray(pc.index_in(binary, value_set=pa.array(keys, pa.large_binary())))
    dictionary = void_sstable(keys)
    column = _u64_column(_index(values.counts, max_doc), ords.astype(np.uint64))
    return dictionary + column + _U32.pack(len(dictionary))


def _ip_u128(field: FastField, values: pa.Array) -> list[int]:
    packed = ip_bytes(values, field.name)
    return [int.from_bytes(row.tobytes(), "big") for row in packed]


def _column(field: FastField, column: pa.Array | pa.ChunkedArray, max_doc: int) -> bytes:
    values = _values(field, column, max_doc)
    if field.kind in ("str", "bytes"):
        return _dictionary_column(field, values, max_doc)
    index = _index(values.counts, max_doc)
    if field.kind == "ip":
        body = compact_space_values(_ip_u128(field, values.flat))
        return index + body + _U32.pack(len(index))
    return _u64_column(index, _u64_values(field, values.flat))


def _fast_field(field: FastField | SchemaField) -> FastField:
    if isinstance(field, FastField):
        return field
    return FastField.from_schema(field.name, field.type, field.options)


def fast_file(
    fields: Sequence[FastField | SchemaField],
    columns: Mapping[str, pa.Array | pa.ChunkedArray],
    max_doc: int,
) -> bytes:
    """The ``.fast`` file of a segment of ``max_doc`` documents, byte for byte tantivy-py's.

    ``fields`` are the schema's fast fields (:class:`FastField`, or schema fields with
    ``name``/``type``/``options`` as ``meta.json`` gives them); ``columns`` holds one
    Arrow column (or list column) of ``max_doc`` rows per field name.

    Raises:
        SegmentWriteError: a missing column, one of another length or Arrow type, a
            value the kind cannot hold (a negative u64, a date past i64 nanoseconds, an
            invalid ip), two fields of one name, naming the field.
    """
    if not 0 <= max_doc < 1 << 32:
        raise SegmentWriteError(f"a segment holds 0 to 2^32 - 1 documents, not {max_doc}")
    fast = [_fast_field(f) for f in fields]
    names = [f.name for f in fast]
    if len(set(names)) != len(names):
        raise SegmentWriteError(f"fast fields named twice: {sorted(names)}")
    order = sorted(fast, key=lambda f: (f.name.encode(), COLUMN_TYPE_CODES[f.kind]))
    body = bytearray()
    keys: list[bytes] = []
    ranges: list[tuple[int, int]] = []
    for field in order:
        if "\x00" in field.name:
            continue  # Tantivy's columnar skips names holding its path separator
        if field.name not in columns:
            raise SegmentWriteError(f"fast field {field.name!r}: no column given")
        start = len(body)
        body += _column(field, columns[field.name], max_doc)
        keys.append(field.name.encode() + b"\x00" + bytes((COLUMN_TYPE_CODES[field.kind],)))
        ranges.append((start, len(body)))
    directory = range_sstable(keys, ranges)
    body += directory
    body += struct.pack("<QI", len(directory), max_doc)
    body += _COLUMNAR_FOOTER
    return with_footer(bytes(body), FOOTER_JSON)
