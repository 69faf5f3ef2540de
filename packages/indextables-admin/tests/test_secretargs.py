"""-S values that may be credentials are never echoed; masking keeps the rest of a message."""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import pytest

from indextables.admin.errors import UsageError
from indextables.admin.options import parse_storage_options


def _base64_secrets() -> list[str]:
    rng = random.Random(5)
    secrets = []
    for length in (1, 2, 4, 7, 10, 20, 31):  # every padding: none, "=", "=="
        raw = bytes(rng.randrange(256) for _ in range(length))
        secrets.append(base64.b64encode(raw).decode())
    return [s for s in secrets if s.endswith("=")]


@pytest.mark.parametrize("secret", _base64_secrets())
def test_a_bare_base64_value_is_refused_by_position_without_its_text(secret: str) -> None:
    body = secret.rstrip("=")
    with pytest.raises(UsageError) as caught:
        parse_storage_options(["region=eu-west-1", secret])
    message = str(caught.value)
    assert "#2" in message
    assert body not in message


@pytest.mark.parametrize("secret", _base64_secrets())
def test_a_bare_base64_value_on_the_command_line(
    secret: str, cli_run: Any, unpartitioned_table: Path
) -> None:
    run = cli_run("describe", str(unpartitioned_table), "-S", secret)
    assert run.exit_code == 1
    assert secret.rstrip("=") not in run.stdout + run.stderr
    assert "-S value #1" in run.stderr


@pytest.mark.parametrize("pair", ["AKIAVERYSECRET", "c2VjcmV0:x", "QUtJQVNFQ1JFVA with space=1"])
def test_a_malformed_unknown_pair_shows_no_text(pair: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_storage_options([pair])
    assert pair.split(":")[0].split()[0] not in str(caught.value)


def test_known_names_with_empty_values_pass() -> None:
    assert parse_storage_options(["region=", "spark.indextables.aws.region=="]) == {
        "region": "",
        "spark.indextables.aws.region": "=",
    }


def test_a_one_letter_secret_does_not_mask_the_letter_everywhere(
    cli_run: Any, tmp_path: Path
) -> None:
    absent = tmp_path / "reliable" / "here"
    run = cli_run("describe", str(absent), "-S", "secret_access_key=e")
    assert run.exit_code == 2
    assert str(absent) in run.stderr  # not "r***liabl***/h***r***"
    assert "IndexTables transaction log" in run.stderr


def test_a_secret_standing_alone_in_a_message_is_still_masked(cli_run: Any, tmp_path: Path) -> None:
    absent = tmp_path / "tbl" / "e"
    run = cli_run("describe", str(absent), "-S", "secret_access_key=e")
    assert run.exit_code == 2
    assert str(tmp_path / "tbl" / "***") in run.stderr
