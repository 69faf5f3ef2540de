"""Maintenance commands on local tables, each destructive one with and without --dry-run."""

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

TEN_DAYS = 10 * 24 * 3600


def make_orphan(table: Path, name: str = "date=2024-01-01/orphan.split") -> Path:
    """A split no version references, old enough for purge."""
    source = next((table / "date=2024-01-01").glob("part-*.split"))
    orphan = table / name
    shutil.copyfile(source, orphan)
    old = time.time() - TEN_DAYS
    os.utime(orphan, (old, old))
    return orphan


def test_checkpoint_when_a_state_exists(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("checkpoint", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    result = run.json()
    assert result["checkpoint_version"] == 1
    assert result["num_files"] == 3
    assert result["protocol_version"] == 4
    assert set(result) >= {
        "table_path",
        "status",
        "checkpoint_version",
        "num_actions",
        "num_files",
        "protocol_version",
        "is_multi_part",
    }


def test_compact_writes_a_clean_state(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("compact", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["compacted"] is True
    described = cli_run("describe", str(partitioned_table), "-o", "json").json()
    assert described["version"] == run.json()["checkpoint_version"] == 2
    assert described["num_tombstones"] == 0
    assert described["num_files"] == 3


def keys_of(table: Path) -> set[str]:
    return {p.relative_to(table).as_posix() for p in table.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "args",
    [
        ("purge", "--older-than", "7d"),
        ("truncate-time-travel",),
        ("gc", "--retention", "0d", "--keep-versions", "0", "--min-manifest-age", "0s"),
    ],
)
def test_dry_run_lists_exactly_what_the_real_run_deletes(
    partitioned_table: Path, cli_run: Any, args: tuple[str, ...]
) -> None:
    make_orphan(partitioned_table)
    assert cli_run("compact", str(partitioned_table)).exit_code == 0
    command, *options = args
    before = keys_of(partitioned_table)
    dry = cli_run(command, str(partitioned_table), *options, "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert keys_of(partitioned_table) == before  # the dry run changed nothing
    would_delete = dry.json()["would_delete"]
    assert would_delete  # each scenario deletes something
    real = cli_run(command, str(partitioned_table), *options, "-o", "json")
    assert real.exit_code == 0, real.stderr
    assert sorted(before - keys_of(partitioned_table)) == would_delete


def test_purge_dry_run_lists_the_orphan_and_deletes_nothing(
    partitioned_table: Path, cli_run: Any
) -> None:
    orphan = make_orphan(partitioned_table)
    run = cli_run("purge", str(partitioned_table), "--dry-run", "-o", "json")
    assert run.exit_code == 0, run.stderr
    result = run.json()
    assert result["status"] == "DRY_RUN"
    assert result["dry_run"] is True
    assert result["orphaned_files"] == ["date=2024-01-01/orphan.split"]
    assert result["orphaned_files_found"] == 1
    assert result["orphaned_files_deleted"] == 0
    assert orphan.exists()


def test_purge_deletes_the_orphan_only(partitioned_table: Path, cli_run: Any) -> None:
    orphan = make_orphan(partitioned_table)
    run = cli_run("purge", str(partitioned_table), "--older-than", "7d", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["orphaned_files_deleted"] == 1
    assert not orphan.exists()
    assert cli_run("validate", str(partitioned_table)).exit_code == 0
    assert cli_run("describe", str(partitioned_table), "-o", "json").json()["num_files"] == 3


def test_purge_keeps_young_orphans(partitioned_table: Path, cli_run: Any) -> None:
    orphan = make_orphan(partitioned_table)
    run = cli_run("purge", str(partitioned_table), "--older-than", "30d", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["orphaned_files_found"] == 0
    assert orphan.exists()


def test_purge_refuses_a_retention_below_a_day(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("purge", str(partitioned_table), "--older-than", "1h", "--yes")
    assert run.exit_code == 1
    message = " ".join(run.stderr.split())  # the console wraps long lines
    assert "below the minimum" in message
    # the message says how to lift the check with this command line, not only the Spark key
    assert "-S spark.indextables.purge.retentionCheckEnabled=false" in message


def test_purge_dry_run_below_a_day_reports_and_says_a_real_run_is_refused(
    partitioned_table: Path, cli_run: Any
) -> None:
    orphan = make_orphan(partitioned_table)
    run = cli_run("purge", str(partitioned_table), "--older-than", "1h", "--dry-run", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert "a real run would be refused" in run.json()["message"]
    assert orphan.exists()


def state_dirs(table: Path) -> list[str]:
    """States that exist (a local store may leave an emptied directory behind)."""
    return sorted(p.parent.name for p in (table / "_transaction_log").glob("state-v*/_manifest.*"))


def test_truncate_time_travel_dry_run_then_real(partitioned_table: Path, cli_run: Any) -> None:
    assert cli_run("compact", str(partitioned_table)).exit_code == 0
    before = state_dirs(partitioned_table)
    assert len(before) == 2
    dry = cli_run("truncate-time-travel", str(partitioned_table), "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert dry.json()["status"] == "DRY_RUN"
    assert dry.json()["checkpoints_deleted"] == 1
    assert state_dirs(partitioned_table) == before
    real = cli_run("truncate-time-travel", str(partitioned_table), "-o", "json")
    assert real.exit_code == 0, real.stderr
    assert real.json()["status"] == "SUCCESS"
    assert real.json()["checkpoint_version"] == 2
    assert state_dirs(partitioned_table) == before[-1:]
    assert cli_run("files", str(partitioned_table), "--version", "1").exit_code == 2
    assert cli_run("describe", str(partitioned_table), "-o", "json").json()["num_files"] == 3


def test_drop_partitions_dry_run_lists_files_and_changes_nothing(
    partitioned_table: Path, cli_run: Any
) -> None:
    where = "date <= '2024-01-02'"
    run = cli_run(
        "drop-partitions", str(partitioned_table), "--where", where, "--dry-run", "-o", "json"
    )
    assert run.exit_code == 0, run.stderr
    plan = run.json()
    assert plan["status"] == "DRY_RUN"
    assert plan["partitions_dropped"] == 2
    assert plan["splits_removed"] == 2
    assert sorted(f["partitionValues"]["date"] for f in plan["files"]) == [
        "2024-01-01",
        "2024-01-02",
    ]
    assert plan["total_size_bytes"] == sum(f["size"] for f in plan["files"])
    assert cli_run("describe", str(partitioned_table), "-o", "json").json()["num_files"] == 3


def test_drop_partitions_removes_files_logically(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run(
        "drop-partitions", str(partitioned_table), "--where", "date = '2024-01-01'", "-o", "json"
    )
    assert run.exit_code == 0, run.stderr
    result = run.json()
    assert (result["status"], result["splits_removed"], result["version"]) == ("SUCCESS", 1, 2)
    listed = cli_run("files", str(partitioned_table), "-o", "json").json()
    assert [f["partitionValues"]["date"] for f in listed["files"]] == ["2024-01-02", "2024-01-03"]
    # the split stays in storage until purge
    assert list((partitioned_table / "date=2024-01-01").glob("part-*.split"))


def test_drop_partitions_without_match_is_no_action(partitioned_table: Path, cli_run: Any) -> None:
    for extra in (["--dry-run"], []):
        run = cli_run(
            "drop-partitions",
            str(partitioned_table),
            "--where",
            "date = '1999-01-01'",
            "-o",
            "json",
            *extra,
        )
        assert run.exit_code == 0, run.stderr
        assert run.json()["status"] == "NO_ACTION"


@pytest.mark.parametrize("dry_run", [True, False])
def test_drop_partitions_on_non_partition_column_is_a_user_error(
    partitioned_table: Path, cli_run: Any, dry_run: bool
) -> None:
    extra = ["--dry-run"] if dry_run else []
    run = cli_run("drop-partitions", str(partitioned_table), "--where", "id = 1", *extra)
    assert run.exit_code == 1
    assert "partition column" in run.stderr


@pytest.mark.parametrize("dry_run", [True, False])
def test_drop_partitions_on_unpartitioned_table(
    unpartitioned_table: Path, cli_run: Any, dry_run: bool
) -> None:
    extra = ["--dry-run"] if dry_run else []
    run = cli_run("drop-partitions", str(unpartitioned_table), "--where", "id = 1", *extra)
    assert run.exit_code == 1
    assert "partition" in run.stderr


def manifests(table: Path) -> list[str]:
    return sorted(p.name for p in (table / "_transaction_log/manifests").glob("*.avro"))


GC_NOW = ["--retention", "0d", "--keep-versions", "0", "--min-manifest-age", "0s"]


def test_gc_dry_run_lists_and_keeps(partitioned_table: Path, cli_run: Any) -> None:
    assert cli_run("compact", str(partitioned_table)).exit_code == 0
    before = (state_dirs(partitioned_table), manifests(partitioned_table))
    run = cli_run("gc", str(partitioned_table), *GC_NOW, "--dry-run", "-o", "json")
    assert run.exit_code == 0, run.stderr
    report = run.json()
    assert report["status"] == "DRY_RUN"
    assert report["deleted_states"] == [1]
    assert report["kept_states"] == [2]
    assert "_transaction_log/manifests/manifest-3673dda9.avro" in [
        m["path"] for m in report["deleted_manifests"]
    ]
    assert (state_dirs(partitioned_table), manifests(partitioned_table)) == before


def test_gc_deletes_old_state_and_its_manifest(partitioned_table: Path, cli_run: Any) -> None:
    assert cli_run("compact", str(partitioned_table)).exit_code == 0
    run = cli_run("gc", str(partitioned_table), *GC_NOW, "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["states_deleted"] == 1
    assert state_dirs(partitioned_table) == ["state-v00000000000000000002"]
    assert "manifest-3673dda9.avro" not in manifests(partitioned_table)
    assert cli_run("validate", str(partitioned_table)).exit_code == 0


def test_gc_defaults_keep_recent_states(partitioned_table: Path, cli_run: Any) -> None:
    assert cli_run("compact", str(partitioned_table)).exit_code == 0
    run = cli_run("gc", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["deleted_states"] == []
    assert len(state_dirs(partitioned_table)) == 2


def test_repair_writes_a_clean_log_elsewhere(
    partitioned_table: Path, tmp_path: Path, cli_run: Any
) -> None:
    target = tmp_path / "repaired"
    run = cli_run("repair", str(partitioned_table), "--to", str(target), "-o", "json")
    assert run.exit_code == 0, run.stderr
    result = run.json()
    assert (result["total_splits"], result["valid_splits"], result["missing_splits"]) == (3, 3, 0)
    assert result["status"] == "SUCCESS"
    source_files = cli_run("files", str(partitioned_table), "-o", "json").json()["files"]
    repaired = cli_run("files", str(target), "-o", "json").json()["files"]
    assert [f["path"] for f in repaired] == [f["path"] for f in source_files]
    again = cli_run("repair", str(partitioned_table), "--to", str(target))
    assert again.exit_code == 3  # the destination is taken
    assert "already holds" in again.stderr


def test_repair_leaves_out_missing_splits(
    partitioned_table: Path, tmp_path: Path, cli_run: Any
) -> None:
    for split in (partitioned_table / "date=2024-01-03").glob("*.split"):
        split.unlink()
    run = cli_run("repair", str(partitioned_table), "--to", str(tmp_path / "r"), "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["missing_splits"] == 1
    assert run.json()["status"].startswith("SUCCESS")
    repaired = cli_run("files", str(tmp_path / "r"), "-o", "json").json()
    assert [f["partitionValues"]["date"] for f in repaired["files"]] == ["2024-01-01", "2024-01-02"]


def test_validate_ok(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("validate", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["ok"] is True
    assert run.json()["problems"] == []
    assert run.json()["files_checked"] == 3


def test_validate_lists_each_finding_and_exits_4(partitioned_table: Path, cli_run: Any) -> None:
    missing = sorted(
        str(p.relative_to(partitioned_table)) for p in partitioned_table.rglob("*.split")
    )[:2]
    for path in missing:
        (partitioned_table / path).unlink()
    run = cli_run("validate", str(partitioned_table), "-o", "json")
    assert run.exit_code == 4
    problems = [p["problem"] for p in run.json()["problems"]]
    assert len(problems) == 2
    for path in missing:
        assert any(path in problem for problem in problems)
    text = cli_run("validate", str(partitioned_table))
    assert text.exit_code == 4
    assert missing[0] in text.stdout
    assert "2 invariant(s) failed" in text.stderr


def test_destructive_commands_do_not_prompt_without_a_terminal(
    partitioned_table: Path, cli_run: Any
) -> None:
    orphan = make_orphan(partitioned_table)
    run = cli_run("purge", str(partitioned_table), input="n\n")  # stdin is a pipe: no prompt
    assert run.exit_code == 0, run.stderr
    assert "Continue?" not in run.stderr
    assert not orphan.exists()
