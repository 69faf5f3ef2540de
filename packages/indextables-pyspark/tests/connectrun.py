"""Runs the distributed helpers and commands over a real Spark Connect session.

``python connectrun.py <job.json>``: starts PySpark's in-process local Connect
server (``SparkSession.builder.remote("local[2]")``), registers the source,
runs what the job file asks on the tables it names and prints one JSON object
with the answers (test_connect.py compares them with a classic session's).
It runs in its own process: PySpark refuses to start the local server in a process
that has a classic session (``SESSION_OR_CONTEXT_EXISTS``), which the test session is.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any


def _splits(path: str) -> int:
    from indextables.search.table.tableaccess import load_view

    return len(load_view(path, {}).splits)


def _rows(spark: Any, path: str) -> list[list[Any]]:
    frame = spark.read.format("indextables").load(path)
    return sorted([list(r) for r in frame.collect()], key=repr)


def _steps(spark: Any, itp: Any, job: dict[str, str]) -> list[tuple[str, Any]]:
    distributed = {"spark.indextables.search.localMaxSplits": "1"}
    table = job["table"]

    def aggregate() -> list[list[Any]]:
        frame = itp.aggregate(
            spark,
            table,
            group_by="level",
            metrics={"n": "count", "total": ("sum", "id"), "top": ("max", "latency")},
            options=distributed,
        )
        return sorted([list(r) for r in frame.collect()], key=repr)

    def merge() -> dict[str, Any]:
        merged = itp.sql(spark, f"MERGE SPLITS '{job['merge']}'").first().asDict(recursive=True)
        return {
            "status": merged["metrics"]["status"],
            "splits": _splits(job["merge"]),
            "rows": _rows(spark, job["merge"]),
        }

    def onwrite() -> dict[str, Any]:
        mow = "spark.indextables.mergeOnWrite."
        options = {mow + "enabled": "true", mow + "async.enabled": "false"}
        frame = spark.range(40, numPartitions=4).selectExpr("id", "cast(id % 2 as string) as part")
        itp.write(frame, job["onwrite"], partition_by=["part"])
        result = itp.write(frame, job["onwrite"], partition_by=["part"], options=options)
        outcome = result.maintenance.result(timeout=600)
        return {
            "merged_groups": outcome.merged_groups,
            "error": outcome.error,
            "splits": _splits(job["onwrite"]),
            "rows": _rows(spark, job["onwrite"]),
        }

    def environment() -> list[dict[str, Any]]:
        rows = itp.sql(spark, "DESCRIBE INDEXTABLES ENVIRONMENT").collect()
        return [r.asDict() for r in rows]

    return [
        ("count", lambda: itp.count(spark, table, options=distributed)),
        (
            "count_query",
            lambda: itp.count(spark, table, query="message:timed", options=distributed),
        ),
        (
            "count_where",
            lambda: itp.count(spark, table, where="level = 'ERROR'", options=distributed),
        ),
        ("aggregate", aggregate),
        ("merge", merge),
        ("onwrite", onwrite),
        ("environment", environment),
    ]


def main(job_file: str) -> None:
    warnings.simplefilter("ignore")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # The local server on an ephemeral port (PySpark does so under SPARK_TESTING) instead
    # of the fixed 15002, so concurrent test runs do not collide.
    os.environ["SPARK_TESTING"] = "1"
    job = json.loads(Path(job_file).read_text())
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.remote("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    import indextables.pyspark as itp

    itp.register(spark)
    out: dict[str, Any] = {"connect": type(spark).__module__.startswith("pyspark.sql.connect")}
    for name, step in _steps(spark, itp, job):
        try:
            out[name] = step()
        except Exception as error:  # reported per step: one failure hides no other answer
            out[name] = {"error": f"{type(error).__name__}: {error}"[-2000:]}
    spark.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
