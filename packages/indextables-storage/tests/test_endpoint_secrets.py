"""A password written into an endpoint URL never shows: not in messages, reprs or chained errors."""

from __future__ import annotations

import socket
import traceback

import pytest

from indextables.storage import StorageError, open_store


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


@pytest.mark.parametrize("operation", ["get", "put_if_absent"])
def test_endpoint_password_is_scrubbed_everywhere(operation: str) -> None:
    password = "pw-in-url-7f3a9"
    endpoint = f"http://someone:{password}@127.0.0.1:{_closed_port()}"
    store = open_store(
        "s3://bucket/t",
        endpoint_url=endpoint,
        access_key_id="test-key-id",
        secret_access_key="test-secret-key",
        region="us-east-1",
        max_attempts=1,
        connect_timeout=1.0,
    )
    assert password not in repr(store)
    call = (
        (lambda: store.get("k")) if operation == "get" else (lambda: store.put_if_absent("k", b"x"))
    )
    with pytest.raises(StorageError) as caught:
        call()
    printed = "".join(traceback.format_exception(caught.value))
    assert "127.0.0.1" in printed  # the error still says where it failed
    assert password not in printed
    for error in _chain(caught.value):
        assert password not in str(error), type(error)
        assert password not in repr(error.args), type(error)
