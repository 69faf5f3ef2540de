"""boto3 clients are shared per process by store options, never across a fork."""

from __future__ import annotations

import multiprocessing
import uuid

import pytest

from indextables.storage import open_store
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
