"""Maintenance: checkpoint, compact, describe, purge, truncate, drop, repair, validate."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import (
    AddAction,
    InvalidPredicateError,
    TableExistsError,
    VersionNotFoundError,
    create_table,
    open_table,
)
from indextables.protocol.maintenance import (
    CheckpointResult,
    DescribeStateResult,
    PurgeResult,
)

DAY = 24 * 3600


def split(root: Path, name: str, *, date: str | None = None, size: int = 64) -> AddAction:
    path = f"date={date}/{name}" if date else name
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(b"s" * size)
    return AddAction(path, {"date": date} if date else {}, size, 1, True)


def age(path: Path, seconds: float) -> None:
    """Make a file look ``seconds`` old."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "table"


@pytest.fixture
def table(root: Path, schema: dict[str, Any]) -> Any:
    return create_table(str(root), schema=schema, partition_columns=("date",))


def test_checkpoint_and_describe(table: Any, root: Path) -> None:
    for i in range(3):
        table.commit(adds=[split(root, f"p{i}.split", date="2024-01-01")])
    result = table.checkpoint()
    assert isinstance(result, CheckpointResult)
    assert (result.status, result.checkpoint_version, result.num_files) == ("SUCCESS", 3, 3)
    assert result.protocol_version == 4
    described = table.describe_state()
    assert isinstance(described, DescribeStateResult)
    assert (described.format, described.version, described.num_files) == ("avro-state", 3, 3)
    assert described.total_bytes == 3 * 64
    again = table.checkpoint()
    assert again.checkpoint_version == 3
    assert "already exists" in again.status


def test_compaction_drops_tombstones_and_keeps_live_files(table: Any, root: Path) -> None:
    adds = [split(root, f"p{i}.split", date=f"2024-01-0{i % 3 + 1}") for i in range(20)]
    table.commit(adds=adds)
    table.checkpoint()
    table.commit(removes=[adds[0].path])  # 1/19 tombstones: below the 10% trigger
    table.checkpoint()
    assert table.describe_state().num_tombstones == 1
    result = table.compact()
    assert result.compacted
    described = table.describe_state()
    assert (described.num_tombstones, described.num_files) == (0, 19)
    assert described.version == result.checkpoint_version
    assert {f.path for f in open_table(str(root)).snapshot().files} == {a.path for a in adds[1:]}
    assert table.validate().ok


def test_merge_commit_writes_a_compacted_state(table: Any, root: Path) -> None:
    small = [split(root, f"s{i}.split") for i in range(3)]
    table.commit(adds=small)
    merged = AddAction("merged.split", {}, 64, 1, False)
    split(root, "merged.split")
    version = table.commit(adds=[merged], removes=[a.path for a in small])
    described = table.describe_state()
    assert (described.version, described.num_files, described.num_tombstones) == (version, 1, 0)


def test_purge_deletes_old_orphans_only(table: Any, root: Path) -> None:
    live = split(root, "live.split")
    removed = split(root, "removed.split")
    table.commit(adds=[live, removed])
    table.commit(removes=[removed.path])
    orphan = root / "orphan.split"
    orphan.write_bytes(b"o" * 10)
    fresh_orphan = root / "fresh.split"
    fresh_orphan.write_bytes(b"f")
    age(orphan, 8 * DAY)
    age(root / removed.path, 8 * DAY)
    dry = table.purge(dry_run=True)
    assert isinstance(dry, PurgeResult)
    assert (dry.status, dry.orphaned_files_found, dry.orphaned_files_deleted) == ("DRY_RUN", 1, 0)
    assert orphan.exists()
    result = table.purge()
    assert result.orphaned_files == ("orphan.split",)
    assert not orphan.exists()
    assert fresh_orphan.exists()
    assert (root / removed.path).exists()  # still referenced by a retained version file
    assert table.validate().ok


def test_purge_refuses_short_retention(table: Any) -> None:
    with pytest.raises(ValueError, match="minimum"):
        table.purge(older_than=1)


def test_purge_removes_old_version_files_covered_by_a_state(table: Any, root: Path) -> None:
    for i in range(11):
        table.commit(adds=[split(root, f"p{i}.split")])
    log = root / "_transaction_log"
    for path in log.glob("*.json"):
        age(path, 40 * DAY)
    result = table.purge()
    remaining = sorted(p.name for p in log.glob("0*.json"))
    # 0 holds protocol+metadata (kept: reference states need it only if theirs is null,
    # ours carry metadata, so only protocol pins it); 10 and 11 are not older than the state
    assert "00000000000000000005.json" not in remaining
    assert "00000000000000000000.json" in remaining
    assert "00000000000000000011.json" in remaining
    assert result.tx_log_files_deleted == len(result.tx_log_files) > 0
    reopened = open_table(str(root))
    assert reopened.snapshot().num_files == 11
    with pytest.raises(VersionNotFoundError):
        reopened.snapshot(5)
    assert reopened.validate().ok


def test_purge_expires_old_states_and_their_manifests(table: Any, root: Path) -> None:
    for i in range(4):
        table.commit(adds=[split(root, f"p{i}.split")])
        table.checkpoint()
    table.compact()  # state 5 references only new manifests: the old ones become garbage
    log = root / "_transaction_log"
    from dataclasses import replace

    from indextables.protocol.maintenance.purge import purge

    table.config = replace(table.config, state_retention_versions=0, state_retention_hours=24)
    result = purge(table, now_ms=int((time.time() + 2 * DAY) * 1000))
    assert result.expired_states_deleted == 4
    states = sorted(p.parent.name for p in log.glob("state-v*/_manifest.avro"))
    assert states == ["state-v00000000000000000005"]
    assert result.manifests_deleted > 0
    assert open_table(str(root)).validate().ok


