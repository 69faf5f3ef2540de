"""Every golden table: ``describe`` and ``files`` (JSON) agree with its expected.json."""

import json
from pathlib import Path
from typing import Any

import pytest


def test_describe_json_agrees_with_expected(
    golden_copy: Path, golden_expected: dict[str, Any], cli_run: Any
) -> None:
    expected = golden_expected
    run = cli_run("describe", str(golden_copy), "--output", "json")
    assert run.exit_code == 0, run.stderr
    described = run.json()
    assert described["format"] == "avro-state"
    assert described["version"] == expected["version"]
    assert described["table_version"] == expected["version"]
    assert f"state-v{described['version']:020d}" == expected["stateDir"]
    assert described["num_files"] == expected["numFiles"]
    assert described["table_num_files"] == expected["numFiles"]
    assert described["num_records"] == expected["numRows"]
    assert described["total_bytes"] == sum(f["size"] for f in expected["liveFiles"])
    assert described["table_total_bytes"] == described["total_bytes"]
    assert described["protocol"] == expected["protocol"]
    metadata = expected["metadata"]
    assert described["table_id"] == metadata["id"]
    assert described["partition_columns"] == metadata["partitionColumns"]
    fields = json.loads(metadata["schemaString"])["fields"]
    assert [(f["name"], f["type"], f["nullable"]) for f in described["schema"]] == [
        (f["name"], f["type"], f["nullable"]) for f in fields
    ]
    assert isinstance(described["needs_compaction"], bool)
    assert 0.0 <= described["tombstone_ratio"] <= 1.0


def test_files_json_agrees_with_expected(
    golden_copy: Path, golden_expected: dict[str, Any], cli_run: Any
) -> None:
    expected = golden_expected
    run = cli_run("files", str(golden_copy), "--output", "json")
    assert run.exit_code == 0, run.stderr
    listed = run.json()
    assert listed["version"] == expected["version"]
    assert listed["num_files"] == expected["numFiles"]
    files = listed["files"]
    wanted = sorted(expected["liveFiles"], key=lambda f: f["path"])
    assert [f["path"] for f in files] == [f["path"] for f in wanted]
    for got, want in zip(files, wanted, strict=True):
        for key, value in want.items():  # every wire field the oracle has, same value
            assert got[key] == value, (want["path"], key)


def test_describe_text_shows_the_same_facts(
    golden_copy: Path, golden_expected: dict[str, Any], cli_run: Any
) -> None:
    expected = golden_expected
    run = cli_run("describe", str(golden_copy))
    assert run.exit_code == 0, run.stderr
    assert "avro-state" in run.stdout
    assert "needs_compaction" in run.stdout
    assert expected["metadata"]["id"] in run.stdout


@pytest.mark.parametrize("golden_name", ["13_after_purge"])
def test_files_and_changes_at_version_0_of_a_stale_state_v0(
    golden_copy: Path, golden_expected: dict[str, Any], cli_run: Any
) -> None:
    """13_after_purge's state-v0 holds version 5's files; version 0 created an empty table."""
    table = str(golden_copy)
    listed = cli_run("files", table, "--version", "0", "--output", "json")
    assert listed.exit_code == 0, listed.stderr
    assert (listed.json()["version"], listed.json()["files"]) == (0, [])
    changes = cli_run("changes", table, "--since-version", "0", "--output", "json")
    assert changes.exit_code == 0, changes.stderr
    current = sorted(f["path"] for f in golden_expected["liveFiles"])
    assert sorted(f["path"] for f in changes.json()["adds"]) == current
