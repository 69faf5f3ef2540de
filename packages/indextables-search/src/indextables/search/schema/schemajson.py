"""The table schema's wire form (Spark's schema JSON, ``metaData.schemaString``) <-> Arrow.

The log records a table's columns as Spark writes them
(``{"type":"struct","fields":[{"name":..,"type":..,"nullable":..,"metadata":{}}]}``),
which the reference reads. The engine works on the equal Arrow schema, built exactly
as PySpark's ``to_arrow_schema(..., timezone="UTC")`` builds it, so batches typed by it
are the batches Spark expects: list items are named ``element``, map entries
``entries`` with a non-null ``key`` and a ``value``, and each field keeps its nullability.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pyarrow as pa

from indextables.search.errors import UnsupportedTypeError
from indextables.search.schema import columntypes as ct

__all__ = ["arrow_schema", "arrow_type", "spark_json", "spark_type"]

_ATOMIC: dict[str, pa.DataType] = {
    "string": pa.string(),
    "binary": pa.binary(),
    "boolean": pa.bool_(),
    "byte": pa.int8(),
    "short": pa.int16(),
    "integer": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
    "void": pa.null(),
    "null": pa.null(),
}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)")
_CHARS = re.compile(r"(?:var)?char\(\s*\d+\s*\)")


@functools.lru_cache(maxsize=256)
def arrow_schema(schema_json: str) -> pa.Schema:
    """The Arrow schema of a Spark schema JSON string (parsed once per distinct text).

    A plan asks for the schema of its snapshot several times (search, partition
    types, statistics); Arrow schemas are immutable, so one parse serves them all.

    Raises:
        UnsupportedTypeError: a column of a type Arrow cannot hold (intervals, variant),
            named by its path.
    """
    root = json.loads(schema_json)
    if not isinstance(root, dict) or root.get("type") != "struct":
        raise UnsupportedTypeError(f"not a Spark struct schema: {schema_json[:200]!r}")
    return pa.schema([_field(f, f.get("name", "?")) for f in root.get("fields", [])])


def arrow_type(wire: Any, path: str = "value") -> pa.DataType:
    """The Arrow type of one Spark JSON type (a name such as ``"long"``, or an object)."""
    if isinstance(wire, str):
        name = wire.strip().lower()
        if name in _ATOMIC:
            return _ATOMIC[name]
        decimal = _DECIMAL.fullmatch(name)
        if decimal:
            return pa.decimal128(int(decimal.group(1)), int(decimal.group(2)))
        if name == "decimal":
            return pa.decimal128(10, 0)
        if _CHARS.fullmatch(name):
            return pa.string()
        raise UnsupportedTypeError(f"column {path!r} has type {wire!r}, which Arrow cannot hold")
    kind = wire.get("type") if isinstance(wire, dict) else None
    if kind == "array":
        item = arrow_type(wire["elementType"], f"{path}[]")
        return pa.list_(pa.field("element", item, nullable=bool(wire.get("containsNull", True))))
    if kind == "map":
        key = arrow_type(wire["keyType"], f"{path}.<key>")
        value = arrow_type(wire["valueType"], f"{path}.<value>")
        nullable = bool(wire.get("valueContainsNull", True))
        return pa.map_(key, pa.field("value", value, nullable=nullable))
    if kind == "struct":
        return pa.struct([_field(f, f"{path}.{f.get('name', '?')}") for f in wire["fields"]])
    raise UnsupportedTypeError(f"column {path!r} has type {wire!r}, which Arrow cannot hold")


def _field(wire: dict[str, Any], path: str) -> pa.Field:
    return pa.field(
        str(wire["name"]),
        arrow_type(wire["type"], path),
        nullable=bool(wire.get("nullable", True)),
    )


def spark_type(t: pa.DataType, path: str = "value") -> Any:
    """The Spark JSON type of an Arrow type (inverse of :func:`arrow_type`).

    Raises:
        UnsupportedTypeError: an Arrow type Spark has no type for (unsigned integers,
            durations, unions, timestamps in other units are accepted as Spark's).
    """
    for name, atomic in _ATOMIC.items():
        if name != "null" and t == atomic:
            return name
    if ct.is_string(t):
        return "string"
    if ct.is_binary(t):
        return "binary"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_date64(t):
        return "date"
    if pa.types.is_float16(t):
        return "float"
    if ct.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if ct.is_list(t):
        item = t.value_field
        return {
            "type": "array",
            "elementType": spark_type(item.type, f"{path}[]"),
            "containsNull": bool(item.nullable),
        }
    if ct.is_map(t):
        return {
            "type": "map",
            "keyType": spark_type(t.key_type, f"{path}.<key>"),
            "valueType": spark_type(t.item_type, f"{path}.<value>"),
            "valueContainsNull": bool(t.item_field.nullable),
        }
    if ct.is_struct(t):
        return {
            "type": "struct",
            "fields": [_spark_field(f, f"{path}.{f.name}") for f in ct.fields_of(t)],
        }
    raise UnsupportedTypeError(
        f"column {path!r} has Arrow type {t}, which has no Spark type (and so no table form)"
    )


def _spark_field(field: pa.Field, path: str) -> dict[str, Any]:
    return {
        "metadata": {},
        "name": field.name,
        "nullable": bool(field.nullable),
        "type": spark_type(field.type, path),
    }


def spark_json(schema: pa.Schema) -> str:
    """The Spark schema JSON of an Arrow schema, compact with sorted keys as Spark writes it."""
    root = {"fields": [_spark_field(f, f.name) for f in schema], "type": "struct"}
    return json.dumps(_sorted(root), separators=(",", ":"))


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
