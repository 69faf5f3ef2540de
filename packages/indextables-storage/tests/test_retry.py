"""Retries and ambiguous put-if-absent, through a fault-injecting proxy in front of real servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from indextables.protocol.errors import ObjectExistsError
from indextables.protocol.store import ObjectStore
from indextables.storage import TransientStorageError, open_store
from indextables.storage.testing import AzuriteInfo, S3ServerInfo
from indextables.storage.testing.faults import FaultProxy, fault_proxy

REMOTE = [
    pytest.param("moto_server", id="moto", marks=[pytest.mark.s3, pytest.mark.integration]),
    pytest.param(
        "seaweedfs_server", id="seaweedfs", marks=[pytest.mark.s3, pytest.mark.integration]
    ),
    pytest.param(
        "azurite_server", id="azurite", marks=[pytest.mark.azure, pytest.mark.integration]
    ),
]


class Proxied:
    """A store reached through a fault proxy, and a direct store on the same location."""

    def __init__(self, server: S3ServerInfo | AzuriteInfo, proxy: FaultProxy) -> None:
        if isinstance(server, S3ServerInfo):
            uri, options = server.store_args(server.create_bucket(), prefix="retry")
            proxy_url = proxy.endpoint_url
        else:
            uri, options = server.store_args(server.create_container(), prefix="retry")
            proxy_url = f"{proxy.endpoint_url}/{server.account_name}"
        # A generous read timeout: on a loaded machine a slow answer must not turn into
        # one more (ambiguous) attempt and change the request counts the tests assert.
        options.update(max_attempts=4, retry_base_delay=0.01, read_timeout=60.0)
        self.proxy = proxy
        self.direct: ObjectStore = open_store(uri, **options)
        self._proxied_args = (uri, {**options, "endpoint_url": proxy_url})
        self.store: ObjectStore = self.through_proxy()

    def through_proxy(self, **overrides: float) -> ObjectStore:
        """A store reached through the proxy, with some options overridden."""
        uri, options = self._proxied_args
        return open_store(uri, **{**options, **overrides})


@pytest.fixture(params=REMOTE)
def proxied(request: pytest.FixtureRequest) -> Iterator[Proxied]:
    server = request.getfixturevalue(request.param)
    upstream = server.endpoint_url
    with fault_proxy(upstream) as proxy:
        yield Proxied(server, proxy)


def test_lost_response_of_a_landed_put_if_absent_is_a_success(proxied: Proxied) -> None:
    proxied.proxy.inject("drop_response", method="PUT")
    proxied.store.put_if_absent("_transaction_log/1.json", b"ours")
    assert proxied.proxy.faults_fired == 1
    assert proxied.direct.get("_transaction_log/1.json") == b"ours"


def test_timeout_after_sending_is_settled_by_reading_back(proxied: Proxied) -> None:
    proxied.proxy.inject("stall_response", method="PUT")
    # Short, so the stalled answer times out quickly; the read-back then settles it.
    proxied.through_proxy(read_timeout=2.0).put_if_absent("_transaction_log/2.json", b"ours")
    assert proxied.proxy.faults_fired == 1
    assert proxied.direct.get("_transaction_log/2.json") == b"ours"


def test_lost_response_when_another_writer_won_is_a_conflict(proxied: Proxied) -> None:
    proxied.direct.put_if_absent("_transaction_log/3.json", b"theirs")
    proxied.proxy.inject("drop_response", method="PUT")
    with pytest.raises(ObjectExistsError):
        proxied.store.put_if_absent("_transaction_log/3.json", b"ours")
    assert proxied.direct.get("_transaction_log/3.json") == b"theirs"


def test_reset_before_the_server_saw_it_is_sent_again(proxied: Proxied) -> None:
    proxied.proxy.inject("reset_before", method="PUT")
    proxied.store.put_if_absent("_transaction_log/4.json", b"ours")
    assert proxied.proxy.requests["PUT"] == 2
    assert proxied.direct.get("_transaction_log/4.json") == b"ours"


def test_a_conflict_is_never_retried(proxied: Proxied) -> None:
    proxied.direct.put_if_absent("_transaction_log/5.json", b"theirs")
    with pytest.raises(ObjectExistsError):
        proxied.store.put_if_absent("_transaction_log/5.json", b"ours")
    assert proxied.proxy.requests["PUT"] == 1


def test_throttling_is_retried_with_backoff(proxied: Proxied) -> None:
    proxied.direct.put("object", b"payload")
    proxied.proxy.inject("throttle", method="GET", count=3)
    assert proxied.store.get("object") == b"payload"
    assert proxied.proxy.requests["GET"] == 4


def test_throttling_past_the_attempt_budget_raises_transient(proxied: Proxied) -> None:
    proxied.direct.put("object", b"payload")
    proxied.proxy.inject("throttle", method="GET", count=4)
    with pytest.raises(TransientStorageError, match="after 4 tries"):
        proxied.store.get("object")


def test_throttled_put_if_absent_is_retried_to_one_write(proxied: Proxied) -> None:
    proxied.proxy.inject("throttle", method="PUT", count=2)
    proxied.store.put_if_absent("_transaction_log/6.json", b"ours")
    assert proxied.direct.get("_transaction_log/6.json") == b"ours"
