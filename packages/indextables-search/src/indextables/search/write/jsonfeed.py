"""Rows for Tantivy as JSON lines, built column-wise with Arrow compute.

``IndexWriter.add_json`` takes one JSON object per document and types its values by
the schema inside Tantivy; one call per row is cheaper than building a
``tantivy.Document`` with one typed add call per value (:func:`..read.convert.documents`).
:func:`json_lines` builds the lines of a whole batch with vectorized string
kernels (casts, escapes, joins) for the kinds JSON carries exactly: strings (text
and exact), signed integers, floats, booleans, dates and timestamps. A batch with
a column of another kind (JSON objects, IP addresses, bytes) or Arrow type is
refused with the reason, and the caller adds typed documents instead, which index
to the same bytes.

Floats: Tantivy's JSON parser (serde_json's fast, not always correctly rounded
float parsing, modelled exactly by :func:`tantivy_reads`) reads about a quarter of
random doubles' shortest decimal forms as a neighbouring double. Such a value is
written as another decimal form the parser reads back exactly, found near it
(:func:`exact_text`); a row holding a float with no such form, or one not finite,
goes as a typed document in its place (the whole batch when more than 1% of its
rows do).

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

from indextables.search.read.convert import clamped_instants, row_key
from indextables.search.schema.mapping import ROW_KEY_FIELD, FieldKind, FieldSpec

__all__ = [
    "JsonLines",
    "decimal_text",
    "exact_text",
    "json_lines",
    "parsed_like_tantivy",
    "tantivy_reads",
]

# Control characters JSON strings may not hold raw, with their escapes.
_CONTROLS = [(chr(c), f"\\u{c:04x}") for c in range(0x20)]
_HAS_CONTROL = "[\\x00-\\x1f]"
# The bytes a JSON string may not hold raw: control characters, quote, backslash.
_ESCAPED = np.zeros(256, dtype=bool)
_ESCAPED[:0x20] = _ESCAPED[ord('"')] = _ESCAPED[ord("\\")] = True
# Arrow's shortest float text: -?digits[.digits][e[+-]digits].
_FLOAT_PARTS = r"^-?(?P<whole>[0-9]+)(?:\.(?P<fraction>[0-9]+))?(?:e(?P<exp>[+-]?[0-9]+))?$"
# serde_json's table of powers of ten (each literal correctly rounded, as Python's).
_POW10 = np.array([float(f"1e{k}") for k in range(309)], dtype=np.float64)
# A significand of more decimal digits may overflow serde_json's u64 accumulator.
_MAX_DIGITS = 19
_SIGNED = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32())


# Above this share of rows needing typed documents, the whole batch goes as documents
# (one document built alone costs several rows' worth of a batch's documents).
MAX_DOCUMENT_ROWS = 0.01


@dataclass(frozen=True, slots=True)
class JsonLines:
    """The JSON lines of one batch, or why it needs typed documents.

    Attributes:
        lines: one JSON object per row, in row order, None for a row whose float
            JSON cannot carry (not finite, or no decimal form Tantivy reads back
            exactly): that row goes as a typed document. None when refused.
        refusal: the column and reason the batch goes as typed documents (None when not).
    """

    lines: list[str | None] | None
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
    pieces: list[pa.Array | str] = []
    uncarried = np.zeros(rows, dtype=bool)  # rows needing a typed document
    for spec in specs:
        column = batch.column(spec.name)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if column.null_count == len(column):
            continue  # nothing to add, as the documents
        valued = _value_text(column, spec)
        if isinstance(valued, str):
            return JsonLines(None, f"column {spec.name!r}: {valued}")
        text, quote = valued
        if text.null_count > column.null_count:
            lost = pc.and_(text.is_null(), column.is_valid())
            uncarried |= lost.to_numpy(zero_copy_only=False)
            if uncarried.sum() > MAX_DOCUMENT_ROWS * rows:
                return JsonLines(None, f"column {spec.name!r}: {_UNCARRIED}")
        # '"name":value,' joined in the line's one join, or, with nulls, joined apart
        # and nulls filled with '' (pyarrow's null_handling="skip" join drops the rows
        # whose every piece is null).
        parts = [json.dumps(spec.name) + ":" + quote, text, quote + ","]
        if text.null_count:
            pieces.append(pc.fill_null(pc.binary_join_element_wise(*parts, ""), ""))
        else:
            pieces.extend(parts)
    if batch_number is not None:
        first = row_key(batch_number, first_row)
        keys = pa.array(np.arange(first, first + rows, dtype=np.uint64)).cast(pa.string())
        lines = pc.binary_join_element_wise(
            "{", *pieces, json.dumps(ROW_KEY_FIELD) + ":", keys, "}", ""
        )
    elif not pieces:
        return JsonLines(["{}"] * rows)
    else:
        # Drop the last piece's comma (no value's text ends with one).
        body = pc.utf8_rtrim(pc.binary_join_element_wise(*pieces, ""), ",")
        lines = pc.binary_join_element_wise("{", body, "}", "")
    if uncarried.any():
        lines = pc.if_else(pa.array(uncarried), pa.nulls(rows, pa.string()), lines)
    return JsonLines(lines.to_pylist())


def _value_text(column: pa.Array, spec: FieldSpec) -> tuple[pa.Array, str] | str:
    """The JSON text of each value (null for nulls and for values JSON cannot carry)
    and the quote around it (``'"'`` for strings), or why the column is refused."""
    kind, t = spec.kind, column.type
    if kind in (FieldKind.STRING, FieldKind.TEXT) and pa.types.is_string(t):
        return _string_text(column), '"'
    if kind is FieldKind.I64 and t in _SIGNED:
        return column.cast(pa.string()), ""
    if kind is FieldKind.BOOL and pa.types.is_boolean(t):
        return column.cast(pa.string()), ""
    if kind is FieldKind.F64 and (pa.types.is_float64(t) or pa.types.is_float32(t)):
        return _float_text(column.cast(pa.float64())), ""
    if kind is FieldKind.DATE and (pa.types.is_timestamp(t) or pa.types.is_date32(t)):
        return _date_text(column), '"'
    return f"{kind.value} values of Arrow type {t} go as typed documents"


def _string_text(column: pa.Array) -> pa.Array:
    """Each string's JSON-escaped text (without its quotes)."""
    escaped = column
    if _needs_escapes(column):
        escaped = pc.replace_substring(escaped, "\\", "\\\\")
        escaped = pc.replace_substring(escaped, '"', '\\"')
        if pc.any(pc.match_substring_regex(escaped, _HAS_CONTROL)).as_py():
            for char, escape in _CONTROLS:
                escaped = pc.replace_substring(escaped, char, escape)
    return escaped


