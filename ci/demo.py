"""The main job (``make demo``): a real PySpark pipeline on a local IndexTables table.

Generates ~500,000 deterministic synthetic log lines, writes them partitioned
by day with ``message`` as a full-text field into ./demo-output/logs, runs
full-text, exact and range queries, each next to the same query on a Parquet
copy of the same rows (./demo-output/logs.parquet), after a warm-up query that
takes the JVM's first-query cost out of the timings, appends,
shows DESCRIBE INDEXTABLES STATE, checkpoints and compacts, reads the new rows
with a streaming query and time-travels. No configuration needed.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROWS = int(os.environ.get("INDEXTABLES_DEMO_ROWS", "500000"))
OUTPUT = Path(__file__).resolve().parent.parent / "demo-output"
TABLE = OUTPUT / "logs"
FMT = "indextables"
WRITE_OPTIONS = {
    "spark.indextables.indexing.typemap.message": "text",
    "partitionBy": "day",
}


@contextmanager
def step(title: str) -> Iterator[None]:
    """Print a step title and its wall time."""
    print(f"\n== {title}", flush=True)
    start = time.perf_counter()
    yield
    print(f"   ({time.perf_counter() - start:.2f} s)", flush=True)


def timed(label: str, action: Callable[[], Any]) -> Any:
    """Run ``action``, print its result and time, return the result."""
    start = time.perf_counter()
    result = action()
    shown = result if not isinstance(result, list) else f"{len(result)} rows"
    print(f"   {label:<52} {shown!s:>12}  {1000 * (time.perf_counter() - start):8.1f} ms")
    return result


def session() -> Any:
    """A local SparkSession whose Python workers use this interpreter."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("indextables-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")  # keep the demo's own output readable
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    import indextables.pyspark as itp

    itp.register(spark)  # also turns on spark.sql.python.filterPushdown.enabled
    return spark


PARQUET = OUTPUT / "logs.parquet"


# (label, IndexTables read options, where on IndexTables, where on Parquet): each search,
# and the same rows selected from the Parquet copy by plain Spark filters.
SEARCHES: list[tuple[str, dict[str, str], str | None, str]] = [
    (
        "full text: message:deadlock (query option)",
        {"query": "message:deadlock"},
        None,
        "message like '%deadlock%'",
    ),
    (
        'full text: "timed out" AND level:ERROR',
        {"query": 'message:"timed out" AND level:ERROR'},
        None,
        "message like '%timed out%' AND level = 'ERROR'",
    ),
    (
        "exact: level = 'ERROR' AND service = 'billing'",
        {},
        "level = 'ERROR' AND service = 'billing'",
        "level = 'ERROR' AND service = 'billing'",
    ),
    ("exact: host = 'host-07'", {}, "host = 'host-07'", "host = 'host-07'"),
    ("range: latency_ms >= 995", {}, "latency_ms >= 995", "latency_ms >= 995"),
    ("partition: day = '2024-03-02'", {}, "day = '2024-03-02'", "day = '2024-03-02'"),
]


def run_searches(spark: Any, table: str, parquet: str) -> list[tuple[int, int]]:
    """Each search on the table and on the Parquet copy of its rows; the two counts each."""
    counts = []
    for label, options, where, parquet_where in SEARCHES:

        def index(options: dict[str, str] = options, where: str | None = where) -> int:
            # A fresh read per query: PySpark 4.3.0 reuses a DataFrame's planned read.
            read = spark.read.format(FMT).options(**options).load(table)
            return int((read.where(where) if where else read).count())

        def plain(parquet_where: str = parquet_where) -> int:
            return int(spark.read.parquet(parquet).where(parquet_where).count())

        print(f"   {label}")
        counts.append((timed("  IndexTables", index), timed("  Parquet", plain)))
    return counts


def warm_up(spark: Any, table: str, parquet: str) -> None:
    """The first query of a session pays for JVM class loading, JIT and Python worker start-up."""
    start = time.perf_counter()
    spark.read.format(FMT).load(table).where("id = 0").count()
    spark.read.parquet(parquet).where("id = 0").count()
    print(
        f"   warm-up: {time.perf_counter() - start:.1f} s for one query on each copy. The first"
        " query of a Spark session pays for JVM class loading and JIT compilation and starts"
        " the Python workers; the timings below are of a warm session."
    )


