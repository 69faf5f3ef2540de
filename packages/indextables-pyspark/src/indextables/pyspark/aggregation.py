"""``itp.aggregate``: grouped counts, sums, min/max and averages from the index.

Planning checks the group keys and metrics against the table (unknown
columns, wrong types and non-fast fields fail here, naming the column and
the option that makes a field fast), then decides whether the index can
answer: each split runs Tantivy's aggregations (:mod:`.splitagg`) and the
per-split group tables merge exactly (:mod:`.aggmerge`). Partition keys come
from the log.

Otherwise, or when any split cannot answer exactly, the result is Spark's
own ``groupBy().agg()`` over the normal read of the same pinned version,
with the same output columns (:func:`spark_aggregate`). Either way the
result equals Spark's, with one caveat Spark shares: sums and averages of
floating-point columns are added in another order, so they may differ in
the last bits (Spark's own answer depends on its partitioning too).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from indextables.pyspark.arrowframe import arrow_dataframe
from indextables.pyspark.errors import OptionError
from indextables.pyspark.indexplan import IndexPlan, plan, run_splits
from indextables.pyspark.sparktypes import arrow_schema, arrow_type
from indextables.search.aggregate.aggmerge import NotExact, final_rows, merge_tables
from indextables.search.aggregate.aggspec import (
    DateHistogram,
    GroupSpec,
    Histogram,
    Metric,
    MetricFn,
    RangeBuckets,
    Terms,
    output_names,
    parse_group_by,
    parse_metrics,
)
from indextables.search.aggregate.splitagg import AggPlan, Level, MetricPlan, aggregate_split
from indextables.search.options import INDEXING
from indextables.search.schema.mapping import FieldKind, FieldSpec
from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_NUMERIC = (*_INTEGRAL, FloatType, DoubleType)
_FAST_OPTION = INDEXING + "fastfields"


def aggregate(
    spark: SparkSession,
    path: str,
    *,
    group_by: Sequence[str | GroupSpec] | str = (),
    metrics: Mapping[str, Any],
    where: str | None = None,
    query: str | None = None,
    textsearch: Mapping[str, str] | None = None,
    fieldmatch: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
    version: int | None = None,
    timestamp: Any = None,
) -> DataFrame:
    """One row per group of the matching rows: group columns first, then the metrics.

    Args:
        spark: the session the DataFrame belongs to.
        path: the table URI.
        group_by: column names and bucket specs (``itp.histogram``,
            ``itp.date_histogram``, ``itp.range``); empty for one global row.
        metrics: output name -> ``"count"`` or ``(function, column)``, function
            one of count/sum/min/max/avg.
        where, query, textsearch, fieldmatch, options: as ``itp.search``.
        version, timestamp: time travel, as ``itp.count``.

    Returns:
        A DataFrame typed as Spark's ``groupBy().agg()`` types it, sorted by
        the group columns (nulls first).

    Raises:
        OptionError: bad group keys or metrics (unknown column, wrong type,
            a data column without a fast field), or bad options.
    """
    groups = parse_group_by(group_by)
    wanted = parse_metrics(metrics)
    output_names(groups, wanted)
    index_plan = plan(
        path,
        where=where,
        query=query,
        textsearch=textsearch,
        fieldmatch=fieldmatch,
        options=options,
        version=version,
        timestamp=timestamp,
    )
    agg = plan_aggregation(index_plan, groups, wanted)
    schema = output_schema(index_plan.schema, groups, wanted)
    if agg is not None:
        try:
            rows = _from_index(spark, index_plan, agg)
            return _frame(spark, rows, schema)
        except NotExact:
            pass
    return spark_aggregate(index_plan.spark_frame(spark, where), index_plan.schema, groups, wanted)


def _from_index(spark: SparkSession, index_plan: IndexPlan, agg: AggPlan) -> list[tuple[Any, ...]]:
    if not index_plan.exact_where or any(s.decided is None for s in index_plan.splits):
        raise NotExact("a where conjunct is not answered exactly by the index")
    task = functools.partial(aggregate_split, agg=agg)
    tables = run_splits(spark, index_plan, task, what="aggregate")
    if any(t is None for t in tables):
        raise NotExact("a split cannot be aggregated exactly")
    merged = merge_tables(t for t in tables if t is not None)
    integral = [
        m.data_type is not None and pa.types.is_signed_integer(m.data_type) for m in agg.metrics
    ]
    return final_rows(
        merged, [m.metric for m in agg.metrics], integral=integral, grouped=bool(agg.levels)
    )


def _types(schema: StructType) -> dict[str, DataType]:
    return {f.name.lower(): f.dataType for f in schema.fields}


def _column_type(schema: StructType, column: str, where: str) -> DataType:
    found = _types(schema).get(column.lower())
    if found is None:
        names = ", ".join(f.name for f in schema.fields)
        raise OptionError(
            f"{where} names column {column!r}, which the table does not have (columns: {names})"
        )
    return found


def plan_aggregation(
    index_plan: IndexPlan, groups: Sequence[GroupSpec], metrics: Sequence[Metric]
) -> AggPlan | None:
    """How splits compute the aggregation, or None when only Spark can (types are checked).

    Raises:
        OptionError: an unknown column, a bucket on a column of the wrong type,
            sum/avg of a non-numeric column, or a data column without a fast field.
    """
    partitions = {c.lower() for c in index_plan.partition_columns}
    levels: list[Level | None] = []
    for group in groups:
        data_type = _column_type(index_plan.schema, group.column, "group_by")
        _check_bucket_type(group, data_type)
        partition = group.column.lower() in partitions
        spec = None if partition else _fast_spec(index_plan.fields, group.column, "group_by")
        levels.append(_level(group, data_type, partition, spec))
    plans: list[MetricPlan | None] = []
    for metric in metrics:
        plans.append(_metric_plan(index_plan, metric, partitions))
    if any(lv is None for lv in levels) or any(m is None for m in plans):
        return None
    return AggPlan(
        index_plan.search,
        index_plan.conditions,
        tuple(lv for lv in levels if lv is not None),
        tuple(m for m in plans if m is not None),
    )


def _check_bucket_type(group: GroupSpec, data_type: DataType) -> None:
    if isinstance(group, Histogram | RangeBuckets) and not isinstance(data_type, _NUMERIC):
        kind = "histogram" if isinstance(group, Histogram) else "range"
        raise OptionError(
            f"{kind}({group.column!r}) needs a numeric column; it is {data_type.simpleString()}"
        )
    if isinstance(group, DateHistogram):
        if not isinstance(data_type, DateType | TimestampType):
            raise OptionError(
                f"date_histogram({group.column!r}) needs a date or timestamp column; it is "
                f"{data_type.simpleString()}"
            )
        if isinstance(data_type, DateType) and group.interval_us % 86_400_000_000:
            raise OptionError(
                f"date_histogram({group.column!r}): a date column needs whole days as interval"
            )


def _fast_spec(fields: Mapping[str, FieldSpec], column: str, where: str) -> FieldSpec | None:
    spec = fields.get(column.lower())
    if spec is not None and not spec.fast:
        raise OptionError(
            f"{where}: column {column!r} has no fast field, so the index cannot aggregate it; "
            f"write the table with option {_FAST_OPTION}={column},<its other fast columns> "
            "(when given, the option lists every fast field), or aggregate with "
            "DataFrame.groupBy over spark.read"
        )
    return spec


def _level(
    group: GroupSpec, data_type: DataType, partition: bool, spec: FieldSpec | None
) -> Level | None:
    if partition:
        return Level(group, arrow_type(data_type), True) if isinstance(group, Terms) else None
    if spec is None:
        return None
    kind = spec.kind
    if isinstance(group, Terms):
        ok = kind in (FieldKind.I64, FieldKind.BOOL, FieldKind.DATE) or spec.is_exact
        # Timestamps without zone are held as UTC micros too, but keyed by Spark as local.
        ok = ok and (kind is not FieldKind.DATE or isinstance(data_type, DateType | TimestampType))
    elif isinstance(group, DateHistogram):
        ok = kind is FieldKind.DATE
    else:
        ok = kind in (FieldKind.I64, FieldKind.F64)
    return Level(group, arrow_type(data_type), False, kind) if ok else None


def _metric_plan(index_plan: IndexPlan, metric: Metric, partitions: set[str]) -> MetricPlan | None:
    if metric.column is None:
        return MetricPlan(metric, None, False)
    data_type = _column_type(index_plan.schema, metric.column, f"metric {metric.name!r}")
    if metric.fn in (MetricFn.SUM, MetricFn.AVG) and not isinstance(data_type, _NUMERIC):
        raise OptionError(
            f"metric {metric.name!r}: {metric.fn.value} needs a numeric column; "
            f"{metric.column!r} is {data_type.simpleString()}"
        )
    if metric.column.lower() in partitions:
        partition_count = metric.fn is MetricFn.COUNT
        return MetricPlan(metric, arrow_type(data_type), True) if partition_count else None
    spec = _fast_spec(index_plan.fields, metric.column, f"metric {metric.name!r}")
    if spec is None:
        return None
    if metric.fn is MetricFn.COUNT:
        return MetricPlan(metric, arrow_type(data_type), False, spec.kind)
    if spec.kind in (FieldKind.I64, FieldKind.F64):
        return MetricPlan(metric, arrow_type(data_type), False, spec.kind)
    return None  # min/max of strings, dates, booleans: Spark


def output_schema(
    schema: StructType, groups: Sequence[GroupSpec], metrics: Sequence[Metric]
) -> StructType:
    """The result's schema, as Spark's ``groupBy().agg()`` types it."""
    types = _types(schema)
    out = [StructField(g.name, _group_type(g, types[g.column.lower()]), True) for g in groups]
    for metric in metrics:
        column_type = types[metric.column.lower()] if metric.column else None
        # Spark's counts are never null; every other metric may be.
        nullable = metric.fn is not MetricFn.COUNT
        out.append(StructField(metric.name, _metric_type(metric, column_type), nullable))
    return StructType(out)


def _group_type(group: GroupSpec, data_type: DataType) -> DataType:
    if isinstance(group, Histogram):
        integral = isinstance(data_type, _INTEGRAL) and isinstance(group.interval, int)
        return LongType() if integral else DoubleType()
    if isinstance(group, RangeBuckets):
        return StringType()
    return data_type


def _metric_type(metric: Metric, data_type: DataType | None) -> DataType:
    if metric.fn is MetricFn.COUNT:
        return LongType()
    if metric.fn is MetricFn.AVG:
        return DoubleType()
    if metric.fn is MetricFn.SUM:
        return LongType() if isinstance(data_type, _INTEGRAL) else DoubleType()
    assert data_type is not None
    return data_type


def _frame(spark: SparkSession, rows: Sequence[tuple[Any, ...]], schema: StructType) -> DataFrame:
    target = arrow_schema(schema)
    arrays = []
    for i, field in enumerate(target):
        values = [row[i] for row in rows]
        if pa.types.is_timestamp(field.type):
            arrays.append(pa.array(values, pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(values, field.type))
    batch = pa.RecordBatch.from_arrays(arrays, schema=target)
    return arrow_dataframe(spark, [batch], schema)


def spark_aggregate(
    frame: DataFrame, schema: StructType, groups: Sequence[GroupSpec], metrics: Sequence[Metric]
) -> DataFrame:
    """The same aggregation with Spark's ``groupBy().agg()`` (the fallback, and the oracle)."""
    from pyspark.sql import functions as F

    types = _types(schema)
    keys = [_group_column(g, types[g.column.lower()]) for g in groups]
    values = [_metric_column(m) for m in metrics]
    result = frame.groupBy(*keys).agg(*values) if keys else frame.agg(*values)
    target = output_schema(schema, groups, metrics)
    result = result.select(
        *(F.col(f"`{f.name}`").cast(f.dataType).alias(f.name) for f in target.fields)
    )
    if not groups:
        return result
    return result.orderBy(*(F.col(f"`{g.name}`").asc_nulls_first() for g in groups))


