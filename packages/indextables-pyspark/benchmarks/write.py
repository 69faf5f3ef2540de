"""Spark writes: IndexTables vs Parquet of the same cached DataFrame, in one run (figures only).

Rows: ``common.py``'s log rows (``logs``), cached in the JVM and counted before any
timing, in ``--partitions`` partitions (default: the session's cores). Per
round, interleaved so that the machine's load hits every line alike:

- ``parquet``: ``df.write.parquet``;
- ``indextables``: ``df.write.format("indextables")`` (the default feed, ``segments``);
- ``indextables json feed``: the same with ``indexWriter.feed=json`` (tantivy-py);
- ``itp.write optimized``: ``itp.write`` with ``write.optimizeWrite.enabled``
  (the rows repartitioned to the executors' cores first: a shuffle);
- ``hand-over only``: a Python data source whose writer only walks the Arrow
  batches Spark hands it (the JVM -> Arrow -> Python worker cost of a write,
  no indexing) -- what every Python data source pays per row.

Each line: the median wall rows/s, the CPU seconds of this process tree (the
driver, the JVM, the Python workers; read from ``/proc``, so other jobs on the
machine are left out) and rows per CPU-second, then the IndexTables / Parquet
ratios, the load average and the task count of an IndexTables write.

Usage: ``python benchmarks/write.py [--rows 1000000] [--repeat 3] [--partitions N]``
or ``tox -e bench-pyspark -- write [...]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import OPTIONS, logs, session, stop

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> float:
    """CPU seconds used so far by ``root`` and every descendant (reaped children included)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue  # exited meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(name)] = int(fields[1])
        times[int(name)] = sum(int(v) for v in fields[11:15]) / TICKS
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def handover_source() -> Any:
    """A data source ``bench-handover`` whose writer only reads the Arrow batches."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class Walk(DataSourceArrowWriter):
        def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
            rows = 0
            for batch in iterator:
                rows += batch.num_rows
            return WriterCommitMessage()

    class Handover(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench-handover"

        def writer(self, schema: Any, overwrite: bool) -> Walk:
            return Walk()

    return Handover


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=0, help="0: the session's cores")
    args = parser.parse_args(argv)

    import indextables.pyspark as itp

    spark = session()
    spark.dataSource.register(handover_source())
    cores = spark.sparkContext.defaultParallelism
    partitions = args.partitions or cores
    work = tempfile.mkdtemp(prefix="indextables-bench-write-")
    data = logs(spark, args.rows, partitions=partitions).cache()
    data.count()
    optimized = {**OPTIONS, "spark.indextables.write.optimizeWrite.enabled": "true"}
    json_feed = {**OPTIONS, "spark.indextables.indexWriter.feed": "json"}
    actions: dict[str, Callable[[str], None]] = {
        "parquet": lambda target: data.write.mode("overwrite").parquet(target),
        "indextables": lambda target: (
            data.write.format("indextables").options(**OPTIONS).mode("overwrite").save(target)
        ),
        "indextables json feed": lambda target: (
            data.write.format("indextables").options(**json_feed).mode("overwrite").save(target)
        ),
        "itp.write optimized": lambda target: itp.write(
            data, target, mode="overwrite", options=optimized
        ),
        "hand-over only": lambda target: (
            data.write.format("bench-handover").mode("append").save(target)
        ),
    }
    walls: dict[str, list[float]] = {name: [] for name in actions}
    cpus: dict[str, list[float]] = {name: [] for name in actions}
    loads: list[float] = []
    me = os.getpid()
    try:
        for action in actions.values():  # warm: JVM code paths, Python workers
            action(os.path.join(work, "warm"))
        for k in range(args.repeat):
            for name, action in actions.items():
                target = os.path.join(work, f"{k}-{name.replace(' ', '_')}")
                cpu, start = tree_cpu(me), time.perf_counter()
                action(target)
                walls[name].append(time.perf_counter() - start)
                cpus[name].append(tree_cpu(me) - cpu)
                loads.append(os.getloadavg()[0])
        written = os.listdir(os.path.join(work, "0-indextables"))
        splits = sum(1 for f in written if f.endswith(".split"))
    finally:
        data.unpersist()
        stop(spark)
        shutil.rmtree(work, ignore_errors=True)
    rows = args.rows
    print(
        f"Spark write, {rows:,} log rows in {partitions} partition(s), local[{cores}], "
        f"median of {args.repeat} interleaved rounds, load average "
        f"{min(loads):.1f}-{max(loads):.1f}:"
    )
    rate = {}
    for name in actions:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        rate[name] = (rows / wall, rows / cpu)
        print(
            f"  {name:<21} {rows / wall:>10,.0f} rows/s wall ({wall:6.2f} s)  "
            f"{rows / cpu:>10,.0f} rows per CPU-second ({cpu:6.2f} s)  "
            f"{cpu / wall:4.2f} cores busy"
        )
    for name in ("indextables", "indextables json feed", "itp.write optimized"):
        print(
            f"  {name} / parquet = {rate[name][0] / rate['parquet'][0]:.2f}x wall, "
            f"{rate[name][1] / rate['parquet'][1]:.2f}x per CPU-second"
        )
    segments, json_feed_rate = rate["indextables"], rate["indextables json feed"]
    print(
        f"  segments feed / json feed = {segments[0] / json_feed_rate[0]:.2f}x wall, "
        f"{segments[1] / json_feed_rate[1]:.2f}x per CPU-second"
    )
    print(f"  an IndexTables write added {splits} split(s) (one per task)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
