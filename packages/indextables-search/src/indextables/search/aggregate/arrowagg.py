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
  above every number), ``min`` is NaN only when every value is; every NaN
  counts alike, quiet or signaling, of either sign
  (:mod:`indextables.search.schema.nans`);
- the result is sorted by the group keys, nulls first and NaN last.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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
from indextables.search.schema.nans import quiet_nans

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
    names (and at least one column, so that rows can be counted). They are
    aggregated one at a time into partial groups (counts, exact sums, minimums,
    maximums, NaN flags), which merge as Spark merges its partial aggregates:
    memory holds one batch and the groups, never the rows.

    Raises:
        OptionError: a group key on a nested column.
        ArithmeticOverflowError: an integral sum outside the range of a long.
    """
    stats = _stats(metrics, rows_schema)
    keys = [_ALL, *(f"g{i}" for i in range(len(groups)))]
    partials: list[pa.Table] = []
    held = 0
    seen = False
    for batch in batches:
        seen = True
        partial = _partial(batch, groups, stats, schema, keys)
        partials.append(partial)
        held += partial.num_rows
        if held > _COMPACT_ROWS and len(partials) > 1:
            partials = [_merge(partials, stats, keys)]
            held = partials[0].num_rows
    if not seen:
        partials.append(_partial(rows_schema.empty_table(), groups, stats, schema, keys))
    found = _merge(partials, stats, keys) if len(partials) > 1 else partials[0]
    if not groups and found.num_rows == 0:
        found = _empty_global(found, stats)
    arrays = [found.column(f"g{i}") for i in range(len(groups))]
    for j, metric in enumerate(metrics):
        field = schema.field(len(groups) + j)
        arrays.append(_metric_result(j, metric, found, field))
    table = pa.Table.from_arrays(
        [a.cast(f.type) for a, f in zip(arrays, schema, strict=True)], schema=schema
    )
    return sort_groups(table, len(groups))


# Partial groups held before they are merged into one table (memory: the groups, not the rows).
_COMPACT_ROWS = 65_536


@dataclass(frozen=True, slots=True)
class _Stat:
    """One partial aggregate: its name, its input column, per batch and when merging."""

    name: str
    source: str | None  # a column of the rows, None for the row count
    # how the input is made: "count", "sum_exact", "sum_double", "same", "ordered", "nan"
    prepare: str
    batch_fn: str
    merge_fn: str


def _stats(metrics: Sequence[Metric], rows_schema: pa.Schema) -> list[_Stat]:
    """The partial aggregates the metrics need (each once)."""
    types = {f.name.lower(): f.type for f in rows_schema}
    out: dict[str, _Stat] = {}

    def add(stat: _Stat) -> None:
        out.setdefault(stat.name, stat)

    for j, metric in enumerate(metrics):
        if metric.column is None:
            add(_Stat("count_all", None, "count", "count_all", "sum"))
            continue
        column, kind = metric.column.lower(), types[metric.column.lower()]
        name = f"m{j}"
        if metric.fn is MetricFn.COUNT:
            add(_Stat(f"{name}_count", column, "same", "count", "sum"))
        elif metric.fn is MetricFn.SUM and ct.is_integral(kind):
            add(_Stat(f"{name}_sum", column, "sum_exact", "sum", "sum"))
        elif metric.fn in (MetricFn.SUM, MetricFn.AVG):
            add(_Stat(f"{name}_sum", column, "sum_double", "sum", "sum"))
            if metric.fn is MetricFn.AVG:
                add(_Stat(f"{name}_n", column, "same", "count", "sum"))
        else:
            fn = "min" if metric.fn is MetricFn.MIN else "max"
            add(_Stat(f"{name}_{fn}", column, "ordered", fn, fn))
            if ct.is_floating(kind):
                add(_Stat(f"{name}_nan", column, "nan", "any", "any"))
    return list(out.values())


def _partial(
    batch: pa.RecordBatch | pa.Table,
    groups: Sequence[GroupSpec],
    stats: Sequence[_Stat],
    schema: pa.Schema,
    keys: Sequence[str],
) -> pa.Table:
    """One batch's groups and partial aggregates (columns: keys, then the stats by name)."""
    columns = {name.lower(): _whole(batch.column(name)) for name in batch.schema.names}
    work: dict[str, Any] = {_ALL: pa.nulls(batch.num_rows, pa.int8())}
    for i, group in enumerate(groups):
        work[f"g{i}"] = group_key(group, columns[group.column.lower()], schema.field(i).type)
    aggs: list[tuple[Any, ...]] = []
    names: list[str] = []
    for stat in stats:
        if stat.source is None:
            aggs.append(([], "count_all"))
        else:
            work[stat.name] = _prepared(stat, columns[stat.source])
            aggs.append((stat.name, stat.batch_fn, _options(stat.batch_fn)))
        names.append(stat.name)
    found = pa.table(work).group_by(list(keys), use_threads=False).aggregate(aggs)
    # pyarrow names the outputs "<input>_<fn>" after the targets: rename them to the stats.
    return found.select(
        [*(f"{s.name}_{s.batch_fn}" if s.source else "count_all" for s in stats), *keys]
    ).rename_columns([*names, *keys])


