"""The read paths under test, and Parquet, each returning Arrow-derived records.

Every IndexTables path takes a fresh ``spark.read`` (a reused DataFrame would
meet PySpark 4.3's plan cache, see docs/pyspark.md). The pushdown setting is
set on the session just before the action and restored after it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from difftest.rowsame import outcome, same_outcome

FMT = "indextables"
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
SEARCH_MODE = "spark.indextables.search.mode"
_stream_names = itertools.count()


@contextmanager
def pushdown(spark: SparkSession, enabled: bool) -> Iterator[None]:
    """Run the block with filter pushdown on or off (the session's value restored after)."""
    before = spark.conf.get(PUSHDOWN, "false") or "false"
    spark.conf.set(PUSHDOWN, "true" if enabled else "false")
    try:
        yield
    finally:
        spark.conf.set(PUSHDOWN, before)


def records(df: DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``df`` (these columns, in this order) through Arrow, values exact."""
    table = df.select(*[f"`{c}`" for c in columns]).toArrow()
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def parquet(spark: SparkSession, path: str, schema: StructType) -> DataFrame:
    """The Parquet copy, read with the table's schema (no type inference)."""
    return spark.read.schema(schema).parquet(path)


def read(
    spark: SparkSession,
    path: str,
    where: str | None,
    *,
    pushed: bool,
    columns: Sequence[str],
    options: Mapping[str, str] | None = None,
    extra: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """``spark.read.format('indextables')`` with pushdown on or off, optionally filtered.

    ``extra``: more SQL expressions selected after the columns (``q<i>`` flags).
    """
    with pushdown(spark, pushed):
        df = spark.read.format(FMT).options(**dict(options or {})).load(path)
        if where is not None:
            df = df.where(where)
        if extra:
            df = df.selectExpr(*[f"`{c}`" for c in columns], *extra)
            return df.toArrow().to_pylist()  # type: ignore[no-any-return]
        return records(df, columns)


def read_scanned(
    spark: SparkSession, path: str, where: str, *, columns: Sequence[str]
) -> tuple[list[dict[str, Any]], int]:
    """A filtered read with pushdown on: its rows, and the rows the scan returned.

    Every pushed filter is also handed back to Spark; when the scan returned exactly
    the rows kept, the index answered the filter (Spark's filter removed nothing).
    """
    with pushdown(spark, True):
        df = spark.read.format(FMT).load(path).where(where)
        df = df.select(*[f"`{c}`" for c in columns])
        rows: list[dict[str, Any]] = df.toArrow().to_pylist()
        plan = df._jdf.queryExecution().executedPlan()
    return rows, _scan_output(plan)


def scanned_rows(spark: SparkSession, path: str, where: str, *, pushed: bool) -> tuple[int, int]:
    """(rows the scan returned, rows after Spark's filter) for a filtered read.

    With pushdown in effect a selective filter makes the scan return fewer
    rows than the table holds; without it the scan returns every row.
    """
    with pushdown(spark, pushed):
        df = spark.read.format(FMT).load(path).where(where)
        # Through Arrow: collect() makes Python datetimes in local time, which fails on
        # 0001-01-01 (PySpark's limit, Parquet's too), so the count would not be compared.
        result = df.toArrow().num_rows
        plan = df._jdf.queryExecution().executedPlan()
    return _scan_output(plan), result


def scanned_ids(
    spark: SparkSession, path: str, where: Any, *, pushed: bool
) -> tuple[int, list[int]]:
    """(rows the scan returned, the sorted ``id`` values kept) of one filtered read.

    ``where`` is a SQL string or a Column. One Spark job gives both: the kept rows and
    the scan's row count of the same executed plan.
    """
    with pushdown(spark, pushed):
        df = spark.read.format(FMT).load(path).where(where).select("id")
        ids = sorted(df.toArrow().column("id").to_pylist())
        plan = df._jdf.queryExecution().executedPlan()
    return _scan_output(plan), ids


def _scan_output(node: Any) -> int:
    if node.nodeName().startswith("BatchScan"):
        return int(node.metrics().get("numOutputRows").get().value())
    children = node.children().iterator()
    while children.hasNext():
        found = _scan_output(children.next())
        if found >= 0:
            return found
    return -1


def search(
    spark: SparkSession,
    path: str,
    *,
    mode: str,
    columns: Sequence[str],
    where: str | None = None,
    query: str | None = None,
    fieldmatch: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``itp.search`` forced to run in the driver (``local``) or as Spark tasks."""
    import indextables.pyspark as itp

    df = itp.search(
        spark,
        path,
        query,
        where=where,
        fieldmatch=fieldmatch,
        options={SEARCH_MODE: mode},
    )
    _driver_rows_agree(df)
    return records(df, columns)


def _driver_rows_agree(df: DataFrame) -> None:
    """A frame answered in the driver: its ``collect()`` (rows built from the Arrow batches
    the driver holds) must equal the JVM's ``collect()`` of the same frame.

    Raises:
        AssertionError: they differ (the case fails with both answers).
    """
    from pyspark.sql.classic.dataframe import DataFrame as ClassicFrame

    from indextables.pyspark.read.lazyframe import ArrowFrame

    if not isinstance(df, ArrowFrame):
        return
    local = outcome(df.collect)
    jvm = outcome(lambda: ClassicFrame(df._jdf, df.sparkSession).collect())
    if not same_outcome(local, jvm):
        raise AssertionError(
            f"collect() from the driver's Arrow rows {local!r} != the JVM's {jvm!r}"
        )


# Spark starts the streaming source's Python worker outside its daemon and waits a fixed
# 10 s for it to connect back; at load 30 its start-up (interpreter and imports) can take
# longer. That refusal is Spark's, before any row is read: the stream is started again.
_WORKER_TIMEOUT = "Python worker failed to connect back"
_STREAM_STARTS = 3


def stream(spark: SparkSession, path: str, columns: Sequence[str]) -> list[dict[str, Any]]:
    """Every row through the streaming source (``startingVersion -1``, ``availableNow``);
    started again (at most :data:`_STREAM_STARTS` times) when Spark's worker start timed out."""
    for attempt in range(1, _STREAM_STARTS + 1):
        try:
            return _stream_once(spark, path, columns)
        except Exception as exc:
            if _WORKER_TIMEOUT not in str(exc) or attempt == _STREAM_STARTS:
                raise
    raise AssertionError("unreachable")


def _stream_once(spark: SparkSession, path: str, columns: Sequence[str]) -> list[dict[str, Any]]:
    name = f"difftest_stream_{next(_stream_names)}"
    query = (
        spark.readStream.format(FMT)
        .option("startingVersion", "-1")
        .load(path)
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(f"streaming query failed: {query.exception()}")
        return records(spark.table(name), columns)
    finally:
        query.stop()
        spark.catalog.dropTempView(name)
