"""Benchmarks of the Spark data source against Parquet in the same session (figures only).

- write: N log rows as IndexTables vs ``df.write.parquet`` of the same DataFrame;
- needle search (a token in ~0.01% of rows) and an exact-match filter on M rows,
  collecting the matching rows: IndexTables through ``itp.search`` (small
  searches run in the driver) and through ``spark.read`` (Spark tasks), vs
  Parquet ``LIKE '%token%'`` / ``=``;
- the same searches on a scale table of S rows (20,000,000 by default, one split
  per 2,000,000 rows), written once under ``--scale-path`` and reused by later
  runs (or the search benchmark's table of S rows under ``--scale-path``), and
  how each side's time grows from M to S rows;
- the read targets on the scale table in one block: ours, Spark's Parquet
  read, their ratio, the engine's own time for the query (``SearchTable.search``
  in the driver, no Spark) and the hand-over cost (ours minus the engine's).

Usage: python benchmarks/run.py [--write-rows 1000000] [--search-rows 2000000]
           [--scale-rows 20000000] [--scale-path DIR] [--repeat 5] [--skip-write]
(the read targets on the search benchmark's table: ``--skip-write --search-rows 0
--scale-path /tmp/bench/20m``)
       python benchmarks/run.py <script> [its options], <script> one of
           splitio, termdict, plan_big, profile_needle, count, merge, write
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import OPTIONS, logs, measure, session, stop
from sourcefloor import source_floor


def report(label: str, ours: tuple[float, float, Any], base: tuple[float, float, Any]) -> None:
    """One line: both medians, spreads and the ratio."""
    print(
        f"{label:<28} indextables {ours[0] * 1000:9.1f} ms (±{ours[1] * 500:6.1f})  "
        f"parquet {base[0] * 1000:9.1f} ms (±{base[1] * 500:6.1f})  "
        f"parquet/indextables = {base[0] / ours[0]:6.2f}x  rows {ours[2]} / {base[2]}"
    )


SCRIPTS = ("splitio", "termdict", "plan_big", "profile_needle", "count", "merge", "write")


SEARCHES = (
    "needle, itp.search",
    "needle, spark.read query",
    "exact, itp.search where",
    "exact, spark.read filter",
)


NEEDLE, EXACT = "message:needlezz", "host = 'host-42'"


def search_suite(
    spark: Any, table_path: str, parquet_path: str, repeat: int, options: dict[str, str]
) -> dict[str, Any]:
    """Time the needle and exact-match searches on one table and its Parquet copy.

    Returns ``label -> (ours, parquet)`` measurements in :data:`SEARCHES` order,
    and under ``"engine"`` the engine's own time (``SearchTable.search`` in this
    process, no Spark) for the needle and the exact match.
    """
    import indextables.pyspark as itp

    # A DataFrameReader is a mutable builder: take a fresh one per query.
    def table() -> Any:
        return spark.read.format("indextables").options(**options)

    parquet = spark.read.parquet(parquet_path)

    def rows(df: Any) -> int:
        return len(df.collect())

    needle_parquet = measure(lambda: rows(parquet.where("message like '%needlezz%'")), repeat)
    exact_parquet = measure(lambda: rows(parquet.where(EXACT)), repeat)
    ours = (
        lambda: rows(itp.search(spark, table_path, NEEDLE, options=options)),
        lambda: rows(table().option("query", NEEDLE).load(table_path)),
        lambda: rows(itp.search(spark, table_path, where=EXACT, options=options)),
        lambda: rows(table().load(table_path).where(EXACT)),
    )
    bases = (needle_parquet, needle_parquet, exact_parquet, exact_parquet)
    results: dict[str, Any] = {}
    for label, action, base in zip(SEARCHES, ours, bases, strict=True):
        results[label] = (measure(action, repeat), base)
        report(label, *results[label])
    results["engine"] = engine(table_path, repeat, options)
    floor(
        spark,
        itp.search(spark, table_path, NEEDLE, options=options),
        "needle",
        needle_parquet,
        repeat,
    )
    floor(
        spark,
        itp.search(spark, table_path, where=EXACT, options=options),
        "exact",
        exact_parquet,
        repeat,
    )
    for label, query, base in (
        ("needle", {"query": NEEDLE}, needle_parquet),
        ("exact", {"where": EXACT}, exact_parquet),
    ):
        answer = itp.search(spark, table_path, options=options, **query)
        results["source floor, " + label] = source_floor(
            spark, answer, label, base, measure, repeat
        )
    return results


def engine(table_path: str, repeat: int, options: dict[str, str]) -> dict[str, float]:
    """The engine alone on the same table in this process: the Arrow answer, no Spark."""
    from indextables.search import open_table

    searched = open_table(table_path, options=options)
    times = {
        "needle": measure(lambda: searched.search(NEEDLE).num_rows, repeat),
        "exact": measure(lambda: searched.search(where=EXACT).num_rows, repeat),
    }
    for label, (median, spread, found) in times.items():
        print(
            f"{'  engine, ' + label:<28} SearchTable.search {median * 1000:9.1f} ms "
            f"(±{spread * 500:6.1f})  rows {found}"
        )
    return {label: t[0] for label, t in times.items()}


# The read targets: (label, ratio wanted against Parquet, the engine's query).
TARGETS = (
    ("exact, itp.search where", 4.0, "exact"),
    ("exact, spark.read filter", 3.0, "exact"),
    ("needle, spark.read query", 8.0, "needle"),
)


def targets(rows: int, results: dict[str, Any]) -> None:
    """The read targets' rows: ours, Spark's Parquet read, the ratio, and the hand-over cost."""
    load = os.getloadavg()[0]
    print(f"read targets at {rows:,} rows (same run; 1-minute load {load:.1f}):")
    for label, wanted, query in TARGETS:
        (ours, _, found), (base, _, _) = results[label]
        mine = results["engine"][query]
        print(
            f"  {label:<26} ours {ours * 1000:8.1f} ms  parquet {base * 1000:8.1f} ms  "
            f"ratio {base / ours:5.2f}x (target >= {wanted:.0f}x: "
            f"{'met' if base / ours >= wanted else 'NOT met'})  engine {mine * 1000:7.1f} ms, "
            f"hand-over {(ours - mine) * 1000:7.1f} ms  rows {found}"
        )
        if "spark.read" in label:
            source = results["source floor, " + query][0]
            print(
                f"  {'':<26} a no-work Python data source: {source * 1000:8.1f} ms, "
                f"at most {base / source:5.2f}x for any Python data source"
            )


def floor(spark: Any, result: Any, label: str, base: tuple[float, float, Any], repeat: int) -> None:
    """The cost of a search's answer: its rows handed over and collected, no search.

    Measures this package's own hand-over path (``arrow_dataframe``: Arrow
    batches into a local relation, as ``itp.search`` returns them, then
    ``collect()``); Parquet's time over it is the best ratio ``itp.search`` can
    reach on this machine with that path, whatever the search costs.
    """
    from indextables.pyspark.read.arrowframe import arrow_dataframe

    table, schema = result.toArrow(), result.schema
    batches = table.to_batches()
    cost = measure(lambda: len(arrow_dataframe(spark, batches, schema).collect()), repeat)
    print(
        f"{'  floor, ' + label:<28} hand-over + collect of the same {cost[2]} rows, no search: "
        f"{cost[0] * 1000:.1f} ms; parquet/floor = {base[0] / cost[0]:.1f}x (the best reachable)"
    )


def write_both(spark: Any, rows: int, table_path: str, parquet_path: str) -> None:
    """Write ``rows`` log rows as IndexTables and as Parquet (one split per 2M rows)."""
    data = logs(spark, rows, partitions=max(2, rows // 2_000_000))
    data.write.format("indextables").options(**OPTIONS).mode("overwrite").save(table_path)
    data.write.mode("overwrite").parquet(parquet_path)


def scale_tables(spark: Any, rows: int, root: str) -> tuple[str, str, dict[str, str]]:
    """The scale table, its Parquet copy and their read options under ``root``.

    Written on first use only. A marker file written after both copies are
    complete says they can be reused; without it (first run, or a run stopped
    half-way) both are rewritten. The search benchmark's tables
    (``indextables-search/benchmarks/run.py --path root``: the same rows,
    ``logs-N.parquet``, its split cache in ``root/split-cache``) are reused too.
    """
    base = os.path.join(root, f"logs-{rows}")
    table_path, parquet_path, marker = base + "-indextables", base + "-parquet", base + ".done"
    engine_copy = base + ".parquet"
    if os.path.exists(marker) and os.path.exists(engine_copy):
        print(f"scale tables: reusing the search benchmark's {base}* ({rows:,} rows)")
        cache = {"spark.indextables.cache.directoryPath": os.path.join(root, "split-cache")}
        return table_path, engine_copy, cache
    if os.path.exists(marker):
        print(f"scale tables: reusing {base}-* ({rows:,} rows)")
    else:
        print(f"scale tables: writing {rows:,} rows to {base}-* (once; reused by later runs)")
        start = time.perf_counter()
        write_both(spark, rows, table_path, parquet_path)
        with open(marker, "w", encoding="utf-8") as out:
            out.write(f"{rows}\n")
        print(f"scale tables: written in {time.perf_counter() - start:.0f} s")
    return table_path, parquet_path, {}


def growth(small: int, large: int, before: dict[str, Any], after: dict[str, Any]) -> None:
    """How each side's median grows from the small to the large table."""
    print(f"growth from {small:,} to {large:,} rows ({large / small:.0f}x the rows):")
    for label in SEARCHES:
        (ours_small, base_small), (ours_large, base_large) = before[label], after[label]
        print(
            f"  {label:<26} indextables {ours_small[0] * 1000:8.1f} -> "
            f"{ours_large[0] * 1000:8.1f} ms ({ours_large[0] / ours_small[0]:5.2f}x)   "
            f"parquet {base_small[0] * 1000:8.1f} -> "
            f"{base_large[0] * 1000:8.1f} ms ({base_large[0] / base_small[0]:5.2f}x)"
        )


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
    parser.add_argument(
        "--search-rows", type=int, default=2_000_000, help="rows of the small table (0: none)"
    )
    parser.add_argument(
        "--scale-rows", type=int, default=20_000_000, help="rows of the scale table (0: none)"
    )
    parser.add_argument(
        "--scale-path",
        default=os.path.join(os.path.expanduser("~"), ".cache", "indextables-bench"),
        help="where the scale table is written once and reused",
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-write", action="store_true", help="no write benchmark")
    args = parser.parse_args()

    spark = session()
    work = tempfile.mkdtemp(prefix="indextables-bench-")
    try:
        if not args.skip_write:
            write_benchmark(spark, args.write_rows, work)
        small = None
        if args.search_rows:
            print(f"search, {args.search_rows:,} rows:")
            write_both(spark, args.search_rows, f"{work}/s", f"{work}/sp")
            small = search_suite(spark, f"{work}/s", f"{work}/sp", args.repeat, {})
        if args.scale_rows:
            table_path, parquet_path, options = scale_tables(
                spark, args.scale_rows, args.scale_path
            )
            print(f"search, {args.scale_rows:,} rows:")
            large = search_suite(spark, table_path, parquet_path, args.repeat, options)
            if small is not None:
                growth(args.search_rows, args.scale_rows, small, large)
            targets(args.scale_rows, large)
    finally:
        stop(spark)
        shutil.rmtree(work, ignore_errors=True)
    return 0


def write_benchmark(spark: Any, rows: int, work: str) -> None:
    """Write ``rows`` log rows as IndexTables and as Parquet from one cached DataFrame."""
    data = logs(spark, rows).cache()
    data.count()

    def write_it() -> int:
        data.write.format("indextables").options(**OPTIONS).mode("overwrite").save(f"{work}/w")
        return rows

    def write_pq() -> int:
        data.write.mode("overwrite").parquet(f"{work}/wp")
        return rows

    ours, base = measure(write_it, 1, warm=False), measure(write_pq, 1, warm=False)
    report("write", ours, base)
    print(f"{'':<28} rows/s: indextables {rows / ours[0]:,.0f}, parquet {rows / base[0]:,.0f}")
    data.unpersist()


if __name__ == "__main__":
    sys.exit(main())