def test_truncate_time_travel(table: Any, root: Path) -> None:
    for i in range(5):
        table.commit(adds=[split(root, f"p{i}.split")])
    dry = table.truncate_time_travel(dry_run=True)
    assert (dry.status, dry.versions_deleted) == ("DRY_RUN", 4)
    assert (root / "_transaction_log/00000000000000000002.json").exists()
    result = table.truncate_time_travel()
    assert (result.status, result.checkpoint_version, result.files_preserved) == ("SUCCESS", 5, 5)
    reopened = open_table(str(root))
    assert reopened.snapshot().num_files == 5
    with pytest.raises(VersionNotFoundError):
        reopened.snapshot(3)
    assert reopened.commit(adds=[split(root, "after.split")]) == 6
    assert reopened.validate().ok


def test_drop_partitions(table: Any, root: Path) -> None:
    table.commit(
        adds=[
            split(root, f"p{d}-{i}.split", date=f"2024-01-0{d}") for d in (1, 2, 3) for i in (0, 1)
        ]
    )
    result = table.drop_partitions("date <= '2024-01-02'")
    assert (result.status, result.partitions_dropped, result.splits_removed) == ("SUCCESS", 2, 4)
    assert result.total_size_bytes == 4 * 64
    assert {f.partition_values["date"] for f in table.snapshot().files} == {"2024-01-03"}
    assert table.drop_partitions("date = '1999-01-01'").status == "NO_ACTION"
    with pytest.raises(InvalidPredicateError):
        table.drop_partitions("id = 3")


def test_validate_reports_missing_and_resized_splits(table: Any, root: Path) -> None:
    a, b = split(root, "a.split"), split(root, "b.split")
    table.commit(adds=[a, b])
    (root / a.path).unlink()
    (root / b.path).write_bytes(b"short")
    problems = table.validate().problems
    assert any("missing split a.split" in p for p in problems)
    assert any("b.split: size 5" in p for p in problems)


def test_repair_rebuilds_a_log_from_golden_splits(golden_root: Path, tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(golden_root / "04_partitioned", source)
    table = open_table(str(source))
    before = table.snapshot()
    result = table.repair(str(tmp_path / "repaired"))
    assert (result.total_splits, result.valid_splits, result.missing_splits) == (3, 3, 0)
    shutil.rmtree(source / "_transaction_log")
    shutil.copytree(tmp_path / "repaired/_transaction_log", source / "_transaction_log")
    repaired = open_table(str(source))
    after = repaired.snapshot()
    assert {(f.path, f.size, f.footer_start_offset) for f in after.files} == {
        (f.path, f.size, f.footer_start_offset) for f in before.files
    }
    assert repaired.validate().ok
    with pytest.raises(TableExistsError):
        table.repair(str(source))


def test_maintenance_refuses_tables_needing_a_newer_writer(table: Any, root: Path) -> None:
    from indextables.protocol import UnsupportedProtocolError
    from indextables.protocol.actions import ProtocolAction
    from indextables.protocol.versionfile import encode_version_file

    log = root / "_transaction_log" / f"{1:020d}.json"
    log.write_bytes(encode_version_file([ProtocolAction(4, 5)]))
    reopened = open_table(str(root))
    for operation in (reopened.checkpoint, reopened.compact, reopened.purge):
        with pytest.raises(UnsupportedProtocolError):
            operation()


def test_purge_keeps_young_unreferenced_manifests(table: Any, root: Path) -> None:
    for i in range(3):
        table.commit(adds=[split(root, f"p{i}.split")])
        table.checkpoint()
    table.compact()
    from dataclasses import replace

    table.config = replace(table.config, state_retention_versions=0, state_retention_hours=0)
    result = table.purge()
    assert result.expired_states_deleted == 3
    assert result.manifests_deleted == 0  # unreferenced now, but younger than the 1 h window
    manifests = list((root / "_transaction_log/manifests").iterdir())
    assert len(manifests) >= 4
    assert open_table(str(root)).validate().ok


def test_validate_checks_partition_bounds_by_pruning(table: Any, root: Path) -> None:
    table.commit(adds=[split(root, f"p{d}.split", date=f"2024-01-0{d}") for d in (1, 2, 3)])
    table.checkpoint()
    result = table.validate()
    assert result.ok, result.problems
    assert result.files_checked == 3
    # corrupt the state's bounds: a filtered read would now miss every entry
    from dataclasses import replace

    from indextables.avrostate import encode_state
    from indextables.protocol.state import PartitionBounds

    key = "_transaction_log/state-v00000000000000000001/_manifest.avro"
    state = table.state_format.read_state(table.store, 1).manifest
    wrong = {"date": PartitionBounds("2030-01-01", "2030-12-31")}
    bad = replace(
        state, manifests=tuple(replace(m, partition_bounds=wrong) for m in state.manifests)
    )
    table.store.put(key, encode_state(bad))
    reopened = open_table(str(root))
    problems = reopened.validate().problems
    assert any("partition bounds prune" in p for p in problems), problems