def log_lines(spark: Any, count: int, *, first_id: int = 0, days: int = 5) -> Any:
    """Deterministic synthetic log lines (no randomness: every run writes the same table)."""

    def pick(choices: str, salt: int) -> str:
        size = choices.count(",") + 1
        return f"element_at(array({choices}), cast(pmod(hash(id, {salt}), {size}) + 1 as int))"

    day = (
        f"cast(date_add(date'2024-03-01', cast(floor((id - {first_id}) * {days} / {count})"
        " as int)) as string) as day"
    )
    message = ", ".join(
        [
            pick("'GET','POST','PUT','DELETE'", 4),
            "concat('/v1/', " + pick("'users','orders','items','carts','search'", 5) + ")",
            pick("'completed','completed','retried','failed','timed out'", 6),
            "case when pmod(hash(id, 7), 10000) = 0 then 'deadlock detected' else '' end",
            "concat('in ', pmod(hash(id, 8), 1000), ' ms')",
        ]
    )
    return spark.range(first_id, first_id + count, numPartitions=2).selectExpr(
        "id",
        day,
        "timestamp_seconds(1709251200 + id) as ts",
        pick("'INFO','INFO','INFO','INFO','WARN','ERROR'", 1) + " as level",
        pick("'api','auth','billing','search','storage'", 2) + " as service",
        "concat('host-', lpad(cast(pmod(hash(id, 3), 40) as string), 2, '0')) as host",
        f"concat_ws(' ', {message}) as message",
        "cast(pmod(hash(id, 8), 1000) as int) as latency_ms",
    )