def _group_column(group: GroupSpec, data_type: DataType) -> Column:
    from pyspark.sql import functions as F

    column = F.col(f"`{group.column}`")
    if isinstance(group, Terms):
        return column.alias(group.name)
    if isinstance(group, Histogram):
        if isinstance(data_type, _INTEGRAL) and isinstance(group.interval, int):
            whole = column.cast("long")
            # A key below the lowest long (values near -2**63) is not representable: null.
            key = F.try_subtract(whole, F.pmod(whole, F.lit(group.interval).cast("long")))
        else:
            # Floor in doubles, as Tantivy does: a quotient of 2**53 or more (or NaN,
            # or an infinity) is already whole, and Spark's floor() would overflow a long.
            step = F.lit(float(group.interval))
            quotient = column.cast("double") / step
            whole = F.when(F.abs(quotient) >= F.lit(float(1 << 53)), quotient)
            key = whole.otherwise(F.floor(quotient).cast("double")) * step
        return key.alias(group.name)
    if isinstance(group, DateHistogram):
        if isinstance(data_type, DateType):
            days = group.interval_us // 86_400_000_000
            number = F.unix_date(column)
            return F.date_from_unix_date(number - F.pmod(number, F.lit(days))).alias(group.name)
        micros = F.unix_micros(column)
        step = F.lit(group.interval_us).cast("long")
        return F.timestamp_micros(micros - F.pmod(micros, step)).alias(group.name)
    labels = group.labels
    key = F.when(column.isNull(), F.lit(None).cast("string"))
    for edge, label in zip(group.edges, labels, strict=False):
        key = key.when(column < F.lit(edge), F.lit(label))
    return key.otherwise(F.lit(labels[-1])).alias(group.name)


def _metric_column(metric: Metric) -> Column:
    from pyspark.sql import functions as F

    if metric.column is None:
        return F.count(F.lit(1)).alias(metric.name)
    column = F.col(f"`{metric.column}`")
    function = {
        MetricFn.COUNT: F.count,
        MetricFn.SUM: F.sum,
        MetricFn.MIN: F.min,
        MetricFn.MAX: F.max,
        MetricFn.AVG: F.avg,
    }[metric.fn]
    return function(column).alias(metric.name)
