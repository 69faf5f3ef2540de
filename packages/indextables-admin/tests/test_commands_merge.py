"""``indextables merge-splits``: the engine's MERGE SPLITS, and --purge-deletes after a delete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from indextables.search import delete_rows, open_table, write_table
from indextables.search.table.tableaccess import load_view


def _table(tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    rows = [{"id": i, "level": ["INFO", "WARN", "ERROR"][i % 3]} for i in range(60)]
    uri = str(tmp_path / "t")
    for start in (0, 20, 40):
        write_table(uri, pa.Table.from_pylist(rows[start : start + 20]), workers=1)
    return uri, rows


def test_merge_splits_packs_the_splits_into_one(tmp_path: Path, cli_run: Any) -> None:
    uri, _ = _table(tmp_path)
    run = cli_run("merge-splits", uri, "-o", "json")
    assert run.exit_code == 0, run.stderr
    result = run.json()
    assert (result["status"], result["splits_merged"], result["splits_written"]) == (
        "SUCCESS",
        3,
        1,
    )
    assert len(open_table(uri).files) == 1
    assert sorted(open_table(uri).search(columns=["id"]).column("id").to_pylist()) == list(
        range(60)
    )


def test_purge_deletes_rewrites_the_splits_with_deleted_rows(tmp_path: Path, cli_run: Any) -> None:
    uri, _ = _table(tmp_path)
    delete_rows(uri, where="id < 5")  # only the first split
    run = cli_run("merge-splits", uri, "--target-size", "1", "--purge-deletes", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["splits_merged"] == 1
    assert all(s.delete_opstamp is None for s in load_view(uri, {}).splits)
    assert open_table(uri).count() == 55
    again = cli_run("merge-splits", uri, "--target-size", "1", "--purge-deletes", "-o", "json")
    assert again.json()["status"] == "NO_ACTION"


def test_bad_arguments_are_usage_errors(tmp_path: Path, cli_run: Any) -> None:
    uri, _ = _table(tmp_path)
    version = open_table(uri).version
    for args in (
        ("--min-deleted-fraction", "0.5"),
        ("--purge-deletes", "--min-deleted-fraction", "0"),
        ("--target-size", "big"),
    ):
        run = cli_run("merge-splits", uri, *args, "-o", "json")
        assert run.exit_code != 0, args
    assert open_table(uri).version == version
