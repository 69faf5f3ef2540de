"""Companion indexes whose source sits on an S3-compatible server (SeaweedFS: SigV4
signatures checked, conditional writes as S3 has them), reached only through the
table's storage options (endpoint and credentials): no environment variable, no mock
of the client.

The oracle is the source itself, read with pyarrow from the same bytes.
"""

from __future__ import annotations

import io
import math
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indextables.search import build_companion, open_table
from indextables.search.companion import parallel
from indextables.search.companion.parallel import PARALLELISM_OPTION
from indextables.search.companion.sources import source_signature
from indextables.search.errors import CompanionSourceError, StaleCompanionError
from indextables.storage.testing import seaweedfs_server
from indextables.storage.testing.s3servers import S3ServerInfo

pytestmark = [pytest.mark.s3, pytest.mark.integration]

MESSAGES = ["disk full", "disk ok", "timeout", "", "zürich café", "日本 disk", None, "ok"]
FLOATS = [0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, None, 1e308]


@pytest.fixture(scope="module")
def s3() -> Iterator[S3ServerInfo]:
    with seaweedfs_server() as server:
        yield server


def _options(server: S3ServerInfo) -> dict[str, str]:
    """The storage options, as a user passes them to the engine (``storage.<name>``)."""
    return {f"storage.{k}": str(v) for k, v in server.store_options().items()}


def _reference_options(server: S3ServerInfo) -> dict[str, str]:
    """The same, by the reference's ``spark.indextables.aws.*`` keys."""
    return {
        "spark.indextables.aws.endpoint": server.endpoint_url,
        "spark.indextables.aws.region": server.region,
        "spark.indextables.aws.accessKey": server.access_key,
        "spark.indextables.aws.secretKey": server.secret_key,
        "spark.indextables.aws.pathStyleAccess": "true",
    }


def _rows(first: int, count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + count), pa.int64()),
            "message": pa.array(
                [MESSAGES[i % len(MESSAGES)] for i in range(first, first + count)], pa.string()
            ),
            "score": pa.array(
                [FLOATS[i % len(FLOATS)] for i in range(first, first + count)], pa.float64()
            ),
        }
    )


