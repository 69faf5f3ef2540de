"""Aggregating rows in Arrow with Spark's ``groupBy().agg()`` semantics (the exact fallback).

When the index cannot answer an aggregation exactly, ``SearchTable.aggregate``
reads the matching rows (the columns the aggregation needs) and aggregates
them here with ``pyarrow.compute``, as Spark would:

- group keys: every NaN is one group and ``-0.0`` is ``0.0`` (Spark normalises
  floating keys); nulls are one group; bucket keys as :mod:`.aggspec` defines
  them (a histogram key below the lowest long is null, NaN keys stay NaN);
- metrics ignore nulls; ``count(col)`` counts non-null values (NaN included),
  ``count`` every row; ``sum`` of an integral column is a long, exact, and a
  sum outside the long range fails as Spark's ANSI mode does; ``avg`` adds
  doubles; ``max`` of a double column holding NaN is NaN (Spark orders NaN
  above every number), ``min`` is NaN only when every value is;
- the result is sorted by the group keys, nulls first and NaN last.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.aggregate.aggmerge import LONG_MAX, LONG_MIN
from indextables.search.aggregate.aggspec import (
    DateHistogram,
    GroupSpec,
    Histogram,
    Metric,
    MetricFn,
    RangeBuckets,
    Terms,
)
from indextables.search.errors import ArithmeticOverflowError, OptionError
from indextables.search.schema import columntypes as ct

__all__ = ["aggregate_rows", "sort_groups"]

_EXACT_F64 = float(1 << 53)
_DAY_US = 86_400_000_000
_ALL = "__all"


def aggregate_rows(
    batches: Iterable[pa.RecordBatch],
    groups: Sequence[GroupSpec],
    metrics: Sequence[Metric],
    schema: pa.Schema,
    *,
    rows_schema: pa.Schema,
) -> pa.Table:
    """The aggregation of ``batches`` as a table of ``schema`` (the output schema).

    ``batches`` (of ``rows_schema``) hold every column a group key or metric
    names (and at least one column, so that rows can be counted).

    Raises:
        OptionError: a group key on a nested column.
        ArithmeticOverflowError: an integral sum outside the range of a long.
    """
    rows = pa.Table.from_batches(list(batches), schema=rows_schema)
    columns = {name.lower(): rows.column(name) for name in rows.column_names}
    work: dict[str, Any] = {_ALL: pa.nulls(rows.num_rows, pa.int8())}
    for i, group in enumerate(groups):
        work[f"g{i}"] = group_key(group, columns[group.column.lower()], schema.field(i).type)
    aggs: list[tuple[Any, ...]] = []
    for j, metric in enumerate(metrics):
        for agg in _metric_aggs(j, metric, columns, work):
            if agg not in aggs:
                aggs.append(agg)
    inputs = pa.table(work)
    keys = [_ALL, *(f"g{i}" for i in range(len(groups)))]
    found = inputs.group_by(keys, use_threads=False).aggregate(aggs) if aggs else inputs
    if not groups and found.num_rows == 0:
        found = _empty_global(found)
    arrays = [found.column(f"g{i}") for i in range(len(groups))]
    for j, metric in enumerate(metrics):
        field = schema.field(len(groups) + j)
        arrays.append(_metric_result(j, metric, found, field))
    table = pa.Table.from_arrays(
        [a.cast(f.type) for a, f in zip(arrays, schema, strict=True)], schema=schema
    )
    return sort_groups(table, len(groups))


# -- group keys ----------------------------------------------------------------------


def group_key(group: GroupSpec, column: pa.ChunkedArray, out_type: pa.DataType) -> pa.Array:
    """The group key of every row, as Spark computes it (floating keys normalised)."""
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if ct.is_nested(values.type):
        raise OptionError(
            f"group_by {group.column!r}: grouping by a nested column "
            f"({ct.type_name(values.type)}) is not supported without Spark"
        )
    if isinstance(group, Terms):
        key = values
    elif isinstance(group, Histogram):
        key = _histogram(group, values, out_type)
    elif isinstance(group, DateHistogram):
        key = _date_histogram(group, values)
    else:
        key = _range(group, values)
    return _normalised(key)


def _normalised(key: pa.Array) -> pa.Array:
    """``-0.0`` as ``0.0`` and every NaN as one NaN, as Spark groups floating values."""
    if not ct.is_floating(key.type):
        return key
    zero = pc.add(key, pa.scalar(0.0, key.type))
    nan = pa.scalar(math.nan, key.type)
    return pc.if_else(pc.is_nan(zero), nan, zero)


def _pmod(values: pa.Array, step: int) -> pa.Array:
    """``values`` modulo ``step`` (positive), never negative: Spark's ``pmod``."""
    divisor = pa.scalar(step, pa.int64())
    rest = pc.subtract(values, pc.multiply(pc.divide(values, divisor), divisor))
    return pc.if_else(pc.less(rest, 0), pc.add(rest, divisor), rest)


