"""open_store by scheme, and the entry points through which the protocol finds stores."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from indextables.protocol.store import ObjectStore
from indextables.storage import (
    ConfigurationError,
    LocalStore,
    MemoryStore,
    UnsupportedSchemeError,
    clear_memory_stores,
    open_store,
    registered_schemes,
)
from indextables.storage.uris import local_path, parse_azure_uri, parse_bucket_uri, scheme_of

SCHEMES = ["abfs", "abfss", "az", "file", "memory", "s3", "s3a", "s3n", "wasb", "wasbs"]


def test_entry_points_name_every_scheme() -> None:
    found = {entry.name: entry for entry in entry_points(group="indextables.stores")}
    assert sorted(found) == SCHEMES
    assert registered_schemes() == SCHEMES


def test_entry_point_factories_open_stores(tmp_path: Path) -> None:
    found = {entry.name: entry.load() for entry in entry_points(group="indextables.stores")}
    local = found["file"](tmp_path.as_uri())
    assert isinstance(local, LocalStore)
    assert local.uri == tmp_path.as_uri()
    memory = found["memory"]("memory://entry-point-test")
    assert isinstance(memory, MemoryStore)
    s3 = found["s3a"]("s3a://bucket/prefix", region="us-east-1", endpoint_url="http://127.0.0.1:9")
    assert isinstance(s3, ObjectStore)
    assert s3.uri == "s3a://bucket/prefix"
    azure = found["abfss"](
        "abfss://box@acct.dfs.core.windows.net/dir", account_key="a2V5", endpoint_url="http://x"
    )
    assert azure.uri == "abfss://box@acct.dfs.core.windows.net/dir"
    clear_memory_stores("entry-point-test")


def test_plain_paths_and_file_uris_open_local_stores(tmp_path: Path) -> None:
    for uri in (str(tmp_path), tmp_path.as_uri(), f"file://{tmp_path}"):
        store = open_store(uri)
        assert isinstance(store, LocalStore)
        assert store.root == tmp_path


def test_memory_stores_are_shared_per_name() -> None:
    open_store("memory://shared-name/root").put("k", b"v")
    assert open_store("memory://shared-name/root").get("k") == b"v"
    assert [info.key for info in open_store("memory://shared-name").list()] == ["root/k"]
    assert list(open_store("memory://other-name").list()) == []
    clear_memory_stores("shared-name")
    assert list(open_store("memory://shared-name").list()) == []


def test_unknown_schemes_and_options_are_refused() -> None:
    with pytest.raises(UnsupportedSchemeError, match="'gs'"):
        open_store("gs://bucket/x")
    with pytest.raises(ConfigurationError, match="unknown storage option 'endpoint'"):
        open_store("memory://x", endpoint="http://a")


def test_uri_parsing() -> None:
    assert scheme_of("/tmp/x") == "file"
    assert scheme_of("relative/dir") == "file"
    assert scheme_of("S3://b/p") == "s3"
    assert parse_bucket_uri("s3://bucket/a/b/").prefix == "a/b"
    assert parse_bucket_uri("s3a://bucket").prefix == ""
    location = parse_azure_uri("abfss://box@acct.dfs.core.windows.net/a/b")
    assert (location.container, location.account, location.prefix) == ("box", "acct", "a/b")
    assert parse_azure_uri("az://box/x").account is None
    assert local_path("file:///tmp/a%20b") == "/tmp/a b"


@pytest.mark.parametrize(
    "uri", ["file:/tmp/t/x", "file:///tmp/t/x", "file://localhost/tmp/t/x", "FILE:/tmp/t/x"]
)
def test_every_local_file_uri_form_names_the_absolute_path(uri: str) -> None:
    # file:/abs is the form Spark and Hadoop hand over (CREATE TABLE ... LOCATION).
    assert scheme_of(uri) == "file"
    assert local_path(uri) == "/tmp/t/x"


def test_single_slash_file_uri_opens_the_same_directory(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path}")
    store.put("a.txt", b"x")
    assert (tmp_path / "a.txt").read_bytes() == b"x"
    assert local_path(f"file:{tmp_path}") == str(tmp_path)


def test_credentials_in_uris_are_refused_without_echoing_them() -> None:
    with pytest.raises(ConfigurationError) as caught:
        open_store("s3://AKID:SECRET-IN-URI@bucket/x")
    assert "SECRET-IN-URI" not in str(caught.value)
    with pytest.raises(ConfigurationError, match="names no bucket"):
        open_store("s3:///x")
    with pytest.raises(ConfigurationError, match="remote host"):
        open_store("file://server/share")