def _put_parquet(
    server: S3ServerInfo, bucket: str, key: str, table: pa.Table, *, page_index: bool = True
) -> None:
    """Upload ``table`` as Parquet; with an offset index, hits are read page by page,
    without one by row groups (both paths read ranges through the store)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, write_page_index=page_index, data_page_size=256)
    server.open_store(bucket).put(key, sink.getvalue())


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def key(row: dict[str, Any]) -> Any:
        return row["id"]

    return sorted(rows, key=key)


def _same(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    """Equal rows; NaN equal to NaN, -0.0 told apart from 0.0."""
    assert len(actual) == len(expected)
    for got, want in zip(_sorted(actual), _sorted(expected), strict=True):
        assert got.keys() == want.keys()
        for name, value in want.items():
            if isinstance(value, float):
                assert isinstance(got[name], float)
                assert (math.isnan(value) and math.isnan(got[name])) or (
                    got[name] == value and math.copysign(1, got[name]) == math.copysign(1, value)
                ), (name, got, want)
            else:
                assert got[name] == value, (name, got, want)


def _expected(tables: list[tuple[str, pa.Table]], word: str | None) -> list[dict[str, Any]]:
    rows = []
    for day, table in tables:
        for row in table.to_pylist():
            message = row["message"]
            if word is None or (message is not None and word in message.split()):
                rows.append({**row, "day": day})
    return rows


def test_parquet_companion_on_s3_builds_searches_and_syncs(
    s3: S3ServerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = s3.create_bucket()
    # Two groups (one per day) built by two worker processes: the options reach them.
    monkeypatch.setattr(parallel, "LOCAL_BUILDS", 0)  # small groups would run as threads
    options = {**_options(s3), PARALLELISM_OPTION: "2"}
    first = [("2024-01-01", _rows(0, 40)), ("2024-01-02", _rows(40, 33))]
    for day, table in first:
        _put_parquet(s3, bucket, f"logs/day={day}/part-0.parquet", table)
    source, index = f"s3://{bucket}/logs", f"s3://{bucket}/logs_index"

    result = build_companion(
        source, index, source_format="parquet", indexing_modes={"message": "text"},
        options=options,
    )  # fmt: skip
    assert (result.status, result.parquet_files_indexed) == ("success", 2)
    table = open_table(index, options=options)
    columns = ["id", "message", "score", "day"]
    _same(table.search("message:disk", columns=columns).to_pylist(), _expected(first, "disk"))
    _same(table.to_arrow(columns=columns).to_pylist(), _expected(first, None))
    assert table.count(where="day = '2024-01-02'") == 33

    # A file appended to the source: the sync indexes that file alone (and the
    # streaming sync's cheap signature of the source sees the change).
    before = source_signature(source, "parquet", options=options)
    appended = ("2024-01-02", _rows(73, 25))
    _put_parquet(s3, bucket, "logs/day=2024-01-02/part-1.parquet", appended[1], page_index=False)
    assert source_signature(source, "parquet", options=options) != before
    again = build_companion(source, index, source_format="parquet", options=options)
    assert (again.status, again.parquet_files_indexed) == ("success", 1)
    both = [*first, appended]
    table = open_table(index, options=options)
    _same(table.search("message:disk", columns=columns).to_pylist(), _expected(both, "disk"))
    assert table.count() == 98
    nothing = build_companion(source, index, source_format="parquet", options=options)
    assert nothing.status == "no_action"


def test_a_gone_source_file_on_s3_is_named_and_no_secret_is_shown(s3: S3ServerInfo) -> None:
    bucket = s3.create_bucket()
    options = _options(s3)
    for number in range(2):
        _put_parquet(s3, bucket, f"src/part-{number}.parquet", _rows(number * 10, 10))
    source, index = f"s3://{bucket}/src", f"s3://{bucket}/src_index"
    build_companion(
        source, index, source_format="parquet", indexing_modes={"message": "text"},
        target_input_size=1, options=options,
    )  # fmt: skip
    s3.open_store(bucket).delete("src/part-1.parquet")
    with pytest.raises(StaleCompanionError) as raised:
        open_table(index, options=options).search("message:disk", columns=["id"]).to_pylist()
    text = "".join(traceback.format_exception(raised.value))
    assert "part-1.parquet" in str(raised.value)
    assert s3.secret_key not in text
    assert s3.secret_key not in repr(raised.value)


def test_delta_companion_on_s3_builds_searches_and_syncs(s3: S3ServerInfo) -> None:
    from deltalake import write_deltalake

    bucket = s3.create_bucket()
    options = _reference_options(s3)
    source, index = f"s3://{bucket}/events", f"s3://{bucket}/events_index"
    delta_options = {
        "AWS_ENDPOINT_URL": s3.endpoint_url,
        "AWS_ACCESS_KEY_ID": s3.access_key,
        "AWS_SECRET_ACCESS_KEY": s3.secret_key,
        "AWS_REGION": s3.region,
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }
    first = _rows(0, 30)
    write_deltalake(source, first, storage_options=delta_options)
    result = build_companion(
        source, index, source_format="delta", indexing_modes={"message": "text"},
        options=options,
    )  # fmt: skip
    assert (result.status, result.source_version, result.parquet_files_indexed) == (
        "success", 0, 1,
    )  # fmt: skip
    columns = ["id", "message", "score"]
    table = open_table(index, options=options)
    expected = [
        {k: v for k, v in r.items() if k != "day"} for r in _expected([("", first)], "disk")
    ]
    _same(table.search("message:disk", columns=columns).to_pylist(), expected)

    assert source_signature(source, "delta", options=options) == "delta:version=0"
    second = _rows(30, 20)
    write_deltalake(source, second, mode="append", storage_options=delta_options)
    assert source_signature(source, "delta", options=options) == "delta:version=1"
    again = build_companion(source, index, source_format="delta", options=options)
    assert (again.status, again.source_version, again.parquet_files_indexed) == ("success", 1, 1)
    both = [("", first), ("", second)]
    expected = [{k: v for k, v in r.items() if k != "day"} for r in _expected(both, "disk")]
    table = open_table(index, options=options)
    _same(table.search("message:disk", columns=columns).to_pylist(), expected)
    assert table.count() == 50


def test_a_missing_delta_table_on_s3_is_a_clear_error_without_the_secret(
    s3: S3ServerInfo,
) -> None:
    bucket = s3.create_bucket()
    with pytest.raises(CompanionSourceError) as raised:
        build_companion(
            f"s3://{bucket}/nothing", f"s3://{bucket}/nothing_index", source_format="delta",
            options=_reference_options(s3),
        )  # fmt: skip
    assert "nothing" in str(raised.value)
    assert s3.secret_key not in "".join(traceback.format_exception(raised.value))


def test_a_source_on_a_sigv4_server_needs_the_right_secret(tmp_path: Path) -> None:
    """SeaweedFS checks signatures: the source is read with the options' credentials,
    and a wrong secret is refused without being shown."""
    with seaweedfs_server() as server:
        bucket = server.create_bucket()
        _put_parquet(server, bucket, "src/part-0.parquet", _rows(0, 30))
        source, index = f"s3://{bucket}/src", f"s3://{bucket}/src_index"
        options = _options(server)
        result = build_companion(
            source, index, source_format="parquet", indexing_modes={"message": "text"},
            options=options,
        )  # fmt: skip
        assert result.parquet_files_indexed == 1
        hits = open_table(index, options=options).search("message:timeout", columns=["id"])
        assert sorted(hits.column("id").to_pylist()) == [
            i for i in range(30) if MESSAGES[i % len(MESSAGES)] == "timeout"
        ]
        wrong = "wrong-secret-" + server.secret_key[::-1]
        bad = {**options, "storage.secret_access_key": wrong, "storage.max_attempts": "1"}
        # The index on local disk, the source on S3 with a wrong secret: refused.
        local_index = str(tmp_path / "index")
        with pytest.raises(CompanionSourceError) as raised:
            build_companion(source, local_index, source_format="parquet", options=bad)
        assert source in str(raised.value)
        text = "".join(traceback.format_exception(raised.value))
        assert wrong not in text
        assert server.secret_key not in text


def _source_keys(server: S3ServerInfo, *, secret: str | None = None) -> dict[str, str]:
    """The reference's keys for a source in another account than its index."""
    prefix = "spark.indextables.companion.parquet.aws."
    return {
        prefix + "endpoint": server.endpoint_url,
        prefix + "region": server.region,
        prefix + "accessKey": server.access_key,
        prefix + "secretKey": secret or server.secret_key,
    }


