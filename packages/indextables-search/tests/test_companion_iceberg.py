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

    def data_files() -> set[str]:
        return {str(t.file.file_path) for t in catalog.load_table("web.events").scan().plan_files()}

    first = data_files()
    catalog.load_table("web.events").append(hostile(rng, 200, 9))
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 0)
    check()

    # A merge-on-read position delete in the appended file, which has a split of its own
    # (the first two files may share one): its delete file is read through the storage
    # options, and only that split is rebuilt.
    (appended,) = data_files() - first
    _commit_delete_file(catalog.load_table("web.events"), _position_deletes({appended: [1, 4]}))
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 1)
    check()
    # A delete (pyiceberg rewrites the files holding deleted rows), then an overwrite.
    catalog.load_table("web.events").delete(delete_filter="id < 20")
    result = sync()
    assert result.status == "success"
    assert result.splits_invalidated >= 1
    check()
    catalog.load_table("web.events").overwrite(hostile(rng, 300, 7))
    result = sync()
    assert result.parquet_files_indexed == 1
    check()
    assert open_table(index, options=options).count() == 7
    assert sync().status == "no_action"


# -- Iceberg delete files -----------------------------------------------------------------
#
# pyiceberg 0.12 deletes copy-on-write only (merge-on-read falls back with a warning), so
# a merge-on-read delete is committed here through pyiceberg's manifest writer and
# snapshot producer: a Parquet delete file, a delete manifest naming it, and a snapshot
# whose manifest list holds that manifest and the table's current ones. pyiceberg's
# own scan applies it: it is the oracle.


def _delete_manifest_writer() -> type:
    from pyiceberg.manifest import ManifestContent, ManifestWriterV2

    class DeleteManifestWriter(ManifestWriterV2):  # type: ignore[misc]
        def content(self) -> Any:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    return DeleteManifestWriter


def _commit_delete_file(
    table: Any, rows: pa.Table, *, equality_ids: list[int] | None = None
) -> str:
    """Write ``rows`` as a delete file of ``table`` and commit it in a new snapshot:
    position deletes (``file_path``, ``pos``), or equality deletes on ``equality_ids``."""
    import io
    import uuid

    import pyarrow.parquet as pq
    from pyiceberg.manifest import (
        DataFile,
        DataFileContent,
        FileFormat,
        ManifestEntry,
        ManifestEntryStatus,
    )
    from pyiceberg.typedef import Record

    path = f"{table.location()}/data/deletes-{uuid.uuid4().hex}.parquet"
    sink = io.BytesIO()
    pq.write_table(rows, sink)
    payload = sink.getvalue()
    with table.io.new_output(path).create(overwrite=True) as handle:
        handle.write(payload)
    content = (
        DataFileContent.POSITION_DELETES
        if equality_ids is None
        else DataFileContent.EQUALITY_DELETES
    )
    delete_file = DataFile.from_args(
        content=content, file_path=path, file_format=FileFormat.PARQUET, partition=Record(),
        record_count=rows.num_rows, file_size_in_bytes=len(payload), equality_ids=equality_ids,
    )  # fmt: skip
    delete_file.spec_id = 0
    writer_type = _delete_manifest_writer()
    with table.transaction() as transaction:
        producer = transaction.update_snapshot().fast_append()
        current = producer._manifests

        def manifests() -> list[Any]:
            metadata = transaction.table_metadata
            writer = writer_type(
                metadata.spec(), metadata.schema(), producer.new_manifest_output(),
                producer.snapshot_id, producer._compression,
            )  # fmt: skip
            with writer:
                entry = ManifestEntry.from_args(
                    status=ManifestEntryStatus.ADDED,
                    snapshot_id=producer.snapshot_id,
                    data_file=delete_file,
                )
                writer.add(entry)
            return [writer.to_manifest_file(), *current()]

        producer._manifests = manifests
        producer.commit()
    return path


def _position_deletes(deletes: dict[str, list[int]]) -> pa.Table:
    pairs = sorted((path, pos) for path, positions in deletes.items() for pos in positions)
    return pa.table(
        {
            "file_path": pa.array([p for p, _ in pairs], pa.string()),
            "pos": pa.array([q for _, q in pairs], pa.int64()),
        }
    )


def _local_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Any:
    from pyiceberg.catalog import load_catalog

    properties = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    for key, value in properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__{name.upper()}__{key.upper()}", value)
    return load_catalog(name, **properties)


