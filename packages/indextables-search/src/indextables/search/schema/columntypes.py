"""Column types: Arrow's type system, read in the vocabulary of the table's schema.

The engine speaks Arrow types. A table's schema is recorded in Spark's type system
(``metaData.schemaString``, see :mod:`indextables.search.schema.schemajson`), which Arrow
holds without loss: ``byte``/``short``/``integer``/``long`` are ``int8``..``int64``,
``float``/``double`` are ``float32``/``float64``, ``timestamp`` is
``timestamp[us, tz=UTC]`` and ``timestamp_ntz`` is ``timestamp[us]``, ``date`` is
``date32``, ``decimal(p,s)`` is ``decimal128(p, s)``, and arrays, maps and structs
are Arrow lists, maps and structs. These predicates name those kinds.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa

__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "fields_of",
    "is_binary",
    "is_boolean",
    "is_date",
    "is_decimal",
    "is_float32",
    "is_floating",
    "is_integral",
    "is_list",
    "is_map",
    "is_nested",
    "is_scalar",
    "is_string",
    "is_struct",
    "is_temporal",
    "is_timestamp",
    "is_timestamp_ntz",
    "type_name",
]

#: Spark's ``long`` (Arrow ``int64``, Tantivy ``i64``) range.
LONG_MIN: Final = -(2**63)
LONG_MAX: Final = 2**63 - 1


def is_string(t: pa.DataType) -> bool:
    """Spark's ``string``."""
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def is_binary(t: pa.DataType) -> bool:
    """Spark's ``binary``."""
    return bool(pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t))


def is_boolean(t: pa.DataType) -> bool:
    """Spark's ``boolean``."""
    return bool(pa.types.is_boolean(t))


def is_integral(t: pa.DataType) -> bool:
    """Spark's ``byte``, ``short``, ``integer`` and ``long`` (signed integers)."""
    return bool(pa.types.is_signed_integer(t))


def is_floating(t: pa.DataType) -> bool:
    """Spark's ``float`` and ``double``."""
    return bool(pa.types.is_floating(t))


def is_float32(t: pa.DataType) -> bool:
    """Spark's ``float`` (32 bits)."""
    return bool(pa.types.is_float32(t) or pa.types.is_float16(t))


def is_decimal(t: pa.DataType) -> bool:
    """Spark's ``decimal(p,s)``."""
    return bool(pa.types.is_decimal(t))


def is_date(t: pa.DataType) -> bool:
    """Spark's ``date``."""
    return bool(pa.types.is_date(t))


def is_timestamp(t: pa.DataType) -> bool:
    """Spark's ``timestamp``: an instant (an Arrow timestamp with a time zone)."""
    return bool(pa.types.is_timestamp(t) and t.tz is not None)


def is_timestamp_ntz(t: pa.DataType) -> bool:
    """Spark's ``timestamp_ntz``: a wall-clock time (an Arrow timestamp without a zone)."""
    return bool(pa.types.is_timestamp(t) and t.tz is None)


def is_temporal(t: pa.DataType) -> bool:
    """Dates and both kinds of timestamps."""
    return is_date(t) or bool(pa.types.is_timestamp(t))


def is_struct(t: pa.DataType) -> bool:
    """Spark's ``struct``."""
    return bool(pa.types.is_struct(t))


def is_list(t: pa.DataType) -> bool:
    """Spark's ``array``."""
    return bool(
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    )


def is_map(t: pa.DataType) -> bool:
    """Spark's ``map``."""
    return bool(pa.types.is_map(t))


def is_nested(t: pa.DataType) -> bool:
    """Structs, arrays and maps."""
    return is_struct(t) or is_list(t) or is_map(t)


def is_scalar(t: pa.DataType) -> bool:
    """Strings, binary, numbers, booleans, dates and timestamps (no nested or null type)."""
    return (
        is_string(t)
        or is_binary(t)
        or is_integral(t)
        or is_floating(t)
        or is_decimal(t)
        or is_boolean(t)
        or is_temporal(t)
    )


def fields_of(t: pa.DataType) -> list[pa.Field]:
    """The fields of a struct type, in order."""
    return [t.field(i) for i in range(t.num_fields)]


_SIMPLE = {
    pa.int8(): "tinyint",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.float16(): "float",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.bool_(): "boolean",
    pa.date32(): "date",
    pa.date64(): "date",
    pa.null(): "void",
}


def type_name(t: pa.DataType) -> str:
    """The type's name in Spark SQL (``bigint``, ``decimal(10,2)``, ``array<string>``...)."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    if is_string(t):
        return "string"
    if is_binary(t):
        return "binary"
    if is_timestamp(t):
        return "timestamp"
    if is_timestamp_ntz(t):
        return "timestamp_ntz"
    if is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if is_list(t):
        return f"array<{type_name(t.value_type)}>"
    if is_map(t):
        return f"map<{type_name(t.key_type)},{type_name(t.item_type)}>"
    if is_struct(t):
        inner = ",".join(f"{f.name}:{type_name(f.type)}" for f in fields_of(t))
        return f"struct<{inner}>"
    return str(t)
