"""Read-only commands on local tables: files, history, changes, schema, and error exits."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def test_files_where_filters_partitions(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("files", str(partitioned_table), "--where", "date >= '2024-01-02'", "-o", "json")
    assert run.exit_code == 0, run.stderr
    listed = run.json()
    assert listed["where"] == "date >= '2024-01-02'"
    assert [f["partitionValues"]["date"] for f in listed["files"]] == ["2024-01-02", "2024-01-03"]
    assert listed["total_bytes"] == sum(f["size"] for f in listed["files"])


def test_files_every_record_has_the_same_wire_keys(partitioned_table: Path, cli_run: Any) -> None:
    files = cli_run("files", str(partitioned_table), "-o", "json").json()["files"]
    keys = {tuple(f) for f in files}
    assert len(keys) == 1
    assert {"path", "partitionValues", "size", "dataChange", "numRecords"} <= set(files[0])
    assert not any("_" in key for key in files[0])  # wire names, not snake_case


def test_files_at_an_older_version(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("files", str(partitioned_table), "--version", "0", "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["files"] == []
    assert run.json()["version"] == 0


def test_files_text_shows_paths(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("files", str(partitioned_table))
    assert run.exit_code == 0
    assert "files (3)" in run.stdout
    assert "date=2024-01-03/" in run.stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--where", "text = 'doc1'"), 1),  # not a partition column
        (("--where", "date = "), 1),  # does not parse
        (("--version", "99"), 2),  # no such version
    ],
)
def test_files_errors(
    partitioned_table: Path, cli_run: Any, args: tuple[str, ...], code: int
) -> None:
    run = cli_run("files", str(partitioned_table), *args)
    assert run.exit_code == code
    assert run.stderr.startswith("error: ")
    assert "Traceback" not in run.stderr


def test_history_newest_first_with_limit(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("history", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    versions = run.json()["versions"]
    assert [v["version"] for v in versions] == [1, 0]
    assert versions[1]["operation"] == "CREATE"
    assert versions[0]["time"].endswith("+00:00")
    assert set(versions[0]) == {
        "version",
        "time",
        "timestamp",
        "operation",
        "num_adds",
        "num_removes",
        "has_state",
    }
    limited = cli_run("history", str(partitioned_table), "--limit", "1", "-o", "json").json()
    assert [v["version"] for v in limited["versions"]] == [1]


def test_changes_since_version(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("changes", str(partitioned_table), "--since-version", "0", "-o", "json")
    assert run.exit_code == 0, run.stderr
    changes = run.json()
    assert (changes["start_version"], changes["end_version"]) == (0, 1)
    assert changes["num_adds"] == 3
    assert changes["removes"] == []
    assert all("partitionValues" in f for f in changes["adds"])


def test_changes_since_timestamp_after_the_last_commit_is_empty(
    partitioned_table: Path, cli_run: Any
) -> None:
    run = cli_run(
        "changes", str(partitioned_table), "--since-timestamp", "2100-01-01T00:00:00Z", "-o", "json"
    )
    assert run.exit_code == 0, run.stderr
    assert run.json()["num_adds"] == 0


def test_schema_lists_columns_and_partitions(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("schema", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    schema = run.json()
    assert schema["partition_columns"] == ["date"]
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [
        ("id", "integer"),
        ("date", "string"),
        ("text", "string"),
        ("score", "double"),
    ]
    text = cli_run("schema", str(partitioned_table)).stdout
    assert "double" in text


@pytest.mark.parametrize("command", ["describe", "files", "history", "schema", "validate"])
def test_missing_table_exits_2_without_traceback(
    tmp_path: Path, cli_run: Any, command: str
) -> None:
    run = cli_run(command, str(tmp_path / "nothing"))
    assert run.exit_code == 2
    assert "no IndexTables transaction log" in run.stderr
    assert "Traceback" not in run.stderr


def test_verbose_shows_the_traceback(tmp_path: Path, cli_run: Any) -> None:
    run = cli_run("describe", str(tmp_path / "nothing"), "--verbose")
    assert run.exit_code == 2
    assert "Traceback" in run.stderr
    assert "TableNotFoundError" in run.stderr


def test_json_errors_are_json_on_stderr(tmp_path: Path, cli_run: Any) -> None:
    run = cli_run("describe", str(tmp_path / "nothing"), "-o", "json")
    assert run.exit_code == 2
    assert run.stdout == ""
    error = json.loads(run.stderr)["error"]
    assert error["type"] == "TableNotFoundError"
    assert error["exit_code"] == 2


def test_entry_point_describes_a_table_in_a_real_process(partitioned_table: Path) -> None:
    script = shutil.which("indextables", path=os.path.dirname(sys.executable))
    assert script is not None
    done = subprocess.run(
        [script, "describe", str(partitioned_table), "--output", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["num_files"] == 3
    assert done.stderr == ""  # no progress bars when stderr is not a terminal
    missing = subprocess.run(
        [script, "files", str(partitioned_table.parent / "none")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr


def test_a_credential_value_is_scrubbed_from_documents(
    partitioned_table: Path, cli_run: Any
) -> None:
    # Local stores ignore Azure options, so this "credential" only meets the output.
    secret = partitioned_table.parent.name
    for output in ("text", "json"):
        run = cli_run(
            "describe", str(partitioned_table), "-S", f"account_key={secret}", "-o", output
        )
        assert run.exit_code == 0, run.stderr
        assert secret not in run.stdout + run.stderr
        assert "***" in run.stdout


@pytest.mark.parametrize("form", ["file:{}", "file://{}", "file://localhost{}"])
def test_every_file_uri_form_names_the_local_table(
    partitioned_table: Path, cli_run: Any, form: str
) -> None:
    # file:/abs is the form Spark and Hadoop hand over (CREATE TABLE ... LOCATION).
    run = cli_run("describe", form.format(partitioned_table), "--output", "json")
    assert run.exit_code == 0, run.stderr
    plain = cli_run("describe", str(partitioned_table), "--output", "json")
    assert run.json()["version"] == plain.json()["version"]
