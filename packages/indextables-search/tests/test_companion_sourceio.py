"""The pieces of companion/sourceio.py without a server: which filesystem a root gets,
the deltalake storage options derived from the index table's options, and redaction."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from indextables.search.companion.sourcecreds import source_options
from indextables.search.companion.sourceio import (
    StoreFileSystem,
    delta_storage_options,
    redact_source_error,
    source_filesystem,
)
from indextables.search.errors import CompanionSourceError
from indextables.storage import open_store


def test_local_roots_keep_pyarrows_local_filesystem(tmp_path: object) -> None:
    filesystem, base = source_filesystem(str(tmp_path), {"storage.endpoint_url": "http://x:1"})
    assert isinstance(filesystem, pafs.LocalFileSystem)
    assert base == str(tmp_path)
    assert delta_storage_options(str(tmp_path), {"storage.region": "eu-west-1"}) == {}


def test_a_memory_store_root_lists_heads_and_reads_ranges() -> None:
    store = open_store("memory://sourceio-test/table")
    store.put("a/x.parquet", b"0123456789")
    store.put("a/b/y.parquet", b"abc")
    store.put("z.parquet", b"")
    filesystem, base = source_filesystem("memory://sourceio-test/table")
    assert isinstance(filesystem, pafs.PyFileSystem)
    assert isinstance(filesystem.handler, StoreFileSystem)
    kinds = {
        i.path: (i.type, i.size)
        for i in filesystem.get_file_info(pafs.FileSelector(base, recursive=True))
    }
    assert kinds == {
        f"{base}/a": (pafs.FileType.Directory, None),
        f"{base}/a/b": (pafs.FileType.Directory, None),
        f"{base}/a/x.parquet": (pafs.FileType.File, 10),
        f"{base}/a/b/y.parquet": (pafs.FileType.File, 3),
        f"{base}/z.parquet": (pafs.FileType.File, 0),
    }
    shallow = filesystem.get_file_info(pafs.FileSelector(f"{base}/a"))
    assert sorted(i.path for i in shallow) == [f"{base}/a/b", f"{base}/a/x.parquet"]
    assert filesystem.get_file_info(f"{base}/a").type == pafs.FileType.Directory
    assert filesystem.get_file_info(f"{base}/gone").type == pafs.FileType.NotFound
    with pytest.raises(FileNotFoundError):
        filesystem.get_file_info(pafs.FileSelector(f"{base}/gone"))
    assert filesystem.get_file_info(pafs.FileSelector(f"{base}/gone", allow_not_found=True)) == []
    with filesystem.open_input_file(f"{base}/a/x.parquet") as handle:
        assert handle.size() == 10
        assert handle.read_at(4, 3) == b"3456"
        assert handle.read_at(100, 8) == b"89"
        handle.seek(7)
        assert handle.read() == b"789"
    with pytest.raises(CompanionSourceError, match="never written"):
        filesystem.open_output_stream(f"{base}/new")


def test_delta_storage_options_for_s3_by_reference_keys_and_storage_names() -> None:
    options = {
        "spark.indextables.aws.endpoint": "http://127.0.0.1:9000",
        "spark.indextables.aws.region": "eu-west-1",
        "spark.indextables.aws.accessKey": "AKIDEXAMPLE",
        "storage.secret_access_key": "s3cr3t-value",
        "storage.read_timeout": "2.5",
        "spark.indextables.search.mode": "local",  # not a storage option: left out
    }
    assert delta_storage_options("s3a://bucket/t", options) == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t-value",
        "AWS_ALLOW_HTTP": "true",
        "timeout": "2500ms",
    }


def test_delta_storage_options_for_azure_and_a_refused_connection_string() -> None:
    options = {
        "spark.indextables.azure.accountName": "acct",
        "spark.indextables.azure.accountKey": "a2V5LXZhbHVl",
        "spark.indextables.azure.endpoint": "https://acct.blob.example.net",
    }
    assert delta_storage_options("abfss://c@acct.dfs.core.windows.net/t", options) == {
        "AZURE_STORAGE_ACCOUNT_NAME": "acct",
        "AZURE_STORAGE_ACCOUNT_KEY": "a2V5LXZhbHVl",
        "AZURE_STORAGE_ENDPOINT": "https://acct.blob.example.net",
    }
    secret = "AccountKey=c2VjcmV0LWtleQ=="
    with pytest.raises(CompanionSourceError, match="connection string") as raised:
        delta_storage_options(
            "az://c/t", {"spark.indextables.azure.connectionString": f"AccountName=a;{secret}"}
        )
    assert "c2VjcmV0LWtleQ" not in str(raised.value)


def test_a_bad_storage_option_is_a_clear_redacted_error() -> None:
    with pytest.raises(CompanionSourceError, match="storage options of source") as raised:
        delta_storage_options("s3://b/t", {"spark.indextables.aws.secretKeyy": "hunter2-secret"})
    assert "hunter2-secret" not in str(raised.value)


def test_redaction_hides_credentials_by_name_in_either_spelling() -> None:
    text = "failed with AWS_SECRET_ACCESS_KEY=abc-123-secret and token tok-456-token"
    redacted = redact_source_error(
        text,
        {"AWS_SECRET_ACCESS_KEY": "abc-123-secret", "AWS_REGION": "eu-west-1"},
        {"spark.indextables.aws.sessionToken": "tok-456-token"},
    )
    assert "abc-123-secret" not in redacted
    assert "tok-456-token" not in redacted
    assert redacted.startswith("failed with")


def test_the_sources_own_keys_replace_the_index_credentials_and_keep_the_rest() -> None:
    index = {
        "storage.access_key_id": "INDEXKEY",
        "spark.indextables.aws.secretKey": "index-secret",
        "spark.indextables.aws.sessionToken": "index-token",
        "storage.profile": "index-profile",
        "storage.endpoint_url": "http://index:9000",
        "storage.path_style": "true",
        "storage.read_timeout": "3",
        "spark.indextables.search.mode": "local",
    }
    # Without source keys: the index's options, as they are.
    assert source_options(index) == index
    both = {
        **index,
        "spark.indextables.companion.parquet.aws.accessKey": "SOURCEKEY",
        "spark.indextables.companion.parquet.aws.secretKey": "source-secret",
        "spark.indextables.companion.parquet.aws.region": "eu-west-1",
    }
    assert source_options(both) == {
        "storage.endpoint_url": "http://index:9000",  # not given for the source: kept
        "storage.path_style": "true",
        "storage.read_timeout": "3",
        "spark.indextables.search.mode": "local",
        "storage.access_key_id": "SOURCEKEY",
        "storage.secret_access_key": "source-secret",
        "storage.region": "eu-west-1",
    }
    # The reference's explicit companion credentials, lower-cased as Spark gives them,
    # and deltalake's names derived from them (no index credential left over).
    lowered = {**index, "spark.indextables.companion.aws.accesskey": "SOURCEKEY",
               "spark.indextables.companion.aws.secretkey": "source-secret"}  # fmt: skip
    derived = delta_storage_options("s3://bucket/t", lowered)
    assert derived["AWS_ACCESS_KEY_ID"] == "SOURCEKEY"
    assert derived["AWS_SECRET_ACCESS_KEY"] == "source-secret"
    assert "AWS_SESSION_TOKEN" not in derived
    assert "AWS_PROFILE" not in derived
    azure = source_options(
        {"spark.indextables.azure.accountName": "indexacct",
         "spark.indextables.azure.accountKey": "aW5kZXg=",
         "spark.indextables.companion.parquet.azure.accountName": "srcacct",
         "spark.indextables.companion.parquet.azure.connectionString": "AccountKey=c3Jj"}
    )  # fmt: skip
    assert azure == {
        "storage.account_name": "srcacct",
        "storage.connection_string": "AccountKey=c3Jj",
    }


def test_a_bad_source_key_is_named_and_its_value_never_shown() -> None:
    with pytest.raises(CompanionSourceError, match=r"companion\.parquet\.aws\.secretKee"):
        source_options({"spark.indextables.companion.parquet.aws.secretKee": "hunter2-secret"})
    with pytest.raises(CompanionSourceError, match="different values") as raised:
        source_options(
            {"spark.indextables.companion.parquet.aws.secretKey": "one-secret-value",
             "spark.indextables.companion.aws.secretKey": "two-secret-value"}
        )  # fmt: skip
    assert "secret-value" not in str(raised.value)


def test_the_sources_keys_are_redacted_by_name_and_not_warned_about() -> None:
    from indextables.search.refkeys import ignored_reason
    from indextables.storage.redaction import redact_setting

    for key in (
        "spark.indextables.companion.parquet.aws.accessKey",
        "spark.indextables.companion.parquet.aws.secretKey",
        "spark.indextables.companion.aws.sessionToken",
        "spark.indextables.companion.parquet.azure.accountKey",
        "spark.indextables.companion.parquet.azure.connectionString",
    ):
        assert "hunter2" not in str(redact_setting(key, "hunter2-value")), key
        assert ignored_reason(key) is None, key
    assert ignored_reason("spark.indextables.companion.parquet.aws.endpoint") is None
