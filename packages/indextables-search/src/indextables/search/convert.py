"""Value conversion between Arrow/Spark and Tantivy documents, both ways.

Rows go into Tantivy as dicts (``Document.from_dict`` coerces per field):
dates clamped into Tantivy's span, nested values in their searchable JSON
form (:mod:`indextables.search.jsoncodec`), each with the row key of its row
in the split's Arrow copy. Rows come back from stored documents (or numeric
fast fields) and are rebuilt as Arrow arrays exactly typed to the Spark
schema (Spark refuses batches whose types differ from ``to_arrow_schema``);
values that stored documents cannot hold exactly come from the Arrow copy
(:mod:`indextables.search.rowcopy`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.jsoncodec import from_json, to_json_field
from indextables.search.mapping import ROW_KEY_FIELD, FieldKind, FieldSpec
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NullType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

# Tantivy dates are i64 nanoseconds: the span it can index, at microsecond precision.
TANTIVY_MIN_MICROS = -(2**63) // 1000 + 1
TANTIVY_MAX_MICROS = (2**63 - 1) // 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TANTIVY_MIN_DATE = _EPOCH + timedelta(microseconds=TANTIVY_MIN_MICROS)
TANTIVY_MAX_DATE = _EPOCH + timedelta(microseconds=TANTIVY_MAX_MICROS)


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for batches of this Spark schema."""
    return to_arrow_schema(schema, timezone="UTC")


def clamp_micros(micros: int) -> int:
    """Epoch microseconds clamped into the span a Tantivy date field can hold.

    Dates and timestamps outside 1677-09-21 .. 2262-04-11 are indexed as the
    nearest end of that span (their exact value stays in the split's Arrow
    copy). Clamping keeps the order, so a range over in-span bounds matches
    every row it should; only a bound at an end of the span also matches the
    rows beyond it.
    """
    return min(max(micros, TANTIVY_MIN_MICROS), TANTIVY_MAX_MICROS)


def is_clamped(value: datetime) -> bool:
    """True when a stored date may stand for a value outside Tantivy's span."""
    return value <= TANTIVY_MIN_DATE or value >= TANTIVY_MAX_DATE


def _micros_to_date(micros: list[int | None]) -> list[datetime | None]:
    return [None if m is None else _EPOCH + timedelta(microseconds=clamp_micros(m)) for m in micros]


def _column_values(column: pa.Array, spec: FieldSpec, data_type: DataType) -> list[Any]:
    """Python values ready for Tantivy, converted column-wise where Arrow can help."""
    kind = spec.kind
    if kind is FieldKind.DATE and pa.types.is_timestamp(column.type):
        # to_pylist() on zoned timestamps costs ~40 us a value; integer micros do not.
        micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
        return _micros_to_date(micros.to_pylist())
    if kind is FieldKind.DATE and pa.types.is_date32(column.type):
        days = column.cast(pa.int32()).to_pylist()
        return _micros_to_date([None if d is None else d * 86_400_000_000 for d in days])
    values: list[Any] = column.to_pylist()
    if kind is FieldKind.JSON:
        return [_json_value(data_type, v, spec.name) for v in values]
    return values


def _json_value(data_type: DataType, value: Any, column: str) -> Any:
    if value is None:
        return None
    return to_json_field(data_type, value, column=column)


def row_key(batch_number: int, row: int) -> int:
    """The row key of row ``row`` of record batch ``batch_number`` of a split's Arrow copy."""
    return (batch_number << 32) | row


def documents(
    batch: pa.RecordBatch,
    specs: Sequence[FieldSpec],
    schema: tantivy.Schema,
    *,
    batch_number: int | None = None,
) -> Iterator[tantivy.Document]:
    """Tantivy documents for the rows of ``batch`` (null values are left out).

    With ``batch_number`` (the batch's position in the split's Arrow copy),
    each document also gets its row key, which leads a read from a search
    hit to the row's exact values.
    """
    names = [s.name for s in specs]
    types = _spark_types(batch.schema, specs)
    columns = [
        _column_values(batch.column(s.name), s, t) for s, t in zip(specs, types, strict=True)
    ]
    if batch_number is not None:
        names.append(ROW_KEY_FIELD)
        columns.append([row_key(batch_number, r) for r in range(batch.num_rows)])
    from_dict = tantivy.Document.from_dict
    if not any(batch.column(s.name).null_count for s in specs):
        # No value to leave out: the per-row filter is ~10% of the Python time of a write.
        for row in zip(*columns, strict=True):
            yield from_dict(dict(zip(names, row, strict=True)), schema)
        return
    for row in zip(*columns, strict=True):
        yield from_dict({n: v for n, v in zip(names, row, strict=True) if v is not None}, schema)


def _spark_types(arrow: pa.Schema, specs: Sequence[FieldSpec]) -> list[DataType]:
    """The Spark type of each JSON spec's column (other kinds need none)."""
    from pyspark.sql.pandas.types import from_arrow_type

    return [
        from_arrow_type(arrow.field(s.name).type) if s.kind is FieldKind.JSON else NullType()
        for s in specs
    ]


def column_from_docs(
    docs: Sequence[tantivy.Document], name: str, data_type: Any, arrow_type: pa.DataType
) -> pa.Array:
    """One Arrow column rebuilt from stored documents (``get_first``: ~40% cheaper than to_dict)."""
    if isinstance(data_type, _PASS_THROUGH):
        # Strings, numbers and timestamps come out of Tantivy as Arrow takes them.
        return pa.array([doc.get_first(name) for doc in docs], type=arrow_type)
    values = [from_stored(data_type, doc.get_first(name)) for doc in docs]
    return pa.array(values, type=arrow_type)


def has_clamped_dates(docs: Sequence[tantivy.Document], name: str) -> bool:
    """True when a stored date of field ``name`` may stand for a value outside Tantivy's span."""
    for doc in docs:
        value = doc.get_first(name)
        if isinstance(value, datetime) and is_clamped(value):
            return True
    return False


# Spark types whose stored values Arrow takes as they are.
_PASS_THROUGH = (
    StringType,
    BooleanType,
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    TimestampType,
)


def from_stored(data_type: DataType, value: Any) -> Any:
    """A Spark value from a stored document's value (a Tantivy date, JSON object, address...)."""
    if value is None:
        return None
    if isinstance(value, datetime) and not isinstance(data_type, StringType):
        if isinstance(data_type, DateType):
            return value.astimezone(UTC).date()
        if isinstance(data_type, TimestampNTZType):
            return value.astimezone(UTC).replace(tzinfo=None)
        return value
    if isinstance(data_type, StringType) and isinstance(value, str) and value.startswith("::ffff:"):
        return value[len("::ffff:") :]  # an IPv4 address stored in an ip field
    return from_json(data_type, value)
