"""Nested values inside JSON fields: the searchable form written, and the typed value read back.

Structs, arrays and maps are indexed as Tantivy JSON fields. The form written
follows the reference's conventions so the same queries work on both
implementations' splits: dates and timestamps as epoch milliseconds, binary
as base64, top-level arrays under ``_values``, map keys as strings, and a
string column typed ``json`` whose value is not a JSON object as ``{"_raw":
text}``. Non-finite floats are written as the strings ``NaN``, ``Infinity``
and ``-Infinity`` (Tantivy would silently store null for them).

That form is lossy (microseconds, decimal digits, strings that Tantivy takes
for dates, key types), so splits written by this package read nested values
from their Arrow copy instead (see :mod:`indextables.search.read.rowcopy`).
:func:`from_json` is the best-effort decoder for the stored documents of
splits without one (the reference's, and older ones of this package).
"""

from __future__ import annotations

import ast
import base64
import json
import math
from datetime import UTC, date, datetime, timedelta
from decimal import Context, Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

from indextables.search.schema import columntypes as ct

# JSON fields must hold objects: arrays are wrapped under this key (as the reference does).
ARRAY_KEY = "_values"
# A json-typed string column's value that is not a JSON object (as the reference does).
RAW_KEY = "_raw"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLI = timedelta(milliseconds=1)
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class JsonValueError(ValueError):
    """A value that cannot be written to a JSON field (the message names the column)."""


def to_json_field(data_type: pa.DataType, value: Any, *, column: str) -> dict[str, Any]:
    """The JSON object indexed for one non-null value of a struct/array/map/json-string column."""
    if ct.is_string(data_type):
        return _json_text(value)
    if ct.is_list(data_type):
        return {ARRAY_KEY: to_json(data_type, value)}
    encoded = to_json(data_type, value)
    if not isinstance(encoded, dict):
        raise JsonValueError(f"column {column!r}: {value!r} is not a JSON object")
    return encoded


