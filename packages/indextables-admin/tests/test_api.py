"""The Python API: same operations as the command line, keyword-only options, typed results."""

import inspect
import os
import shutil
import time
from datetime import timedelta
from pathlib import Path

import pytest

from indextables import admin
from indextables.protocol.errors import InvalidPredicateError, TableNotFoundError


def test_every_option_is_keyword_only() -> None:
    for name in admin.__all__:
        function = getattr(admin, name)
        if not inspect.isfunction(function):
            continue
        parameters = list(inspect.signature(function).parameters.values())
        positional = [p.name for p in parameters if p.kind is not p.KEYWORD_ONLY]
        assert positional in (["table"], ["source"]), (name, positional)


def test_positional_options_are_refused(partitioned_table: Path) -> None:
    with pytest.raises(TypeError):
        admin.files(str(partitioned_table), "date = '2024-01-01'")  # type: ignore[misc]


def test_describe_returns_the_engine_result(partitioned_table: Path) -> None:
    state = admin.describe(str(partitioned_table))
    assert isinstance(state, admin.DescribeStateResult)
    assert (state.format, state.version, state.num_files) == ("avro-state", 1, 3)


def test_files_where(partitioned_table: Path) -> None:
    found = admin.files(str(partitioned_table), where="date IN ('2024-01-01', '2024-01-03')")
    assert sorted(f.partition_values["date"] for f in found) == ["2024-01-01", "2024-01-03"]


def test_schema(partitioned_table: Path) -> None:
    schema = admin.schema(str(partitioned_table))
    assert schema.partition_columns == ("date",)
    assert [f["name"] for f in schema.fields] == ["id", "date", "text", "score"]


def test_changes_needs_exactly_one_start(partitioned_table: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        admin.changes(str(partitioned_table))
    assert len(admin.changes(str(partitioned_table), since_version=0).adds) == 3


def test_plan_then_drop_partitions(partitioned_table: Path) -> None:
    plan = admin.drop_partitions_plan(str(partitioned_table), where="date = '2024-01-02'")
    assert [f.partition_values["date"] for f in plan.files] == ["2024-01-02"]
    assert plan.partitions == ({"date": "2024-01-02"},)
    assert len(admin.files(str(partitioned_table))) == 3  # planning changes nothing
    result = admin.drop_partitions(str(partitioned_table), where="date = '2024-01-02'")
    assert result.splits_removed == 1
    assert len(admin.files(str(partitioned_table))) == 2


def test_drop_partitions_plan_refuses_unpartitioned(unpartitioned_table: Path) -> None:
    with pytest.raises(InvalidPredicateError):
        admin.drop_partitions_plan(str(unpartitioned_table), where="id = 1")


def test_purge_takes_timedeltas(partitioned_table: Path) -> None:
    report = admin.purge(
        str(partitioned_table),
        older_than=timedelta(days=2),
        log_retention=timedelta(days=60),
        dry_run=True,
    )
    assert isinstance(report, admin.PurgeResult)
    assert report.retention_hours == 48.0
    assert report.dry_run is True


def test_validate_and_missing_table(partitioned_table: Path, tmp_path: Path) -> None:
    assert admin.validate(str(partitioned_table)).ok
    with pytest.raises(TableNotFoundError):
        admin.describe(str(tmp_path / "none"))


def test_progress_of_validate_repair_compact_and_purge(
    partitioned_table: Path, tmp_path: Path
) -> None:
    seen: list[tuple[str, int, int | None]] = []

    def progress(phase: str, done: int, total: int | None) -> None:
        seen.append((phase, done, total))

    admin.validate(str(partitioned_table), progress=progress)
    assert seen[-1] == ("splits checked", 3, 3)
    seen.clear()
    admin.repair(str(partitioned_table), destination=str(tmp_path / "r"), progress=progress)
    assert seen[-1] == ("splits checked", 3, 3)
    seen.clear()
    admin.compact(str(partitioned_table), progress=progress)
    assert seen
    assert {phase for phase, _, _ in seen} == {"manifests written"}
    seen.clear()
    orphan = partitioned_table / "date=2024-01-01/orphan.split"
    shutil.copyfile(next(partitioned_table.rglob("part-*.split")), orphan)
    old = time.time() - 10 * 86400
    os.utime(orphan, (old, old))
    admin.purge(str(partitioned_table), progress=progress)
    assert seen == [("objects deleted", 1, None)]
    assert not orphan.exists()
