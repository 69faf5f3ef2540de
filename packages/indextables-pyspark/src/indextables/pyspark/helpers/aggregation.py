"""``itp.aggregate``: the engine's aggregation (:mod:`indextables.search.aggregate.tableagg`)
as a Spark DataFrame.

The engine checks the group keys and metrics against the table (unknown
columns, wrong types and non-fast fields fail, naming the column and the
option that makes a field fast) and answers from the index when it can do so
exactly; :mod:`.indexplan` runs large plans as Spark tasks. Otherwise the
result is Spark's own ``groupBy().agg()`` over the normal read of the same
pinned version, with the same output columns (:func:`spark_aggregate`).
Either way the result equals Spark's, with one caveat Spark shares: sums and
averages of floating-point columns are added in another order, so they may
differ in the last bits (Spark's own answer depends on its partitioning too).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from indextables.pyspark.helpers.indexplan import plan
from indextables.pyspark.read.arrowframe import arrow_dataframe
from indextables.pyspark.read.searchargs import SearchArgs
from indextables.pyspark.read.sparktypes import arrow_schema, arrow_type
from indextables.search import oplog
from indextables.search.aggregate.aggspec import (
    DateHistogram,
    GroupSpec,
    Histogram,
    Metric,
    MetricFn,
    Terms,
    output_names,
    parse_group_by,
    parse_metrics,
)
from indextables.search.aggregate.tableagg import aggregate_table
from indextables.search.aggregate.tableagg import output_schema as arrow_output_schema
from indextables.storage.redaction import redact_uri
from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

_LOG = logging.getLogger(__name__)
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
# The types the engine gives computed outputs (bucket keys, counts, sums, averages).
_COMPUTED: dict[pa.DataType, DataType] = {
    pa.int64(): LongType(),
    pa.float64(): DoubleType(),
    pa.string(): StringType(),
}


@oplog.logged(_LOG, "aggregate", uri="args.path")
def aggregate(
    spark: SparkSession,
    args: SearchArgs,
    *,
    group_by: Sequence[str | GroupSpec] | str = (),
    metrics: Mapping[str, Any],
) -> DataFrame:
    """One row per group of the matching rows: group columns first, then the metrics.

    Args:
        spark: the session the DataFrame belongs to.
        args: the search whose matching rows are grouped.
        group_by: column names and bucket specs (``itp.histogram``,
            ``itp.date_histogram``, ``itp.range``); empty for one global row.
        metrics: output name -> ``"count"`` or ``(function, column)``, function
            one of count/sum/min/max/avg.

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
    index_plan = plan(args)

    def from_spark(_: pa.Schema) -> DataFrame:
        frame = index_plan.spark_frame(spark, args.where)
        return spark_aggregate(frame, index_plan.schema, groups, wanted)

    found, source = aggregate_table(
        index_plan.table,
        groups,
        wanted,
        from_spark,
        runner=index_plan.runner(spark, "aggregate"),
    )
    answered = "Spark groupBy" if source == "rows" else source
    oplog.note_fields(source=answered)
    shown = redact_uri(args.path)
    _LOG.debug("aggregate of %s v%d answered from the %s", shown, index_plan.version, answered)
    if isinstance(found, pa.Table):
        schema = output_schema(index_plan.schema, groups, wanted)
        table = found.cast(arrow_schema(schema)).combine_chunks()
        oplog.note(rows=table.num_rows)
        batches = table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
        return arrow_dataframe(spark, batches, schema)
    return found


def _types(schema: StructType) -> dict[str, DataType]:
    return {f.name.lower(): f.dataType for f in schema.fields}


def output_schema(
    schema: StructType, groups: Sequence[GroupSpec], metrics: Sequence[Metric]
) -> StructType:
    """The result's schema, as Spark's ``groupBy().agg()`` types it (the engine's, in Spark)."""
    types = _types(schema)
    sources = [g.column for g in groups] + [m.column for m in metrics]
    out = []
    for field, column in zip(
        arrow_output_schema(arrow_schema(schema), groups, metrics), sources, strict=True
    ):
        source = types[column.lower()] if column else None
        if source is not None and arrow_type(source) == field.type:
            data_type = source  # a terms key, min or max: the column's own type
        else:
            data_type = _COMPUTED[field.type]
        out.append(StructField(field.name, data_type, field.nullable))
    return StructType(out)


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
