"""NUL bytes and lone surrogates in URIs and keys: typed errors, printable messages."""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from indextables.storage import (
    ConfigurationError,
    InvalidKeyError,
    LocalStore,
    MemoryStore,
    open_store,
)

HOSTILE = ["\x00", "\ud800", "\udfff", "a\ud83d", "\x00\ud800"]


def _uris(tmp_path: Path, bad: str) -> list[str]:
    return [
        f"{tmp_path}/t{bad}",
        f"file://{tmp_path}/t{bad}",
        f"memory://name{bad}/root",
        f"memory://name/root{bad}",
        f"s3://bucket{bad}/prefix",
        f"s3a://bucket/pre{bad}fix",
        f"abfss://container@acct.dfs.core.windows.net/p{bad}",
        f"az://container{bad}/p",
    ]


@pytest.mark.parametrize("bad", HOSTILE, ids=ascii)
def test_a_uri_with_nul_or_a_lone_surrogate_is_a_configuration_error(
    tmp_path: Path, bad: str
) -> None:
    factories = {ep.name: ep.load() for ep in entry_points(group="indextables.stores")}
    for uri in _uris(tmp_path, bad):
        scheme = uri.split("://")[0] if "://" in uri else "file"
        for opener in (open_store, factories[scheme]):
            with pytest.raises(ConfigurationError, match=r"NUL byte|lone surrogate") as caught:
                opener(uri)
            message = str(caught.value)
            message.encode("utf-8")  # printable: no raw surrogate in the message
            assert "\x00" not in message


def test_a_file_name_of_undecodable_bytes_still_opens_locally(tmp_path: Path) -> None:
    name = os.fsdecode(b"t\xff")  # Python's spelling of the byte: '\udcff'
    store = open_store(str(tmp_path / name))
    assert isinstance(store, LocalStore)
    assert store.uri.endswith("/t%FF")


@pytest.mark.parametrize("bad", HOSTILE, ids=ascii)
def test_a_key_with_nul_or_a_lone_surrogate_is_an_invalid_key(tmp_path: Path, bad: str) -> None:
    for store in (LocalStore(tmp_path), MemoryStore("hostile-text")):
        for call in (store.get, store.head, store.delete):
            with pytest.raises(InvalidKeyError) as caught:
                call(f"dir/a{bad}b")
            str(caught.value).encode("utf-8")
        with pytest.raises(InvalidKeyError):
            store.put(f"dir/a{bad}b", b"x")
