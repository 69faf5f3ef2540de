"""Credentials never reach the screen: option names, URIs and free text are scrubbed."""

import pytest

from indextables.admin.redact import (
    REDACTED,
    is_secret_key,
    redact_options,
    redact_text,
    redact_uri,
)


@pytest.mark.parametrize(
    "name",
    [
        "secret_access_key",
        "AWS_SECRET_ACCESS_KEY",
        "secretAccessKey",
        "access_key_id",
        "session_token",
        "account_key",
        "sas_token",
        "connection_string",
        "client_secret",
        "spark.indextables.aws.secretKey",
        "spark.indextables.aws.accessKey",
        "password",
    ],
)
def test_credential_names_are_secret(name: str) -> None:
    assert is_secret_key(name)


@pytest.mark.parametrize(
    "name", ["region", "endpoint_url", "path_style", "account_name", "max_attempts", "profile"]
)
def test_plain_names_are_not_secret(name: str) -> None:
    assert not is_secret_key(name)


def test_redact_options_hides_values_of_secrets_only() -> None:
    options = {"region": "us-east-1", "secret_access_key": "wJalrXUt", "access_key_id": "AKIA1"}
    redacted = redact_options(options)
    assert redacted == {
        "region": "us-east-1",
        "secret_access_key": REDACTED,
        "access_key_id": REDACTED,
    }
    assert options["secret_access_key"] == "wJalrXUt"  # the input is not modified


def test_redact_uri_removes_userinfo_and_signatures() -> None:
    uri = "https://user:pw@acct.blob.core.windows.net/c/t?sv=2024&sig=abc%2Fdef&se=1"
    cleaned = redact_uri(uri)
    assert "pw" not in cleaned
    assert "abc" not in cleaned
    assert "sv=2024" in cleaned
    assert cleaned.startswith("https://***@acct")


def test_redact_text_scrubs_every_secret_longest_first() -> None:
    text = "auth failed for key AKIAXYZ with secret AKIAXYZ-SECRET"
    cleaned = redact_text(text, ["AKIAXYZ", "AKIAXYZ-SECRET", ""])
    assert "AKIAXYZ" not in cleaned
    assert cleaned == "auth failed for key *** with secret ***"


def test_redact_options_scrubs_uri_values() -> None:
    redacted = redact_options({"endpoint_url": "http://u:p@127.0.0.1:9000"})
    assert redacted == {"endpoint_url": "http://***@127.0.0.1:9000"}


@pytest.mark.parametrize(
    "uri",
    [
        "abfss://logs@acct.dfs.core.windows.net/t",
        "wasbs://logs@acct.blob.core.windows.net/t",
    ],
)
def test_the_azure_container_name_is_shown(uri: str) -> None:
    assert redact_uri(uri) == uri


def test_a_credential_pair_in_user_info_still_goes() -> None:
    assert redact_uri("s3://AKID:wJalr@bucket/t") == "s3://***@bucket/t"