def _needs_escapes(column: pa.Array) -> bool:
    """Whether any byte of the column's values is a quote, a backslash or a control character.

    One numpy pass over the UTF-8 bytes the values span (no multi-byte sequence holds
    a byte below 0x80), instead of a string kernel per escape.
    """
    _, offsets, data = column.buffers()
    if data is None or len(column) == 0:
        return False
    bounds = np.frombuffer(offsets, dtype=np.int32, count=len(column) + 1, offset=4 * column.offset)
    values = np.frombuffer(data, dtype=np.uint8)[bounds[0] : bounds[-1]]
    return bool(_ESCAPED[values].any())


def _date_text(column: pa.Array) -> pa.Array:
    """RFC 3339 text of each instant in microseconds, clamped into Tantivy's span."""
    return pc.strftime(clamped_instants(column), format="%Y-%m-%dT%H:%M:%SZ")


_UNCARRIED = (
    "more than 1% of the rows hold floats JSON cannot carry (not finite, or with no "
    "decimal form Tantivy's JSON parser reads back exactly)"
)


def _float_text(column: pa.Array) -> pa.Array:
    """:func:`exact_text`, also null for NaN and infinities."""
    finite = pc.is_finite(column)
    if pc.all(finite).as_py() is not False:
        return exact_text(column)
    kept = pc.if_else(finite, column, pa.nulls(len(column), column.type))
    return exact_text(kept)


def decimal_text(column: pa.Array) -> pa.Array:
    """The shortest decimal text of each double, always with a point or an exponent."""
    text = column.cast(pa.string())
    # Arrow writes integral doubles without a point ("100", "-0"): JSON would read an integer.
    integral = pc.invert(pc.match_substring_regex(text, "[.e]"))
    return pc.if_else(integral, pc.binary_join_element_wise(text, ".0", ""), text)


def exact_text(column: pa.Array) -> pa.Array:
    """JSON text of each finite double that Tantivy's JSON parser reads back as that double.

    The shortest decimal form where :func:`tantivy_reads` says it is read exactly;
    else ``<significand>e<exponent>`` with a 16-19 digit significand found near the
    value (:func:`_nearby_forms`); null where neither is found (and for nulls).
    """
    text = decimal_text(column)
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    wanted = column.to_numpy(zero_copy_only=False)[valid]
    exact = tantivy_reads(pc.filter(text, column.is_valid()), wanted)
    if exact.all():
        return text
    rows = np.flatnonzero(valid)[~exact]
    forms = _nearby_forms(wanted[~exact]).to_numpy(zero_copy_only=False)
    merged = text.to_numpy(zero_copy_only=False)
    merged[rows] = forms
    return pa.array(merged, pa.string())


def parsed_like_tantivy(text: pa.Array, values: pa.Array) -> bool:
    """Whether Tantivy's JSON parser reads every decimal ``text`` back as its ``values`` double.

    Nulls pass; see :func:`tantivy_reads`.
    """
    valid = values.is_valid()
    wanted = pc.filter(values, valid).to_numpy(zero_copy_only=False)
    return bool(tantivy_reads(pc.filter(text, valid), wanted).all())


