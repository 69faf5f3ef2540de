"""Spark's schema -> the engine's Arrow schema, at the adapter's edge.

The engine (``indextables.search``) speaks Arrow types; Spark hands the data source
a ``StructType``. Batches handed back to Spark must carry exactly the Arrow types
PySpark derives (``to_arrow_schema`` with UTC instants), which
``indextables.search.schema.schemajson`` also builds from a table's schema JSON.
"""

from __future__ import annotations

import pyarrow as pa

from indextables.search.errors import UnsupportedTypeError
from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

__all__ = ["arrow_schema", "arrow_type", "arrow_types"]


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for batches of this Spark schema.

    Raises:
        UnsupportedTypeError: a column (or a field inside one) of a type Arrow cannot
            hold (calendar intervals, char/varchar), named by its path.
    """
    try:
        return to_arrow_schema(schema, timezone="UTC")
    except Exception as error:
        for field in schema.fields:
            _refuse_unconvertible(field.name, field.dataType)
        raise UnsupportedTypeError(f"the schema cannot be read as Arrow: {error}") from None


def _refuse_unconvertible(path: str, data_type: DataType) -> None:
    if isinstance(data_type, StructType):
        for child in data_type.fields:
            _refuse_unconvertible(f"{path}.{child.name}", child.dataType)
    elif isinstance(data_type, ArrayType):
        _refuse_unconvertible(f"{path}[]", data_type.elementType)
    elif isinstance(data_type, MapType):
        _refuse_unconvertible(f"{path}.<key>", data_type.keyType)
        _refuse_unconvertible(f"{path}.<value>", data_type.valueType)
    else:
        try:
            to_arrow_type(data_type, timezone="UTC")
        except Exception:
            raise UnsupportedTypeError(
                f"column path {path!r} has type {data_type.simpleString()!r}, which "
                "IndexTables cannot index or store"
            ) from None


def arrow_type(data_type: DataType) -> pa.DataType:
    """The Arrow type Spark uses for columns of this Spark type."""
    return arrow_schema(StructType().add("value", data_type)).field(0).type


def arrow_types(schema: StructType) -> dict[str, pa.DataType]:
    """Each column's Arrow type by lowercase name."""
    return {f.name.lower(): f.type for f in arrow_schema(schema)}