def test_a_source_with_its_own_credentials_on_another_sigv4_server(tmp_path: Path) -> None:
    """The index on one SeaweedFS, the source on another with other credentials (both
    check SigV4 signatures): with the companion.parquet.aws.* keys the source is built,
    searched and synced; without them, or with a wrong source secret, it is refused and
    no secret is shown."""
    with seaweedfs_server() as index_server, seaweedfs_server() as source_server:
        assert index_server.secret_key != source_server.secret_key
        index_bucket, source_bucket = index_server.create_bucket(), source_server.create_bucket()
        first = [("2024-01-01", _rows(0, 30))]
        _put_parquet(source_server, source_bucket, "src/day=2024-01-01/part-0.parquet", first[0][1])
        source, index = f"s3://{source_bucket}/src", f"s3://{index_bucket}/src_index"
        index_only = _options(index_server)
        options = {**index_only, **_source_keys(source_server)}

        result = build_companion(
            source, index, source_format="parquet", indexing_modes={"message": "text"},
            options=options,
        )  # fmt: skip
        assert (result.status, result.parquet_files_indexed) == ("success", 1)
        assert index_server.open_store(index_bucket).list("src_index/_transaction_log/")
        columns = ["id", "message", "score", "day"]
        table = open_table(index, options=options)
        _same(table.search("message:disk", columns=columns).to_pylist(), _expected(first, "disk"))
        _same(table.to_arrow(columns=columns).to_pylist(), _expected(first, None))

        appended = ("2024-01-02", _rows(30, 12))
        _put_parquet(source_server, source_bucket, "src/day=2024-01-02/part-0.parquet", appended[1])
        again = build_companion(source, index, source_format="parquet", options=options)
        assert (again.status, again.parquet_files_indexed) == ("success", 1)
        both = [*first, appended]
        table = open_table(index, options=options)
        _same(table.search("message:disk", columns=columns).to_pylist(), _expected(both, "disk"))
        assert table.count() == 42

        secrets = (index_server.secret_key, source_server.secret_key)
        # Without the source's keys, its files are looked for with the index's.
        with pytest.raises(CompanionSourceError) as raised:
            build_companion(
                source, f"s3://{index_bucket}/other_index", source_format="parquet",
                options={**index_only, "storage.max_attempts": "1"},
            )  # fmt: skip
        assert source in str(raised.value)
        with pytest.raises(CompanionSourceError):
            open_table(index, options=index_only).search("message:disk", columns=columns)
        # A wrong source secret: the source server refuses the signature.
        wrong = "wrong-secret-" + source_server.secret_key[::-1]
        bad = {**index_only, **_source_keys(source_server, secret=wrong),
               "storage.max_attempts": "1"}  # fmt: skip
        with pytest.raises(CompanionSourceError) as raised:
            build_companion(source, str(tmp_path / "index"), source_format="parquet", options=bad)
        text = "".join(traceback.format_exception(raised.value)) + repr(raised.value)
        assert source in text
        for secret in (*secrets, wrong):
            assert secret not in text


