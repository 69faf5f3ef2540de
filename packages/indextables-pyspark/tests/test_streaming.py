"""Streaming: new rows out of a table, exactly-once appends into one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.streamstart import run_stream

# Every query is started through run_stream: started again if its source's Python worker
# misses Spark's fixed 10 s start wait (a loaded machine), see indextables.pyspark.streamstart.
pytestmark = [pytest.mark.spark, pytest.mark.integration]
FMT = "indextables"


@pytest.mark.parametrize("trigger", [{"availableNow": True}, {"once": True}])
def test_stream_reads_rows_added_after_the_start_version(
    spark: Any, tmp_path: Path, trigger: dict[str, bool]
) -> None:
    path = str(tmp_path / "src")
    spark.range(5).write.format(FMT).mode("append").save(path)
    spark.range(100, 103).write.format(FMT).mode("append").save(path)
    run_stream(
        lambda: (
            spark.readStream.format(FMT)
            .option("startingVersion", "1")
            .load(path)
            .writeStream.format("memory")
            .queryName(f"streamed_rows_{next(iter(trigger)).lower()}")
            .trigger(**trigger)
            .start()
        )
    )
    table = f"streamed_rows_{next(iter(trigger)).lower()}"
    rows = sorted(r.id for r in spark.sql(f"SELECT id FROM {table}").collect())
    assert rows == [100, 101, 102]


def test_a_new_stream_without_starting_version_reads_the_snapshot_then_the_changes(
    spark: Any, tmp_path: Path
) -> None:
    # Delta's convention: the table's current rows first, then every later commit.
    path = str(tmp_path / "src_default")
    spark.range(3).write.format(FMT).mode("append").save(path)
    spark.range(10, 12).write.format(FMT).mode("append").save(path)
    query = run_stream(
        lambda: (
            spark.readStream.format(FMT)
            .load(path)
            .writeStream.format("memory")
            .queryName("default_start_rows")
            .trigger(processingTime="1 second")
            .start()
        ),
        until="available",
    )
    try:
        rows = sorted(r.id for r in spark.sql("SELECT id FROM default_start_rows").collect())
        assert rows == [0, 1, 2, 10, 11]
        spark.range(20, 22).write.format(FMT).mode("append").save(path)
        deadline = time.monotonic() + 120  # only bounds a hang; the result is checked below
        while time.monotonic() < deadline and len(rows) < 7:
            query.processAllAvailable()
            rows = sorted(r.id for r in spark.sql("SELECT id FROM default_start_rows").collect())
        assert rows == [0, 1, 2, 10, 11, 20, 21]
    finally:
        query.stop()


def test_stream_sink_commits_each_batch_once(spark: Any, tmp_path: Path) -> None:
    source, sink = str(tmp_path / "src2"), str(tmp_path / "sink")
    checkpoint = str(tmp_path / "chk")
    spark.range(4).write.format(FMT).mode("append").save(source)

    def run() -> None:
        stream = spark.readStream.format(FMT).option("startingVersion", "-1").load(source)
        run_stream(
            lambda: (
                stream.writeStream.format(FMT)
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start(sink)
            )
        )

    run()
    run()  # a restart with the same checkpoint: nothing new, nothing twice
    assert spark.read.format(FMT).load(sink).count() == 4
    from indextables.pyspark.read.datasource import plan_write
    from indextables.pyspark.streaming import IndexTablesStreamWriter

    plan = plan_write(sink, {"path": sink}, spark.read.format(FMT).load(sink).schema)
    from indextables.search.table.tableaccess import load_view

    before = load_view(sink, {}).version
    assert load_view(sink, {}).configuration["indextables.streaming.default.batchid"] == "0"
    IndexTablesStreamWriter(plan).commit([], 0)  # replaying batch 0 must not commit again
    assert load_view(sink, {}).version == before


def test_processing_time_trigger_picks_up_new_commits(spark: Any, tmp_path: Path) -> None:
    import time

    path = str(tmp_path / "src3")
    spark.range(2).write.format(FMT).mode("append").save(path)
    query = run_stream(  # processed what is available: the start offset is fixed now
        lambda: (
            spark.readStream.format(FMT)
            .option("startingVersion", "latest")  # only rows committed from now on
            .load(path)
            .writeStream.format("memory")
            .queryName("live_rows")
            .trigger(processingTime="1 second")
            .start()
        ),
        until="available",
    )
    try:
        spark.range(50, 53).write.format(FMT).mode("append").save(path)
        deadline = time.monotonic() + 120
        rows: list[int] = []
        while time.monotonic() < deadline and len(rows) < 3:
            query.processAllAvailable()
            rows = sorted(r.id for r in spark.sql("SELECT id FROM live_rows").collect())
        assert rows == [50, 51, 52]
    finally:
        query.stop()


def test_stream_from_version_0_of_a_reference_table_with_a_stale_state_v0(
    spark: Any, golden_copy: Any, expected: Any, sort_rows: Any
) -> None:
    """13_after_purge's state-v0 holds version 5's files: rows after version 0 are all rows."""
    path = str(golden_copy("13_after_purge"))
    assert spark.read.format(FMT).option("versionAsOf", "0").load(path).count() == 0
    run_stream(
        lambda: (
            spark.readStream.format(FMT)
            .option("startingVersion", "0")
            .load(path)
            .writeStream.format("memory")
            .queryName("after_version_0")
            .trigger(availableNow=True)
            .start()
        )
    )
    rows = [r.asDict() for r in spark.sql("SELECT * FROM after_version_0").collect()]
    assert sort_rows(rows) == sort_rows(expected("13_after_purge")["rows"])
