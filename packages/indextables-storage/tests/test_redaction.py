"""No credential in any error of the store options, whatever the typo."""

from __future__ import annotations

import traceback

import pytest

from indextables.storage import open_store
from indextables.storage.errors import ConfigurationError
from indextables.storage.redaction import is_secret_key, redact_name, redact_text

SECRET = "c2VjcmV0UFc9PQ=="


@pytest.mark.parametrize(
    "url",
    [
        f"ht!tp://user:{SECRET}@host",
        f"http//user:{SECRET}@host",
        f"user:{SECRET}@host:9000",
        f"ftp://user:{SECRET}@host",
        f"http://user:{SECRET}@host:notaport",
    ],
)
@pytest.mark.parametrize("uri", ["s3://bucket/t", "abfss://c@acct.dfs.core.windows.net/t"])
def test_a_malformed_endpoint_is_a_typed_error_without_the_password(url: str, uri: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        open_store(uri, endpoint_url=url, region="us-east-1", account_key="a2V5")
    shown = "".join(traceback.format_exception(caught.value))
    assert SECRET not in shown
    assert "endpoint_url" in str(caught.value)


@pytest.mark.parametrize(
    "name",
    [
        f"secret_access_key:{SECRET}",
        f"SECRET_ACCESS_KEY:{SECRET}",
        f"account_key {SECRET}",
        f"sas_token: {SECRET}",
        f"spark.indextables.aws.secretKey:{SECRET}",
        f"spark.indextables.azure.accountKey {SECRET}",
    ],
)
def test_a_typo_option_name_is_refused_without_its_secret(name: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        open_store("s3://bucket/t", **{name: "x"})
    shown = "".join(traceback.format_exception(caught.value))
    assert SECRET not in shown
    assert is_secret_key(name)
    assert SECRET not in redact_name(name)


@pytest.mark.parametrize(
    "text",
    [
        f"account_key={SECRET}",
        f"account_key:{SECRET}",
        f"Account_Key: {SECRET}",
        f"AccountKey={SECRET};BlobEndpoint=http://h",
        f"http://user:{SECRET}@h:1/b",
        f"ht!tp://user:{SECRET}@h",
        f"url?sig={SECRET}&x=1",
    ],
)
def test_redact_text_removes_every_form(text: str) -> None:
    assert SECRET not in redact_text(text)