def test_iceberg_position_deletes_are_masked_and_resynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Differential: after each merge-on-read position delete, append and copy-on-write
    delete, the companion's rows, hits and counts equal pyiceberg's scan."""
    catalog = _local_catalog(tmp_path, monkeypatch, "dellake")
    catalog.create_namespace("web")
    rng = random.Random(2725)
    table = catalog.create_table("web.events", schema=hostile(rng, 0, 1).schema)
    for first in (0, 100, 200):
        table.append(hostile(rng, first, 30))
    index = str(tmp_path / "idx")
    options = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}

    def sync() -> Any:
        return build_companion(
            "dellake.web.events", index, source_format="iceberg",
            indexing_modes={"msg": "text"}, target_input_size=1, options=options,
        )  # fmt: skip

    def check() -> None:
        source = catalog.load_table("web.events")
        expected = source.scan().to_arrow()
        companion = open_table(index, options=options)
        found = companion.to_arrow()
        assert canonical(found) == canonical(expected.cast(found.schema))
        assert companion.count() == expected.num_rows
        for word in ("timeout", "zürich", "日本"):
            hits = companion.search(f"msg:{word}", columns=["id"]).column("id").to_pylist()
            want = [r["id"] for r in expected.to_pylist() if r["msg"] and word in r["msg"].split()]
            assert sorted(hits) == sorted(want), word
        # Spark's order: NaN is above every number (pyiceberg's filter says NaN > 0 is false).
        positive = [x for x in expected.column("x").to_pylist() if x is not None]
        assert companion.count(where="x > 0") == sum(1 for x in positive if x != x or x > 0)

    def data_files() -> list[str]:
        tasks = catalog.load_table("web.events").scan().plan_files()
        return sorted(str(t.file.file_path) for t in tasks)

    assert sync().parquet_files_indexed == 3
    check()
    files = data_files()
    # Deletes in one file (its first, a middle and its last row) and in another.
    _commit_delete_file(
        catalog.load_table("web.events"), _position_deletes({files[0]: [0, 7, 29], files[1]: [3]})
    )
    result = sync()
    assert (result.status, result.parquet_files_indexed, result.splits_invalidated) == (
        "success", 2, 2,
    )  # fmt: skip
    check()
    # More rows deleted from a file that already had deletes: re-indexed again.
    _commit_delete_file(catalog.load_table("web.events"), _position_deletes({files[0]: [1, 2]}))
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 1)
    check()
    # Unchanged deletes: nothing to do; an append: that file alone.
    assert sync().status == "no_action"
    catalog.load_table("web.events").append(hostile(rng, 300, 11))
    assert sync().parquet_files_indexed == 1
    check()
    # A copy-on-write delete over files with merge-on-read deletes.
    catalog.load_table("web.events").delete(delete_filter="id >= 100 AND id < 110")
    assert sync().status == "success"
    check()


def test_iceberg_equality_deletes_are_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.errors import CompanionSourceError

    catalog = _local_catalog(tmp_path, monkeypatch, "eqlake")
    catalog.create_namespace("web")
    table = catalog.create_table("web.events", schema=pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    index = str(tmp_path / "idx")
    assert build_companion("eqlake.web.events", index, source_format="iceberg").status == "success"
    path = _commit_delete_file(
        catalog.load_table("web.events"),
        pa.table({"id": pa.array([2], pa.int64())}),
        equality_ids=[1],
    )
    with pytest.raises(CompanionSourceError, match="equality delete") as raised:
        build_companion("eqlake.web.events", index, source_format="iceberg")
    assert path in str(raised.value)


def _task(path: str, *deletes: Any) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(file=SimpleNamespace(file_path=path), delete_files=list(deletes))


def _delete(path: str, *, content: Any = None, file_format: Any = None) -> Any:
    from types import SimpleNamespace

    from pyiceberg.manifest import DataFileContent, FileFormat

    return SimpleNamespace(
        file_path=path,
        content=content or DataFileContent.POSITION_DELETES,
        file_format=file_format or FileFormat.PARQUET,
    )


def test_position_deletions_group_each_delete_file_once_by_data_file() -> None:
    from pyiceberg.manifest import DataFileContent, FileFormat

    from indextables.search.companion.icebergdeletes import position_deletions
    from indextables.search.errors import CompanionSourceError

    files = {
        "d1": pa.table(
            {"file_path": ["a", "b", "a", "a", None], "pos": pa.array([5, 0, 2, 5, 9], pa.int64())}
        ),
        "d2": pa.table({"file_path": ["a", "c"], "pos": pa.array([None, 1], pa.int64())}),
        "bad": pa.table({"path": ["a"]}),
    }
    reads: list[str] = []

    def read(path: str, columns: list[str]) -> pa.Table:
        reads.append(path)
        return files[path]

    found = position_deletions(
        [
            _task("a", _delete("d1"), _delete("d2")),
            _task("b", _delete("d1")),
            _task("e", _delete("d2")),
        ],
        read,
    )
    assert {k: list(v.rows) for k, v in found.items()} == {"a": [2, 5], "b": [0]}
    assert reads == ["d1", "d2"]
    with pytest.raises(CompanionSourceError, match="'bad' has no file_path/pos"):
        position_deletions([_task("a", _delete("bad"))], read)
    with pytest.raises(CompanionSourceError, match=r"'d\.puffin' is in .*PUFFIN"):
        position_deletions([_task("a", _delete("d.puffin", file_format=FileFormat.PUFFIN))], read)
    with pytest.raises(CompanionSourceError, match=r"equality delete file.*'eq'"):
        position_deletions(
            [_task("a", _delete("eq", content=DataFileContent.EQUALITY_DELETES))], read
        )
