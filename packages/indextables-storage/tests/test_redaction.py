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


@pytest.mark.parametrize("secret", ["e", "ab", "tmp", "s3cr", "Reliab1"])
def test_a_short_secret_is_masked_only_as_a_whole_token(secret: str) -> None:
    import random

    rng = random.Random(secret)
    words = ["file:///var/reliab/x", "no IndexTables log here", "bucket-e1", "tmpdir", "s3crets"]
    for _ in range(200):
        # Text built of words and the secret; the model knows where the secret stands alone.
        parts = [rng.choice([*words, secret]) for _ in range(rng.randint(1, 6))]
        separators = [rng.choice([" ", "=", "'", "/", ": "]) for _ in parts]
        text = "".join(p + s for p, s in zip(parts, separators, strict=True))
        expected = "".join(
            ("***" if p == secret else p) + s for p, s in zip(parts, separators, strict=True)
        )
        assert redact_text(text, [secret]) == expected, text


def test_a_long_secret_is_masked_inside_other_text_too() -> None:
    assert redact_text(f"x{SECRET}y and {SECRET}", [SECRET]) == "x***y and ***"