def tantivy_reads(text: pa.Array, wanted: np.ndarray) -> np.ndarray:
    """Per value: whether Tantivy's JSON parser reads decimal ``text`` as the double ``wanted``.

    serde_json (without its ``float_roundtrip`` feature, as tantivy-py is built)
    accumulates the significand's digits into a u64, then takes
    ``significand as f64`` times or divided by ``10^|exponent|`` from its table
    of powers (dividing by ``1e308`` first while the exponent is below -308):
    each step one correctly rounded double operation, as numpy's
    (:func:`_serde_magnitude`). Forms it does not know (more than 19 digits, an
    exponent above 308, other spellings) read as False.
    """
    if not len(wanted):
        return np.ones(0, dtype=bool)
    parts = pc.extract_regex(text, _FLOAT_PARTS)
    known = parts.is_valid().to_numpy(zero_copy_only=False)
    whole, fraction, exp = (parts.field(n) for n in ("whole", "fraction", "exp"))
    digits = pc.utf8_ltrim(pc.binary_join_element_wise(whole, fraction, ""), "0")
    fits = pc.fill_null(pc.less_equal(pc.utf8_length(digits), _MAX_DIGITS), False)
    known &= fits.to_numpy(zero_copy_only=False)
    digits = pc.if_else(pc.or_(pc.equal(digits, ""), pc.invert(fits)), "0", digits)
    significand = pc.fill_null(digits, "0").cast(pa.uint64()).to_numpy(zero_copy_only=False)
    exp = pc.fill_null(pc.utf8_ltrim(exp, "+"), "")  # Arrow's integer parse takes no plus sign
    exponent = pc.if_else(pc.equal(exp, ""), "0", exp).cast(pa.int64())
    exponent = pc.subtract(exponent, pc.fill_null(pc.utf8_length(fraction), 0).cast(pa.int64()))
    power = exponent.to_numpy(zero_copy_only=False)
    known &= power <= 308
    got = _serde_magnitude(significand.astype(np.float64), np.minimum(power, 308))
    got = np.where(np.signbit(wanted), -got, got)
    exact: np.ndarray = known & (got.view(np.uint64) == wanted.view(np.uint64))
    return exact


def _serde_magnitude(significand: np.ndarray, power: np.ndarray) -> np.ndarray:
    """serde_json's double for ``significand * 10^power`` (significands as doubles)."""
    got = significand.copy()
    power = power.copy()
    small = power < -308
    while small.any():
        got[small] /= 1e308
        power[small] += 308
        small = power < -308
    up = power >= 0
    scaled = got * _POW10[np.where(up, power, 0)]
    return np.where(up, scaled, got / _POW10[np.where(up, 0, -power)])


# How many doubles either side of the nearest significand the search tries.
_STEPS = 4
_MIN_SIGNIFICAND = float(2**53)  # every double from here up is an integer
_MAX_SIGNIFICAND = 1e19  # 19 digits: serde_json's u64 holds them


def _nearby_forms(values: np.ndarray) -> pa.Array:
    """``<significand>e<exponent>`` text that serde_json reads as each value, or null.

    For exponents giving 16-19 digit significands, the doubles nearest
    ``|value| / 10^exponent`` (integers: they are at least 2^53) are tried in
    turn under :func:`_serde_magnitude`; the first read back exactly is taken.
    """
    magnitude = np.abs(values)
    found = np.zeros(len(values), dtype=bool)
    significands = np.zeros(len(values))
    exponents = np.zeros(len(values), dtype=np.int64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        decade = np.floor(np.log10(np.where(magnitude > 0, magnitude, 1.0))).astype(np.int64)
        for digits in (18, 17, 16, 15):
            power = decade - digits
            base = _divided(magnitude, power)
            steps = [base]
            up = down = base
            for _ in range(_STEPS):
                up, down = np.nextafter(up, np.inf), np.nextafter(down, 0.0)
                steps += [up, down]
            for candidate in steps:
                fits = (candidate >= _MIN_SIGNIFICAND) & (candidate < _MAX_SIGNIFICAND)
                safe = np.where(fits, candidate, _MIN_SIGNIFICAND)
                hit = ~found & fits & (power <= 308) & (_serde_magnitude(safe, power) == magnitude)
                significands[hit], exponents[hit], found[hit] = candidate[hit], power[hit], True
    sign = np.where(np.signbit(values), "-", "")
    whole = pa.array(significands.astype(np.uint64)).cast(pa.string())
    text = pc.binary_join_element_wise(
        pa.array(sign), whole, "e", pa.array(exponents).cast(pa.string()), ""
    )
    return pc.if_else(pa.array(found), text, pa.nulls(len(values), pa.string()))


def _divided(magnitude: np.ndarray, power: np.ndarray) -> np.ndarray:
    """``magnitude / 10^power`` to within a few units in the last place."""
    power = power.copy()
    got = magnitude.copy()
    while (power < -308).any():
        small = power < -308
        got[small] *= 1e308
        power[small] += 308
    up = power >= 0
    quotient: np.ndarray = np.where(
        up, got / _POW10[np.clip(power, 0, 308)], got * _POW10[np.clip(-power, 0, 308)]
    )
    return quotient
