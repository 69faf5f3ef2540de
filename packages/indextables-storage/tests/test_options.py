"""Option names, the reference's Spark aliases, and typed values."""

from __future__ import annotations

import pytest

from indextables.storage import ConfigurationError
from indextables.storage.options import (
    ALIASES,
    parse_azure_options,
    parse_common_options,
    parse_s3_options,
)
from indextables.storage.secrets import Secret


def test_spark_aliases_map_to_canonical_s3_options() -> None:
    parsed = parse_s3_options(
        {
            "spark.indextables.aws.accessKey": "AKID",
            "spark.indextables.aws.secretKey": "SECRET",
            "spark.indextables.aws.sessionToken": "TOKEN",
            "spark.indextables.aws.region": "eu-west-1",
            "spark.indextables.s3.endpoint": "http://127.0.0.1:9000",
            "spark.indextables.s3.pathStyleAccess": "true",
        }
    )
    assert parsed.access_key_id == Secret("AKID")
    assert parsed.secret_access_key is not None
    assert parsed.secret_access_key.reveal() == "SECRET"
    assert parsed.session_token == Secret("TOKEN")
    assert (parsed.region, parsed.endpoint_url, parsed.path_style) == (
        "eu-west-1",
        "http://127.0.0.1:9000",
        True,
    )


def test_aliases_are_case_insensitive_like_spark_options() -> None:
    parsed = parse_s3_options(
        {"spark.indextables.aws.region": "a", "SPARK.INDEXTABLES.S3.ENDPOINT": "http://e"}
    )
    assert (parsed.region, parsed.endpoint_url) == ("a", "http://e")
    lowered = parse_azure_options({"spark.indextables.azure.accountname": "acct"})
    assert lowered.account_name == "acct"


def test_azure_aliases() -> None:
    parsed = parse_azure_options(
        {
            "spark.indextables.azure.accountName": "acct",
            "spark.indextables.azure.accountKey": "KEY",
            "spark.indextables.azure.connectionString": "CS",
            "spark.indextables.azure.endpoint": "http://127.0.0.1:1/acct",
            "spark.indextables.azure.tenantId": "t",
            "spark.indextables.azure.clientId": "c",
            "spark.indextables.azure.clientSecret": "s",
        }
    )
    assert parsed.account_name == "acct"
    assert parsed.account_key == Secret("KEY")
    assert parsed.connection_string == Secret("CS")
    assert (parsed.endpoint_url, parsed.tenant_id, parsed.client_id) == (
        "http://127.0.0.1:1/acct",
        "t",
        "c",
    )
    assert parsed.client_secret == Secret("s")


def test_every_alias_targets_a_known_option() -> None:
    from indextables.storage.options import KNOWN

    assert set(ALIASES.values()) <= KNOWN
    assert all(alias == alias.lower() for alias in ALIASES)


def test_other_spark_settings_are_ignored_but_unknown_names_are_refused() -> None:
    parsed = parse_s3_options({"spark.indextables.indexWriter.batchSize": "10", "region": "r"})
    assert parsed.region == "r"
    with pytest.raises(ConfigurationError, match="unknown storage option 'regoin'"):
        parse_s3_options({"regoin": "r"})


def test_options_of_the_other_backend_are_accepted_and_ignored() -> None:
    parsed = parse_s3_options({"account_name": "acct", "region": "r"})
    assert parsed.region == "r"
    assert parse_azure_options({"region": "r", "account_name": "a"}).account_name == "a"


def test_two_names_for_one_option_must_agree() -> None:
    assert parse_s3_options({"region": "r", "spark.indextables.aws.region": "r"}).region == "r"
    with pytest.raises(ConfigurationError, match="'region' is given twice"):
        parse_s3_options({"region": "r", "spark.indextables.aws.region": "other"})


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("False", False), (True, True)])
def test_booleans_accept_spark_strings(text: object, expected: bool) -> None:
    assert parse_s3_options({"path_style": text}).path_style is expected


def test_numbers_are_parsed_and_checked() -> None:
    common = parse_common_options({"read_timeout": "2.5", "max_attempts": "3"})
    assert (common.read_timeout, common.max_attempts) == (2.5, 3)
    with pytest.raises(ConfigurationError, match="'read_timeout' is not a number"):
        parse_common_options({"read_timeout": "soon"})
    with pytest.raises(ConfigurationError, match="max_attempts"):
        parse_common_options({"max_attempts": 0})
    with pytest.raises(ConfigurationError, match="multipart_part_size"):
        parse_s3_options({"multipart_part_size": 1024})
    with pytest.raises(ConfigurationError, match="path_style"):
        parse_s3_options({"path_style": "maybe"})


def test_secrets_never_print() -> None:
    parsed = parse_s3_options({"access_key_id": "AKID-VISIBLE?", "secret_access_key": "SHH-123"})
    assert "SHH-123" not in repr(parsed)
    assert "AKID-VISIBLE?" not in repr(parsed)
    assert str(Secret("hidden-value")) == "Secret('***')"


def test_secret_errors_do_not_echo_values() -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_s3_options({"secret_access_key": "a", "spark.indextables.aws.secretKey": "SHH-999"})
    assert "SHH-999" not in str(caught.value)


def test_the_references_other_endpoint_and_path_style_keys() -> None:
    parsed = parse_s3_options(
        {
            "spark.indextables.s3.serviceUrl": "http://127.0.0.1:9000",
            "spark.indextables.aws.pathStyleAccess": "true",
        }
    )
    assert (parsed.endpoint_url, parsed.path_style) == ("http://127.0.0.1:9000", True)
