"""Rows for Tantivy as JSON lines, built column-wise with Arrow compute.

``IndexWriter.add_json`` takes one JSON object per document and types its values by
the schema inside Tantivy; one call per row is cheaper than building a
``tantivy.Document`` with one typed add call per value (:func:`..read.convert.documents`).
:func:`json_lines` builds the lines of a whole batch with vectorized string
kernels (casts, escapes, joins), for the batches whose every column JSON carries
exactly: strings (text and exact), signed integers, floats, booleans, dates and
timestamps. Any other batch is refused with the reason (the caller adds the typed
documents instead, which index to the same bytes):

* a column of another kind (JSON objects, IP addresses, bytes) or Arrow type;
* a float that is not finite, or whose shortest decimal form Tantivy's JSON parser
  (serde_json's fast, not always correctly rounded float parsing) would read back
  as another double: :func:`parsed_like_tantivy` models that parser exactly.

Everything else is what the typed documents get: null values are left out, dates
are clamped into Tantivy's span (``convert.clamp_micros``), strings are escaped as
JSON requires (quote, backslash, control characters), each document ends with
its row key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.read.convert import TANTIVY_MAX_MICROS, TANTIVY_MIN_MICROS, row_key
from indextables.search.schema.mapping import ROW_KEY_FIELD, FieldKind, FieldSpec

__all__ = ["JsonLines", "decimal_text", "json_lines", "parsed_like_tantivy"]

# Control characters JSON strings may not hold raw, with their escapes.
_CONTROLS = [(chr(c), f"\\u{c:04x}") for c in range(0x20)]
_HAS_CONTROL = "[\\x00-\\x1f]"
# Arrow's shortest float text: -?digits[.digits][e[+-]digits].
_FLOAT_PARTS = r"^-?(?P<whole>[0-9]+)(?:\.(?P<fraction>[0-9]+))?(?:e(?P<exp>[+-]?[0-9]+))?$"
# serde_json's table of powers of ten (each literal correctly rounded, as Python's).
_POW10 = np.array([float(f"1e{k}") for k in range(309)], dtype=np.float64)
# A significand of more decimal digits may overflow serde_json's u64 accumulator.
_MAX_DIGITS = 19
_SIGNED = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32())


@dataclass(frozen=True, slots=True)
class JsonLines:
    """The JSON lines of one batch, or why it needs typed documents.

    Attributes:
        lines: one JSON object per row, in row order (None when refused).
        refusal: the column and reason the batch cannot go as JSON (None when not).
    """

    lines: list[str] | None
    refusal: str | None = None


def json_lines(
    batch: pa.RecordBatch,
    specs: Sequence[FieldSpec],
    *,
    batch_number: int | None = None,
    first_row: int = 0,
) -> JsonLines:
    """The rows of ``batch`` as JSON lines for ``IndexWriter.add_json``, when exact.

    With ``batch_number`` each line ends with the row key of its row (rows
    numbered from ``first_row``), as :func:`..read.convert.documents` adds it.
    """
    rows = batch.num_rows
    pieces: list[pa.Array] = []
    for spec in specs:
        column = batch.column(spec.name)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if column.null_count == len(column):
            continue  # nothing to add, as the documents
        text = _value_text(column, spec)
        if isinstance(text, str):
            return JsonLines(None, f"column {spec.name!r}: {text}")
        key = json.dumps(spec.name) + ":"
        pieces.append(pc.binary_join_element_wise(key, text, ""))
    if batch_number is not None:
        first = row_key(batch_number, first_row)
        keys = pa.array(np.arange(first, first + rows, dtype=np.uint64)).cast(pa.string())
        pieces.append(pc.binary_join_element_wise(json.dumps(ROW_KEY_FIELD) + ":", keys, ""))
    if not pieces:
        return JsonLines(["{}"] * rows)
    body = pc.binary_join_element_wise(*pieces, ",", null_handling="skip")
    lines = pc.binary_join_element_wise("{", body, "}", "")
    return JsonLines(lines.to_pylist())


def _value_text(column: pa.Array, spec: FieldSpec) -> pa.Array | str:
    """The JSON text of each value (null stays null), or why the column is refused."""
    kind, t = spec.kind, column.type
    if kind in (FieldKind.STRING, FieldKind.TEXT) and pa.types.is_string(t):
        return _string_text(column)
    if kind is FieldKind.I64 and t in _SIGNED:
        return column.cast(pa.string())
    if kind is FieldKind.BOOL and pa.types.is_boolean(t):
        return column.cast(pa.string())
    if kind is FieldKind.F64 and (pa.types.is_float64(t) or pa.types.is_float32(t)):
        return _float_text(column.cast(pa.float64()))
    if kind is FieldKind.DATE and (pa.types.is_timestamp(t) or pa.types.is_date32(t)):
        return _date_text(column)
    return f"{kind.value} values of Arrow type {t} go as typed documents"


def _string_text(column: pa.Array) -> pa.Array:
    escaped = pc.replace_substring(column, "\\", "\\\\")
    escaped = pc.replace_substring(escaped, '"', '\\"')
    if pc.any(pc.match_substring_regex(escaped, _HAS_CONTROL)).as_py():
        for char, escape in _CONTROLS:
            escaped = pc.replace_substring(escaped, char, escape)
    return pc.binary_join_element_wise('"', escaped, '"', "")


def _date_text(column: pa.Array) -> pa.Array:
    """RFC 3339 text of each instant in microseconds, clamped into Tantivy's span."""
    if pa.types.is_date32(column.type):
        micros = pc.multiply(column.cast(pa.int32()).cast(pa.int64()), 86_400_000_000)
    else:
        unit = pa.timestamp("us", tz=column.type.tz)
        micros = column.cast(unit).cast(pa.int64())
    # skip_nulls=False: a null stays null (skipping it would give the bound).
    low = pc.max_element_wise(micros, TANTIVY_MIN_MICROS, skip_nulls=False)
    clamped = pc.min_element_wise(low, TANTIVY_MAX_MICROS, skip_nulls=False)
    instants = clamped.cast(pa.timestamp("us", tz="UTC"))
    text = pc.strftime(instants, format="%Y-%m-%dT%H:%M:%SZ")
    return pc.binary_join_element_wise('"', text, '"', "")


