"""boto3 clients are shared per process by store options, never across a fork."""

from __future__ import annotations

import base64
import hashlib
import multiprocessing
import uuid
from typing import Any

import pytest

from indextables.storage import StorageError, StorageNotFoundError, open_store
from indextables.storage.testing import S3ServerInfo

pytestmark = pytest.mark.integration


def _options(secret: str) -> dict[str, object]:
    return {
        "endpoint_url": "http://127.0.0.1:9",
        "region": "us-east-1",
        "access_key_id": "key-" + secret,
        "secret_access_key": "secret-" + secret,
    }


def test_equal_options_share_one_client_and_other_credentials_do_not() -> None:
    secret = uuid.uuid4().hex
    first = open_store("s3://bucket-a/t1", **_options(secret))
    second = open_store("s3://bucket-b/t2", **_options(secret))
    other = open_store("s3://bucket-a/t1", **_options(uuid.uuid4().hex))
    assert first._client is second._client  # type: ignore[attr-defined]
    assert first._client is not other._client  # type: ignore[attr-defined]


def _child_builds_its_own(options: dict[str, object], queue: multiprocessing.Queue[bool]) -> None:
    import indextables.storage.s3 as s3

    inherited = list(s3._CLIENTS.values())
    store = open_store("s3://bucket-a/t1", **options)
    queue.put(all(store._client is not c for c in inherited) and bool(inherited))  # type: ignore[attr-defined]


def test_a_forked_child_does_not_reuse_the_parents_client() -> None:
    options = _options(uuid.uuid4().hex)
    open_store("s3://bucket-a/t1", **options)
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[bool] = context.Queue()
    child = context.Process(target=_child_builds_its_own, args=(options, queue))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) is True


@pytest.mark.s3
def test_stores_sharing_a_client_work_on_a_real_server(moto_server: S3ServerInfo) -> None:
    bucket = moto_server.create_bucket()
    options = moto_server.store_options()
    one = open_store(f"s3://{bucket}/a", **options)
    two = open_store(f"s3://{bucket}/b", **options)
    assert one._client is two._client  # type: ignore[attr-defined]
    one.put("k", b"1")
    two.put("k", b"2")
    assert (one.get("k"), two.get("k")) == (b"1", b"2")


# (how the upload is made, the operation whose body is dropped, the bytes)
UPLOADS = [
    ("put_if_absent", "PutObject", b"x" * 300),
    ("put", "PutObject", b"x" * 300),
    ("put", "UploadPart", b"x" * (5 * 1024 * 1024 + 10)),  # multipart from 5 MiB here
]


@pytest.mark.integration
@pytest.mark.s3
@pytest.mark.parametrize(("method", "operation", "data"), UPLOADS, ids=["create", "put", "part"])
def test_an_upload_whose_body_is_lost_stores_nothing(
    seaweedfs_server: S3ServerInfo, method: str, operation: str, data: bytes
) -> None:
    """Every upload carries Content-MD5, so a server that received less than the body
    refuses it. Without it, SeaweedFS stored a 0-byte object for an unsigned payload
    (botocore's default over HTTPS) that lost its body: an empty version file, which no
    reader can replay. The body is dropped after signing, as a dead writer would drop it."""
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

    key = "_transaction_log/00000000000000000001.json"
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
