"""Companion indexes over Parquet directories and Delta tables, compared with the source.

The oracles read the source itself: DuckDB over the Parquet directory, and
delta-rs (``DeltaTable.to_pyarrow_table``) over the Delta table. Data is hostile:
nulls, NaN, -0.0, infinities, extreme integers, empty and unicode strings.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from indextables.search import build_companion, open_table, write_table
from indextables.search.companion.manifest import (
    MANIFEST_FILE,
    ParquetManifest,
    SegmentRowRange,
    manifest_from_bytes,
    manifest_to_bytes,
)
from indextables.search.companion.read import split_manifest
from indextables.search.companion.sync import CompanionSettings, build_companion_index
from indextables.search.errors import CompanionError, CompanionSourceError, StaleCompanionError
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.tableaccess import open_table_store
from indextables.search.write.merge import merge_table

WORDS = ["hello", "world", "timeout", "error", "zürich", "日本", "café", "ok"]
STRINGS = ["", "a", "A", "é", "z", "日本語", "a b", "  ", "x\ny", "\u0000", "🙂"]
FLOATS = [0.0, -0.0, 1.5, -1.5, math.nan, math.inf, -math.inf, 1e308, -1e-308, 5e-324]
INTS = [0, 1, -1, 2**63 - 1, -(2**63), 2**31, -(2**31) - 1]


def hostile(rng: random.Random, first_id: int, rows: int) -> pa.Table:
    """``rows`` hostile rows with ids from ``first_id``."""

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    base = datetime(2024, 1, 1, tzinfo=UTC)
    return pa.table(
        {
            "id": pa.array(range(first_id, first_id + rows), pa.int64()),
            "n": pa.array([maybe(rng.choice(INTS)) for _ in range(rows)], pa.int64()),
            "x": pa.array([maybe(rng.choice(FLOATS)) for _ in range(rows)], pa.float64()),
            "s": pa.array([maybe(rng.choice(STRINGS)) for _ in range(rows)], pa.string()),
            "msg": pa.array(
                [maybe(" ".join(rng.choices(WORDS, k=rng.randint(0, 4)))) for _ in range(rows)],
                pa.string(),
            ),
            "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(rows)], pa.bool_()),
            "ts": pa.array(
                [
                    maybe(base + timedelta(microseconds=rng.randint(-(10**12), 10**12)))
                    for _ in range(rows)
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "d": pa.array(
                [
                    maybe(date(1, 1, 1) + timedelta(days=rng.randint(0, 3_000_000)))
                    for _ in range(rows)
                ],
                pa.date32(),
            ),
        }
    )


def canonical(table: pa.Table | list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Rows as sortable tuples; floats by their exact bits (NaN equal to NaN, -0.0 not 0.0)."""
    rows = table.to_pylist() if isinstance(table, pa.Table) else table

    def value(v: Any) -> Any:
        if isinstance(v, float):
            return ("f", "nan" if math.isnan(v) else v.hex())
        if isinstance(v, datetime):
            return ("t", v.astimezone(UTC).isoformat())
        return (type(v).__name__, v)

    return sorted(tuple((k, value(r[k])) for k in sorted(r)) for r in rows)


def duck(con: Any, sql: str) -> pa.Table:
    """A DuckDB query's result as one Arrow table."""
    found = con.sql(sql).arrow()
    return found.read_all() if isinstance(found, pa.RecordBatchReader) else found


def write_parquet_dir(root: Path, parts: dict[str, list[pa.Table]]) -> None:
    for value, tables in parts.items():
        folder = root / f"p={value}"
        folder.mkdir(parents=True, exist_ok=True)
        for number, table in enumerate(tables):
            pq.write_table(table, folder / f"part-{number:03d}.parquet", row_group_size=7)


@pytest.fixture
def cache(tmp_path: Path) -> dict[str, str]:
    return {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}


# -- the manifest -------------------------------------------------------------------------