def _float_text(column: pa.Array) -> pa.Array | str:
    values = column.to_numpy(zero_copy_only=False)  # nulls as NaN
    if column.null_count:
        values = values[column.is_valid().to_numpy(zero_copy_only=False)]
    if not np.isfinite(values).all():
        return "a NaN or infinite float, which JSON cannot hold"
    text = decimal_text(column)
    if not parsed_like_tantivy(text, column):
        return "a float whose shortest decimal form Tantivy's JSON parser reads as another double"
    return text


def decimal_text(column: pa.Array) -> pa.Array:
    """The shortest decimal text of each double, always with a point or an exponent."""
    text = column.cast(pa.string())
    # Arrow writes integral doubles without a point ("100", "-0"): JSON would read an integer.
    integral = pc.invert(pc.match_substring_regex(text, "[.e]"))
    return pc.if_else(integral, pc.binary_join_element_wise(text, ".0", ""), text)


def parsed_like_tantivy(text: pa.Array, values: pa.Array) -> bool:
    """Whether Tantivy's JSON parser reads every decimal ``text`` back as its ``values`` double.

    serde_json (without its ``float_roundtrip`` feature, as tantivy-py is built)
    accumulates the significand's digits into a u64, then takes
    ``significand as f64`` times or divided by ``10^|exponent|`` from its table
    of powers (dividing by ``1e308`` first while the exponent is below -308):
    each step one correctly rounded double operation, as numpy's. Nulls pass.
    """
    valid = values.is_valid()
    text = pc.filter(text, valid)
    wanted = pc.filter(values, valid).to_numpy(zero_copy_only=False)
    if not len(wanted):
        return True
    parts = pc.extract_regex(text, _FLOAT_PARTS)
    if parts.null_count:
        return False  # a form the model does not know
    whole, fraction, exp = (parts.field(n) for n in ("whole", "fraction", "exp"))
    digits = pc.binary_join_element_wise(whole, fraction, "")
    digits = pc.utf8_ltrim(digits, "0")
    if pc.max(pc.utf8_length(digits)).as_py() > _MAX_DIGITS:
        return False
    digits = pc.if_else(pc.equal(digits, ""), "0", digits)
    significand = digits.cast(pa.uint64()).to_numpy(zero_copy_only=False)
    exp = pc.utf8_ltrim(exp, "+")  # Arrow's integer parse takes no plus sign
    exponent = pc.if_else(pc.equal(exp, ""), "0", exp).cast(pa.int64())
    exponent = pc.subtract(exponent, pc.utf8_length(fraction).cast(pa.int64()))
    power = exponent.to_numpy(zero_copy_only=False)
    if (power > 308).any():
        return False
    got = significand.astype(np.float64)
    small = power < -308
    while small.any():
        got[small] /= 1e308
        power = np.where(small, power + 308, power)
        small = power < -308
    up = power >= 0
    got = np.where(up, got * _POW10[np.where(up, power, 0)], got / _POW10[np.where(up, 0, -power)])
    got = np.where(np.signbit(wanted), -got, got)
    return bool((got.view(np.uint64) == wanted.view(np.uint64)).all())
