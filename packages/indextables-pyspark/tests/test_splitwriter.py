"""Writing splits: rows in, one split per partition value, stats, and the same rows back out."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.options import parse_indexing
from indextables.search.query.filters import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.query.tantivyquery import fully_indexed_columns
from indextables.search.read.splitreader import SplitEntry, read_split
from indextables.search.schema.mapping import field_specs
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.search.write.splitwriter import SplitWriter
from indextables.storage import LocalStore

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("day", StringType()),
        StructField("level", StringType()),
        StructField("message", StringType()),
        StructField("latency", DoubleType()),
        StructField("ts", TimestampType()),
        StructField("d", DateType()),
    ]
)
OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "day": f"2024-01-0{1 + i % 2}",
            "level": "ERROR" if i % 10 == 0 else "INFO",
            "message": f"request {i} took long" if i % 7 == 0 else f"request {i} ok",
            "latency": i / 4,
            "ts": datetime(2024, 1, 1, 0, 0, i % 60, 250000, tzinfo=UTC),
            "d": date(2024, 1, 1 + i % 28),
        }
        for i in range(n)
    ]


@pytest.fixture
def written(tmp_path: Path) -> tuple[LocalStore, list[Any]]:
    store = LocalStore(str(tmp_path / "table"))
    specs = field_specs(arrow_schema(SCHEMA), parse_indexing(OPTIONS), partition_columns=("day",))
    writer = SplitWriter(store, specs, ("day",), heap_size=20 << 20, batch_size=7)
    batch = pa.RecordBatch.from_pylist(_rows(100), schema=arrow_schema(SCHEMA))
    writer.write([batch])
    return store, writer.finish()


def _read(
    store: LocalStore, adds: list[Any], tmp_path: Path, **kwargs: Any
) -> list[dict[str, Any]]:
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    rows: list[dict[str, Any]] = []
    for add in adds:
        ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
        tags = tuple(add.split_tags or ())
        entry = SplitEntry(ref, add.partition_values, add.doc_mapping_json, tags)
        directory = cache.fetch(store, store.uri, ref)
        for batch in read_split(directory, entry, arrow_schema(SCHEMA), **kwargs):
            rows += batch.to_pylist()
    return sorted(rows, key=lambda r: r["id"])


def test_one_split_per_partition_with_stats(written: tuple[LocalStore, list[Any]]) -> None:
    _, adds = written
    by_day = {a.partition_values["day"]: a for a in adds}
    assert sorted(by_day) == ["2024-01-01", "2024-01-02"]
    first = by_day["2024-01-01"]
    assert first.path.startswith("day=2024-01-01/part-")
    assert first.path.endswith(".split")
    assert first.num_records == 50
    assert (first.min_values["id"], first.max_values["id"]) == ("0", "98")
    assert first.max_values["latency"] == "24.5"
    assert first.min_values["latency"] == "0"
    assert "day" not in first.min_values
    assert first.footer_end_offset == first.size
    # Every value of the exact string column is in the term dictionary (prefix pushdown).
    assert fully_indexed_columns(first.split_tags) == {"level"}


def test_round_trip_returns_every_row(
    written: tuple[LocalStore, list[Any]], tmp_path: Path
) -> None:
    store, adds = written
    rows = _read(store, adds, tmp_path, search=SearchSpec(), conditions=())
    assert rows == _rows(100)


@pytest.mark.parametrize(
    ("search", "conditions", "keep"),
    [
        (SearchSpec(query="message:long"), (), lambda r: r["id"] % 7 == 0),
        (SearchSpec(text_search={"message": "took AND long"}), (), lambda r: r["id"] % 7 == 0),
        (SearchSpec(field_match={"level": "ERROR"}), (), lambda r: r["level"] == "ERROR"),
        (SearchSpec(), (Condition("in", "level", ("ERROR",)),), lambda r: r["level"] == "ERROR"),
        (SearchSpec(), (Condition("prefix", "level", ("ERR",)),), lambda r: r["level"] == "ERROR"),
        (SearchSpec(), (Condition("<", "latency", (2.0,)),), lambda r: r["latency"] < 2),
        (
            SearchSpec(),
            (Condition("=", "level", ("INFO",)), Condition(">", "id", (90,))),
            lambda r: r["level"] == "INFO" and r["id"] > 90,
        ),
    ],
)
def test_search_and_conditions_are_exact_on_our_splits(
    written: tuple[LocalStore, list[Any]],
    tmp_path: Path,
    search: SearchSpec,
    conditions: Any,
    keep: Any,
) -> None:
    store, adds = written
    rows = _read(store, adds, tmp_path, search=search, conditions=conditions)
    assert rows == [r for r in _rows(100) if keep(r)]


def test_open_indexes_are_bounded(tmp_path: Path) -> None:
    store = LocalStore(str(tmp_path / "bounded"))
    specs = field_specs(arrow_schema(SCHEMA), parse_indexing(OPTIONS), partition_columns=("day",))
    writer = SplitWriter(store, specs, ("day",), heap_size=20 << 20, batch_size=50, max_open=1)
    batch = pa.RecordBatch.from_pylist(_rows(100), schema=arrow_schema(SCHEMA))
    writer.write([batch])  # days alternate row by row: every 50-row slice holds both
    adds = writer.finish()
    assert len(adds) == 4
    assert sum(a.num_records for a in adds) == 100
    assert _read(store, adds, tmp_path, search=SearchSpec(), conditions=()) == _rows(100)


def test_nested_columns_round_trip_on_both_read_paths(tmp_path: Path) -> None:
    from pyspark.sql.types import ArrayType, MapType
    from pyspark.sql.types import StructType as Struct

    schema = StructType(
        [
            StructField("id", LongType()),
            StructField("attrs", MapType(StringType(), LongType())),
            StructField("tags", ArrayType(StringType())),
            StructField("who", Struct([StructField("name", StringType())])),
        ]
    )
    rows = [
        {"id": i, "attrs": [("a", i)], "tags": ["x", str(i)], "who": {"name": f"n{i}"}}
        for i in range(5)
    ]
    store = LocalStore(str(tmp_path / "nested"))
    specs = field_specs(arrow_schema(schema), parse_indexing({}))
    writer = SplitWriter(store, specs, (), heap_size=20 << 20, batch_size=10)
    writer.write([pa.RecordBatch.from_pylist(rows, schema=arrow_schema(schema))])
    (add,) = writer.finish()
    ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
    entry = SplitEntry(ref, {}, add.doc_mapping_json)
    directory = SplitCache(str(tmp_path / "cache"), 1 << 30).fetch(store, store.uri, ref)
    scanned = [
        r
        for b in read_split(
            directory, entry, arrow_schema(schema), search=SearchSpec(), conditions=()
        )
        for r in b.to_pylist()
    ]
    searched = [
        r
        for b in read_split(
            directory,
            entry,
            arrow_schema(schema),
            search=SearchSpec(),
            conditions=(Condition(">=", "id", (0,)),),
        )
        for r in b.to_pylist()
    ]
    assert sorted(scanned, key=lambda r: r["id"]) == rows
    assert sorted(searched, key=lambda r: r["id"]) == rows


def test_nulls_round_trip_in_batches_with_and_without_them(tmp_path: Path) -> None:
    """A batch with nulls leaves them out of its documents; one without takes the fast path."""
    full = _rows(10)
    holes = [
        {k: (None if k != "day" and (i + len(k)) % 3 == 0 else v) for k, v in row.items()}
        for i, row in enumerate(_rows(10))
    ]
    for row, number in zip(holes, range(100, 110), strict=True):
        row["id"] = number  # ids stay unique across both batches (ids are never null here)
    store = LocalStore(str(tmp_path / "table"))
    specs = field_specs(arrow_schema(SCHEMA), parse_indexing(OPTIONS), partition_columns=("day",))
    writer = SplitWriter(store, specs, ("day",), heap_size=20 << 20, batch_size=100)
    batches = [
        pa.RecordBatch.from_pylist(rows, schema=arrow_schema(SCHEMA)) for rows in (full, holes)
    ]
    assert not any(c.null_count for c in batches[0].columns)
    assert any(c.null_count for c in batches[1].columns)
    writer.write(batches)
    adds = writer.finish()
    for conditions in [(), (Condition(">=", "id", (0,)),)]:
        rows = _read(
            store, adds, tmp_path / str(len(conditions)), search=SearchSpec(), conditions=conditions
        )
        assert sorted(rows, key=lambda r: r["id"]) == sorted([*full, *holes], key=lambda r: r["id"])


def test_splits_carry_no_field_norms(written: tuple[LocalStore, list[Any]], tmp_path: Path) -> None:
    """Nothing scores, so no field keeps norms (as the reference writes its splits):
    every text and JSON field says so in meta.json and the norm files hold no data."""
    import json
    import os

    store, adds = written
    cache = SplitCache(str(tmp_path / "cache"), 1 << 30)
    add = adds[0]
    ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
    directory = cache.fetch(store, store.uri, ref)
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
        schema = json.load(source)["schema"]
    indexed = [e for e in schema if e["type"] in ("text", "json_object")]
    assert indexed, "the test table has text fields"
    assert all(not (e["options"].get("indexing") or {}).get("fieldnorms") for e in indexed)
    norms = [n for n in os.listdir(directory) if n.endswith(".fieldnorm")]
    sizes = [os.path.getsize(os.path.join(directory, n)) for n in norms]
    # Without norms the file is its footers alone (~100 bytes whatever the row count);
    # norms add one byte per document and normed field (here 50 rows, 2 text fields).
    assert sizes
    assert all(size < 100 + add.num_records for size in sizes), sizes
