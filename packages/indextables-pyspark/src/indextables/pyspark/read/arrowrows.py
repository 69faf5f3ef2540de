"""Arrow batches -> the ``Row`` objects a classic ``DataFrame.collect()`` returns for them.

Classic PySpark's ``collect()`` gets each row from the JVM as Spark's internal
values (dates as days, timestamps as microseconds, structs as tuples, maps as
dicts, binary as ``bytes``, or ``bytearray`` when the session sets
``spark.sql.execution.pyspark.binaryAsBytes`` to false) and turns them into
Python objects with the schema's own ``fromInternal``, in the driver. Here the
same internal values are read from the Arrow batches (timestamps and dates cast
to their integers, struct dicts to tuples, map pairs to dicts) and handed to the
same ``fromInternal``, so every value, time zone rule and ``Row`` field name is
PySpark's by construction rather than by imitation.

Only the types IndexTables tables hold are converted (:func:`convertible`);
anything else (user-defined, variant, interval, null types; duplicate struct
field names) is left to the JVM's ``collect()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from pyspark.sql import Row
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

__all__ = ["convertible", "has_binary", "rows"]

# Types whose Arrow values (after the casts below) are Spark's internal values as they are.
_PLAIN = (
    BooleanType,
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    DecimalType,
    StringType,
    DateType,
    TimestampType,
    TimestampNTZType,
    BinaryType,
)


def convertible(data_type: DataType) -> bool:
    """Whether values of ``data_type`` (nested types: every part) are converted here."""
    if isinstance(data_type, StructType):
        names = [f.name for f in data_type.fields]
        return len(set(names)) == len(names) and all(
            convertible(f.dataType) for f in data_type.fields
        )
    if isinstance(data_type, ArrayType):
        return convertible(data_type.elementType)
    if isinstance(data_type, MapType):
        # Keys must stay hashable as Python values: atomic and not binary (bytearray).
        key = data_type.keyType
        return (type(key) in _PLAIN and not isinstance(key, BinaryType)) and convertible(
            data_type.valueType
        )
    # Exact types only: a subclass or anything else (UDT, variant, intervals) goes to the JVM.
    return type(data_type) in _PLAIN


def has_binary(data_type: DataType) -> bool:
    """Whether ``data_type`` is binary or holds binary values anywhere inside."""
    if isinstance(data_type, StructType):
        return any(has_binary(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return has_binary(data_type.elementType)
    if isinstance(data_type, MapType):
        return has_binary(data_type.keyType) or has_binary(data_type.valueType)
    return isinstance(data_type, BinaryType)


def rows(
    batches: Sequence[pa.RecordBatch],
    schema: StructType,
    *,
    limit: int | None = None,
    binary: type[bytes] | type[bytearray] = bytes,
) -> list[Row]:
    """The rows of ``batches`` (in Spark's Arrow layout for ``schema``) as ``collect()``
    returns them, in order; the first ``limit`` only when given. ``binary`` is the
    type of binary values (``bytearray`` where the session's
    ``spark.sql.execution.pyspark.binaryAsBytes`` is false). ``schema`` must be
    :func:`convertible`."""
    if not batches:
        return []
    table = pa.Table.from_batches(batches)
    if limit is not None:
        table = table.slice(0, limit)
    columns = []
    for field, column in zip(schema.fields, table.columns, strict=True):
        internal = column.cast(_internal_type(column.type))
        columns.append(_fixer(field.dataType, binary)(internal.to_pylist()))
    convert = schema.fromInternal
    return [convert(values) for values in zip(*columns, strict=True)]


def _internal_type(arrow: pa.DataType) -> pa.DataType:
    """``arrow`` with timestamps as int64 (microseconds) and dates as int32 (days)."""
    if pa.types.is_timestamp(arrow):
        return pa.int64()
    if pa.types.is_date32(arrow):
        return pa.int32()
    if pa.types.is_struct(arrow):
        return pa.struct([f.with_type(_internal_type(f.type)) for f in arrow])
    if pa.types.is_map(arrow):
        return pa.map_(
            arrow.key_field.with_type(_internal_type(arrow.key_type)),
            arrow.item_field.with_type(_internal_type(arrow.item_type)),
        )
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return pa.list_(arrow.value_field.with_type(_internal_type(arrow.value_type)))
    return arrow


def _fixer(data_type: DataType, binary: type) -> Callable[[list[Any]], list[Any]]:
    """A function turning a column's ``to_pylist()`` into Spark's internal values."""
    one = _value_fixer(data_type, binary)
    if one is None:
        return lambda values: values
    return lambda values: [None if v is None else one(v) for v in values]


def _value_fixer(data_type: DataType, binary: type) -> Callable[[Any], Any] | None:
    """The conversion of one non-null value, or None where Arrow's is Spark's already."""
    if isinstance(data_type, BinaryType):
        return None if binary is bytes else binary
    if isinstance(data_type, ArrayType):
        element = _value_fixer(data_type.elementType, binary)
        if element is None:
            return None
        return lambda items: [None if v is None else element(v) for v in items]
    if isinstance(data_type, MapType):
        key = _value_fixer(data_type.keyType, binary) or _same
        item = _value_fixer(data_type.valueType, binary) or _same
        # Map keys are never null in Spark.
        return lambda pairs: {key(k): None if v is None else item(v) for k, v in pairs}
    if isinstance(data_type, StructType):
        parts = [(f.name, _value_fixer(f.dataType, binary) or _same) for f in data_type.fields]
        return lambda record: tuple(
            None if (v := record[name]) is None else fix(v) for name, fix in parts
        )
    return None


def _same(value: Any) -> Any:
    return value