def _histogram(group: Histogram, values: pa.Array, out_type: pa.DataType) -> pa.Array:
    if pa.types.is_integer(out_type):
        interval = int(group.interval)
        if interval > LONG_MAX:
            raise OptionError(f"histogram({group.column!r}): interval {interval} is beyond a long")
        whole = values.cast(pa.int64())
        rest = _pmod(whole, interval)
        # Spark's try_subtract: a key below the lowest long is null.
        fits = pc.greater_equal(whole, pc.add(pa.scalar(LONG_MIN, pa.int64()), rest))
        return pc.if_else(fits, pc.subtract(whole, rest), pa.scalar(None, pa.int64()))
    step = pa.scalar(float(group.interval), pa.float64())
    quotient = pc.divide(values.cast(pa.float64(), safe=False), step)
    # Floor in doubles: a quotient of 2**53 or more (NaN, infinities) is already whole.
    large = pc.or_(pc.is_nan(quotient), pc.greater_equal(pc.abs(quotient), _EXACT_F64))
    whole = pc.if_else(large, quotient, pc.floor(quotient))
    return pc.add(pc.multiply(whole, step), 0.0)


def _date_histogram(group: DateHistogram, values: pa.Array) -> pa.Array:
    if ct.is_date(values.type):
        days = values.cast(pa.int32()).cast(pa.int64())
        starts = pc.subtract(days, _pmod(days, group.interval_us // _DAY_US))
        return starts.cast(pa.int32()).cast(pa.date32())
    micros = values.cast(pa.int64())
    return pc.subtract(micros, _pmod(micros, group.interval_us)).cast(values.type)


def _range(group: RangeBuckets, values: pa.Array) -> pa.Array:
    exact = ct.is_integral(values.type) and all(isinstance(e, int) for e in group.edges)
    numbers = values.cast(pa.int64() if exact else pa.float64(), safe=False)
    position = pc.multiply(values.is_valid().cast(pa.int32()), 0)  # zeros, never null
    for edge in group.edges:
        # NaN is below no edge (Spark orders it above every number): the last range.
        above = pc.invert(_below(numbers, edge)).fill_null(False)
        position = pc.add(position, above.cast(pa.int32()))
    labels = pc.take(pa.array(group.labels, pa.string()), position)
    return pc.if_else(values.is_valid(), labels, pa.scalar(None, pa.string()))


def _below(numbers: pa.Array, edge: int | float) -> pa.Array:
    """``numbers < edge`` as Spark compares them (integers exactly, beyond a long too)."""
    if pa.types.is_integer(numbers.type) and isinstance(edge, int):
        if not LONG_MIN <= edge <= LONG_MAX:
            return pc.if_else(numbers.is_valid(), edge > LONG_MAX, pa.scalar(None, pa.bool_()))
        return pc.less(numbers, pa.scalar(edge, pa.int64()))
    return pc.less(numbers, pa.scalar(float(edge), pa.float64()))


# -- metrics -------------------------------------------------------------------------


def _metric_aggs(
    j: int, metric: Metric, columns: dict[str, Any], work: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """The pyarrow aggregations of one metric; their input columns go into ``work``."""
    if metric.column is None:
        return [([], "count_all")]
    values = columns[metric.column.lower()]
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    name = f"m{j}"
    if metric.fn is MetricFn.COUNT:
        work[name] = values
        return [(name, "count", pc.CountOptions(mode="only_valid"))]
    at_least_one = pc.ScalarAggregateOptions(min_count=1)
    if metric.fn is MetricFn.SUM and ct.is_integral(values.type):
        work[name] = values.cast(pa.decimal128(38, 0))  # exact: checked against a long later
        return [(name, "sum", at_least_one)]
    if metric.fn in (MetricFn.SUM, MetricFn.AVG):
        work[name] = values.cast(pa.float64(), safe=False)
        return [(name, "sum" if metric.fn is MetricFn.SUM else "mean", at_least_one)]
    work[name] = values
    out: list[tuple[Any, ...]] = [(name, "min" if metric.fn is MetricFn.MIN else "max")]
    if ct.is_floating(values.type):
        work[f"{name}_nan"] = pc.is_nan(values)
        out.append((f"{name}_nan", "any", at_least_one))
    return out


def _empty_global(found: pa.Table) -> pa.Table:
    """The one row of a global aggregation over no rows: counts 0, the rest null."""
    arrays = [
        pa.array([0] if f.name.endswith(("count", "count_all")) else [None], f.type)
        for f in found.schema
    ]
    return pa.Table.from_arrays(arrays, schema=found.schema)


def _metric_result(j: int, metric: Metric, found: pa.Table, field: pa.Field) -> pa.Array:
    if metric.column is None:
        return found.column("count_all").combine_chunks()
    result = found.column(f"m{j}_{_fn_name(metric)}").combine_chunks()
    if metric.fn is MetricFn.SUM and pa.types.is_decimal(result.type):
        return _checked_long(metric, result)
    if metric.fn is MetricFn.MAX and f"m{j}_nan_any" in found.column_names:
        any_nan = found.column(f"m{j}_nan_any").combine_chunks().fill_null(False)
        return pc.if_else(any_nan, pa.scalar(math.nan, result.type), result)
    return result.cast(field.type)


def _fn_name(metric: Metric) -> str:
    return {
        MetricFn.COUNT: "count",
        MetricFn.SUM: "sum",
        MetricFn.AVG: "mean",
        MetricFn.MIN: "min",
        MetricFn.MAX: "max",
    }[metric.fn]


def _checked_long(metric: Metric, totals: pa.Array) -> pa.Array:
    out: list[int | None] = []
    for total in totals.to_pylist():
        if total is not None:
            total = int(total)
            if not LONG_MIN <= total <= LONG_MAX:
                raise ArithmeticOverflowError(
                    f"metric {metric.name!r}: sum({metric.column!r}) = {total} overflows a long "
                    "(Spark's ARITHMETIC_OVERFLOW in ANSI mode); sum a double cast instead"
                )
        out.append(total)
    return pa.array(out, pa.int64())


# -- order ---------------------------------------------------------------------------


def sort_groups(table: pa.Table, keys: int) -> pa.Table:
    """``table`` sorted by its first ``keys`` columns, nulls first and NaN after every number."""
    if keys == 0 or table.num_rows < 2:
        return table
    sort: dict[str, Any] = {}
    order: list[tuple[str, str]] = []
    for i in range(keys):
        column = table.column(i).combine_chunks()
        sort[f"v{i}"] = column.is_valid()
        order.append((f"v{i}", "ascending"))
        if ct.is_floating(column.type):
            nan = pc.fill_null(pc.is_nan(column), False)
            sort[f"n{i}"] = nan
            column = pc.if_else(nan, pa.scalar(0.0, column.type), column)
            order.append((f"n{i}", "ascending"))
        sort[f"k{i}"] = column
        order.append((f"k{i}", "ascending"))
    indices = pc.sort_indices(pa.table(sort), sort_keys=order)
    return table.take(indices)
