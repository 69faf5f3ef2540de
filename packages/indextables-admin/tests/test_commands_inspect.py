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


def test_indexing_shows_how_each_column_is_indexed(partitioned_table: Path, cli_run: Any) -> None:
    run = cli_run("indexing", str(partitioned_table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    document = run.json()
    assert document["version"] == 1
    columns = {c["name"]: c for c in document["columns"]}
    assert list(columns) == ["id", "date", "text", "score"]  # the schema's order
    assert columns["text"] == {
        "name": "text",
        "spark_type": "string",
        "partition": False,
        "index_type": "text",
        "tokenizer": "raw",
        "indexed": True,
        "fast": True,
        "stored": True,
        "options": {},
        "splits": 3,
    }
    assert columns["id"]["index_type"] == "i64"
    assert columns["id"]["tokenizer"] is None
    assert columns["score"]["index_type"] == "f64"
    # A partition column lives in the paths and the log, not in the splits.
    assert columns["date"]["partition"] is True
    assert columns["date"]["index_type"] is None
    assert columns["date"]["splits"] == 0
    text = cli_run("indexing", str(partitioned_table))
    assert text.exit_code == 0, text.stderr
    assert "tokenizer" in text.stdout
    assert "raw" in text.stdout
    assert "score" in text.stdout


def test_indexing_lists_each_distinct_mapping_of_a_column(tmp_path: Path, cli_run: Any) -> None:
    import json as _json

    from indextables.protocol import AddAction, create_table

    schema = {
        "type": "struct",
        "fields": [{"name": "msg", "type": "string", "nullable": True, "metadata": {}}],
    }
    table = create_table(str(tmp_path / "t"), schema=schema)
    assert (
        cli_run("indexing", str(tmp_path / "t"), "-o", "json").json()["columns"][0]["splits"] == 0
    )
    for i, tokenizer in enumerate(["default", "raw", "default"]):
        mapping = [
            {
                "name": "msg",
                "type": "text",
                "tokenizer": tokenizer,
                "indexed": True,
                "fast": False,
                "stored": True,
                "record": "position",
            }
        ]
        table.commit(
            [
                AddAction(
                    f"p{i}.split",
                    {},
                    10,
                    1,
                    True,
                    num_records=1,
                    doc_mapping_json=_json.dumps(mapping),
                )
            ]
        )
    rows = cli_run("indexing", str(tmp_path / "t"), "-o", "json").json()["columns"]
    assert [(r["tokenizer"], r["splits"], r["options"]) for r in rows] == [
        ("default", 2, {"record": "position"}),
        ("raw", 1, {"record": "position"}),
    ]


def test_indexing_of_a_missing_table_exits_2(tmp_path: Path, cli_run: Any) -> None:
    assert cli_run("indexing", str(tmp_path / "none")).exit_code == 2


def test_describe_of_a_table_without_checkpoint_says_so_and_when_one_comes(
    tmp_path: Path, cli_run: Any
) -> None:
    from indextables.protocol import create_table

    table = tmp_path / "t"
    field = {"name": "id", "type": "long", "nullable": True, "metadata": {}}
    create_table(str(table), schema={"type": "struct", "fields": [field]})
    run = cli_run("describe", str(table), "-o", "json")
    assert run.exit_code == 0, run.stderr
    status = run.json()["status"]
    assert "No state found" not in status
    assert "no checkpoint yet" in status
    assert "version 10" in status
    assert "indextables checkpoint" in status


@pytest.mark.parametrize("form", ["file:{}", "file://{}", "file://localhost{}"])
def test_every_file_uri_form_names_the_local_table(
    partitioned_table: Path, cli_run: Any, form: str
) -> None:
    # file:/abs is the form Spark and Hadoop hand over (CREATE TABLE ... LOCATION).
    run = cli_run("describe", form.format(partitioned_table), "--output", "json")
    assert run.exit_code == 0, run.stderr
    plain = cli_run("describe", str(partitioned_table), "--output", "json")
    assert run.json()["version"] == plain.json()["version"]
