"""validate checks every split's footer at the log's offsets (exit 4 naming the split)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from indextables.protocol import open_table
from indextables.protocol.actions import AddAction


def _redeclare(table: Path, **changes: int) -> str:
    """Replace the first live split's add by one declaring other footer offsets."""
    log = open_table(str(table))
    entry = sorted(log.snapshot().files, key=lambda f: f.path)[0]
    add = AddAction.from_file_entry(entry)
    log.commit([dataclasses.replace(add, **changes)], [entry.path])
    return entry.path


def test_golden_footers_validate(unpartitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("validate", str(unpartitioned_table))
    assert run.exit_code == 0, run.stdout + run.stderr


def test_a_2gib_footer_range_fails_validation_naming_the_split(
    unpartitioned_table: Path, cli_run: Any
) -> None:
    entry = sorted(open_table(str(unpartitioned_table)).snapshot().files, key=lambda f: f.path)[0]
    assert entry.footer_start_offset is not None
    path = _redeclare(unpartitioned_table, footer_end_offset=entry.footer_start_offset + (2 << 30))
    run = cli_run("validate", str(unpartitioned_table))
    assert run.exit_code == 4, run.stdout + run.stderr
    assert f"{path}: footer range" in run.stdout


def test_a_footer_start_off_the_footer_fails_validation(
    unpartitioned_table: Path, cli_run: Any
) -> None:
    entry = sorted(open_table(str(unpartitioned_table)).snapshot().files, key=lambda f: f.path)[0]
    assert entry.footer_start_offset is not None
    path = _redeclare(unpartitioned_table, footer_start_offset=entry.footer_start_offset + 1)
    run = cli_run("validate", str(unpartitioned_table))
    assert run.exit_code == 4, run.stdout + run.stderr
    assert f"{path}: footer does not parse" in run.stdout
