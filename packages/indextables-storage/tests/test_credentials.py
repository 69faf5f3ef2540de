"""Wrong credentials give a clear AuthenticationError; no credential ever shows up.

Checked against real servers: SeaweedFS enforces SigV4, Azurite its shared
key; moto accepts anything, so it serves the log-redaction checks. Logging is
captured at DEBUG for every logger, the client libraries' own included.
"""

from __future__ import annotations

import logging
import traceback
import uuid

import pytest

from indextables.storage import AuthenticationError, StorageError, open_store
from indextables.storage.options import parse_azure_options, parse_s3_options
from indextables.storage.testing import AzuriteInfo, S3ServerInfo

pytestmark = pytest.mark.integration


def _secret(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex}"


def _all_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


@pytest.mark.s3
@pytest.mark.parametrize("wrong", ["secret", "access_key"])
def test_wrong_seaweedfs_credentials_raise_a_clear_authentication_error(
    seaweedfs_server: S3ServerInfo, caplog: pytest.LogCaptureFixture, wrong: str
) -> None:
    bucket = seaweedfs_server.create_bucket()
    secret, access_key = _secret("wrong-secret"), _secret("wrong-key")
    overrides: dict[str, object] = {"secret_access_key": secret}
    if wrong == "access_key":
        overrides["access_key_id"] = access_key
    options = seaweedfs_server.store_options(**overrides)
    caplog.set_level(logging.DEBUG)
    store = open_store(f"s3://{bucket}/table", **options)
    with pytest.raises(AuthenticationError, match="check the access key and secret") as caught:
        store.put_if_absent("_transaction_log/0.json", b"{}")
    assert isinstance(caught.value, PermissionError)
    assert bucket in str(caught.value)
    for credential in (secret, access_key):
        assert credential not in _all_text(caught.value)
        assert credential not in caplog.text
        assert credential not in repr(store) + str(store)


@pytest.mark.s3
def test_right_seaweedfs_credentials_work(seaweedfs_server: S3ServerInfo) -> None:
    store = seaweedfs_server.open_store(seaweedfs_server.create_bucket(), prefix="t")
    store.put_if_absent("k", b"v")
    assert store.get("k") == b"v"


@pytest.mark.s3
def test_credentials_stay_out_of_s3_logs_reprs_and_errors(
    moto_server: S3ServerInfo, caplog: pytest.LogCaptureFixture
) -> None:
    key, secret, token = _secret("akid"), _secret("secret"), _secret("session-token")
    options = {
        "spark.indextables.s3.endpoint": moto_server.endpoint_url,
        "spark.indextables.aws.region": "us-east-1",
        "spark.indextables.aws.accessKey": key,
        "spark.indextables.aws.secretKey": secret,
        "spark.indextables.aws.sessionToken": token,
        "spark.indextables.s3.pathStyleAccess": "true",
        "max_attempts": 1,
    }
    caplog.set_level(logging.DEBUG)
    store = open_store(f"s3://{moto_server.create_bucket()}/t", **options)
    store.put_if_absent("k", b"v")
    with pytest.raises(StorageError) as caught:
        store.get("missing")
    with pytest.raises(StorageError) as missing_bucket:
        open_store("s3://no-such-bucket-here/t", **options).get("k")
    assert "Sending http request" in caplog.text  # the client's DEBUG logs were captured
    texts = [caplog.text, repr(store), str(store), store.uri, repr(parse_s3_options(options))]
    texts += [_all_text(caught.value), _all_text(missing_bucket.value)]
    for credential in (key, secret, token):
        assert not [text for text in texts if credential in text]


@pytest.mark.azure
def test_wrong_azurite_key_raises_authentication_error(
    azurite_server: AzuriteInfo, caplog: pytest.LogCaptureFixture
) -> None:
    container = azurite_server.create_container()
    wrong_key = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25n"
    options = azurite_server.store_options(account_key=wrong_key, max_attempts=1)
    caplog.set_level(logging.DEBUG)
    store = open_store(f"abfss://{container}@devstoreaccount1.dfs.core.windows.net/t", **options)
    with pytest.raises(AuthenticationError, match="check the account name and key") as caught:
        store.put_if_absent("k", b"v")
    texts = [caplog.text, _all_text(caught.value), repr(store), repr(parse_azure_options(options))]
    for credential in (wrong_key, azurite_server.account_key):
        assert not [text for text in texts if credential in text]
