"""The reference's URI schemes and store settings: honoured, accepted with a warning, or refused."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from indextables.storage import open_store
from indextables.storage.azureblob import StaticTokenCredential, _credential
from indextables.storage.errors import ConfigurationError
from indextables.storage.options import parse_azure_options, parse_s3_options
from indextables.storage.secrets import Secret


@pytest.mark.parametrize("scheme", ["s3", "s3a", "s3n"])
def test_every_s3_scheme_reaches_the_same_objects(moto_server: Any, scheme: str) -> None:
    bucket = moto_server.create_bucket()
    uri, options = moto_server.store_args(bucket, prefix="t")
    open_store(uri, **options).put("k", b"written through s3://")
    other = uri.replace("s3://", f"{scheme}://", 1)
    assert open_store(other, **options).get("k") == b"written through s3://"


@pytest.mark.parametrize("scheme", ["abfss", "abfs", "wasbs", "wasb"])
def test_every_azure_scheme_reaches_the_same_objects(azurite_server: Any, scheme: str) -> None:
    container = azurite_server.create_container()
    uri, options = azurite_server.store_args(container, prefix="t")
    open_store(uri, **options).put("k", b"written")
    account = options.get("account_name", "devstoreaccount1")
    other = f"{scheme}://{container}@{account}.blob.core.windows.net/t"
    assert open_store(other, **options).get("k") == b"written"


@pytest.mark.parametrize(
    "key",
    [
        "spark.indextables.aws.secretKee",
        "spark.indextables.azure.acountKey",
        "spark.indextables.s3.endpont",
    ],
)
def test_an_unknown_store_setting_is_an_error_naming_the_key_not_the_value(key: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_s3_options({key: "VALUE-THAT-IS-SECRET"})
    assert key in str(caught.value)
    assert "VALUE-THAT-IS-SECRET" not in str(caught.value)


def test_reference_settings_without_effect_are_accepted_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = "spark.indextables.s3.maxConcurrency"
    with caplog.at_level(logging.WARNING, logger="indextables.storage"):
        parse_s3_options({key: "8"})
        parse_s3_options({key: "8"})
    warnings = [r for r in caplog.records if key in r.getMessage()]
    assert len(warnings) <= 1  # once per process (a previous test may have warned already)


def test_reference_upload_sizes_are_honoured() -> None:
    parsed = parse_s3_options(
        {
            "spark.indextables.s3.multipartThreshold": "8388608",
            "spark.indextables.s3.partSize": "5242880",
        }
    )
    assert (parsed.multipart_threshold, parsed.multipart_part_size) == (8388608, 5242880)


def test_the_bearer_token_becomes_a_token_credential_and_stays_secret() -> None:
    parsed = parse_azure_options({"spark.indextables.azure.bearerToken": "tok-123456"})
    assert isinstance(parsed.bearer_token, Secret)
    assert "tok-123456" not in repr(parsed)
    credential = _credential(parsed, "account")
    assert isinstance(credential, StaticTokenCredential)
    assert credential.get_token("https://storage.azure.com/.default").token == "tok-123456"
    assert "tok-123456" not in repr(credential)
