"""A JSON field's terms, stored objects and fast columns, as Tantivy writes them.

A list column indexed as a JSON field holds, per non-null row, the object
``{"_values": [...]}`` (:func:`...read.jsoncodec.to_json_field`). What is written
(Tantivy 0.22+'s JSON field format, as tantivy-py 0.27 builds it):

* terms: ``<path> 0x00 <type code> <value>``, the path's segments joined by 0x01
  (here the one segment ``_values``), type codes ``i`` (i64), ``u`` (u64), ``f``
  (f64), ``o`` (bool), each value's 8 big-endian bytes of its order-preserving u64
  (i64 with the sign bit flipped, f64 by its bits, bool 0/1). A float is normalized
  first, as Tantivy does: an integral value within i64's range (2^63 saturating to
  i64's maximum) is an i64 term, else one within u64's (2^64 saturating) a u64 term,
  else an f64 term (the stored value and fast column keep the f64); every non-null
  element of the array is
  a term of its document. Numbers and bools record documents only (no frequencies,
  no positions) even in a field with positions, where each such term's ``.pos`` bytes
  are an empty block (``0x80``); the field's token count is the count of values indexed;
* the doc store: the object's binary value: code 13 (object), ``VInt(2 * keys)``, each
  key as a text value (code 0, ``VInt`` length, UTF-8) then its value: an array (code
  12, ``VInt(count)``, each element), an i64 (code 2, 8 bytes LE), an f64 (code 6, its
  order-preserving u64 LE), a bool (code 9, one byte), a null (code 11);
* fast fields (``json.mode`` ``full``): one dynamic column per path and type named
  ``<field> 0x01 <path>``, here ``<field>\\x01_values`` of type i64, f64 or bool,
  multivalued as the list is (a null element records no value).

Other columns (strings, structs, maps, non-finite floats, u64 values past i64) are
refused with :class:`SegmentWriteError` naming the column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.read.jsoncodec import ARRAY_KEY
from indextables.search.splits.termdict.model import FieldTerms
from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter import impl
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.invert import invert
from indextables.search.write.segwriter.invertedfiles import field_terms
from indextables.search.write.segwriter.postings import FieldPostings, field_header, field_postings
from indextables.search.write.segwriter.tokenize import Tokens

__all__ = ["JSON_PATH_SEPARATOR", "JsonColumn", "json_blobs", "json_column", "json_items"]

#: Between a JSON fast column's field name and path, and between path segments.
JSON_PATH_SEPARATOR: Final = "\x01"
_END_OF_PATH: Final = b"\x00"
# Per element kind: the term's type code, the stored value code, the fast column kind.
_TERM_CODE: Final = {"i64": b"i", "f64": b"f", "bool": b"o"}
_STORE_CODE: Final = {"i64": 2, "f64": 6, "bool": 9}
_OBJECT, _ARRAY, _TEXT, _NULL = 13, 12, 0, 11
_HIGHEST_BIT: Final = np.uint64(1 << 63)


@dataclass(frozen=True, slots=True)
class JsonColumn:
    """One JSON field's parts in a segment.

    Attributes:
        tokens: its terms (documents only), in row then value order.
        stored: per row the object's binary value without its type code (null: none).
        fast_name: the name of its fast column (``<field>\\x01_values``).
        fast_kind: that column's type (``i64``, ``f64``, ``bool``).
        fast_values: that column's values, a list column (one list per row).
    """

    tokens: Tokens
    stored: pa.LargeBinaryArray
    fast_name: str
    fast_kind: str
    fast_values: pa.Array


def json_items(item: pa.DataType) -> bool:
    """Whether the writer writes a JSON field of lists of ``item`` (integers, floats, bools)."""
    return bool(
        pa.types.is_boolean(item) or pa.types.is_floating(item) or pa.types.is_integer(item)
    )


def _element_kind(column: pa.Array, name: str) -> tuple[pa.Array, str]:
    t = column.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        raise SegmentWriteError(
            f"column {name!r}: JSON fields of {t} values are not written (lists of "
            "integers, floats or bools only)"
        )
    item = t.value_type
    if pa.types.is_boolean(item):
        return column.cast(pa.list_(pa.bool_())), "bool"
    if pa.types.is_floating(item):
        cast = column.cast(pa.list_(pa.float64()))
        flat = cast.flatten()
        finite = pc.is_finite(flat.filter(flat.is_valid()))
        if len(finite) and not pc.all(finite).as_py():
            raise SegmentWriteError(
                f"column {name!r}: non-finite floats in a JSON field are not written"
            )
        return cast, "f64"
    if pa.types.is_integer(item):
        try:
            return column.cast(pa.list_(pa.int64())), "i64"
        except pa.ArrowInvalid:
            raise SegmentWriteError(
                f"column {name!r}: integers past i64 in a JSON field are not written"
            ) from None
    raise SegmentWriteError(
        f"column {name!r}: JSON fields of lists of {item} are not written (lists of "
        "integers, floats or bools only)"
    )


def _element_bytes(flat: pa.Array, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Each element's stored bytes back to back, and where each element's bytes end."""
    n = len(flat)
    valid = np.asarray(flat.is_valid(), dtype=bool)
    width = 2 if kind == "bool" else 9
    cells = np.zeros((n, width), dtype=np.uint8)
    cells[:, 0] = np.where(valid, _STORE_CODE[kind], _NULL)
    if kind == "bool":
        cells[:, 1] = np.asarray(pc.fill_null(flat, False), dtype=np.uint8)
    elif kind == "i64":
        words = np.asarray(pc.fill_null(flat, 0), dtype=np.int64).astype("<i8")
        cells[:, 1:] = words.view(np.uint8).reshape(n, 8)
    else:
        bits = np.asarray(pc.fill_null(flat, 0.0), dtype=np.float64).view(np.uint64)
        negative = (bits & _HIGHEST_BIT) != 0
        ordered = np.where(negative, ~bits, bits ^ _HIGHEST_BIT).astype("<u8")
        cells[:, 1:] = ordered.view(np.uint8).reshape(n, 8)
    lengths = np.where(valid, width, 1)
    keep = np.arange(width)[None, :] < lengths[:, None]
    return cells[keep], np.cumsum(lengths)


