"""Benchmarks of the Spark data source against Parquet in the same session (figures only).

- write: N log rows as IndexTables vs ``df.write.parquet`` of the same DataFrame;
- needle search (a token in ~0.01% of rows) and an exact-match filter on M rows,
  collecting the matching rows: IndexTables through ``itp.search`` (small
  searches run in the driver) and through ``spark.read`` (Spark tasks), vs
  Parquet ``LIKE '%token%'`` / ``=``.

Usage: python benchmarks/run.py [--write-rows 1000000] [--search-rows 2000000] [--repeat 5]
       python benchmarks/run.py <splitio|termdict|plan_big|profile_needle|count> [its options]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def measure(
    action: Callable[[], Any], repeat: int, *, warm: bool = True
) -> tuple[float, float, Any]:
    """Median and spread (max - min) of ``repeat`` timed runs, and the last result.

    With ``warm``, one untimed run comes first (JVM code paths, split and
    file caches), as for any query run more than once.
    """
    times, result = [], None
    if warm:
        action()
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times) - min(times), result


def report(label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any]) -> None:
    """One line: both medians, spreads and the ratio."""
    print(
        f"{label:<28} indextables {ours[0] * 1000:9.1f} ms (±{ours[1] * 500:6.1f})  "
        f"parquet {base[0] * 1000:9.1f} ms (±{base[1] * 500:6.1f})  "
        f"parquet/indextables = {base[0] / ours[0]:6.2f}x  rows {ours[2]} / {base[2]}"
    )


def logs(spark: Any, rows: int) -> Any:
    """Deterministic log rows with a needle token in ~0.01% of messages."""
    return spark.range(rows, numPartitions=2).selectExpr(
        "id",
        "element_at(array('INFO','WARN','ERROR'), cast(pmod(hash(id), 3) + 1 as int)) as level",
        "concat('host-', pmod(hash(id, 1), 500)) as host",
        "concat('request ', id, ' served ', case when pmod(hash(id, 2), 10000) = 0 "
        "then 'needlezz' else 'ok' end) as message",
    )


def session() -> Any:
    """The benchmarks' local[2] session (pushdown on, quiet), with the format registered."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import indextables.pyspark as itp

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    itp.register(spark)
    return spark


SCRIPTS = ("splitio", "termdict", "plan_big", "profile_needle", "count")


def main() -> int:
    """Run the benchmarks and print figures (``splitio ...`` runs benchmarks/splitio.py)."""
    if sys.argv[1:2] and sys.argv[1] in SCRIPTS:
        # `run.py <script> [args]` runs another benchmark of this folder, so that
        # `tox -e bench-pyspark -- <script> [args]` reaches every one of them.
        import runpy

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{sys.argv[1]}.py")
        sys.argv = [path, *sys.argv[2:]]
        runpy.run_path(path, run_name="__main__")
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-rows", type=int, default=1_000_000)
    parser.add_argument("--search-rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import indextables.pyspark as itp

    spark = session()
    work = tempfile.mkdtemp(prefix="indextables-bench-")
    try:
        options = {"spark.indextables.indexing.typemap.message": "text"}
        data = logs(spark, args.write_rows).cache()
        data.count()

        def write_it() -> int:
            data.write.format("indextables").options(**options).mode("overwrite").save(f"{work}/w")
            return args.write_rows

        def write_pq() -> int:
            data.write.mode("overwrite").parquet(f"{work}/wp")
            return args.write_rows

        ours, base = measure(write_it, 1, warm=False), measure(write_pq, 1, warm=False)
        report("write", ours, base)
        print(
            f"{'':<28} rows/s: indextables {args.write_rows / ours[0]:,.0f}, "
            f"parquet {args.write_rows / base[0]:,.0f}"
        )
        data.unpersist()

        big = logs(spark, args.search_rows)
        big.write.format("indextables").options(**options).mode("overwrite").save(f"{work}/s")
        big.write.mode("overwrite").parquet(f"{work}/sp")

        # A DataFrameReader is a mutable builder: take a fresh one per query.
        def table() -> Any:
            return spark.read.format("indextables")

        parquet = spark.read.parquet(f"{work}/sp")
        needle, exact = "message:needlezz", "host = 'host-42'"
        table_path = f"{work}/s"

        def rows(df: Any) -> int:
            return len(df.collect())

        needle_parquet = measure(
            lambda: rows(parquet.where("message like '%needlezz%'")), args.repeat
        )
        report(
            "needle, itp.search",
            measure(lambda: rows(itp.search(spark, table_path, needle)), args.repeat),
            needle_parquet,
        )
        report(
            "needle, spark.read query",
            measure(lambda: rows(table().option("query", needle).load(table_path)), args.repeat),
            needle_parquet,
        )
        exact_parquet = measure(lambda: rows(parquet.where(exact)), args.repeat)
        report(
            "exact, itp.search where",
            measure(lambda: rows(itp.search(spark, table_path, where=exact)), args.repeat),
            exact_parquet,
        )
        report(
            "exact, spark.read filter",
            measure(lambda: rows(table().load(table_path).where(exact)), args.repeat),
            exact_parquet,
        )
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
