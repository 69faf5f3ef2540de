"""Iceberg companion sources beyond a local warehouse: an ``s3://`` warehouse on an
S3-compatible server (moto), and Iceberg delete files.

The catalog is pyiceberg's SQL catalog on SQLite, found through pyiceberg's own
configuration (environment variables); the data files are read through the
index's storage options. The oracle is pyiceberg's own scan of the table.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_companion import canonical, hostile

from indextables.search import build_companion, open_table
from indextables.storage.testing import moto_server
from indextables.storage.testing.s3servers import S3ServerInfo


@pytest.fixture(scope="module")
def s3() -> Iterator[S3ServerInfo]:
    with moto_server() as server:
        yield server


def _s3_catalog(
    server: S3ServerInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> tuple[Any, str]:
    """A SQL catalog whose warehouse is a fresh bucket on ``server``; configured for the
    companion by pyiceberg's environment variables."""
    from pyiceberg.catalog import load_catalog

    bucket = server.create_bucket()
    properties = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"s3://{bucket}/warehouse",
        "s3.endpoint": server.endpoint_url,
        "s3.region": server.region,
        "s3.access-key-id": server.access_key,
        "s3.secret-access-key": server.secret_key,
    }
    for key, value in properties.items():
        variable = key.upper().replace(".", "__").replace("-", "_")
        monkeypatch.setenv(f"PYICEBERG_CATALOG__{name.upper()}__{variable}", value)
    return load_catalog(name, **properties), bucket


@pytest.mark.s3
@pytest.mark.integration
def test_iceberg_companion_on_s3_builds_searches_reads_and_syncs(
    s3: S3ServerInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, bucket = _s3_catalog(s3, tmp_path, monkeypatch, "s3lake")
    options = {f"storage.{k}": str(v) for k, v in s3.store_options().items()}
    options["spark.indextables.cache.directoryPath"] = str(tmp_path / "cache")
    catalog.create_namespace("web")
    rng = random.Random(27)
    table = catalog.create_table("web.events", schema=hostile(rng, 0, 1).schema)
    table.append(hostile(rng, 0, 40))
    table.append(hostile(rng, 100, 15))
    index = f"s3://{bucket}/events_index"

    def sync() -> Any:
        return build_companion(
            "s3lake.web.events", index, source_format="iceberg",
            indexing_modes={"msg": "text"}, options=options,
        )  # fmt: skip

    def check() -> None:
        source = catalog.load_table("web.events")
        expected = source.scan().to_arrow()
        found = open_table(index, options=options).to_arrow()
        assert found.num_rows == expected.num_rows
        assert canonical(found) == canonical(expected.cast(found.schema))
        hits = open_table(index, options=options).search("msg:timeout", columns=["id"])
        want = source.scan(row_filter="msg IS NOT NULL").to_arrow()
        assert sorted(hits.column("id").to_pylist()) == sorted(
            row["id"] for row in want.to_pylist() if "timeout" in row["msg"].split()
        )

    result = sync()
    assert (result.status, result.parquet_files_indexed) == ("success", 2)
    assert result.source_version == catalog.load_table("web.events").current_snapshot().snapshot_id
    config = open_table(index, options=options)._view.configuration
    assert config["indextables.companion.parquetStorageRoot"].startswith(f"s3://{bucket}/")
    check()

    catalog.load_table("web.events").append(hostile(rng, 200, 9))
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 0)
    check()

    # A delete (pyiceberg rewrites the files holding deleted rows), then an overwrite.
    catalog.load_table("web.events").delete(delete_filter="id < 20")
    result = sync()
    assert result.status == "success" and result.splits_invalidated >= 1
    check()
    catalog.load_table("web.events").overwrite(hostile(rng, 300, 7))
    result = sync()
    assert result.parquet_files_indexed == 1
    check()
    assert open_table(index, options=options).count() == 7
    assert sync().status == "no_action"
