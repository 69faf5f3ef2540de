"""The helpers and SQL commands the Connect tests run, on any session; and a Connect client.

:func:`answers` runs the named steps on a session and returns what each answered
(JSON-able): the tests call it on their classic session and, through this file
as a script, on a Spark Connect session, and compare.

``python connectrun.py <job.json>``: connects to ``job["remote"]`` (``local[2]``:
PySpark's in-process local Connect server; ``sc://localhost:<port>``: a
separate server), registers the source, runs ``answers`` for ``job["steps"]``
on the tables ``job["paths"]`` names and prints one JSON object. It runs in its
own process: a Connect client turns the process's ``pyspark.sql`` functions to
Connect (``SPARK_CONNECT_MODE_ENABLED``), and PySpark refuses to start the local
server in a process that has a classic session (``SESSION_OR_CONTEXT_EXISTS``).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

DISTRIBUTED = {"spark.indextables.search.localMaxSplits": "1"}
COMPANION_SOURCE = (
    Path(__file__).resolve().parents[2]
    / "indextables-search/tests/fixtures/delta-table-with-dv-small"
)


def _splits(path: str) -> int:
    from indextables.search.table.tableaccess import load_view

    return len(load_view(path, {}).splits)


def _splits_with_deletes(path: str) -> int:
    """Live splits that carry delete bitsets (a delete opstamp in the log)."""
    from indextables.search.table.tableaccess import load_view

    return sum(1 for s in load_view(path, {}).splits if s.delete_opstamp is not None)


def _rows(spark: Any, path: str) -> list[list[Any]]:
    frame = spark.read.format("indextables").load(path)
    return sorted([list(r) for r in frame.collect()], key=repr)


def _plain(value: Any) -> Any:
    """``value`` as JSON would bring it back (tuples as lists, other objects as text)."""
    return json.loads(json.dumps(value, default=str))


def _error(call: Callable[[], Any]) -> dict[str, Any]:
    """What an error looks like to the caller: class, text, lines and what we rebuild."""
    import indextables.pyspark as itp

    try:
        call()
    except Exception as error:
        rebuilt = itp.from_spark_error(error)
        text = str(error)
        return {
            "raised": type(error).__name__,
            "first_line": text.splitlines()[0] if text else "",
            "lines": len(text.splitlines()),
            "rebuilt": None if rebuilt is None else [type(rebuilt).__name__, str(rebuilt)],
        }
    return {"raised": None}


def _steps(spark: Any, itp: Any, paths: dict[str, str]) -> dict[str, Callable[[], Any]]:
    def table() -> str:
        return paths["table"]

    def aggregate() -> list[list[Any]]:
        frame = itp.aggregate(
            spark,
            table(),
            group_by="level",
            metrics={"n": "count", "total": ("sum", "id"), "top": ("max", "latency")},
            options=DISTRIBUTED,
        )
        return sorted([list(r) for r in frame.collect()], key=repr)

    def search() -> list[list[Any]]:
        hits = itp.search(
            spark,
            table(),
            "message:timed",
            where="latency > 10",
            order_by="id",
            highlight=["message"],
            limit=25,
        )
        return [list(r) for r in hits.collect()]

    def merge() -> dict[str, Any]:
        merged = itp.sql(spark, f"MERGE SPLITS '{paths['merge']}'").first().asDict(recursive=True)
        return {
            "status": merged["metrics"]["status"],
            "splits": _splits(paths["merge"]),
            "rows": _rows(spark, paths["merge"]),
        }

    def onwrite() -> dict[str, Any]:
        mow = "spark.indextables.mergeOnWrite."
        options = {mow + "enabled": "true", mow + "async.enabled": "false"}
        frame = spark.range(40, numPartitions=4).selectExpr("id", "cast(id % 2 as string) as part")
        itp.write(frame, paths["onwrite"], partition_by=["part"])
        result = itp.write(frame, paths["onwrite"], partition_by=["part"], options=options)
        outcome = result.maintenance.result(timeout=600)
        return {
            "merged_groups": outcome.merged_groups,
            "error": outcome.error,
            "splits": _splits(paths["onwrite"]),
            "rows": _rows(spark, paths["onwrite"]),
        }

    def mutations() -> dict[str, Any]:
        path = paths["mutations"]

        def deleted(text: str) -> list[Any]:
            row = itp.sql(spark, f"DELETE FROM '{path}' {text}").first().asDict()
            return [row["status"], row["num_deleted_rows"], row["splits_changed"]]

        where = deleted("WHERE level = 'ERROR'")
        both = deleted("QUERY 'message:retried' WHERE latency > 50")
        none = deleted("WHERE id < 0")
        replace = "latency < 20"
        rows = spark.range(1000, 1010, numPartitions=2).selectExpr(
            "id",
            "'INFO' AS level",
            "concat('replaced ', id) AS message",
            "cast(id % 10 AS double) AS latency",
        )
        writer = rows.write.format("indextables").option("replaceWhere", replace)
        writer.mode("overwrite").save(path)
        outside = spark.range(5000, 5001).selectExpr(
            "id", "'INFO' AS level", "'outside' AS message", "cast(99.0 AS double) AS latency"
        )
        mismatch = _error(
            lambda: (
                outside.write.format("indextables")
                .option("replaceWhere", replace)
                .mode("overwrite")
                .save(path)
            )
        )
        replaced = _rows(spark, path)
        before_purge = _splits_with_deletes(path)
        merged = itp.sql(spark, f"MERGE SPLITS '{path}' PURGE DELETES").first()
        return {
            "deletes": [where, both, none],
            "replaced": replaced,
            "mismatch": mismatch["rebuilt"][0] if mismatch.get("rebuilt") else mismatch,
            "purge": merged.asDict(recursive=True)["metrics"]["status"],
            "with_deletes": [before_purge, _splits_with_deletes(path)],
            "rows": _rows(spark, path),
            "count": itp.count(spark, path, options=DISTRIBUTED),
        }

    def environment() -> list[dict[str, Any]]:
        rows = itp.sql(spark, "DESCRIBE INDEXTABLES ENVIRONMENT").collect()
        return [r.asDict() for r in rows]

    def maintenance() -> dict[str, Any]:
        path = paths["maintenance"]
        for start in (0, 10, 20):
            part = spark.range(start, start + 10, numPartitions=1).selectExpr("id")
            part.write.format("indextables").mode("append").save(path)
        before = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{path}'").first().asDict()
        checkpoint = itp.sql(spark, f"CHECKPOINT INDEXTABLES '{path}'").first().asDict()
        purge = itp.sql(spark, f"PURGE INDEXTABLE '{path}' OLDER THAN 7 DAYS DRY RUN").first()
        metrics = purge.asDict(recursive=True)["metrics"]
        log = itp.sql(spark, f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
        return {
            "state": [before["version"], before["num_files"]],
            "checkpoint": [checkpoint["status"], checkpoint["checkpoint_version"]],
            "purge": [metrics["dry_run"], metrics["orphaned_files_found"]],
            "log_entries": len(log),
            "rows": _rows(spark, path),
        }

    def stream() -> list[list[Any]]:
        from indextables.pyspark.streamstart import run_stream

        source = spark.readStream.format("indextables").option("startingVersion", "-1")
        frame = source.load(table()).select("id", "level")

        def start() -> Any:
            return (
                frame.writeStream.format("indextables")
                .option("checkpointLocation", paths["stream"] + "-checkpoint")
                .trigger(availableNow=True)
                .start(paths["stream"])
            )

        run_stream(start)
        return _rows(spark, paths["stream"])

    def companion() -> dict[str, Any]:
        index = paths["companion"]
        text = f"BUILD INDEXTABLES COMPANION FOR DELTA '{COMPANION_SOURCE}' AT LOCATION '{index}'"
        row = itp.sql(spark, text).first()
        agg = itp.aggregate(spark, index, metrics={"n": "count", "s": ("sum", "value")}).first()
        return {
            "built": [row.status, row.parquet_files_indexed],
            "values": sorted(
                r.value for r in spark.read.format("indextables").load(index).collect()
            ),
            "count": itp.count(spark, index, query="value:5"),
            "aggregate": [agg.n, agg.s],
        }

    def errors() -> dict[str, Any]:
        missing = paths["missing"]
        return {
            "read_missing": _error(
                lambda: spark.read.format("indextables").load(missing).collect()
            ),
            "read_bad_query": _error(
                lambda: (
                    spark.read.format("indextables")
                    .option("query", "message:(")
                    .load(table())
                    .collect()
                )
            ),
            "count_bad_query": _error(
                lambda: itp.count(spark, table(), query="message:(", options=DISTRIBUTED)
            ),
            "sql_bad": _error(lambda: itp.sql(spark, "CHECKPOINT INDEXTABLES").collect()),
        }

    return {
        "count": lambda: itp.count(spark, table(), options=DISTRIBUTED),
        "count_query": lambda: itp.count(
            spark, table(), query="message:timed", options=DISTRIBUTED
        ),
        "count_where": lambda: itp.count(
            spark, table(), where="level = 'ERROR'", options=DISTRIBUTED
        ),
        "aggregate": aggregate,
        "search": search,
        "merge": merge,
        "mutations": mutations,
        "onwrite": onwrite,
        "environment": environment,
        "maintenance": maintenance,
        "stream": stream,
        "companion": companion,
        "errors": errors,
    }


def answers(spark: Any, paths: dict[str, str], steps: list[str]) -> dict[str, Any]:
    """What each step answered on ``spark`` (a failure as ``{"step_failed": ...}``: one failure
    hides no other answer), and under ``"seconds"`` how long each took."""
    import indextables.pyspark as itp

    known = _steps(spark, itp, paths)
    out: dict[str, Any] = {"seconds": {}}
    for name in steps:
        start = time.perf_counter()
        try:
            out[name] = _plain(known[name]())
        except Exception as error:
            out[name] = {"step_failed": f"{type(error).__name__}: {error}"[-2000:]}
        out["seconds"][name] = round(time.perf_counter() - start, 2)
    return out


def main(job_file: str) -> None:
    warnings.simplefilter("ignore")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # The local server on an ephemeral port (PySpark does so under SPARK_TESTING) instead
    # of the fixed 15002, so concurrent test runs do not collide.
    os.environ["SPARK_TESTING"] = "1"
    job = json.loads(Path(job_file).read_text())
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(job["remote"])
    if job["remote"].startswith("local"):
        builder = builder.config("spark.sql.shuffle.partitions", "2").config(
            "spark.sql.session.timeZone", "UTC"
        )
    spark = builder.getOrCreate()
    import indextables.pyspark as itp

    itp.register(spark)
    out: dict[str, Any] = {"connect": type(spark).__module__.startswith("pyspark.sql.connect")}
    out.update(answers(spark, job["paths"], job["steps"]))
    spark.stop()
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
