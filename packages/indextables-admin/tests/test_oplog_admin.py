"""Each command logs one INFO line; ``--stats`` shows the same figures on stderr.

Oracles: the rows written (a Python model) and the split files the table lists.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table

SECRET = "wJalrXUtnFEMIexampleSECRETkey42"
LOGGER = "indextables.admin.context"


@pytest.fixture
def table(tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    rng = random.Random(5)
    rows = [
        {"day": rng.choice(["d1", "d2", "d3"]), "level": rng.choice(["INFO", "ERROR"]), "n": i}
        for i in range(90)
    ]
    uri = str(tmp_path / "t")
    write_table(uri, pa.Table.from_pylist(rows), partition_by="day")
    write_table(uri, pa.Table.from_pylist(rows))
    return uri, rows * 2


def _infos(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.levelno == logging.INFO and r.name.startswith("indextables")
    ]


def _fields(record: logging.LogRecord) -> dict[str, str]:
    return dict(w.split("=", 1) for w in record.getMessage().split(" ") if "=" in w)


def test_count_logs_one_line_and_stats_show_its_figures(
    table: tuple[str, list[dict[str, Any]]], cli_run: Any, caplog: pytest.LogCaptureFixture
) -> None:
    uri, rows = table
    expected = sum(1 for r in rows if r["day"] == "d1" and r["level"] == "ERROR")
    files = open_table(uri).files
    in_day = sum(1 for f in files if f.startswith("day=d1/"))
    args = ("count", uri, "--where", "day = 'd1' AND level = 'ERROR'")
    with caplog.at_level(logging.INFO, logger="indextables"):
        run = cli_run(*args, "--stats", "-S", f"secret_access_key={SECRET}")
    assert run.exit_code == 0, run.stderr
    infos = _infos(caplog)
    assert [r.name for r in infos] == [LOGGER]
    fields = _fields(infos[0])
    assert infos[0].getMessage().startswith("count uri=")
    assert fields["rows"] == str(expected)
    assert fields["splits_considered"] == str(len(files))
    assert fields["splits_pruned"] == str(len(files) - in_day)
    stats = [line for line in run.stderr.splitlines() if line.startswith("stats: ")]
    assert len(stats) == 1
    assert f"{expected:,} rows" in stats[0]
    assert f"{len(files):,} considered, {len(files) - in_day:,} pruned" in stats[0]
    for record in caplog.records:
        assert SECRET not in record.getMessage()
    assert SECRET not in run.stderr + run.stdout


def test_stats_in_json_are_one_line_on_stderr_and_stdout_is_unchanged(
    table: tuple[str, list[dict[str, Any]]], cli_run: Any
) -> None:
    uri, rows = table
    plain = cli_run("count", uri, "-o", "json")
    with_stats = cli_run("count", uri, "-o", "json", "--stats")
    assert with_stats.exit_code == 0
    assert with_stats.json() == plain.json()
    assert plain.json()["count"] == len(rows)
    lines = [json.loads(line) for line in with_stats.stderr.splitlines() if '"stats"' in line]
    assert len(lines) == 1
    stats = lines[0]["stats"]
    assert (stats["operation"], stats["rows"], stats["uri"]) == ("count", len(rows), uri)
    assert stats["version"] == open_table(uri).version
    assert '"stats"' not in plain.stderr


def test_stats_before_the_command_name_work_too(
    table: tuple[str, list[dict[str, Any]]], cli_run: Any
) -> None:
    uri, _ = table
    run = cli_run("--stats", "describe", uri)
    assert run.exit_code == 0, run.stderr
    assert [line for line in run.stderr.splitlines() if line.startswith("stats: describe of ")]


@pytest.mark.parametrize("command", [("checkpoint",), ("purge", "--dry-run"), ("files",)])
def test_maintenance_and_inspection_commands_log_one_line(
    table: tuple[str, list[dict[str, Any]]],
    cli_run: Any,
    caplog: pytest.LogCaptureFixture,
    command: tuple[str, ...],
) -> None:
    uri, _ = table
    with caplog.at_level(logging.INFO, logger="indextables"):
        run = cli_run(command[0], uri, *command[1:])
    assert run.exit_code == 0, run.stderr
    infos = _infos(caplog)
    assert [r.name for r in infos] == [LOGGER], [r.getMessage() for r in infos]
    assert infos[0].getMessage().startswith(f"{command[0]} uri=")
    assert _fields(infos[0])["outcome"] == "ok"


def test_a_failing_command_logs_its_error(cli_run: Any, tmp_path: Path, caplog: Any) -> None:
    with caplog.at_level(logging.INFO, logger="indextables"):
        run = cli_run("count", str(tmp_path / "nothing"), "--stats")
    assert run.exit_code != 0
    infos = _infos(caplog)
    assert [r.name for r in infos] == [LOGGER]
    assert _fields(infos[0])["outcome"].startswith("error:")
    assert "(error:" in run.stderr
