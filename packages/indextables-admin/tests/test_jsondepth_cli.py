"""A version file or ``_last_checkpoint`` nested deeper than any recursion limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.protocol import open_table
from indextables.protocol.logreplay import LAST_CHECKPOINT_KEY, version_key

DEEP = b"[" * 200_000


@pytest.fixture(autouse=True)
def _no_reread_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("indextables.protocol.reread.REREAD_PAUSES", (0.0,))


def test_validate_reports_a_deep_version_file_as_corrupt_naming_it(
    unpartitioned_table: Path, cli_run: Any
) -> None:
    version = open_table(str(unpartitioned_table)).commit_actions([])
    (unpartitioned_table / version_key(version)).write_bytes(DEEP)
    run = cli_run("validate", str(unpartitioned_table), "-o", "json")
    assert run.exit_code == 4, run.stderr
    document = run.json()
    assert not document["ok"]
    (problem,) = (p["problem"] for p in document["problems"])
    assert "cannot be read" in problem
    assert f"{version:020d}.json" in problem
    assert "nested too deeply" in problem
    described = cli_run("describe", str(unpartitioned_table), "-o", "json")
    assert described.exit_code == 1
    assert f"{version:020d}.json" in described.stderr
    assert "RecursionError" not in described.stderr


def test_describe_and_compact_ignore_a_deep_last_checkpoint(
    unpartitioned_table: Path, cli_run: Any
) -> None:
    before = open_table(str(unpartitioned_table)).describe_state()
    (unpartitioned_table / LAST_CHECKPOINT_KEY).write_bytes(DEEP)
    described = cli_run("describe", str(unpartitioned_table), "-o", "json")
    assert described.exit_code == 0, described.stderr
    assert open_table(str(unpartitioned_table)).describe_state().num_files == before.num_files
    result = open_table(str(unpartitioned_table)).compact()
    assert result.status == "SUCCESS"
    assert result.num_files == before.num_files
