"""Operator input that used to crash, echo secrets or hit the wrong table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from indextables.admin import api
from indextables.admin.errors import UsageError
from indextables.admin.options import parse_duration, parse_storage_options
from indextables.protocol import open_table
from indextables.protocol.actions import ProtocolAction
from indextables.protocol.errors import UnsupportedProtocolError
from indextables.protocol.logreplay import version_key


@pytest.mark.parametrize("command", ["describe", "files", "history", "validate", "gc"])
def test_an_empty_table_argument_is_a_usage_error(cli_run: Any, command: str) -> None:
    run = cli_run(command, "")
    assert run.exit_code == 1
    assert "must not be empty" in run.stderr


def test_usage_errors_under_json_output_are_json(cli_run: Any) -> None:
    for args in (
        ["describe", "", "-o", "json"],
        ["-o", "json", "files"],
        ["--output=json", "nope"],
    ):
        run = cli_run(*args)
        assert run.exit_code == 1, args
        error = json.loads(run.stderr)["error"]
        assert error["exit_code"] == 1, args
        assert error["message"], args
    assert not cli_run("describe", "").stderr.lstrip().startswith("{")


@pytest.mark.parametrize(
    "pair", ["secret_access_key:AKIAVERYSECRET", "account_key AKIAVERYSECRET", "AKIAVERYSECRET"]
)
def test_a_malformed_pair_never_echoes_its_value(pair: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_storage_options([pair])
    assert "AKIAVERYSECRET" not in str(caught.value)


def test_a_malformed_pair_names_a_harmless_key() -> None:
    with pytest.raises(UsageError, match="did you mean region="):
        parse_storage_options(["region:us-east-1"])


def test_a_malformed_pair_on_the_command_line(cli_run: Any, tmp_path: Path) -> None:
    run = cli_run("describe", str(tmp_path), "-S", "secret_access_key:AKIAVERYSECRET")
    assert run.exit_code == 1
    assert "AKIAVERYSECRET" not in run.stdout + run.stderr


@pytest.mark.parametrize("text", ["99999999999999d", "36526d", "999999999999h"])
def test_huge_durations_are_usage_errors(text: str, cli_run: Any, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="longest allowed"):
        parse_duration(text)
    run = cli_run("purge", str(tmp_path), "--older-than", text, "--dry-run")
    assert run.exit_code == 1
    assert "C int" not in run.stderr
    assert "longest allowed" in run.stderr


def test_gc_refuses_an_unsupported_writer_protocol(unpartitioned_table: Path, cli_run: Any) -> None:
    table = open_table(str(unpartitioned_table))
    table.commit_actions([ProtocolAction(4, 99)])
    with pytest.raises(UnsupportedProtocolError):
        api.gc(str(unpartitioned_table), dry_run=True)
    with pytest.raises(UnsupportedProtocolError):
        api.gc_plan(str(unpartitioned_table))
    run = cli_run("gc", str(unpartitioned_table), "--yes")
    assert run.exit_code == 1
    assert "writer" in run.stderr.lower()


def test_validate_reports_a_corrupt_log_with_the_validation_exit_code(
    unpartitioned_table: Path, cli_run: Any
) -> None:
    table = open_table(str(unpartitioned_table))
    version = table.commit_actions([])
    (unpartitioned_table / version_key(version)).write_bytes(b"\x01\x01garbage")
    run = cli_run("validate", str(unpartitioned_table), "-o", "json")
    assert run.exit_code == 4, run.stderr
    document = run.json()
    assert not document["ok"]
    assert "cannot be read" in document["problems"][0]["problem"]


def test_a_bad_engine_setting_is_a_user_error_naming_its_key(
    partitioned_table: Path, cli_run: Any
) -> None:
    run = cli_run(
        "describe", str(partitioned_table), "-S", "spark.indextables.checkpoint.interval=0"
    )
    assert run.exit_code == 1
    assert "spark.indextables.checkpoint.interval" in run.stderr


def test_engine_settings_given_with_option_reach_the_engine(
    partitioned_table: Path, cli_run: Any
) -> None:
    log = partitioned_table / "_transaction_log"
    before = {p.name for p in log.glob("state-v*")}
    run = cli_run(
        "drop-partitions",
        str(partitioned_table),
        "--where",
        "date = '2024-01-01'",
        "--yes",
        "--option",
        "spark.indextables.checkpoint.interval=1",
    )
    assert run.exit_code == 0, run.stderr
    new = {p.name for p in log.glob("state-v*")} - before
    assert new == {"state-v00000000000000000002"}  # interval 1: version 2 got its state


def test_repair_from_the_command_line_when_the_log_is_unreadable(
    partitioned_table: Path, tmp_path: Path, cli_run: Any
) -> None:
    for path in (partitioned_table / "_transaction_log").rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x01\x01damaged")
    target = tmp_path / "repaired"
    run = cli_run("repair", str(partitioned_table), "--to", str(target), "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["valid_splits"] == 3
    assert open_table(str(target)).snapshot().num_files == 3


@pytest.mark.parametrize(
    "key", ["a/./b.split", "a//b.split", "dir/", "a/b.split/", "a\x00b.split", "./b.split"]
)
def test_validate_of_a_table_holding_a_key_the_store_refuses_exits_4_naming_it(
    unpartitioned_table: Path, cli_run: Any, key: str
) -> None:
    from indextables.protocol import AddAction
    from indextables.protocol.versionfile import encode_version_file

    # Written as an older or foreign writer would have (commit() now refuses it):
    # readers still load the log, validate reports the key as a broken invariant.
    table = open_table(str(unpartitioned_table))
    version = table.version + 1
    (unpartitioned_table / version_key(version)).write_bytes(
        encode_version_file([AddAction(key, {}, 10, 1, True, num_records=1)], compress=False)
    )
    assert key in [f.path for f in open_table(str(unpartitioned_table)).snapshot().files]
    run = cli_run("validate", str(unpartitioned_table), "-o", "json")
    assert run.exit_code == 4, run.stderr
    problems = [p["problem"] for p in run.json()["problems"]]
    assert any(repr(key) in p for p in problems), problems


def test_changes_since_a_version_beyond_the_latest_is_not_found(
    partitioned_table: Path, cli_run: Any
) -> None:
    run = cli_run("changes", str(partitioned_table), "--since-version", "999")
    assert run.exit_code == 2, run.stdout
    assert "999" in run.stderr
    assert "latest version is 1" in run.stderr
    assert run.stdout == ""
    # The latest version itself is fine: nothing changed since.
    assert cli_run("changes", str(partitioned_table), "--since-version", "1").exit_code == 0


def _manifests(table: Path) -> list[Path]:
    found = sorted((table / "_transaction_log" / "manifests").glob("*.avro"))
    assert found
    return found


def test_a_missing_manifest_is_not_found_naming_the_table_and_file(
    partitioned_table: Path, cli_run: Any
) -> None:
    manifest = _manifests(partitioned_table)[0]
    manifest.unlink()
    run = cli_run("files", str(partitioned_table), "-o", "json")
    assert run.exit_code == 2, run.stderr
    message = json.loads(run.stderr)["error"]["message"]
    assert str(partitioned_table) in message
    assert manifest.name in message


def test_a_corrupt_manifest_error_names_the_table_and_file(
    partitioned_table: Path, cli_run: Any
) -> None:
    manifest = _manifests(partitioned_table)[0]
    manifest.write_bytes(b"Obj\x01garbage")
    run = cli_run("files", str(partitioned_table), "-o", "json")
    assert run.exit_code == 1, run.stderr
    message = json.loads(run.stderr)["error"]["message"]
    assert str(partitioned_table) in message
    assert manifest.name in message


def test_a_state_with_a_foreign_schema_gets_a_short_message(
    partitioned_table: Path, cli_run: Any
) -> None:
    import io

    import fastavro

    buffer = io.BytesIO()
    schema = {"type": "record", "name": "Foreign", "fields": [{"name": "a", "type": "int"}]}
    fastavro.writer(buffer, schema, [{"a": 1}])
    state = next((partitioned_table / "_transaction_log").glob("state-v*/_manifest.avro"))
    state.write_bytes(buffer.getvalue())
    run = cli_run("files", str(partitioned_table), "-o", "json")
    assert run.exit_code == 1, run.stderr
    message = json.loads(run.stderr)["error"]["message"]
    assert "__fastavro_parsed" not in message
    assert "'doc'" not in message
    assert len(message) < 500, message
    assert "Foreign" in message
    assert "StateManifest" in message
    assert str(partitioned_table) in message
    assert "_manifest.avro" in message
