"""Maintenance SQL commands: parsing without Spark, and running them through Spark."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.commands import parse
from indextables.pyspark.errors import SqlCommandError


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("DESCRIBE INDEXTABLES STATE '/t'", "describe_state", {"path": "/t"}),
        ("describe indextables transaction log s3://b/t", "describe_log", {"path": "s3://b/t"}),
        ("CHECKPOINT INDEXTABLES '/t';", "checkpoint", {"path": "/t"}),
        ('COMPACT INDEXTABLES "/t"', "compact", {"path": "/t"}),
        (
            "PURGE INDEXTABLE '/t' OLDER THAN 7 DAYS DRY RUN",
            "purge",
            {"path": "/t", "n": "7", "unit": "DAYS", "dry": " DRY RUN"},
        ),
        ("PURGE INDEXTABLE '/t'", "purge", {"path": "/t"}),
        (
            "TRUNCATE INDEXTABLES TIME TRAVEL '/t' DRY RUN",
            "truncate",
            {"path": "/t", "dry": " DRY RUN"},
        ),
        (
            "DROP INDEXTABLES PARTITIONS FROM '/t' WHERE day = '2024-01-01'",
            "drop_partitions",
            {"path": "/t", "where": "day = '2024-01-01'"},
        ),
        (
            "REPAIR INDEXFILES TRANSACTION LOG '/t' AT LOCATION '/u'",
            "repair",
            {"path": "/t", "target": "/u"},
        ),
    ],
)
def test_reference_grammar_parses(text: str, name: str, args: dict[str, str]) -> None:
    assert parse(text) == (name, args)


def test_other_statements_are_not_ours() -> None:
    assert parse("SELECT 1") is None


@pytest.mark.parametrize("text", ["CHECKPOINT INDEXTABLES", "COMPACT INDEXTABLES '/t' NOW"])
def test_broken_or_unsupported_commands_raise(text: str) -> None:
    with pytest.raises(SqlCommandError):
        parse(text)


@pytest.mark.spark
@pytest.mark.integration
def test_commands_run_through_spark(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = str(tmp_path / "t")
    df = spark.range(10, numPartitions=1).selectExpr("id", "cast(id % 2 as string) as part")
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(path)
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(path)
    state = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{path}'").first().asDict()
    assert state["num_files"] == "4"
    assert itp.sql(spark, f"CHECKPOINT INDEXTABLES '{path}'").first()["status"] == "SUCCESS"
    merged = itp.sql(spark, f"MERGE SPLITS '{path}'").first().asDict()
    assert (merged["status"], merged["merged_files"], merged["new_files"]) == ("SUCCESS", "4", "2")
    state = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{path}'").first().asDict()
    assert state["num_files"] == "2"
    assert spark.read.format("indextables").load(path).count() == 20
    itp.sql(spark, f"DROP INDEXTABLES PARTITIONS FROM '{path}' WHERE part = '1'")
    assert (
        sorted(r.part for r in spark.read.format("indextables").load(path).collect()) == ["0"] * 10
    )
    assert itp.sql(spark, "SELECT 41 + 1 AS x").first()["x"] == 42
    history = itp.sql(spark, f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    assert len(history) >= 4


@pytest.mark.spark
@pytest.mark.integration
def test_failed_merge_group_becomes_a_mergeskip(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp
    from indextables.pyspark.tableaccess import load_view, table_handle

    path = tmp_path / "m"
    for start in (0, 10):
        df = spark.range(start, start + 10, numPartitions=1)
        df.write.format("indextables").mode("append").save(str(path))
    victim = load_view(str(path), {}).splits[0].entry.ref.path
    (path / victim).unlink()  # the merge task cannot read this split
    merged = itp.sql(spark, f"MERGE SPLITS '{path}'").first().asDict()
    assert (merged["status"], merged["skipped_groups"], merged["new_files"]) == (
        "PARTIAL",
        "1",
        "0",
    )
    skipped = {s.path for s in table_handle(str(path), {}).skipped_files()}
    assert victim in skipped
    assert len(load_view(str(path), {}).splits) == 2  # nothing committed for the failed group


@pytest.mark.spark
@pytest.mark.integration
def test_purge_older_than_counts_days_and_hours(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = tmp_path / "t"
    spark.range(3, numPartitions=1).write.format("indextables").mode("append").save(str(path))
    orphan = path / "part-orphan.split"
    orphan.write_bytes(b"never committed")
    three_days_ago = time.time() - 3 * 86400
    os.utime(orphan, (three_days_ago, three_days_ago))

    def dry_run(older_than: str) -> dict[str, Any]:
        text = f"PURGE INDEXTABLE '{path}' OLDER THAN {older_than} DRY RUN"
        row: dict[str, Any] = itp.sql(spark, text).first().asDict()
        return row

    two_days = dry_run("2 DAYS")
    assert (two_days["retention_hours"], two_days["orphaned_files_found"]) == ("48.0", "1")
    assert json.loads(two_days["orphaned_files"]) == ["part-orphan.split"]
    assert dry_run("100 HOURS")["orphaned_files_found"] == "0"
    assert orphan.exists()


@pytest.mark.spark
@pytest.mark.integration
def test_purge_truncate_and_repair_report_the_tables_state(spark: Any, tmp_path: Path) -> None:
    from pyspark.errors import AnalysisException

    import indextables.pyspark as itp
    from indextables.protocol import open_table

    path = tmp_path / "t"
    for start in (0, 10):  # versions 0 (create) and 1, 2 (appends)
        df = spark.range(start, start + 10, numPartitions=1)
        df.write.format("indextables").mode("append").save(str(path))
    live = sorted(f.path for f in open_table(str(path)).snapshot().files)
    orphan = path / "part-orphan.split"
    orphan.write_bytes(b"never committed")
    old = time.time() - 9 * 86400
    os.utime(orphan, (old, old))
    assert spark.read.format("indextables").load(str(path)).count() == 20  # claims its plan
    claims = list((path / "_indextables_plans").iterdir())
    assert len(claims) == 1
    stale_claim = path / "_indextables_plans" / ("0" * 32)
    stale_claim.write_text("1")
    os.utime(stale_claim, (old, old))

    purged = itp.sql(spark, f"PURGE INDEXTABLE '{path}' OLDER THAN 8 DAYS").first().asDict()
    assert purged["table_path"] == str(path)
    assert (purged["orphaned_files_found"], purged["orphaned_files_deleted"]) == ("1", "1")
    assert json.loads(purged["orphaned_files"]) == ["part-orphan.split"]
    assert (purged["retention_hours"], purged["dry_run"]) == ("192.0", "false")
    assert purged["plan_claims_deleted"] == "1"  # the stale claim; never counted as an orphan
    assert list((path / "_indextables_plans").iterdir()) == claims
    assert not orphan.exists()
    assert all((path / name).exists() for name in live)

    def version_files() -> set[str]:
        return {p.name for p in (path / "_transaction_log").glob("*.json*")}

    before = version_files()
    truncated = itp.sql(spark, f"TRUNCATE INDEXTABLES TIME TRAVEL '{path}'").first().asDict()
    gone = before - version_files()
    assert truncated["checkpoint_version"] == "2"
    assert truncated["versions_deleted"] == str(len(gone))
    assert any(name.startswith("00000000000000000001.") for name in gone)
    assert truncated["files_preserved"] == str(len(live))
    reader = spark.read.format("indextables")
    assert reader.load(str(path)).count() == 20
    with pytest.raises(AnalysisException, match="version"):
        reader.option("versionAsOf", "1").load(str(path)).count()

    target = tmp_path / "repaired"
    text = f"REPAIR INDEXFILES TRANSACTION LOG '{path}' AT LOCATION '{target}'"
    repaired = itp.sql(spark, text).first().asDict()
    assert (repaired["source_version"], repaired["total_splits"]) == ("2", str(len(live)))
    assert (repaired["valid_splits"], repaired["missing_splits"]) == (str(len(live)), "0")
    assert sorted(f.path for f in open_table(str(target)).snapshot().files) == live