def _merge(partials: Sequence[pa.Table], stats: Sequence[_Stat], keys: Sequence[str]) -> pa.Table:
    """Partial tables merged into one (the stats combined per group)."""
    table = pa.concat_tables(partials)
    aggs = [(s.name, s.merge_fn, _options(s.merge_fn)) for s in stats]
    found = table.group_by(list(keys), use_threads=False).aggregate(aggs)
    return found.select([*(f"{s.name}_{s.merge_fn}" for s in stats), *keys]).rename_columns(
        [*(s.name for s in stats), *keys]
    )


def _options(fn: str) -> Any:
    if fn == "count":
        return pc.CountOptions(mode="only_valid")
    if fn in ("sum", "any"):
        return pc.ScalarAggregateOptions(min_count=1)
    return None


def _whole(values: Any) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _prepared(stat: _Stat, values: pa.Array) -> pa.Array:
    if stat.prepare == "sum_exact":
        return values.cast(pa.decimal128(38, 0))  # exact: checked against a long at the end
    if stat.prepare == "sum_double":
        return values.cast(pa.float64(), safe=False)
    if stat.prepare == "nan":
        return pc.is_nan(values)
    if stat.prepare == "ordered":
        return quiet_nans(values)  # group_by's min/max restart at a signaling NaN
    return values


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


def _empty_global(found: pa.Table, stats: Sequence[_Stat]) -> pa.Table:
    """The one row of a global aggregation over no rows: counts 0, the rest null."""
    counts = {s.name for s in stats if s.batch_fn in ("count", "count_all")}
    arrays = [pa.array([0] if f.name in counts else [None], f.type) for f in found.schema]
    return pa.Table.from_arrays(arrays, schema=found.schema)


def _metric_result(j: int, metric: Metric, found: pa.Table, field: pa.Field) -> pa.Array:
    if metric.column is None:
        return found.column("count_all").combine_chunks()
    name = f"m{j}"
    if metric.fn is MetricFn.COUNT:
        return found.column(f"{name}_count").combine_chunks()
    if metric.fn is MetricFn.AVG:
        total = found.column(f"{name}_sum").combine_chunks()
        n = found.column(f"{name}_n").combine_chunks()
        positive = pc.greater(n, 0)
        mean = pc.divide(total, n.cast(pa.float64()))
        return pc.if_else(positive, mean, pa.scalar(None, pa.float64()))
    if metric.fn is MetricFn.SUM:
        result = found.column(f"{name}_sum").combine_chunks()
        if pa.types.is_decimal(result.type):
            return _checked_long(metric, result)
        return result.cast(field.type)
    fn = "min" if metric.fn is MetricFn.MIN else "max"
    result = found.column(f"{name}_{fn}").combine_chunks()
    if metric.fn is MetricFn.MAX and f"{name}_nan" in found.column_names:
        any_nan = found.column(f"{name}_nan").combine_chunks().fill_null(False)
        return pc.if_else(any_nan, pa.scalar(math.nan, result.type), result)
    return result.cast(field.type)


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
