"""Aggregating a table's matching rows from the index (``SearchTable.aggregate``).

Planning checks the group keys and metrics against the table's Arrow schema
(unknown columns, wrong types and data columns without a fast field fail,
naming the column and the option that makes a field fast) and decides
whether the index can answer (:func:`plan_aggregation`): each split then
runs Tantivy's aggregations (:mod:`.splitagg`) and the per-split group
tables merge exactly (:mod:`.aggmerge`); partition keys come from the log.
When the index cannot answer exactly, :func:`aggregate_plan` raises
:class:`~.aggmerge.NotExact` and the caller aggregates the rows its exact
filter keeps (:mod:`.arrowagg`). The result is typed as Spark's
``groupBy().agg()`` types it (:func:`output_schema`) and sorted by the group
keys, nulls first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from indextables.search.aggregate.aggmerge import NotExact, final_rows, merge_tables
from indextables.search.aggregate.aggspec import (
    DateHistogram,
    GroupSpec,
    Histogram,
    Metric,
    MetricFn,
    RangeBuckets,
    Terms,
)
from indextables.search.aggregate.arrowagg import sort_groups
from indextables.search.aggregate.splitagg import AggPlan, Level, MetricPlan, aggregate_split
from indextables.search.aggregate.tableplan import SplitRunner, TablePlan, run_splits
from indextables.search.errors import OptionError
from indextables.search.options import INDEXING
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldKind, FieldSpec, fast_read_type

__all__ = [
    "aggregate_plan",
    "aggregate_table",
    "group_type",
    "metric_type",
    "output_schema",
    "plan_aggregation",
]

_FAST_OPTION = INDEXING + "fastfields"
R = TypeVar("R")


def _numeric(t: pa.DataType) -> bool:
    return ct.is_integral(t) or ct.is_floating(t)


def _column_type(schema: pa.Schema, column: str, where: str) -> pa.DataType:
    for f in schema:
        if f.name.lower() == column.lower():
            return f.type
    raise OptionError(
        f"{where} names column {column!r}, which the table does not have "
        f"(columns: {', '.join(schema.names)})"
    )


def plan_aggregation(
    plan: TablePlan, groups: Sequence[GroupSpec], metrics: Sequence[Metric]
) -> AggPlan | None:
    """How splits compute the aggregation, or None when only the rows can (types are checked).

    Raises:
        OptionError: an unknown column, a bucket on a column of the wrong type,
            sum/avg of a non-numeric column, or a data column without a fast field.
    """
    partitions = {c.lower() for c in plan.partition_columns}
    levels: list[Level | None] = []
    for group in groups:
        data_type = _column_type(plan.schema, group.column, "group_by")
        _check_bucket_type(group, data_type)
        partition = group.column.lower() in partitions
        spec = None if partition else _fast_spec(plan.fields, group.column, "group_by")
        levels.append(_level(group, data_type, partition, spec))
    plans = [_metric_plan(plan, metric, partitions) for metric in metrics]
    if any(lv is None for lv in levels) or any(m is None for m in plans):
        return None
    return AggPlan(
        plan.search,
        plan.conditions,
        tuple(lv for lv in levels if lv is not None),
        tuple(m for m in plans if m is not None),
    )


def _check_bucket_type(group: GroupSpec, data_type: pa.DataType) -> None:
    if isinstance(group, Histogram | RangeBuckets) and not _numeric(data_type):
        kind = "histogram" if isinstance(group, Histogram) else "range"
        raise OptionError(
            f"{kind}({group.column!r}) needs a numeric column; it is {ct.type_name(data_type)}"
        )
    if isinstance(group, DateHistogram):
        if not (ct.is_date(data_type) or ct.is_timestamp(data_type)):
            raise OptionError(
                f"date_histogram({group.column!r}) needs a date or timestamp column; it is "
                f"{ct.type_name(data_type)}"
            )
        if ct.is_date(data_type) and group.interval_us % 86_400_000_000:
            raise OptionError(
                f"date_histogram({group.column!r}): a date column needs whole days as interval"
            )


def _fast_spec(fields: Mapping[str, FieldSpec], column: str, where: str) -> FieldSpec | None:
    spec = fields.get(column.lower())
    if spec is not None and not spec.fast:
        raise OptionError(
            f"{where}: column {column!r} has no fast field, so the index cannot aggregate it; "
            f"write the table with option {_FAST_OPTION}={column},<its other fast columns> "
            "(when given, the option lists every fast field)"
        )
    return spec


def _level(
    group: GroupSpec, data_type: pa.DataType, partition: bool, spec: FieldSpec | None
) -> Level | None:
    if partition:
        return Level(group, data_type, True) if isinstance(group, Terms) else None
    if spec is None or _approximate(data_type, spec.kind):
        return None
    kind = spec.kind
    if isinstance(group, Terms):
        ok = kind in (FieldKind.I64, FieldKind.BOOL, FieldKind.DATE) or spec.is_exact
        # Timestamps without zone are held as UTC micros too, but keyed as wall-clock times.
        ok = ok and (
            kind is not FieldKind.DATE or ct.is_date(data_type) or ct.is_timestamp(data_type)
        )
    elif isinstance(group, DateHistogram):
        ok = kind is FieldKind.DATE
    else:
        ok = kind in (FieldKind.I64, FieldKind.F64)
    return Level(group, data_type, False, kind) if ok else None


def _metric_plan(plan: TablePlan, metric: Metric, partitions: set[str]) -> MetricPlan | None:
    if metric.column is None:
        return MetricPlan(metric, None, False)
    data_type = _column_type(plan.schema, metric.column, f"metric {metric.name!r}")
    if metric.fn in (MetricFn.SUM, MetricFn.AVG) and not _numeric(data_type):
        raise OptionError(
            f"metric {metric.name!r}: {metric.fn.value} needs a numeric column; "
            f"{metric.column!r} is {ct.type_name(data_type)}"
        )
    if metric.column.lower() in partitions:
        return MetricPlan(metric, data_type, True) if metric.fn is MetricFn.COUNT else None
    spec = _fast_spec(plan.fields, metric.column, f"metric {metric.name!r}")
    if spec is None:
        return None
    if metric.fn is MetricFn.COUNT or (
        spec.kind in (FieldKind.I64, FieldKind.F64) and not _approximate(data_type, spec.kind)
    ):
        return MetricPlan(metric, data_type, False, spec.kind)
    return None  # min/max of strings, dates, booleans and decimals: from the rows


def _approximate(data_type: pa.DataType, kind: FieldKind) -> bool:
    """Whether a column's numeric fast field holds approximations of its values (a
    companion's decimals, indexed as the nearest doubles: companion.decimals); its exact
    values are the source's rows."""
    numeric = kind in (FieldKind.I64, FieldKind.F64)
    return numeric and fast_read_type(data_type, kind) is None


