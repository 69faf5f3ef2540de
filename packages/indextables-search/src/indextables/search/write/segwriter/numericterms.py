"""The indexed terms of a segment's non-text fields, as Tantivy encodes them.

Tantivy indexes one term per value of a ``u64``, ``i64``, ``f64``, ``bool``, ``date``,
``ip`` or ``bytes`` field (``segment_writer.rs``): the term dictionary's key is the
value's bytes alone (no field id, no type byte):

* ``u64``: the value, 8 bytes big-endian; ``i64``: the value with its sign bit flipped
  (order-preserving), 8 bytes big-endian; ``bool``: 0 or 1 as a ``u64``;
* ``f64``: the order-preserving ``u64`` of its bits (sign bit flipped for a positive
  value, every bit flipped for a negative one: ``-0.0`` and ``0.0`` are two terms);
* ``date``: i64 nanoseconds truncated *toward zero* to whole seconds (Tantivy's
  ``DATE_TIME_PRECISION_INDEXED``, whatever the field's precision), then as ``i64``;
* ``ip``: the IPv6 address (an IPv4 one as ``::ffff:a.b.c.d``), 16 bytes big-endian;
* ``bytes``: the bytes themselves, cut to their first 65,531 bytes (:data:`MAX_BYTES_TERM`).

Every value counts as one token at position 0 (the field's total-token header counts
them, duplicates in a document included); the postings record documents only
(``IndexRecordOption::Basic``), and with fieldnorms a document's count is its number of
values. A list column gives several values per document; a null (or a null inside a
list) gives no term.
"""

from __future__ import annotations

from typing import Final, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.ipvalues import ip_bytes
from indextables.search.write.segwriter.tokenize import Tokens

__all__ = ["ValueKind", "value_terms"]

ValueKind = Literal["u64", "i64", "f64", "bool", "date", "ip", "bytes"]
_KINDS: Final = ("u64", "i64", "f64", "bool", "date", "ip", "bytes")
#: The longest bytes term Tantivy indexes: its indexing hash map keeps 65,535 bytes of a
#: key (the 4-byte field id, then the value), so a longer value is cut to this.
MAX_BYTES_TERM: Final = 65531
_SIGN: Final = np.uint64(1 << 63)
_SECOND_NS: Final = 1_000_000_000


def _flat(column: pa.Array, name: str) -> tuple[pa.Array, np.ndarray]:
    """The values of ``column`` and each one's row (list columns flattened)."""
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        values = column.flatten()
        rows = pc.list_parent_indices(column).to_numpy(zero_copy_only=False)
        return values, rows.astype(np.int64)
    if pa.types.is_nested(column.type):
        raise SegmentWriteError(f"column {name!r}: {column.type} values have no indexed terms")
    return column, np.arange(len(column), dtype=np.int64)


def _big_endian(words: np.ndarray) -> pa.LargeBinaryArray:
    """u64 values as 8-byte big-endian terms."""
    data = words.astype(">u8").tobytes()
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(8), len(words), [None, pa.py_buffer(data)]
    )
    return fixed.cast(pa.large_binary())


def _words(values: pa.Array, kind: str, name: str) -> np.ndarray:
    """The order-preserving u64 of each (valid) value of a numeric kind."""
    t = values.type
    if kind == "bool":
        if not pa.types.is_boolean(t):
            raise SegmentWriteError(f"column {name!r}: a bool field takes booleans, not {t}")
        flags: np.ndarray = values.cast(pa.uint64()).to_numpy(zero_copy_only=False)
        return flags
    if kind == "f64":
        if not pa.types.is_floating(t):
            raise SegmentWriteError(f"column {name!r}: an f64 field takes floats, not {t}")
        bits = values.cast(pa.float64()).to_numpy(zero_copy_only=False).view(np.uint64)
        negative = (bits & _SIGN) != 0
        ordered: np.ndarray = np.where(negative, ~bits, bits ^ _SIGN)
        return ordered
    if kind == "date":
        return _date_words(values, name)
    if not pa.types.is_integer(t):
        raise SegmentWriteError(f"column {name!r}: an {kind} field takes integers, not {t}")
    target = pa.uint64() if kind == "u64" else pa.int64()
    try:
        ints = values.cast(target).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid as exc:
        raise SegmentWriteError(f"column {name!r}: a value outside {kind} ({exc})") from exc
    words: np.ndarray = ints.astype(np.uint64) if kind == "u64" else ints.view(np.uint64) ^ _SIGN
    return words


def _date_words(values: pa.Array, name: str) -> np.ndarray:
    t = values.type
    if not pa.types.is_timestamp(t):
        raise SegmentWriteError(f"column {name!r}: a date field takes timestamps, not {t}")
    try:
        nanos = values.cast(pa.timestamp("ns", tz=t.tz)).cast(pa.int64())
    except pa.ArrowInvalid as exc:
        raise SegmentWriteError(
            f"column {name!r}: a date outside the i64 nanoseconds Tantivy indexes ({exc})"
        ) from exc
    ns = nanos.to_numpy(zero_copy_only=False).astype(np.int64)
    truncated = ns - np.fmod(ns, _SECOND_NS)  # toward zero, as Rust's integer division
    words: np.ndarray = truncated.view(np.uint64) ^ _SIGN
    return words


def _ip_terms(values: pa.Array, name: str) -> pa.LargeBinaryArray:
    packed = ip_bytes(values, name)
    fixed = pa.Array.from_buffers(pa.binary(16), len(packed), [None, pa.py_buffer(packed)])
    return fixed.cast(pa.large_binary())


def value_terms(column: pa.Array | pa.ChunkedArray, kind: ValueKind, *, name: str) -> Tokens:
    """One term per non-null value of ``column`` (see the module docstring), at position 0,
    in row order then value order.

    Args:
        column: the field's values (a list column: several per document).
        kind: the field's Tantivy type.
        name: the column's name, for errors.

    Raises:
        SegmentWriteError: a kind not listed, a column of another type, a value the kind
            cannot hold (an integer past ``i64``, a date past i64 nanoseconds, an address
            that does not parse).
    """
    if kind not in _KINDS:
        raise SegmentWriteError(f"column {name!r}: no indexed value kind {kind!r}")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    values, rows = _flat(column, name)
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    values = values.filter(pa.array(valid))
    rows = rows[valid]
    if kind == "bytes":
        if not (pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
            raise SegmentWriteError(
                f"column {name!r}: a bytes field takes binary, not {values.type}"
            )
        terms = values.cast(pa.large_binary())
        if len(terms) and pc.max(pc.binary_length(terms)).as_py() > MAX_BYTES_TERM:
            terms = pc.binary_slice(terms, 0, MAX_BYTES_TERM)
    elif kind == "ip":
        terms = _ip_terms(values, name)
    else:
        terms = _big_endian(_words(values, kind, name))
    return Tokens(
        terms=terms,
        positions=pa.array(np.zeros(len(rows), dtype=np.uint32)),
        rows=pa.array(rows, pa.int64()),
    )