def test_manifest_round_trips_in_tantivy4java_field_names() -> None:
    import zstandard

    from indextables.search.companion.manifest import ParquetFileEntry

    manifest = ParquetManifest(
        fast_field_mode="hybrid",
        segment_row_ranges=(SegmentRowRange(0, 0, 5), SegmentRowRange(1, 5, 2)),
        parquet_files=(
            ParquetFileEntry("a/x.parquet", 100, 0, 3),
            ParquetFileEntry("b.parquet", 50, 3, 4),
        ),
        column_mapping=(),
        total_rows=7,
    )
    data = manifest_to_bytes(manifest)
    raw = json.loads(data)
    assert set(raw) >= {
        "version", "table_root", "fast_field_mode", "segment_row_ranges", "parquet_files",
        "column_mapping", "total_rows", "storage_config", "metadata",
    }  # fmt: skip
    assert raw["parquet_files"][1]["row_offset"] == 3
    assert manifest_from_bytes(data) == manifest
    # tantivy4java writes it zstd-compressed when smaller
    assert manifest_from_bytes(zstandard.ZstdCompressor().compress(data)) == manifest
    assert manifest.locate([0, 2, 3, 6]) == [(0, 0), (0, 2), (1, 0), (1, 3)]
    raw["total_rows"] = 8
    with pytest.raises(CompanionError, match="total_rows"):
        manifest_from_bytes(json.dumps(raw).encode())


# -- Parquet directories: differential ----------------------------------------------------


