"""Decimal source columns in a companion index, as the reference indexes them.

tantivy4java's ``schema_derivation.rs`` gives a ``decimal(p, s)`` column of up to
38 digits (Arrow ``decimal128``, every decimal Spark holds) an ``f64`` field
(indexed, fast in HYBRID). Wider decimals are not Spark types: the table's Spark
schema cannot describe them, so a source holding one is refused, naming the column
(:func:`indextables.search.write.arrowinput.spark_arrow_schema`).

The index holds the nearest doubles, which neighbouring decimals share; the values
a read returns always come from the source's Parquet rows, exact. So no condition on
a decimal column is answered from the index: its operands are decimals
(:mod:`indextables.search.query.conditions` types them by the column), which the
index queries refuse, and the rows read back are filtered exactly
(:mod:`indextables.search.query.wherecompare`). Aggregations read a decimal column's
rows, never its fast field (:mod:`indextables.search.aggregate.tableagg`). A Tantivy
``query`` naming the field searches the doubles, as the reference's does.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["has_decimals", "index_schema", "index_values"]


def _index_type(data_type: pa.DataType) -> pa.DataType | None:
    """The type a decimal column is indexed as (None: not a decimal)."""
    return pa.float64() if pa.types.is_decimal128(data_type) else None


def has_decimals(schema: pa.Schema) -> bool:
    """Whether any top-level column of ``schema`` is a decimal."""
    return any(_index_type(f.type) is not None for f in schema)


def index_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with each top-level decimal column as the type its field indexes."""
    return pa.schema(
        [f.with_type(_index_type(f.type) or f.type) for f in schema], metadata=schema.metadata
    )


def index_values(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with its decimal columns as the values their fields index."""
    if not has_decimals(batch.schema):
        return batch
    target = index_schema(batch.schema)
    arrays = [
        column if column.type == field.type else column.cast(field.type)
        for column, field in zip(batch.columns, target, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=target)