def _gather(source: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ranges ``source[start : start + length]`` back to back."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, np.uint8)
    ends = np.cumsum(lengths)
    shift = np.repeat(starts - (ends - lengths), lengths)
    out: np.ndarray = source[np.arange(total, dtype=np.int64) + shift]
    return out


def _stored(column: pa.Array, kind: str) -> pa.LargeBinaryArray:
    """Each row's ``{"_values": [...]}`` binary value (after its code 13)."""
    key = ARRAY_KEY.encode("utf-8")
    head = bytearray()
    encode_vint(2, head)
    head.append(_TEXT)
    encode_vint(len(key), head)
    head += key
    head.append(_ARRAY)
    data, ends = _element_bytes(column.flatten(), kind)
    bounds = np.concatenate([[0], ends]).astype(np.int64)
    offsets = np.asarray(column.offsets, dtype=np.int64)
    offsets = offsets - offsets[0]
    valid = np.asarray(column.is_valid(), dtype=bool)
    counts = np.diff(offsets)
    # Each distinct element count's head (the object's key, then VInt(count)), once.
    distinct, which = np.unique(counts, return_inverse=True)
    heads = []
    for count in distinct.tolist():
        buffer = bytearray(head)
        encode_vint(count, buffer)
        heads.append(bytes(buffer))
    head_lengths = np.array([len(h) for h in heads], np.int64)
    head_starts = np.concatenate([[0], np.cumsum(head_lengths)[:-1]]).astype(np.int64)
    source = np.frombuffer(b"".join(heads) + data.tobytes(), np.uint8)
    base = int(head_lengths.sum())
    # Per valid row: its head, then its elements' bytes.
    rows = np.flatnonzero(valid)
    starts = np.empty(2 * len(rows), np.int64)
    lengths = np.empty(2 * len(rows), np.int64)
    starts[0::2] = head_starts[which[rows]]
    lengths[0::2] = head_lengths[which[rows]]
    starts[1::2] = base + bounds[offsets[rows]]
    lengths[1::2] = bounds[offsets[rows + 1]] - bounds[offsets[rows]]
    body = _gather(source, starts, lengths)
    row_lengths = np.zeros(len(column), np.int64)
    row_lengths[rows] = lengths[0::2] + lengths[1::2]
    value_offsets = np.concatenate([[0], np.cumsum(row_lengths)]).astype(np.int64)
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(),
        len(column),
        [validity, pa.py_buffer(value_offsets.tobytes()), pa.py_buffer(body.tobytes())],
    )


