"""Maintenance SQL commands: parsing without Spark, and running them through Spark."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol.state import FileEntry
from indextables.pyspark.errors import SqlCommandError
from indextables.pyspark.sqlcommands.commands import parse, strip_log_dir
from indextables.pyspark.sqlcommands.describecmds import (
    component_sizes,
    component_type,
    redact_setting,
)
from indextables.search.table.tableaccess import LiveSplit
from indextables.search.write.merge import plan_groups


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
        (
            "REPAIR INDEXFILES TRANSACTION LOG 's3://b/t/_transaction_log' AT LOCATION '/u'",
            "repair",
            {"path": "s3://b/t/_transaction_log", "target": "/u"},
        ),
        (
            "MERGE SPLITS '/t' WHERE day = 'x' TARGET SIZE '4G' MAX DEST SPLITS 3"
            " MAX SOURCE SPLITS PER MERGE 8 PRECOMMIT",
            "merge",
            {
                "path": "/t",
                "where": "day = 'x'",
                "size": "'4G'",
                "dest": "3",
                "sources": "8",
                "precommit": " PRECOMMIT",
            },
        ),
        ("merge splits /t max groups 2", "merge", {"path": "/t", "dest": "2"}),
        ("MERGE SPLITS /t TARGET SIZE 100M", "merge", {"path": "/t", "size": "100M"}),
        (
            "PURGE INDEXTABLE '/t' OLDER THAN 2 HOURS TRANSACTION LOG RETENTION 3 DAYS DRY RUN",
            "purge",
            {
                "path": "/t",
                "n": "2",
                "unit": "HOURS",
                "logn": "3",
                "logunit": "DAYS",
                "dry": " DRY RUN",
            },
        ),
        (
            "PURGE INDEXTABLE /t TRANSACTION LOG RETENTION 30 HOURS",
            "purge",
            {"path": "/t", "logn": "30", "logunit": "HOURS"},
        ),
        (
            "DESCRIBE TANTIVY4SPARK TRANSACTION LOG '/t' INCLUDE ALL",
            "describe_log",
            {"path": "/t", "all": " INCLUDE ALL"},
        ),
        (
            "DESCRIBE INDEXTABLES COMPONENT SIZES '/t' WHERE day = '1'",
            "component_sizes",
            {"path": "/t", "where": "day = '1'"},
        ),
        ("DESCRIBE INDEXTABLES ENVIRONMENT;", "environment", {}),
    ],
)
def test_reference_grammar_parses(text: str, name: str, args: dict[str, str]) -> None:
    assert parse(text) == (name, args)


def test_other_statements_are_not_ours() -> None:
    assert parse("SELECT 1") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CHECKPOINT INDEXTABLES", "cannot parse"),
        ("COMPACT INDEXTABLES '/t' NOW", "cannot parse"),
        ("MERGE SPLITS", "path"),
        ("MERGE SPLITS TARGET SIZE 4G", "path"),
        ("MERGE SPLITS PRECOMMIT", "path"),
        ("MERGE SPLITS '/t' MAX DEST SPLITS 0", "MAX DEST SPLITS must be at least 1"),
        ("MERGE SPLITS '/t' MAX SOURCE SPLITS PER MERGE 1", "PER MERGE must be at least 2"),
        ("MERGE SPLITS '/t' MAX DEST SPLITS many", "MAX DEST SPLITS 'many'"),
        ("MERGE SPLITS '/t' TARGET SIZE 'lots'", "TARGET SIZE"),
        ("MERGE SPLITS '/t' MAX SOURCE SPLITS PER MERGE 4 MAX DEST SPLITS 2", "cannot parse"),
        ("PURGE INDEXTABLE '/t' TRANSACTION LOG RETENTION 3 WEEKS", "cannot parse"),
    ],
)
def test_broken_or_unsupported_commands_raise(text: str, message: str) -> None:
    with pytest.raises(SqlCommandError, match=message):
        parse(text)


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("s3://b/t/_transaction_log", "s3://b/t"),
        ("s3://b/t/_transaction_log/", "s3://b/t"),
        ("/data/t", "/data/t"),
        ("/data/t_transaction_log", "/data/t_transaction_log"),
    ],
)
def test_repair_takes_the_log_directory_or_the_table_root(given: str, root: str) -> None:
    assert strip_log_dir(given) == root


def _split(path: str, part: str, size: int, written: int) -> LiveSplit:
    entry = FileEntry(path, {"part": part}, size, written, True, 0, written)
    return LiveSplit(entry, None)


def test_max_dest_splits_keeps_the_oldest_groups() -> None:
    splits = [
        _split("a1", "a", 10, 300),
        _split("a2", "a", 10, 400),
        _split("b1", "b", 10, 100),  # the oldest split: partition b's group goes first
        _split("b2", "b", 10, 500),
        _split("c1", "c", 10, 200),
        _split("c2", "c", 10, 600),
    ]
    groups = plan_groups(splits, target_size=1000)
    assert [[s.path for s in g.splits] for g in groups] == [
        ["b1", "b2"],
        ["c1", "c2"],
        ["a1", "a2"],
    ]
    (first,) = plan_groups(splits, target_size=1000, max_groups=1)
    assert {s.path for s in first.splits} == {"b1", "b2"}


def test_max_source_splits_per_merge_caps_a_group() -> None:
    splits = [_split(f"s{i}", "a", 10, i) for i in range(5)]
    assert [len(g.splits) for g in plan_groups(splits, target_size=1000)] == [5]
    capped = plan_groups(splits, target_size=1000, max_sources=2)
    assert [len(g.splits) for g in capped] == [2, 2]  # the fifth split has no partner left


def test_component_sizes_sum_the_index_files_by_kind() -> None:
    files = {
        "s1.term": (0, 10),
        "s2.term": (10, 15),
        "s1.idx": (15, 35),
        "s1.fast": (35, 36),
        "meta.json": (36, 40),
        ".managed.json": (40, 42),
    }
    sizes = component_sizes(files, 7)
    assert sizes == {
        "_term_total": 15,
        "_postings_total": 20,
        "_fastfield_total": 1,
        "_meta_total": 6,
        "_hotcache": 7,
    }
    assert [component_type(k) for k in ("_term_total", "_postings_total", "_meta_total")] == [
        "term",
        "postings",
        "meta",
    ]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("spark.indextables.aws.secretKey", "***"),
        ("spark.indextables.aws.sessionToken", "***"),
        ("spark.indextables.azure.accountKey", "***"),
        ("spark.indextables.azure.clientSecret", "***"),
        ("spark.indextables.aws.region", "v"),
        ("spark.master", "v"),
    ],
)
def test_environment_hides_credentials(name: str, shown: str) -> None:
    assert redact_setting(name, "v") == shown


@pytest.mark.spark
@pytest.mark.integration
def test_commands_run_through_spark(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = str(tmp_path / "t")
    df = spark.range(10, numPartitions=1).selectExpr("id", "cast(id % 2 as string) as part")
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(path)
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(path)
    described = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{path}'")
    assert described.dtypes[:6] == [
        ("table_path", "string"),
        ("format", "string"),
        ("version", "bigint"),
        ("num_files", "bigint"),
        ("num_manifests", "int"),
        ("num_tombstones", "int"),
    ]
    assert dict(described.dtypes)["needs_compaction"] == "boolean"
    assert described.first()["num_files"] == 4
    checkpoint = itp.sql(spark, f"CHECKPOINT INDEXTABLES '{path}'")
    assert (checkpoint.first()["status"], checkpoint.first()["checkpoint_version"]) == (
        "SUCCESS",
        2,
    )
    assert dict(checkpoint.dtypes)["is_multi_part"] == "boolean"
    result = itp.sql(spark, f"MERGE SPLITS '{path}'")
    assert [name for name, _ in result.dtypes[:4]] == [
        "table_path",
        "metrics",
        "temp_directory_path",
        "heap_size_bytes",
    ]
    assert dict(result.dtypes)["metrics"] == (
        "struct<status:string,merged_files:bigint,merge_groups:bigint,"
        "original_size_bytes:bigint,merged_size_bytes:bigint,message:string>"
    )
    merged = result.first().asDict(recursive=True)
    assert merged["metrics"]["status"] == "success"
    assert (merged["metrics"]["merged_files"], merged["metrics"]["merge_groups"]) == (4, 2)
    assert merged["new_files"] == 2
    assert merged["metrics"]["merged_size_bytes"] > 0
    state = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{path}'").first().asDict()
    assert state["num_files"] == 2
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
    from indextables.search.table.tableaccess import load_view, table_handle

    path = tmp_path / "m"
    for start in (0, 10):
        df = spark.range(start, start + 10, numPartitions=1)
        df.write.format("indextables").mode("append").save(str(path))
    victim = load_view(str(path), {}).splits[0].entry.ref.path
    (path / victim).unlink()  # the merge task cannot read this split
    merged = itp.sql(spark, f"MERGE SPLITS '{path}'").first().asDict(recursive=True)
    assert (merged["metrics"]["status"], merged["skipped_groups"], merged["new_files"]) == (
        "failed",
        1,
        0,
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
        row: dict[str, Any] = itp.sql(spark, text).first().asDict(recursive=True)
        return row

    two_days = dry_run("2 DAYS")
    metrics = two_days["metrics"]
    assert (metrics["retention_hours"], metrics["orphaned_files_found"]) == (48, 1)
    assert metrics["dry_run"] is True
    assert two_days["orphaned_files"] == ["part-orphan.split"]
    assert dry_run("100 HOURS")["metrics"]["orphaned_files_found"] == 0
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

    result = itp.sql(spark, f"PURGE INDEXTABLE '{path}' OLDER THAN 8 DAYS")
    assert dict(result.dtypes)["metrics"] == (
        "struct<status:string,orphaned_files_found:bigint,orphaned_files_deleted:bigint,"
        "size_mb_deleted:double,retention_hours:bigint,tx_log_files_deleted:bigint,"
        "expired_states_found:bigint,expired_states_deleted:bigint,dry_run:boolean,"
        "duration_ms:bigint,message:string>"
    )
    purged = result.first().asDict(recursive=True)
    metrics = purged["metrics"]
    assert purged["table_path"] == str(path)
    assert (metrics["orphaned_files_found"], metrics["orphaned_files_deleted"]) == (1, 1)
    assert purged["orphaned_files"] == ["part-orphan.split"]
    assert (metrics["retention_hours"], metrics["dry_run"]) == (192, False)
    assert purged["plan_claims_deleted"] == 1  # the stale claim; never counted as an orphan
    assert list((path / "_indextables_plans").iterdir()) == claims
    assert not orphan.exists()
    assert all((path / name).exists() for name in live)

    def version_files() -> set[str]:
        return {p.name for p in (path / "_transaction_log").glob("*.json*")}

    before = version_files()
    truncated = itp.sql(spark, f"TRUNCATE INDEXTABLES TIME TRAVEL '{path}'").first().asDict()
    gone = before - version_files()
    assert truncated["checkpoint_version"] == 2
    assert truncated["versions_deleted"] == len(gone)
    assert any(name.startswith("00000000000000000001.") for name in gone)
    assert truncated["files_preserved"] == len(live)
    reader = spark.read.format("indextables")
    assert reader.load(str(path)).count() == 20
    with pytest.raises(AnalysisException, match="version"):
        reader.option("versionAsOf", "1").load(str(path)).count()

    target = tmp_path / "repaired"
    text = f"REPAIR INDEXFILES TRANSACTION LOG '{path}/_transaction_log' AT LOCATION '{target}'"
    repaired = itp.sql(spark, text).first().asDict()
    assert (repaired["source_version"], repaired["total_splits"]) == (2, len(live))
    assert (repaired["valid_splits"], repaired["missing_splits"]) == (len(live), 0)
    assert sorted(f.path for f in open_table(str(target)).snapshot().files) == live
    again = tmp_path / "repaired-from-root"  # the bare table root keeps working
    itp.sql(spark, f"REPAIR INDEXFILES TRANSACTION LOG '{path}' AT LOCATION '{again}'")
    assert sorted(f.path for f in open_table(str(again)).snapshot().files) == live


def _append(spark: Any, path: Path, part: str, start: int) -> None:
    df = spark.range(start, start + 5, numPartitions=1).selectExpr("id", f"'{part}' as part")
    df.write.format("indextables").option("partitionBy", "part").mode("append").save(str(path))


def _live_by_part(path: Path) -> dict[str, int]:
    from indextables.protocol import open_table

    counts: dict[str, int] = {}
    for f in open_table(str(path)).snapshot().files:
        counts[f.partition_values["part"]] = counts.get(f.partition_values["part"], 0) + 1
    return counts


@pytest.mark.spark
@pytest.mark.integration
def test_merge_clauses_of_the_reference(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = tmp_path / "t"
    for number, part in enumerate(["b", "a", "a", "b", "c", "c", "c", "c"]):
        _append(spark, path, part, number * 5)  # b's first split is the oldest
    assert _live_by_part(path) == {"a": 2, "b": 2, "c": 4}

    text = f"MERGE SPLITS '{path}' TARGET SIZE '4G' PRECOMMIT"
    pending = itp.sql(spark, text).first().asDict(recursive=True)
    assert (pending["metrics"]["status"], pending["metrics"]["merged_files"]) == ("pending", None)
    assert "nothing was merged" in pending["metrics"]["message"]
    assert _live_by_part(path) == {"a": 2, "b": 2, "c": 4}

    text = f"MERGE SPLITS '{path}' TARGET SIZE '4G' MAX DEST SPLITS 1"
    one = itp.sql(spark, text).first().asDict(recursive=True)
    assert (one["metrics"]["merge_groups"], one["new_files"]) == (1, 1)
    assert _live_by_part(path) == {"a": 2, "b": 1, "c": 4}  # the oldest group, not "a"

    text = f"MERGE SPLITS {path} WHERE part = 'c' MAX SOURCE SPLITS PER MERGE 2"
    capped = itp.sql(spark, text).first().asDict(recursive=True)
    assert (capped["metrics"]["merged_files"], capped["new_files"]) == (4, 2)
    assert _live_by_part(path) == {"a": 2, "b": 1, "c": 2}
    assert spark.read.format("indextables").load(str(path)).count() == 40


@pytest.mark.spark
@pytest.mark.integration
def test_purge_transaction_log_retention(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = tmp_path / "t"
    for start in (0, 10, 20):
        spark.range(start, start + 10, numPartitions=1).write.format("indextables").mode(
            "append"
        ).save(str(path))
    itp.sql(spark, f"CHECKPOINT INDEXTABLES '{path}'")
    later = spark.range(30, 40, numPartitions=1).write.format("indextables")
    later.mode("append").save(str(path))
    three_days_ago = time.time() - 3 * 86400
    log = path / "_transaction_log"
    old = [p.name for v in range(3) for p in log.glob(f"{v:020d}.json*")]  # covered by the state
    assert len(old) == 3
    for name in old:
        os.utime(log / name, (three_days_ago, three_days_ago))

    def purge(clause: str) -> dict[str, Any]:
        text = f"PURGE INDEXTABLE '{path}' TRANSACTION LOG RETENTION {clause}"
        row: dict[str, Any] = itp.sql(spark, text).first().asDict(recursive=True)
        return row

    kept = purge("4 DAYS DRY RUN")
    assert (kept["tx_log_files"], kept["tx_log_retention_hours"]) == ([], 96.0)
    would = purge("48 HOURS DRY RUN")
    assert would["tx_log_retention_hours"] == 48.0
    assert would["metrics"]["dry_run"] is True
    assert would["tx_log_files"]
    assert {Path(key).name for key in would["tx_log_files"]} <= set(old)
    done = purge("48 HOURS")
    assert done["metrics"]["tx_log_files_deleted"] == len(would["tx_log_files"])
    assert not any((path / key).exists() for key in would["tx_log_files"])
    assert spark.read.format("indextables").load(str(path)).count() == 40


@pytest.mark.spark
@pytest.mark.integration
def test_describe_transaction_log_has_a_row_per_action(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = tmp_path / "t"
    for part, start in (("a", 0), ("a", 5)):
        _append(spark, path, part, start)  # versions 0 (create), 1 and 2
    itp.sql(spark, f"CHECKPOINT INDEXTABLES '{path}'")  # a state at version 2
    itp.sql(spark, f"MERGE SPLITS '{path}'")  # version 3: 1 add, 2 removes; a state
    _append(spark, path, "a", 10)  # version 4

    everything = itp.sql(spark, f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}' INCLUDE ALL")
    types = dict(everything.dtypes)
    assert len(everything.columns) == 47
    assert (types["version"], types["size"], types["modification_time"]) == (
        "bigint",
        "bigint",
        "timestamp",
    )
    assert (types["data_change"], types["num_merge_ops"], types["skip_count"]) == (
        "boolean",
        "int",
        "int",
    )
    rows = everything.collect()
    kinds = [(r.version, r.action_type) for r in rows]
    assert kinds.count((3, "remove")) == 2
    assert kinds.count((3, "add")) == 1
    assert {(0, "protocol"), (0, "metadata"), (1, "add"), (2, "add"), (4, "add")} <= set(kinds)
    assert not any(r.is_checkpoint for r in rows)
    merged_add = next(r for r in rows if (r.version, r.action_type) == (3, "add"))
    assert (merged_add.data_change, merged_add.num_merge_ops) == (False, 1)
    assert merged_add.modification_time.year >= 2024
    assert json.loads(merged_add.partition_values) == {"part": "a"}
    first_add = next(r for r in rows if (r.version, r.action_type) == (1, "add"))
    assert first_add.num_records == 5
    assert first_add.size > 0
    assert "_transaction_log/00000000000000000001.json" in first_add.log_file_path
    metadata = next(r for r in rows if r.action_type == "metadata")
    assert json.loads(metadata.metadata_partition_columns) == ["part"]

    current = itp.sql(spark, f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    from_state = [r for r in current if r.is_checkpoint]
    assert {r.version for r in from_state} == {3}  # the latest state, the merge's
    assert sorted(r.action_type for r in from_state) == ["add", "metadata", "protocol"]
    assert "state-v00000000000000000003" in from_state[0].log_file_path
    (merged_file,) = [r for r in from_state if r.action_type == "add"]
    assert (merged_file.path, merged_file.num_records) == (merged_add.path, 10)
    after = [(r.version, r.action_type) for r in current if not r.is_checkpoint]
    assert after == [(4, "add")]


@pytest.mark.spark
@pytest.mark.integration
def test_describe_component_sizes_reads_split_footers(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp
    from indextables.protocol import open_table

    path = tmp_path / "t"
    for part, start in (("a", 0), ("b", 5), ("b", 10)):
        _append(spark, path, part, start)
    files = {f.path: f for f in open_table(str(path)).snapshot().files}

    result = itp.sql(spark, f"DESCRIBE INDEXTABLES COMPONENT SIZES '{path}'")
    assert result.dtypes == [
        ("split_path", "string"),
        ("partition_values", "string"),
        ("component_key", "string"),
        ("size_bytes", "bigint"),
        ("component_type", "string"),
        ("field_name", "string"),
    ]
    rows = result.collect()
    assert {r.split_path for r in rows} == set(files)
    for split_path, entry in files.items():
        mine = [r for r in rows if r.split_path == split_path]
        index_bytes = sum(r.size_bytes for r in mine if r.component_key != "_hotcache")
        assert index_bytes == entry.footer_start_offset  # the files fill the split up to its footer
        assert {"_term_total", "_store", "_fastfield_total"} <= {r.component_key for r in mine}
        assert {json.loads(r.partition_values)["part"] for r in mine} == {
            entry.partition_values["part"]
        }
    only_b = itp.sql(spark, f"DESCRIBE INDEXTABLES COMPONENT SIZES '{path}' WHERE part = 'b'")
    b_splits = {p for p, f in files.items() if f.partition_values["part"] == "b"}
    assert {r.split_path for r in only_b.collect()} == b_splits


@pytest.mark.spark
@pytest.mark.integration
def test_describe_environment(spark: Any) -> None:
    import platform

    import indextables.pyspark as itp

    spark.conf.set("spark.indextables.read.defaultLimit", "77")
    options = {
        "spark.indextables.aws.secretKey": "do-not-show",
        "spark.indextables.aws.region": "x",
    }
    try:
        result = itp.sql(spark, "DESCRIBE INDEXTABLES ENVIRONMENT", options=options)
        rows = [r.asDict() for r in result.collect()]
    finally:
        spark.conf.unset("spark.indextables.read.defaultLimit")
    assert result.columns == ["host", "role", "property_type", "property_name", "property_value"]

    def value(role: str, kind: str, name: str) -> Any:
        found = [
            r["property_value"]
            for r in rows
            if (r["role"], r["property_type"], r["property_name"]) == (role, kind, name)
        ]
        assert found, (role, kind, name)
        return found[0]

    assert value("driver", "python", "python.version") == platform.python_version()
    assert value("worker", "python", "python.version") == platform.python_version()
    assert value("driver", "package", "pyspark") == spark.version
    assert value("driver", "package", "indextables-pyspark") == itp.__version__
    assert value("driver", "spark", "spark.master").startswith("local")
    assert value("driver", "spark", "spark.indextables.read.defaultLimit") == "77"
    assert value("driver", "option", "spark.indextables.aws.secretKey") == "***"
    assert value("driver", "option", "spark.indextables.aws.region") == "x"
    assert not any(r["property_value"] == "do-not-show" for r in rows)