def main() -> int:
    """Run the pipeline; return the process exit code."""
    import indextables.pyspark as itp

    started = time.perf_counter()
    shutil.rmtree(TABLE, ignore_errors=True)
    OUTPUT.mkdir(exist_ok=True)
    with step("Start Spark (local[2])"):
        spark = session()
    with step(f"Write {ROWS:,} log lines partitioned by day, message as text -> {TABLE}"):
        logs = log_lines(spark, ROWS)
        writing = time.perf_counter()
        logs.write.format(FMT).options(**WRITE_OPTIONS).mode("append").save(str(TABLE))
        # Generating the rows is part of the job; Spark's start-up (above) is not.
        print(f"   {ROWS / (time.perf_counter() - writing):,.0f} rows/s (generate, index, commit)")
    with step(f"Write the same rows as Parquet (the baseline) -> {PARQUET}"):
        log_lines(spark, ROWS).write.partitionBy("day").mode("overwrite").parquet(str(PARQUET))

    def table() -> Any:
        # A fresh read per query: PySpark 4.3.0 reuses a DataFrame's planned read, and
        # the guard against that reads a reused plan in full (docs/pyspark.md).
        return spark.read.format(FMT).load(str(TABLE))

    with step("Warm-up"):
        warm_up(spark, str(TABLE), str(PARQUET))
    with step("Queries: each search on IndexTables, then the same on the Parquet copy"):
        timed("count(*)", table().count)
        run_searches(spark, str(TABLE), str(PARQUET))
        needle = spark.read.format(FMT).option("query", "message:deadlock").load(str(TABLE))
        timed(
            "exact (fieldmatch helper): host = host-07",
            itp.fieldmatch(spark, str(TABLE), "host", "host-07").count,
        )

        def search() -> int:
            found = itp.search(spark, str(TABLE), "message:deadlock", where="service = 'billing'")
            return len(found.collect())

        # Interactive search runs in the driver: the first call also warms it up.
        timed("itp.search deadlock + billing (first call)", search)
        timed("itp.search deadlock + billing (again)", search)
        timed(
            "  same on Parquet (collect)",
            lambda: len(
                spark.read.parquet(str(PARQUET))
                .where("message like '%deadlock%' AND service = 'billing'")
                .collect()
            ),
        )
        for row in needle.orderBy("id").limit(3).collect():
            print(f"     {row.day} {row.level:<5} {row.service:<8} {row.message}")
    with step("Counts and aggregations from the log and the index (itp.count / itp.aggregate)"):
        path = str(TABLE)
        timed("spark.read count(*)", table().count)
        timed("itp.count (log only)", lambda: itp.count(spark, path))
        timed(
            "spark.read where day = '2024-03-02' count",
            table().where("day = '2024-03-02'").count,
        )
        timed(
            "itp.count where day = '2024-03-02' (log only)",
            lambda: itp.count(spark, path, where="day = '2024-03-02'"),
        )
        timed("query option message:deadlock count", needle.count)
        timed(
            "itp.count query message:deadlock",
            lambda: itp.count(spark, path, query="message:deadlock"),
        )

        def by_level_spark() -> str:
            rows = table().groupBy("level").agg({"*": "count", "latency_ms": "avg"}).collect()
            return ", ".join(f"{r[0]}={r[1]}" for r in sorted(rows))

        def by_level_index() -> str:
            rows = itp.aggregate(
                spark,
                path,
                group_by="level",
                metrics={"n": "count", "avg_ms": ("avg", "latency_ms")},
            ).collect()
            return ", ".join(f"{r[0]}={r[1]}" for r in rows)

        timed("spark.read groupBy(level).agg(count, avg)", by_level_spark)
        timed("itp.aggregate group_by=level (count, avg)", by_level_index)
    with step("The same table without Spark: indextables.search (Arrow out, no JVM)"):
        from indextables.search import open_table

        logs = open_table(str(TABLE))
        timed("open_table(...).count()", logs.count)
        timed("count query message:deadlock", lambda: logs.count("message:deadlock"))
        timed(
            "search message:deadlock, 3 columns (Arrow rows)",
            lambda: logs.search("message:deadlock", columns=["day", "service", "message"]).num_rows,
        )
        timed(
            "search fieldmatch host = host-07 (Arrow rows)",
            lambda: logs.search(fieldmatch={"host": "host-07"}, columns=["id"]).num_rows,
        )
    version_before = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{TABLE}'").collect()
    first_version = spark.read.format(FMT).load(str(TABLE))
    with step("Append 20,000 lines for a new day"):
        extra = log_lines(spark, 20_000, first_id=ROWS, days=1).selectExpr(
            "id", "'2024-03-06' as day", "ts", "level", "service", "host", "message", "latency_ms"
        )
        extra.write.format(FMT).options(**WRITE_OPTIONS).mode("append").save(str(TABLE))
        timed("count(*) after append", spark.read.format(FMT).load(str(TABLE)).count)
    with step("DESCRIBE INDEXTABLES STATE"):
        itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{TABLE}'").show(truncate=False, vertical=True)
    with step("CHECKPOINT INDEXTABLES and COMPACT INDEXTABLES"):
        itp.sql(spark, f"CHECKPOINT INDEXTABLES '{TABLE}'").show(truncate=False, vertical=True)
        itp.sql(spark, f"COMPACT INDEXTABLES '{TABLE}'").show(truncate=False, vertical=True)
    with step("Streaming: read the rows added by the append (trigger availableNow)"):
        stream_rows(spark, version_before)
    with step("Time travel"):
        timed(
            "versionAsOf 1 (the first write)",
            spark.read.format(FMT).option("versionAsOf", "1").load(str(TABLE)).count,
        )
        timed("latest", spark.read.format(FMT).load(str(TABLE)).count)
        _ = first_version
    spark.stop()
    print(f"\nDemo finished in {time.perf_counter() - started:.1f} s; table at {TABLE}")
    return 0


def stream_rows(spark: Any, state_rows: list[Any]) -> None:
    """Stream the rows committed after the first write into a memory sink."""
    from indextables.pyspark.streamstart import run_stream

    start_version = 1
    # Started again if its source's Python worker misses Spark's fixed 10 s start wait
    # (a loaded machine): see docs/pyspark.md, "Streaming".
    run_stream(
        lambda: (
            spark.readStream.format(FMT)
            .option("startingVersion", str(start_version))
            .load(str(TABLE))
            .writeStream.format("memory")
            .queryName("new_logs")
            .trigger(availableNow=True)
            .start()
        )
    )
    timed(
        f"rows streamed after version {start_version}",
        lambda: spark.sql("SELECT count(*) FROM new_logs").first()[0],
    )
    _ = state_rows


if __name__ == "__main__":
    sys.exit(main())