def test_parquet_companion_matches_duckdb_over_the_source(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    rng = random.Random(25)
    source = tmp_path / "src"
    write_parquet_dir(
        source,
        {
            "a": [hostile(rng, 0, 40), hostile(rng, 40, 25)],
            "b": [hostile(rng, 100, 30)],
            "é": [hostile(rng, 200, 9)],
        },
    )
    result = build_companion(
        str(source), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes={"msg": "text"}, target_input_size=10**9,
    )  # fmt: skip
    assert (result.status, result.parquet_files_indexed, result.splits_created) == (
        "success", 4, 3,
    )  # fmt: skip
    table = open_table(str(tmp_path / "idx"), options=cache)
    con = duckdb.connect()
    # DuckDB over the source's rows as pyarrow reads them (DuckDB's own Parquet scan prunes
    # row groups by min/max statistics that leave NaN out, and loses NaN rows for x > 0).
    rows = ds.dataset(source, format="parquet", partitioning="hive").to_table()
    con.register("source_rows", rows)
    src = "source_rows"
    # Every row, exactly.
    assert canonical(table.to_arrow()) == canonical(duck(con, f"select * from {src}"))
    wheres = [
        "x > 0",
        "x = 0",
        "n < 0 OR n IS NULL",
        "s = ''",
        "s = '日本語'",
        "flag AND p = 'a'",
        "d < DATE '1000-01-01'",
        "ts >= TIMESTAMP '2024-01-01 00:00:00Z'",
        "id BETWEEN 30 AND 110",
        "p = 'é'",
    ]
    for where in wheres:
        duck_where = where.replace(
            "TIMESTAMP '2024-01-01 00:00:00Z'", "TIMESTAMPTZ '2024-01-01 00:00:00Z'"
        )
        expected = duck(con, f"select id from {src} where {duck_where}")
        found = table.search(where=where, columns=["id"])
        assert canonical(found) == canonical(expected), where
        assert table.count(where=where) == expected.num_rows, where
    # Exact match on a string column, and full-text on the text column.
    expected = duck(con, f"select id from {src} where s = 'é'")
    assert canonical(table.search(fieldmatch={"s": "é"}, columns=["id"])) == canonical(expected)
    every = duck(con, f"select id, msg from {src}").to_pylist()
    for word in ("hello", "timeout", "zürich"):
        wanted = [{"id": r["id"]} for r in every if r["msg"] and word in r["msg"].split(" ")]
        found = table.search(f"msg:{word}", columns=["id"])
        assert canonical(found) == canonical(wanted), word
        assert table.count(f"msg:{word}") == len(wanted)
    # Projection and limit.
    assert table.search("msg:ok", columns=["p", "x"], limit=3).schema.names == ["p", "x"]
    assert table.search("msg:ok", limit=3).num_rows == 3


def test_an_unpartitioned_parquet_directory_indexes_every_column(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    """pyarrow's Hive discovery calls every column a partition column of a directory
    without key=value folders; only real folders are partitions."""
    source = tmp_path / "flat"
    source.mkdir()
    rows = hostile(random.Random(7), 0, 30)
    pq.write_table(rows.slice(0, 12), source / "one.parquet")
    pq.write_table(rows.slice(12), source / "two.parquet")
    result = build_companion(
        str(source), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes={"msg": "text"},
    )  # fmt: skip
    assert (result.status, result.parquet_files_indexed) == ("success", 2)
    table = open_table(str(tmp_path / "idx"), options=cache)
    assert canonical(table.to_arrow()) == canonical(rows)
    assert table.count(where="x > 0") == sum(
        1 for x in rows.column("x").to_pylist() if x is not None and (x > 0 or math.isnan(x))
    )


def test_companion_splits_store_nothing_and_embed_the_manifest(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    rng = random.Random(1)
    source = tmp_path / "src"
    write_parquet_dir(source, {"a": [hostile(rng, 0, 30), hostile(rng, 30, 5)]})
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    table = open_table(str(tmp_path / "idx"), options=cache)
    (split,) = table._view.splits
    add = split._file
    assert add.companion_source_files == ("p=a/part-000.parquet", "p=a/part-001.parquet")
    assert add.companion_fast_field_mode == "HYBRID"
    mapping = json.loads(split.doc_mapping_json)
    assert mapping
    assert not any(f["stored"] for f in mapping)
    store = open_table_store(str(tmp_path / "idx"), {})
    directory = SplitCache(str(tmp_path / "cache"), 10**9).fetch(
        store, str(tmp_path / "idx"), split.entry.ref
    )
    names = os.listdir(directory)
    assert MANIFEST_FILE in names
    assert "indextables-rows.arrow" not in names
    manifest = split_manifest(directory)
    assert [(f.relative_path, f.row_offset, f.num_rows) for f in manifest.parquet_files] == [
        ("p=a/part-000.parquet", 0, 30),
        ("p=a/part-001.parquet", 30, 5),
    ]
    assert sum(s.num_rows for s in manifest.segment_row_ranges) == 35
    assert [g.num_rows for g in manifest.parquet_files[0].row_groups] == [7, 7, 7, 7, 2]
    config = table._view.configuration
    assert config["indextables.companion.enabled"] == "true"
    assert config["indextables.companion.sourceTablePath"] == str(source)
    assert config["indextables.companion.sourceFormat"] == "parquet"


def test_a_changed_source_file_is_a_clear_staleness_error(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    rng = random.Random(2)
    source = tmp_path / "src"
    write_parquet_dir(source, {"a": [hostile(rng, 0, 20)]})
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    pq.write_table(hostile(rng, 0, 3), source / "p=a" / "part-000.parquet")
    table = open_table(str(tmp_path / "idx"), options=cache)
    with pytest.raises(StaleCompanionError, match=r"p=a/part-000\.parquet.*size") as caught:
        table.search(where="id >= 0")
    assert caught.value.file == "p=a/part-000.parquet"
    # A sync re-indexes the changed file (same path, new size) and reads work again.
    result = build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 1)
    assert sorted(
        open_table(str(tmp_path / "idx"), options=cache).to_arrow()["id"].to_pylist()
    ) == [0, 1, 2]


def test_the_table_root_read_option_moves_the_source(tmp_path: Path, cache: dict[str, str]) -> None:
    rng = random.Random(3)
    source = tmp_path / "src"
    write_parquet_dir(source, {"a": [hostile(rng, 0, 10)]})
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    moved = tmp_path / "replica"
    source.rename(moved)
    options = {**cache, "spark.indextables.companion.parquetTableRoot": str(moved)}
    assert open_table(str(tmp_path / "idx"), options=options).count(where="id >= 0") == 10
    with pytest.raises(StaleCompanionError, match="gone"):
        open_table(str(tmp_path / "idx"), options=cache).search(where="id >= 0")


def test_aggregates_merge_and_the_docs_example(tmp_path: Path, cache: dict[str, str]) -> None:
    rng = random.Random(8)
    source, index = tmp_path / "src", str(tmp_path / "idx")
    write_parquet_dir(source, {"a": [hostile(rng, 0, 30), hostile(rng, 30, 30)]})
    build_companion(str(source), index, source_format="parquet", target_input_size=1)
    table = open_table(index, options=cache)
    assert len(table.files) == 2  # one file per split
    # HYBRID: strings have no fast field; they aggregate from the Parquet rows.
    found = table.aggregate(group_by=["s"], metrics={"n": "count", "top": ("max", "n")})
    con = duckdb.connect()
    con.register("source_rows", ds.dataset(source, format="parquet").to_table())
    expected = duck(con, "select s, count(*) as n, max(n) as top from source_rows group by s")
    assert canonical(found) == canonical(expected)
    with pytest.raises(CompanionError, match="MERGE SPLITS"):
        merge_table(index, options=cache)
    text = (Path(__file__).resolve().parents[3] / "docs/companion.md").read_text()
    example = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    done = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0] == "success 2 2"


# -- Delta tables: sync ---------------------------------------------------------------------


def delta_rows(path: Path) -> pa.Table:
    return DeltaTable(str(path)).to_pyarrow_table()


def test_delta_sync_indexes_only_what_changed(tmp_path: Path, cache: dict[str, str]) -> None:
    rng = random.Random(4)
    source, index = tmp_path / "delta", tmp_path / "idx"

    def add(first: int, rows: int, part: str | None, mode: str = "append") -> None:
        data = hostile(rng, first, rows).append_column("p", pa.array([part] * rows, pa.string()))
        schema_mode = "overwrite" if mode == "overwrite" else None
        write_deltalake(str(source), data, partition_by=["p"], mode=mode, schema_mode=schema_mode)

    def sync() -> Any:
        return build_companion(
            str(source), str(index), source_format="delta", target_input_size=10**9
        )

    def check() -> None:
        found = open_table(str(index), options=cache)
        assert canonical(found.to_arrow()) == canonical(delta_rows(source))

    add(0, 30, "a")
    add(30, 20, "b")
    add(50, 5, None)
    add(60, 8, "a")
    first = sync()
    assert (first.status, first.parquet_files_indexed, first.source_version) == ("success", 4, 3)
    assert first.splits_created == 3  # one per partition value
    check()
    assert sync().status == "no_action"
    add(100, 7, "a")  # one appended file: only it is indexed
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 0)
    check()
    # A delete rewrites a file of partition a: the split holding it (with the file of ids
    # 60-67) goes, and its other file is indexed again with the rewritten one.
    DeltaTable(str(source)).delete("id < 10")
    result = sync()
    assert (result.splits_invalidated, result.parquet_files_indexed) == (1, 2)
    check()
    # A whole partition dropped: its split is removed, nothing is indexed.
    DeltaTable(str(source)).delete("p = 'b'")
    result = sync()
    assert (result.splits_invalidated, result.parquet_files_indexed) == (1, 0)
    check()
    # A column added to the source: old files read it as null, new ones have it.
    extra = (
        hostile(rng, 500, 4)
        .append_column("p", pa.array(["a"] * 4))
        .append_column("added", pa.array(["new", None, "", "ü"]))
    )
    write_deltalake(str(source), extra, partition_by=["p"], mode="append", schema_mode="merge")
    result = sync()
    assert result.parquet_files_indexed == 1
    check()
    assert open_table(str(index), options=cache).count(fieldmatch={"added": "ü"}) == 1
    # An overwrite replaces every file.
    add(1000, 12, "c", mode="overwrite")
    result = sync()
    assert result.parquet_files_indexed == 1
    check()
    assert open_table(str(index), options=cache).partition_columns == ("p",)


def test_delta_where_and_from_version(tmp_path: Path, cache: dict[str, str]) -> None:
    rng = random.Random(5)
    source, index = tmp_path / "delta", tmp_path / "idx"
    for number, part in enumerate(["a", "b", "a"]):
        data = hostile(rng, number * 100, 10).append_column("p", pa.array([part] * 10))
        write_deltalake(str(source), data, partition_by=["p"], mode="append")
    result = build_companion(
        str(source), str(index), source_format="delta", from_version=1, where="p = 'a'"
    )
    assert (result.source_version, result.parquet_files_indexed) == (1, 1)
    assert sorted(set(open_table(str(index), options=cache).to_arrow()["p"].to_pylist())) == ["a"]
    dry = build_companion(str(source), str(index), source_format="delta", dry_run=True)
    assert (dry.status, dry.parquet_files_indexed) == ("dry_run", 1)  # the stored WHERE applies


def test_a_killed_sync_resumes_without_loss_or_duplicates(
    tmp_path: Path, cache: dict[str, str]
) -> None:
    rng = random.Random(6)
    source, index = tmp_path / "src", tmp_path / "idx"
    write_parquet_dir(source, {v: [hostile(rng, i * 100, 10)] for i, v in enumerate("abcd")})
    # One split per commit; the process kills itself (SIGKILL) once two are committed.
    script = textwrap.dedent(
        f"""
        import os, signal
        from indextables.search.companion.sync import CompanionSettings, build_companion_index
        settings = CompanionSettings(
            source={str(source)!r}, source_format="parquet", batch_groups=1
        )
        def progress(done, total):
            if done == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        build_companion_index({str(index)!r}, settings, progress=progress)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], check=False)
    assert done.returncode == -signal.SIGKILL
    assert len(open_table(str(index), options=cache).files) == 2
    settings = CompanionSettings(source=str(source), source_format="parquet", batch_groups=1)
    result = build_companion_index(str(index), settings)
    assert (result.parquet_files_indexed, result.splits_created, result.splits_invalidated) == (
        2,
        2,
        0,
    )
    found = open_table(str(index), options=cache).to_arrow()
    assert sorted(found["id"].to_pylist()) == sorted(pq.read_table(source)["id"].to_pylist())


# -- settings ------------------------------------------------------------------------------


def test_bad_settings_name_the_clause(tmp_path: Path) -> None:
    rng = random.Random(7)
    source = tmp_path / "src"
    write_parquet_dir(source, {"a": [hostile(rng, 0, 3)]})
    index = str(tmp_path / "idx")

    def build(**kwargs: Any) -> Any:
        return build_companion(str(source), index, source_format="parquet", **kwargs)

    with pytest.raises(CompanionError, match="INCLUDE COLUMNS and EXCLUDE COLUMNS"):
        build(include_columns=["id"], exclude_columns=["s"])
    with pytest.raises(CompanionError, match="INCLUDE COLUMNS names nope"):
        build(include_columns=["nope"])
    with pytest.raises(CompanionError, match="exact_only"):
        build(indexing_modes={"s": "exact_only"})
    with pytest.raises(CompanionError, match="FASTFIELDS MODE"):
        build(fast_field_mode="FAST")
    with pytest.raises(CompanionSourceError, match="FROM VERSION"):
        build(from_version=1)
    with pytest.raises(CompanionSourceError, match="not a directory"):
        build_companion(str(tmp_path / "missing"), index, source_format="parquet")
    with pytest.raises(CompanionSourceError, match="Iceberg"):
        build_companion(str(source), index, source_format="iceberg")
    # INCLUDE COLUMNS: only those get fields; every column is still read back.
    build(include_columns=["msg"], indexing_modes={"msg": "text"})
    table = open_table(index)
    assert table.schema.names == ["id", "n", "x", "s", "msg", "flag", "ts", "d", "p"]
    assert table.to_arrow().num_rows == 3
    with pytest.raises(CompanionError, match="read-only"):
        write_table(index, pa.table({"id": [1]}))
    with pytest.raises(CompanionError, match="companion of parquet table"):
        build_companion(str(tmp_path / "other"), index, source_format="parquet")


# -- Iceberg tables (pyiceberg's SQL catalog on SQLite) ----------------------------------


def test_iceberg_companion_syncs_appends_and_overwrites(
    tmp_path: Path, cache: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyiceberg.catalog import load_catalog

    # The companion finds the catalog through pyiceberg's own configuration (here its
    # environment variables), read afresh at each sync.
    properties = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    for key, value in properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__LAKE__{key.upper()}", value)
    catalog = load_catalog("lake", **properties)
    catalog.create_namespace("web")
    rng = random.Random(9)
    first = hostile(rng, 0, 25)
    table = catalog.create_table("web.events", schema=first.schema)
    table.append(first)
    table.append(hostile(rng, 100, 10))
    index = str(tmp_path / "idx")

    def sync() -> Any:
        return build_companion("lake.web.events", index, source_format="iceberg")

    def check() -> None:
        expected = catalog.load_table("web.events").scan().to_arrow()
        found = open_table(index, options=cache).to_arrow()
        assert canonical(found) == canonical(expected.cast(found.schema))

    result = sync()
    assert (result.status, result.parquet_files_indexed) == ("success", 2)
    assert result.source_version == catalog.load_table("web.events").current_snapshot().snapshot_id
    check()
    # Spark's rule (NaN is above every number), not pyiceberg's row_filter (NaN > 0 false).
    xs = catalog.load_table("web.events").scan().to_arrow().column("x").to_pylist()
    assert open_table(index, options=cache).count(where="x > 0") == sum(
        1 for x in xs if x is not None and (x > 0 or math.isnan(x))
    )
    catalog.load_table("web.events").append(hostile(rng, 200, 5))
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 0)
    check()
    catalog.load_table("web.events").overwrite(hostile(rng, 300, 7))
    result = sync()
    assert (result.parquet_files_indexed, result.splits_invalidated) == (1, 2)  # both splits
    check()
    config = open_table(index, options=cache)._view.configuration
    assert config["indextables.companion.parquetStorageRoot"].endswith("web/events")


def test_a_source_repartitioned_is_refused(tmp_path: Path) -> None:
    source, index = str(tmp_path / "delta"), str(tmp_path / "idx")
    data = pa.table({"id": [1, 2], "p": ["a", "b"], "q": ["x", "y"]})
    write_deltalake(source, data, partition_by=["p"])
    build_companion(source, index, source_format="delta")
    write_deltalake(source, data, partition_by=["q"], mode="overwrite", schema_mode="overwrite")
    with pytest.raises(CompanionError, match=r"now partitioned by \['q'\]"):
        build_companion(source, index, source_format="delta")
