"""The command line itself: help, exit codes of usage errors, version, secrets never echoed."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indextables.admin.cli import cli
from indextables.admin.versions import installed_packages

COMMANDS = [
    "describe",
    "files",
    "history",
    "changes",
    "schema",
    "checkpoint",
    "compact",
    "purge",
    "truncate-time-travel",
    "drop-partitions",
    "repair",
    "validate",
    "gc",
    "version",
]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_output_option(command: str) -> None:
    code, out, _ = invoke(command, "--help")
    assert code == 0
    assert "--output [text|json]" in out
    assert "--storage-option" in out


@pytest.mark.parametrize(
    "command",
    ["purge", "truncate-time-travel", "drop-partitions", "gc"],
)
def test_destructive_commands_offer_dry_run_and_yes(command: str) -> None:
    code, out, _ = invoke(command, "--help")
    assert code == 0
    assert "--dry-run" in out
    assert "--yes" in out


@pytest.mark.parametrize(
    "args",
    [
        ("describe",),  # missing TABLE
        ("describe", "t", "--output", "yaml"),
        ("nosuchcommand",),
        ("drop-partitions", "t"),  # --where is required
        ("repair", "src"),  # --to is required
    ],
)
def test_usage_errors_exit_1(args: tuple[str, ...]) -> None:
    code, _, err = invoke(*args)
    assert code == 1
    assert "Traceback" not in err


def test_changes_needs_exactly_one_since_option(tmp_path: Path) -> None:
    code, _, err = invoke("changes", str(tmp_path))
    assert code == 1
    assert "--since-version or --since-timestamp" in err
    code, _, err = invoke(
        "changes", str(tmp_path), "--since-version", "1", "--since-timestamp", "2024-01-01"
    )
    assert code == 1


def test_bad_duration_is_a_user_error(tmp_path: Path) -> None:
    code, _, err = invoke("purge", str(tmp_path), "--older-than", "soon", "--dry-run")
    assert code == 1
    assert "invalid duration 'soon'" in err


def test_malformed_storage_option_is_a_user_error_and_not_echoed(tmp_path: Path) -> None:
    code, out, err = invoke(
        "-o", "json", "describe", str(tmp_path), "-S", "secret_access_key:TopSecret99"
    )
    assert code == 1
    assert "TopSecret99" not in out + err
    assert json.loads(err)["error"]["exit_code"] == 1


def test_version_json_lists_every_installed_package() -> None:
    code, out, _ = invoke("version", "--output", "json")
    assert code == 0
    document = json.loads(out)
    names = [p["name"] for p in document["packages"]]
    assert names == [p.name for p in installed_packages()]
    assert {"indextables-admin", "indextables-protocol"} <= set(names)
    assert isinstance(document["cython_decoder_active"], bool)


def test_group_level_output_option_applies_to_the_command() -> None:
    code, out, _ = invoke("--output", "json", "version")
    assert code == 0
    assert json.loads(out)["packages"]


def test_version_text_is_a_table() -> None:
    code, out, _ = invoke("version")
    assert code == 0
    assert "indextables-admin" in out
    assert "cython_decoder_active" in out


def test_installed_script_runs_as_a_real_process() -> None:
    script = shutil.which("indextables", path=os.path.dirname(sys.executable))
    assert script is not None, "the indextables entry point is not installed"
    done = subprocess.run(
        [script, "version", "--output", "json"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "indextables-admin" in [p["name"] for p in json.loads(done.stdout)["packages"]]
    done = subprocess.run([script, "describe"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
