"""Where the time of a selective query goes (figures only, never asserts).

Times, on one table of N log rows (written once into ``--path``):

- a no-op Python data source ``count()``: Spark's own floor per action;
- the needle search (``query`` option) and an exact match through Spark,
  and the same queries on Parquet;
- our parts in-process: snapshot load, ``schema()``, ``reader()``,
  ``partitions()`` and the tasks' ``read()`` with a warm split cache;
- the phases of the same needle search through ``itp.search``: the whole
  call, our split search, the hand-over of the rows to Spark, and Spark's
  ``collect()``.

Usage: python benchmarks/profile_needle.py [--rows 1000000] [--path DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from common import logs, measure, session, stop
from pyspark.sql.datasource import DataSource, DataSourceReader


class _NoopReader(DataSourceReader):
    def read(self, partition: Any) -> Any:
        yield (1,)


class _Noop(DataSource):
    @classmethod
    def name(cls) -> str:
        return "itnoop"

    def schema(self) -> str:
        return "x long"

    def reader(self, schema: Any) -> DataSourceReader:
        return _NoopReader()


def timed(label: str, action: Callable[[], Any], repeat: int) -> None:
    """Print the median and spread of ``repeat`` runs of ``action`` (run.measure, no warm-up)."""
    median, spread, result = measure(action, repeat, warm=False)
    print(
        f"{label:<28} median {median * 1000:8.1f} ms  (±{spread * 500:6.1f})  result {result}",
        flush=True,
    )


def search_phases(spark: Any, path: str, query: str, repeat: int) -> None:
    """Print medians of the phases of ``itp.search(spark, path, query).collect()``."""
    import indextables.pyspark as itp
    from indextables.pyspark.read import localsearch

    spent: dict[str, list[float]] = {}

    def timing(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent.setdefault(label, []).append(time.perf_counter() - start)

        return timed_call

    originals = (localsearch.group_batches, localsearch.arrow_dataframe)
    searching = originals[0]
    # The split search is a generator: timed whole, as the search consumes it.
    localsearch.group_batches = timing(  # type: ignore[assignment]
        "split search (ours)", lambda *args, **kwargs: list(searching(*args, **kwargs))
    )
    localsearch.arrow_dataframe = timing("rows to Spark", localsearch.arrow_dataframe)
    try:
        runs = repeat * 4
        for number in range(runs + 1):
            start = time.perf_counter()
            frame = itp.search(spark, path, query)
            middle = time.perf_counter()
            frame.collect()
            if number:  # the first run warms up
                spent.setdefault("itp.search() call", []).append(middle - start)
                spent.setdefault("collect()", []).append(time.perf_counter() - middle)
                spent.setdefault("total", []).append(time.perf_counter() - start)
    finally:
        localsearch.group_batches, localsearch.arrow_dataframe = originals
    for label, times in spent.items():
        warm = times[-runs:]
        print(
            f"itp.search: {label:<22} median {statistics.median(warm) * 1000:8.1f} ms", flush=True
        )


def main() -> int:
    """Write the table if needed, then print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--path", default=os.path.join(tempfile.gettempdir(), "it-profile"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from indextables.pyspark.read.datasource import IndexTablesDataSource
    from indextables.search.table.tableaccess import load_view

    spark = session()
    spark.dataSource.register(_Noop)
    path, repeat = args.path, args.repeat
    if not os.path.exists(path):
        options = {"spark.indextables.indexing.typemap.message": "text"}
        logs(spark, args.rows).write.format("indextables").options(**options).mode(
            "overwrite"
        ).save(path)
        logs(spark, args.rows).write.parquet(path + "-parquet")
    try:
        parquet = spark.read.parquet(path + "-parquet")

        def table() -> Any:
            return spark.read.format("indextables")

        timed("no-op python source", lambda: spark.read.format("itnoop").load().count(), repeat)
        needle = "message:needlezz"
        timed("needle (query)", lambda: table().option("query", needle).load(path).count(), repeat)
        timed("needle parquet", lambda: parquet.where("message like '%needlezz%'").count(), repeat)
        exact = "host = 'host-42'"
        timed("exact match", lambda: table().load(path).where(exact).count(), repeat)
        timed("exact parquet", lambda: parquet.where(exact).count(), repeat)
        source = IndexTablesDataSource({"path": path, "query": needle})
        timed("snapshot load", lambda: len(load_view(path, {}).splits), repeat)
        timed("schema()", lambda: len(source.schema().fields), repeat)
        schema = source.schema()
        timed("reader()", lambda: type(source.reader(schema)).__name__, repeat)
        reader = source.reader(schema)
        timed("partitions()", lambda: len(reader.partitions()), repeat)
        tasks = reader.partitions()

        def read_all() -> int:
            return sum(b.num_rows for t in tasks for b in reader.read(t))

        timed("read() of all tasks", read_all, repeat)
        search_phases(spark, path, needle, repeat)
    finally:
        stop(spark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
