"""``indextables delete``: rows deleted by --where and --query, --dry-run changing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from indextables.search import open_table, write_table


def _table(tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    rows = [
        {"id": i, "level": ["INFO", "WARN", "ERROR"][i % 3], "msg": f"{['disk', 'net'][i % 2]} {i}"}
        for i in range(60)
    ]
    uri = str(tmp_path / "t")
    options = {"spark.indextables.indexing.typemap.msg": "text"}
    for start in (0, 30):
        write_table(uri, pa.Table.from_pylist(rows[start : start + 30]), options=options)
    return uri, rows


def test_delete_dry_run_counts_and_changes_nothing(tmp_path: Path, cli_run: Any) -> None:
    uri, _ = _table(tmp_path)
    version = open_table(uri).version
    run = cli_run("delete", uri, "--where", "level = 'ERROR'", "--dry-run", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json() == {"rows_deleted": 20, "splits_changed": 2, "version": None}
    assert open_table(uri).version == version
    assert open_table(uri).count() == 60


def test_delete_by_where_and_query(tmp_path: Path, cli_run: Any) -> None:
    uri, rows = _table(tmp_path)
    run = cli_run("delete", uri, "--where", "id < 10", "--query", "msg:disk", "-o", "json")
    assert run.exit_code == 0, run.stderr
    gone = {r["id"] for r in rows if r["id"] < 10 and r["msg"].startswith("disk")}
    result = run.json()
    assert result["rows_deleted"] == len(gone)
    assert result["version"] == open_table(uri).version
    left = sorted(open_table(uri).search(columns=["id"]).column("id").to_pylist())
    assert left == sorted({r["id"] for r in rows} - gone)
    again = cli_run("delete", uri, "--where", "id < 10", "--query", "msg:disk", "-o", "json")
    assert again.json() == {"rows_deleted": 0, "splits_changed": 0, "version": None}


def test_delete_without_a_condition_is_refused(tmp_path: Path, cli_run: Any) -> None:
    uri, _ = _table(tmp_path)
    run = cli_run("delete", uri, "-o", "json")
    assert run.exit_code != 0
    assert "--where or --query" in run.stdout + run.stderr
    assert open_table(uri).count() == 60
