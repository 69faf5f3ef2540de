"""Data handed to ``write_table`` -> Arrow batches typed exactly as Spark would hold them.

Any Arrow-streamable object is accepted: a pyarrow ``Table``, ``RecordBatch`` or
``RecordBatchReader``, a pandas or Polars DataFrame, or anything with
``__arrow_c_stream__``. Its types are then converted as PySpark's
``createDataFrame(<pyarrow.Table>)`` converts them (``from_arrow_type`` with
timezone-naive timestamps as ``timestamp_ntz``, then a cast to the Spark schema's
Arrow form):

* ``large_string``/``string_view`` -> string; ``large_binary``/``binary_view``/
  ``fixed_size_binary`` -> binary; ``large_list``/``fixed_size_list``/``list_view``/
  ``large_list_view`` -> list; dictionary-encoded columns (any index type, views as
  values too: Polars' categoricals) and run-end encoded columns -> their value type
  (Spark decodes them); the same inside structs, lists and maps
  (:mod:`indextables.search.schema.plainarrow` first, then the cast);
* timestamps -> microseconds; nanoseconds are *floored* to the microsecond (as
  PySpark's ``floor_temporal``), seconds and milliseconds are exact. A timezone-aware
  timestamp becomes the UTC instant (``timestamp``), a naive one ``timestamp_ntz``;
* unsigned integers, which Spark has no type for, become the next wider signed
  type when ``write_table`` asks (``unsigned=True``: ``uint8`` -> short, ``uint16`` ->
  int, ``uint32`` -> long, ``uint64`` -> long with a value beyond the long's range
  refused, naming the column); otherwise they are refused;
* types Spark has no type for (``float16``, ``date64``, ``time``, ``duration``,
  intervals, unions...) are refused, naming the column.

:func:`align_batch` then puts a batch in a table's schema (column order, safe
upcasts, nulls for the columns it lacks: :mod:`.schemamerge`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.errors import ArgumentError, UnsupportedTypeError
from indextables.search.schema import columntypes as ct
from indextables.search.schema.plainarrow import is_plain, plain_array, plain_type

__all__ = ["align_batch", "as_reader", "conform_batch", "spark_arrow_schema"]

_UTC = "UTC"


def as_reader(data: Any) -> pa.RecordBatchReader:
    """A stream of record batches over ``data`` (see the module docstring).

    Raises:
        ArgumentError: ``data`` is nothing Arrow can stream.
    """
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.Table):
        return pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(data.schema, [data])
    if hasattr(data, "__arrow_c_stream__"):
        try:
            return pa.RecordBatchReader.from_stream(data)
        except Exception as error:
            raise ArgumentError(f"data: its Arrow C stream cannot be read: {error}") from None
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        try:
            table = pa.Table.from_pandas(data, preserve_index=False)
        except Exception as error:
            message = f"data: the pandas DataFrame cannot become Arrow: {error}"
            raise ArgumentError(message) from None
        return as_reader(table)
    if module == "polars" and hasattr(data, "to_arrow"):
        return as_reader(data.to_arrow())
    raise ArgumentError(
        f"data must be Arrow-streamable (a pyarrow Table, RecordBatch or RecordBatchReader, "
        f"a pandas or Polars DataFrame, or an object with __arrow_c_stream__), "
        f"not {type(data).__name__}"
    )


_SPARK_DECIMAL_DIGITS = 38


def spark_arrow_schema(schema: pa.Schema, *, unsigned: bool = False) -> pa.Schema:
    """The Arrow schema Spark would hold ``schema``'s data in (names and nullability kept).

    ``unsigned``: unsigned integers become the next wider signed type (see the
    module docstring) instead of being refused.

    Raises:
        UnsupportedTypeError: a column (or a field inside one) of a type Spark has
            no type for, named by its path.
    """
    return pa.schema(
        [
            pa.field(f.name, spark_arrow_type(f.type, f.name, unsigned=unsigned), f.nullable)
            for f in schema
        ]
    )


_WIDER_SIGNED = {8: pa.int16(), 16: pa.int32(), 32: pa.int64(), 64: pa.int64()}


def spark_arrow_type(t: pa.DataType, path: str, *, unsigned: bool = False) -> pa.DataType:
    """The Arrow type Spark holds values of Arrow type ``t`` in."""
    types = pa.types
    if not is_plain(t):
        return spark_arrow_type(plain_type(t), path, unsigned=unsigned)
    if types.is_boolean(t) or types.is_signed_integer(t):
        return t
    if unsigned and types.is_unsigned_integer(t):
        return _WIDER_SIGNED[t.bit_width]
    if types.is_decimal(t):
        if t.precision > _SPARK_DECIMAL_DIGITS:
            raise UnsupportedTypeError(
                f"column {path!r} has type decimal({t.precision},{t.scale}), wider than "
                f"Spark's decimals ({_SPARK_DECIMAL_DIGITS} digits at most); cast it first "
                "(a companion build: leave the column out of the source or cast it there)"
            )
        return pa.decimal128(t.precision, t.scale)
    if types.is_float32(t) or types.is_float64(t) or types.is_date32(t) or types.is_null(t):
        return t
    if ct.is_string(t):
        return pa.string()
    if ct.is_binary(t) or types.is_fixed_size_binary(t):
        return pa.binary()
    if types.is_timestamp(t):
        return pa.timestamp("us", tz=_UTC if t.tz is not None else None)
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t):
        item = t.value_field
        inner = spark_arrow_type(item.type, f"{path}[]", unsigned=unsigned)
        return pa.list_(pa.field("element", inner, nullable=item.nullable))
    if types.is_map(t):
        key = spark_arrow_type(t.key_type, f"{path}.<key>", unsigned=unsigned)
        value = spark_arrow_type(t.item_type, f"{path}.<value>", unsigned=unsigned)
        return pa.map_(key, pa.field("value", value, nullable=t.item_field.nullable))
    if types.is_struct(t):
        return pa.struct(
            [
                pa.field(
                    f.name,
                    spark_arrow_type(f.type, f"{path}.{f.name}", unsigned=unsigned),
                    nullable=f.nullable,
                )
                for f in ct.fields_of(t)
            ]
        )
    raise UnsupportedTypeError(
        f"column {path!r} has Arrow type {t}, which no Spark type that IndexTables "
        "stores can hold (Spark's createDataFrame refuses it, or the index cannot store "
        "it); cast it first"
    )


def conform_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with Spark's types (``target`` from :func:`spark_arrow_schema`).

    Raises:
        UnsupportedTypeError: a value that does not fit (a timestamp in seconds
            beyond the microsecond range), naming the column.
        ArgumentError: a view, dictionary or run-end encoded column whose buffers
            contradict each other (a view past its data, an index past the
            dictionary), naming the column: such columns are checked whole before
            they are decoded.
    """
    if batch.schema.equals(target):
        return batch
    columns = []
    for name, column, want in zip(batch.schema.names, batch.columns, target, strict=True):
        if not is_plain(column.type):
            _check_layout(name, column)
        try:
            columns.append(_floor_nanos(plain_array(column)).cast(want.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowIndexError) as error:
            raise UnsupportedTypeError(
                f"column {name!r} ({column.type}) cannot be held as Spark's {want.type}: {error}"
            ) from None
    return pa.RecordBatch.from_arrays(columns, schema=target)


def align_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` (Spark's types) in the table schema ``target``: its columns in
    ``target``'s order and types (matched by name ignoring case; the types are safe
    upcasts, checked by :func:`.schemamerge.resolve_schema`), nulls where it has none.

    Raises:
        UnsupportedTypeError: a value the table's type cannot hold (a ``uint64``
            beyond the long's range), naming the column.
    """
    if batch.schema.equals(target):
        return batch
    index = {name.lower(): i for i, name in enumerate(batch.schema.names)}
    columns = []
    for want in target:
        at = index.get(want.name.lower())
        if at is None:
            columns.append(pa.nulls(batch.num_rows, type=want.type))
            continue
        column = batch.column(at)
        try:
            columns.append(column if column.type.equals(want.type) else column.cast(want.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise UnsupportedTypeError(
                f"column {want.name!r} ({column.type}) cannot be held as the table's "
                f"{want.type}: {error}"
            ) from None
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _check_layout(name: str, column: pa.Array) -> None:
    """Raise ``ArgumentError`` unless ``column``'s buffers are consistent (decoding views
    or dictionaries of an inconsistent array reads out of bounds)."""
    try:
        column.validate(full=True)
    except pa.ArrowException as error:
        raise ArgumentError(
            f"data: column {name!r} ({column.type}) is not valid Arrow data: {error}"
        ) from None


def _floor_nanos(array: pa.Array) -> pa.Array:
    """Nanosecond timestamps (also nested) floored to the microsecond, as PySpark does."""
    t = array.type
    if not _has_nanos(t):
        return array
    if pa.types.is_dictionary(t):
        return _floor_nanos(array.dictionary_decode())
    if pa.types.is_timestamp(t):
        return pc.floor_temporal(array, unit="microsecond")
    if pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t):
        plain = pa.list_(t.value_field)
        return _floor_nanos(array.cast(plain))
    if array.offset:  # a slice: rebuild from a copy whose offsets and children start at 0
        array = pa.concat_arrays([array])
    mask = array.is_null() if array.null_count else None
    if pa.types.is_list(t):
        values = _floor_nanos(array.values)
        return pa.ListArray.from_arrays(
            array.offsets, values, type=pa.list_(t.value_field.with_type(values.type)), mask=mask
        )
    if pa.types.is_map(t):
        keys, items = _floor_nanos(array.keys), _floor_nanos(array.items)
        kind = pa.map_(keys.type, t.item_field.with_type(items.type))
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=kind, mask=mask)
    children = [_floor_nanos(child) for child in array.flatten()]
    fields = [f.with_type(c.type) for f, c in zip(ct.fields_of(t), children, strict=True)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


def _has_nanos(t: pa.DataType) -> bool:
    if pa.types.is_timestamp(t):
        return bool(t.unit == "ns")
    if pa.types.is_dictionary(t):
        return _has_nanos(t.value_type)
    if pa.types.is_map(t):
        return _has_nanos(t.key_type) or _has_nanos(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_nanos(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_nanos(f.type) for f in ct.fields_of(t))
    return False
