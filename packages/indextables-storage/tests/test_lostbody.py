"""An upload whose body is lost on the way stores nothing, on every remote store.

A writer killed mid-upload (or a proxy that cut the body) must not leave a short or
empty object: a version file of 0 bytes cannot be replayed. SeaweedFS and Azurite both
stored 0 bytes for a request whose body never arrived; every upload now carries the
body's MD5, which the server checks. Each test drops the body of the request on its way
out and checks the server refused it and nothing was stored.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from indextables.storage import StorageError, StorageNotFoundError, open_store
from indextables.storage.testing import S3ServerInfo

pytestmark = pytest.mark.integration

KEY = "_transaction_log/00000000000000000001.json"


# (how the upload is made, the operation whose body is dropped, the bytes)
UPLOADS = [
    ("put_if_absent", "PutObject", b"x" * 300),
    ("put", "PutObject", b"x" * 300),
    ("put", "UploadPart", b"x" * (5 * 1024 * 1024 + 10)),  # multipart from 5 MiB here
]


@pytest.mark.s3
@pytest.mark.parametrize(("method", "operation", "data"), UPLOADS, ids=["create", "put", "part"])
def test_an_upload_whose_body_is_lost_stores_nothing(
    seaweedfs_server: S3ServerInfo, method: str, operation: str, data: bytes
) -> None:
    """Content-MD5 on every S3 upload. The payload is unsigned (botocore's default over
    HTTPS; a signed one is refused by its hash anyway) and the body dropped after signing."""
    uri, options = seaweedfs_server.store_args(seaweedfs_server.create_bucket(), prefix="t")
    part = 5 * 1024 * 1024
    store = open_store(uri, **{**options, "multipart_threshold": part, "multipart_part_size": part})
    client = store._client  # type: ignore[attr-defined]
    shared_s3_config = client.meta.config.s3  # the client may be shared: restored below
    client.meta.config.s3 = {**(shared_s3_config or {}), "payload_signing_enabled": False}
    sent: list[dict[str, str]] = []

    def lose_body(request: Any, **_: Any) -> None:
        sent.append(
            {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        )
        request.body = b""
        request.headers["Content-Length"] = "0"

    key = KEY
    client.meta.events.register(f"before-send.s3.{operation}", lose_body)
    try:
        with pytest.raises(StorageError, match="BadDigest"):
            getattr(store, method)(key, data)
    finally:
        client.meta.events.unregister(f"before-send.s3.{operation}", lose_body)
        client.meta.config.s3 = shared_s3_config
    assert sent
    assert sent[0]["X-Amz-Content-SHA256"] == "UNSIGNED-PAYLOAD"
    body = data[:part] if operation == "UploadPart" else data
    assert sent[0]["Content-MD5"] == base64.b64encode(hashlib.md5(body).digest()).decode()
    with pytest.raises(StorageNotFoundError):
        store.get(key)
    getattr(store, method)(key, b"y" * 10)
    assert store.get(key) == b"y" * 10


@pytest.mark.azure
@pytest.mark.parametrize("method", ["put_if_absent", "put"])
def test_an_azure_upload_whose_body_is_lost_stores_nothing(
    azurite_server: Any, method: str
) -> None:
    """``validate_content``: the SDK sends the body's MD5. The body is dropped in the
    request hook, after the SDK computed it."""
    uri, options = azurite_server.store_args(azurite_server.create_container(), prefix="t")
    store = open_store(uri, **options)
    container = store._container  # type: ignore[attr-defined]
    sent: list[dict[str, str]] = []

    def lose_body(request: Any) -> None:
        http = request.http_request
        if http.method == "PUT" and KEY in http.url:
            sent.append(dict(http.headers))
            http.data = b""
            http.headers["Content-Length"] = "0"

    real_upload = container.upload_blob
    container.upload_blob = lambda *a, **kw: real_upload(*a, raw_request_hook=lose_body, **kw)
    try:
        with pytest.raises(StorageError, match="MD5"):
            getattr(store, method)(KEY, b"x" * 300)
    finally:
        container.upload_blob = real_upload
    assert sent
    assert sent[0]["Content-MD5"] == base64.b64encode(hashlib.md5(b"x" * 300).digest()).decode()
    with pytest.raises(StorageNotFoundError):
        store.get(KEY)
    getattr(store, method)(KEY, b"y" * 10)
    assert store.get(KEY) == b"y" * 10