def _term_words(flat: pa.Array, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Each element's term type code and its order-preserving u64 (see the module)."""
    n = len(flat)
    if kind == "bool":
        words = np.asarray(flat, dtype=np.uint64)
        return np.full(n, ord("o"), np.uint8), words
    if kind == "i64":
        words = np.asarray(flat, dtype=np.int64).view(np.uint64) ^ _HIGHEST_BIT
        return np.full(n, ord("i"), np.uint8), words
    values = np.asarray(flat, dtype=np.float64)
    # Tantivy's normalization: an integral f64 in i64's range (2^63 included,
    # saturating) is an i64 term, else one in u64's range (2^64 saturating) a u64 term.
    whole = np.floor(values) == values
    as_i64 = whole & (values >= -(2.0**63)) & (values <= 2.0**63)
    as_u64 = whole & ~as_i64 & (values >= 0) & (values <= 2.0**64)
    top_i64, top_u64 = as_i64 & (values >= 2.0**63), as_u64 & (values >= 2.0**64)
    ints = np.where(as_i64 & ~top_i64, values, 0.0).astype(np.int64)
    i64 = np.where(top_i64, np.int64(2**63 - 1), ints)
    uints = np.where(as_u64 & ~top_u64, values, 0.0).astype(np.uint64)
    u64 = np.where(top_u64, np.uint64(2**64 - 1), uints)
    bits = values.view(np.uint64)
    negative = (bits & _HIGHEST_BIT) != 0
    f64 = np.where(negative, ~bits, bits ^ _HIGHEST_BIT)
    words = np.where(as_i64, i64.view(np.uint64) ^ _HIGHEST_BIT, np.where(as_u64, u64, f64))
    codes = np.where(as_i64, ord("i"), np.where(as_u64, ord("u"), ord("f"))).astype(np.uint8)
    return codes, words


def _tokens(column: pa.Array, kind: str) -> Tokens:
    """One term per non-null element, in row then element order, at position 0."""
    flat = column.flatten()
    lengths = np.asarray(pc.fill_null(pc.list_value_length(column), 0), dtype=np.int64)
    rows = np.repeat(np.arange(len(column), dtype=np.int64), lengths)
    valid = np.asarray(flat.is_valid(), dtype=bool)
    flat, rows = flat.filter(pa.array(valid)), rows[valid]
    codes, words = _term_words(flat, kind)
    prefix = np.frombuffer(ARRAY_KEY.encode("utf-8") + _END_OF_PATH, dtype=np.uint8)
    cells = np.empty((len(flat), len(prefix) + 9), dtype=np.uint8)
    cells[:, : len(prefix)] = prefix
    cells[:, len(prefix)] = codes
    cells[:, len(prefix) + 1 :] = words.astype(">u8").view(np.uint8).reshape(-1, 8)
    terms = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(cells.shape[1]), len(flat), [None, pa.py_buffer(cells.tobytes())]
    )
    return Tokens(
        terms=terms.cast(pa.large_binary()),
        positions=pa.array(np.zeros(len(rows), dtype=np.uint32)),
        rows=pa.array(rows, pa.int64()),
    )


def json_column(column: pa.Array | pa.ChunkedArray, *, field: str) -> JsonColumn:
    """The parts of JSON field ``field`` holding ``column``, a list column (see the module).

    Raises:
        SegmentWriteError: a column the writer does not write as a JSON field, naming it.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if pa.types.is_large_list(column.type):
        column = column.cast(pa.list_(column.type.value_field))
    column, kind = _element_kind(column, field)
    if column.offset:  # offsets and values from 0
        column = pa.concat_arrays([column])
    return JsonColumn(
        tokens=_tokens(column, kind),
        stored=_stored(column, kind),
        fast_name=field + JSON_PATH_SEPARATOR + ARRAY_KEY,
        fast_kind=kind,
        fast_values=column,
    )


def json_blobs(
    column: JsonColumn, *, positions: bool, encode: Callable[[FieldTerms], bytes]
) -> tuple[bytes, bytes, bytes] | None:
    """(idx blob, pos blob, term blob) of a JSON field (None: no term). ``positions``:
    the field records positions (each term then has its empty ``.pos`` block);
    ``encode`` writes the ``.term`` blob from the field's terms."""
    total = len(column.tokens.rows)
    if not total:
        return None
    inverted = invert(column.tokens)
    encoded = field_postings(inverted, record="basic", norms=None)
    if positions:
        starts = np.ascontiguousarray(inverted.doc_starts.to_numpy(zero_copy_only=False))
        count = len(starts) - 1
        blocks, ends = impl.kernels().positions(
            np.arange(count + 1, dtype=np.int64),
            np.zeros(count, np.uint32),
            np.zeros(0, np.uint32),
        )
        encoded = FieldPostings(
            encoded.postings,
            encoded.postings_ends,
            bytes(blocks),
            np.frombuffer(ends, dtype="<i8").astype(np.int64),
        )
    terms = field_terms(inverted, encoded)
    return field_header(total) + encoded.postings, encoded.positions, encode(terms)