def _json_text(text: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        return {RAW_KEY: text}
    return parsed if isinstance(parsed, dict) else {RAW_KEY: text}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def to_json(data_type: pa.DataType, value: Any) -> Any:
    """The searchable JSON form of one value of ``data_type`` (None stays None)."""
    if value is None:
        return None
    if ct.is_struct(data_type):
        return {f.name: to_json(f.type, value[f.name]) for f in ct.fields_of(data_type)}
    if ct.is_list(data_type):
        return [to_json(data_type.value_type, v) for v in value]
    if ct.is_map(data_type):
        pairs = value.items() if isinstance(value, dict) else value
        return {map_key(data_type.key_type, k): to_json(data_type.item_type, v) for k, v in pairs}
    return _scalar_to_json(data_type, value)


def _scalar_to_json(data_type: pa.DataType, value: Any) -> Any:
    if ct.is_floating(data_type):
        if math.isnan(value):
            return "NaN"
        return value if math.isfinite(value) else ("Infinity" if value > 0 else "-Infinity")
    if ct.is_date(data_type):
        return (date_time(value) - _EPOCH) // _MILLI
    if pa.types.is_timestamp(data_type):
        return (date_time(value) - _EPOCH) // _MILLI
    if ct.is_binary(data_type):
        return base64.b64encode(bytes(value)).decode("ascii")
    if ct.is_decimal(data_type):
        return float(value)
    return value


def map_key(key_type: pa.DataType, key: Any) -> str:
    """A map key as a JSON object key (JSON keys are strings)."""
    if ct.is_string(key_type):
        return str(key)
    if ct.is_boolean(key_type):
        return "true" if key else "false"
    if ct.is_date(key_type):
        return str(key.isoformat())
    if pa.types.is_timestamp(key_type):
        return date_time(key).isoformat()
    if ct.is_floating(key_type):
        return repr(float(key))
    if ct.is_nested(key_type) or ct.is_binary(key_type):
        return json.dumps(to_json(key_type, key), sort_keys=True)
    return str(key)


def date_time(value: date | datetime) -> datetime:
    """A date or (naive: UTC) datetime as an aware UTC datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def from_json(data_type: pa.DataType, value: Any) -> Any:
    """A Spark value rebuilt from the stored JSON form (ours or the reference's)."""
    if value is None:
        return None
    if ct.is_struct(data_type):
        if not isinstance(value, dict):
            return None
        return {f.name: from_json(f.type, value.get(f.name)) for f in ct.fields_of(data_type)}
    if ct.is_list(data_type):
        if isinstance(value, dict):
            value = value.get(ARRAY_KEY)
        if not isinstance(value, list):
            return None
        return [from_json(data_type.value_type, v) for v in value]
    if ct.is_map(data_type):
        return _map_from_json(data_type, value)
    return _scalar_from_json(data_type, value)


def _map_from_json(data_type: pa.MapType, value: Any) -> list[tuple[Any, Any]] | None:
    if not isinstance(value, dict):
        return None
    if set(value) == {ARRAY_KEY} and value[ARRAY_KEY] == []:
        return []  # how older versions of this package wrote an empty map
    return [
        (_key_from_json(data_type.key_type, k), from_json(data_type.item_type, v))
        for k, v in value.items()
    ]


def _key_from_json(key_type: pa.DataType, key: str) -> Any:
    if ct.is_string(key_type):
        return key
    if ct.is_nested(key_type) or ct.is_binary(key_type):
        return from_json(key_type, json.loads(key))
    if ct.is_boolean(key_type):
        return key == "true"
    if ct.is_date(key_type):
        return date.fromisoformat(key[:10])
    if pa.types.is_timestamp(key_type):
        return _scalar_from_json(key_type, key)
    if ct.is_floating(key_type) or ct.is_decimal(key_type):
        return _scalar_from_json(key_type, key)
    return int(key)


def _scalar_from_json(data_type: pa.DataType, value: Any) -> Any:
    if ct.is_string(data_type):
        return _string_from_json(value)
    if ct.is_floating(data_type):
        return (
            _NON_FINITE[value] if isinstance(value, str) and value in _NON_FINITE else float(value)
        )
    if ct.is_date(data_type):
        return _instant(value).date()
    if ct.is_timestamp(data_type):
        return _instant(value)
    if ct.is_timestamp_ntz(data_type):
        return _instant(value).replace(tzinfo=None)
    if ct.is_binary(data_type):
        return value if isinstance(value, bytes) else _binary(str(value))
    if ct.is_decimal(data_type):
        return _decimal(data_type, value)
    if ct.is_boolean(data_type):
        return bool(value)
    return int(value)


def _string_from_json(value: Any) -> str:
    if isinstance(value, datetime):
        # Tantivy turns RFC 3339 strings inside JSON fields into dates.
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return value[RAW_KEY] if set(value) == {RAW_KEY} else json.dumps(value)
    if isinstance(value, list):
        return json.dumps(value)
    return value if isinstance(value, str) else json.dumps(value)


def _binary(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        # Older versions of this package wrote ``str(bytes)``: ``b'...'``.
        literal = ast.literal_eval(text) if text.startswith(("b'", 'b"')) else None
        if isinstance(literal, bytes):
            return literal
        raise


def _instant(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    if isinstance(value, (int, float)):
        return _EPOCH + timedelta(milliseconds=value)
    text = str(value).replace("Z", "+00:00")
    parsed = datetime.fromisoformat(text)
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# Room for every decimal(38, s) (the default context's 28 digits made a wider value None).
_WIDE = Context(prec=80)


def _decimal(data_type: pa.Decimal128Type, value: Any) -> Decimal | None:
    try:
        return Decimal(str(value)).quantize(Decimal(1).scaleb(-data_type.scale), context=_WIDE)
    except InvalidOperation:
        return None