def output_schema(
    schema: pa.Schema, groups: Sequence[GroupSpec], metrics: Sequence[Metric]
) -> pa.Schema:
    """The result's schema, as Spark's ``groupBy().agg()`` types it (counts never null)."""
    types = {f.name.lower(): f.type for f in schema}
    out = [pa.field(g.name, group_type(g, types[g.column.lower()])) for g in groups]
    for metric in metrics:
        column_type = types[metric.column.lower()] if metric.column else None
        nullable = metric.fn is not MetricFn.COUNT
        out.append(pa.field(metric.name, metric_type(metric, column_type), nullable))
    return pa.schema(out)


def group_type(group: GroupSpec, data_type: pa.DataType) -> pa.DataType:
    """The type of a group key: histograms are long or double, ranges are labels."""
    if isinstance(group, Histogram):
        integral = ct.is_integral(data_type) and isinstance(group.interval, int)
        return pa.int64() if integral else pa.float64()
    if isinstance(group, RangeBuckets):
        return pa.string()
    return data_type


def metric_type(metric: Metric, data_type: pa.DataType | None) -> pa.DataType:
    """The type of a metric: counts are long, averages double, sums long or double."""
    if metric.fn is MetricFn.COUNT:
        return pa.int64()
    if metric.fn is MetricFn.AVG:
        return pa.float64()
    if metric.fn is MetricFn.SUM:
        return pa.int64() if data_type is not None and ct.is_integral(data_type) else pa.float64()
    assert data_type is not None
    return data_type


def aggregate_table(
    plan: TablePlan,
    groups: Sequence[GroupSpec],
    metrics: Sequence[Metric],
    rows: Callable[[pa.Schema], R],
    *,
    runner: SplitRunner | None = None,
) -> tuple[pa.Table | R, str]:
    """The aggregation and what answered it: ``"index"`` or ``"rows"``.

    From the index when it answers exactly (splits run by ``runner``, see
    :func:`~.tableplan.run_splits`), else ``rows(schema)``: the fallback, given
    the output schema (:func:`output_schema`), aggregates the rows the exact
    filter keeps (the engine with :mod:`.arrowagg`, the Spark adapter with Spark).

    Raises:
        OptionError: bad group keys or metrics (see :func:`plan_aggregation`).
    """
    agg = plan_aggregation(plan, groups, metrics)
    schema = output_schema(plan.schema, groups, metrics)
    if agg is not None:
        try:
            return aggregate_plan(plan, agg, schema, runner=runner), "index"
        except NotExact:
            pass
    return rows(schema), "rows"


def aggregate_plan(
    plan: TablePlan, agg: AggPlan, schema: pa.Schema, *, runner: SplitRunner | None = None
) -> pa.Table:
    """The aggregation from the index, as a table of ``schema`` (:func:`output_schema`).

    Raises:
        NotExact: the index cannot answer exactly.
    """
    if not plan.decided:
        raise NotExact("a where conjunct is not answered exactly by the index")
    tables = run_splits(plan, functools.partial(aggregate_split, agg=agg), runner=runner)
    if any(t is None for t in tables):
        raise NotExact("a split cannot be aggregated exactly")
    merged = merge_tables(t for t in tables if t is not None)
    integral = [m.data_type is not None and ct.is_integral(m.data_type) for m in agg.metrics]
    rows = final_rows(
        merged, [m.metric for m in agg.metrics], integral=integral, grouped=bool(agg.levels)
    )
    return sort_groups(_table(rows, schema), len(agg.levels))


def _table(rows: Sequence[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    arrays = []
    for i, field in enumerate(schema):
        values = [row[i] for row in rows]
        if pa.types.is_timestamp(field.type):
            arrays.append(pa.array(values, pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(values, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)