@pytest.mark.azure
def test_companion_sources_on_azurite_parquet_and_delta(tmp_path: Path) -> None:
    """The same on Azure Blob (Azurite): the account, key and endpoint only as options."""
    from deltalake import write_deltalake

    from indextables.storage.testing.azurite import azurite_server

    with azurite_server() as server:
        container = server.create_container()
        uri, store_options = server.store_args(container)
        options = {f"storage.{k}": str(v) for k, v in store_options.items()}
        sink = io.BytesIO()
        pq.write_table(_rows(0, 40), sink, write_page_index=True, data_page_size=256)
        server.open_store(container).put("logs/day=2024-01-01/part-0.parquet", sink.getvalue())
        source, index = f"{uri}/logs", f"{uri}/logs_index"
        result = build_companion(
            source, index, source_format="parquet", indexing_modes={"message": "text"},
            options=options,
        )  # fmt: skip
        assert (result.status, result.parquet_files_indexed) == ("success", 1)
        columns = ["id", "message", "score", "day"]
        found = open_table(index, options=options).search("message:disk", columns=columns)
        _same(found.to_pylist(), _expected([("2024-01-01", _rows(0, 40))], "disk"))

        delta = f"{uri}/events"
        write_deltalake(
            delta, _rows(0, 25),
            storage_options={
                "AZURE_STORAGE_ACCOUNT_NAME": server.account_name,
                "AZURE_STORAGE_ACCOUNT_KEY": server.account_key,
                "AZURE_STORAGE_ENDPOINT": server.endpoint_url,
                "AZURE_ALLOW_HTTP": "true",
            },
        )  # fmt: skip
        local_index = str(tmp_path / "events_index")
        built = build_companion(
            delta, local_index, source_format="delta", indexing_modes={"message": "text"},
            options=options,
        )  # fmt: skip
        assert (built.status, built.source_version, built.parquet_files_indexed) == (
            "success", 0, 1,
        )  # fmt: skip
        expected = [
            {k: v for k, v in r.items() if k != "day"}
            for r in _expected([("", _rows(0, 25))], "disk")
        ]
        found = open_table(local_index, options=options).search(
            "message:disk", columns=["id", "message", "score"]
        )
        _same(found.to_pylist(), expected)
