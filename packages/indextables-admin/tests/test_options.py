"""Parsing of --storage-option pairs, durations and timestamps."""

from datetime import UTC, datetime, timedelta

import pytest

from indextables.admin.errors import UsageError
from indextables.admin.options import (
    parse_duration,
    parse_storage_options,
    parse_timestamp_ms,
    storage_options_from_env,
)


def test_storage_options_pairs_later_wins_and_values_keep_equals() -> None:
    parsed = parse_storage_options(["region=eu", "endpoint_url=http://h/?a=b", "region=us"])
    assert parsed == {"region": "us", "endpoint_url": "http://h/?a=b"}


@pytest.mark.parametrize("pair", ["novalue", "=value", " =x"])
def test_storage_option_without_key_or_equals_is_a_usage_error(pair: str) -> None:
    with pytest.raises(UsageError, match="is not KEY=VALUE"):
        parse_storage_options([pair])


def test_malformed_secret_pair_is_not_quoted() -> None:
    with pytest.raises(UsageError) as caught:
        parse_storage_options(["secret_access_key:wJalrXUtnFEMI"])
    # The whole pair has no "=", so its "key" is the full text: a secret name.
    assert "wJalrXUtnFEMI" not in str(caught.value)


def test_storage_options_from_env_lowercases_keys() -> None:
    env = {
        "INDEXTABLES_STORAGE_OPTION_ENDPOINT_URL": "http://127.0.0.1:1",
        "INDEXTABLES_STORAGE_OPTION_": "ignored",
        "AWS_REGION": "ignored",
    }
    assert storage_options_from_env(env) == {"endpoint_url": "http://127.0.0.1:1"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", timedelta(days=7)),
        ("7", timedelta(days=7)),
        ("168h", timedelta(hours=168)),
        ("30 days", timedelta(days=30)),
        ("90m", timedelta(minutes=90)),
        ("45s", timedelta(seconds=45)),
        ("2w", timedelta(weeks=2)),
        ("1.5h", timedelta(minutes=90)),
        ("0d", timedelta(0)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "d", "-1d", "7y", "seven days", "7d3h"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="invalid duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1705123456789", 1705123456789),
        ("2024-01-13", int(datetime(2024, 1, 13, tzinfo=UTC).timestamp() * 1000)),
        ("2024-01-13T10:30:00Z", int(datetime(2024, 1, 13, 10, 30, tzinfo=UTC).timestamp() * 1000)),
        (
            "2024-01-13T12:30:00+02:00",
            int(datetime(2024, 1, 13, 10, 30, tzinfo=UTC).timestamp() * 1000),
        ),
    ],
)
def test_parse_timestamp_ms(text: str, expected: int) -> None:
    assert parse_timestamp_ms(text) == expected


def test_parse_timestamp_rejects_garbage() -> None:
    with pytest.raises(UsageError, match="invalid timestamp"):
        parse_timestamp_ms("yesterday")


def test_azure_credentials_come_from_the_azure_cli_variables() -> None:
    env = {
        "AZURE_STORAGE_ACCOUNT": "acct",
        "AZURE_STORAGE_KEY": "a2V5",
        "AZURE_STORAGE_CONNECTION_STRING": "",
        "INDEXTABLES_STORAGE_OPTION_ACCOUNT_NAME": "other",
    }
    # An empty variable is not a setting; the explicit INDEXTABLES_ variable wins.
    assert storage_options_from_env(env) == {"account_name": "other", "account_key": "a2V5"}
    sas = storage_options_from_env({"AZURE_STORAGE_SAS_TOKEN": "sv=1&sig=x"})
    assert sas == {"sas_token": "sv=1&sig=x"}
