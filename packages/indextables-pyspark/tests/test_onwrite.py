"""Merge-on-write and purge-on-write: option validation, and both through Spark on real tables."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import OptionError
from indextables.search.options import parse_on_write

MOW = "spark.indextables.mergeOnWrite."
POW = "spark.indextables.purgeOnWrite."


def test_on_write_defaults_and_values() -> None:
    assert not parse_on_write({}).enabled
    parsed = parse_on_write(
        {
            MOW + "enabled": "TRUE",
            MOW + "targetSize": "10M",
            MOW + "minSplitsToMerge": "3",
            MOW + "async.enabled": "true",  # reference key, accepted and ignored
            POW + "enabled": "true",
            POW + "triggerAfterWrites": "5",
            POW + "splitRetentionHours": "48",
        }
    )
    assert (parsed.merge, parsed.merge_target_size, parsed.merge_min_splits) == (True, 10 << 20, 3)
    assert (parsed.purge, parsed.purge_after_merge, parsed.purge_after_writes) == (True, True, 5)
    assert (parsed.split_retention_hours, parsed.log_retention_hours) == (48.0, 720.0)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (MOW + "enabled", "yes"),
        (MOW + "targetSize", "big"),
        (MOW + "targetSize", "0"),
        (MOW + "minSplitsToMerge", "1"),
        (POW + "enabled", "1"),
        (POW + "triggerAfterMerge", "maybe"),
        (POW + "triggerAfterWrites", "-1"),
        (POW + "splitRetentionHours", "2"),
        (POW + "txLogRetentionHours", "a week"),
    ],
)
def test_bad_on_write_values_name_the_option(key: str, value: str) -> None:
    with pytest.raises(OptionError, match=key.lower().rsplit(".", 1)[-1]):
        parse_on_write({key: value})


def _splits(path: Path) -> list[str]:
    from indextables.search.table.tableaccess import load_view

    return sorted(s.entry.ref.path for s in load_view(str(path), {}).splits)


@pytest.mark.spark
@pytest.mark.integration
def test_bad_on_write_option_fails_before_any_task(spark: Any, tmp_path: Path) -> None:
    from pyspark.errors import AnalysisException

    path = tmp_path / "t"
    df = spark.range(4, numPartitions=2)
    with pytest.raises(AnalysisException, match="splitretentionhours"):
        (
            df.write.format("indextables")
            .option(POW + "enabled", "true")
            .option(POW + "splitRetentionHours", "1")
            .mode("append")
            .save(str(path))
        )
    assert not path.exists()  # no task uploaded a split


@pytest.mark.spark
@pytest.mark.integration
def test_merge_on_write_reduces_the_split_count(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    df = spark.range(40, numPartitions=4).selectExpr("id", "cast(id % 2 as string) as part")
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(str(path))
    before = _splits(path)
    assert len(before) == 8  # 4 tasks x 2 partition values
    (
        df.write.format("indextables")
        .option("partitionBy", "part")
        .option(MOW + "enabled", "true")
        .option(MOW + "targetSize", "100M")
        .mode("append")
        .save(str(path))
    )
    after = _splits(path)
    assert len(after) == 2  # 16 small splits merged into one per partition value
    assert not set(before) & set(after)
    rows = spark.read.format("indextables").load(str(path)).collect()
    assert sorted((r.id, r.part) for r in rows) == sorted([(i, str(i % 2)) for i in range(40)] * 2)


@pytest.mark.spark
@pytest.mark.integration
def test_purge_on_write_removes_an_old_orphan_never_a_live_file(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    spark.range(5, numPartitions=1).write.format("indextables").mode("append").save(str(path))
    live = _splits(path)
    orphan, fresh = path / "part-orphan.split", path / "part-fresh-orphan.split"
    orphan.write_bytes(b"never committed")
    fresh.write_bytes(b"a write in flight")
    two_days_ago = time.time() - 2 * 86400
    os.utime(orphan, (two_days_ago, two_days_ago))
    for name in live:  # live files as old as the orphan must survive
        os.utime(path / name, (two_days_ago, two_days_ago))
    (
        spark.range(5, 10, numPartitions=1)
        .write.format("indextables")
        .option(POW + "enabled", "true")
        .option(POW + "triggerAfterWrites", "1")
        .option(POW + "splitRetentionHours", "24")
        .mode("append")
        .save(str(path))
    )
    assert not orphan.exists()
    assert fresh.exists()  # younger than the retention
    assert all((path / name).exists() for name in _splits(path))
    assert set(live) < set(_splits(path))
    assert spark.read.format("indextables").load(str(path)).count() == 10


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.parametrize("background", ["true", "false"])
def test_itp_write_merges_as_spark_tasks(spark: Any, tmp_path: Path, background: str) -> None:
    import indextables.pyspark as itp
    from indextables.pyspark.writing.tablewrite import JOB_GROUP

    path = tmp_path / "t"
    df = spark.range(40, numPartitions=4).selectExpr("id", "cast(id % 2 as string) as part")
    first = itp.write(df, str(path), partition_by=["part"])
    assert first.maintenance is None
    assert len(_splits(path)) == 8
    tracker = spark.sparkContext.statusTracker()
    jobs_before = set(tracker.getJobIdsForGroup(JOB_GROUP))
    options = {MOW + "enabled": "true", MOW + "async.enabled": background}
    result = itp.write(df, str(path), partition_by=["part"], options=options)
    assert result.version == first.version + 1
    assert result.maintenance is not None
    if background == "false":
        assert result.maintenance.done()
    outcome = result.maintenance.result(timeout=300)
    # The commit left the merge to the caller (deferred), which ran it as Spark jobs.
    assert (outcome.merged_groups, outcome.error) == (2, None)
    assert set(tracker.getJobIdsForGroup(JOB_GROUP)) > jobs_before
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
    assert len(_splits(path)) == 2
    rows = spark.read.format("indextables").load(str(path)).collect()
    assert sorted((r.id, r.part) for r in rows) == sorted([(i, str(i % 2)) for i in range(40)] * 2)


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mode": "errorifexists"}, "must be one of error, ignore, append, overwrite"),
        ({"options": {POW + "enabled": "true", POW + "splitRetentionHours": "1"}}, "minimum 24"),
    ],
)
def test_itp_write_refuses_bad_input_before_writing(
    spark: Any, tmp_path: Path, kwargs: dict[str, Any], match: str
) -> None:
    import indextables.pyspark as itp

    path = tmp_path / "t"
    with pytest.raises(OptionError, match=match):
        itp.write(spark.range(3), str(path), **kwargs)
    assert not path.exists()
