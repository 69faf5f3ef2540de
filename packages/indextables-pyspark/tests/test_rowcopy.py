"""Splits written and read without Spark: the Arrow copy, clamped dates, field options."""

from __future__ import annotations

import math
import struct
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DateType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from indextables.pyspark.errors import FieldKindError, QuerySyntaxError
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.options import parse_indexing
from indextables.search.query.filters import Condition
from indextables.search.query.searchoptions import SearchSpec, validate
from indextables.search.read.splitreader import SplitEntry, read_split
from indextables.search.schema.mapping import field_specs
from indextables.search.splits.splitcache import SplitCache, SplitRef
from indextables.search.write.splitwriter import ROWS_FILE, SplitWriter
from indextables.storage import LocalStore

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("s", StringType()),
        StructField("t", StringType()),
        StructField("j", StringType()),
        StructField("x", DoubleType()),
        StructField("ts", TimestampType()),
        StructField("d", DateType()),
        StructField("bin", BinaryType()),
        StructField("m", MapType(StringType(), ArrayType(BinaryType()))),
    ]
)
TIMES = [
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2020, 1, 1, 0, 0, 0, 100000 * 3, tzinfo=UTC),
    datetime(2020, 1, 1, 0, 0, 0, 100000 * 7, tzinfo=UTC),
    datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=UTC),  # the last instant Tantivy holds
    None,
]
DATES = [
    date(1, 1, 1),
    date(9999, 12, 31),
    date(2262, 4, 11),
    date(2262, 4, 12),
    None,
    date(2000, 1, 1),
]
JSONS = ['{"a": 1}', "not json", "[1, 2]", None, '{"a": {"b": "c"}}', "7"]


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "s": f"word{i % 3}",
            "t": f"some text {i % 2}",
            "j": JSONS[i % len(JSONS)],
            "x": [math.nan, -0.0, 0.0, math.inf, None, -1.5][i % 6],
            "ts": TIMES[i % len(TIMES)],
            "d": DATES[i % len(DATES)],
            "bin": [b"", b"\x00", None][i % 3],
            "m": [[], None, [("k", [b"v", None])]][i % 3],
        }
        for i in range(n)
    ]


# Types every version could write: the field-option and query tests need no other.
BASIC = StructType([f for f in SCHEMA.fields if f.name not in ("bin", "m")])


def _basic_rows(n: int, *, bad_json: bool = False) -> list[dict[str, Any]]:
    rows = _rows(n)
    for i, row in enumerate(rows):
        del row["bin"], row["m"]
        row["ts"], row["d"] = TIMES[2 + i % 4], DATES[(2, 4, 5)[i % 3]]
        if not bad_json:
            row["j"] = f'{{"a": {i}}}'
    return rows


def _write(
    tmp_path: Path,
    options: dict[str, str],
    rows: list[dict[str, Any]],
    schema: StructType = SCHEMA,
    arrow_copy: str = "required",
) -> Any:
    store = LocalStore(str(tmp_path / "table"))
    specs = field_specs(arrow_schema(schema), parse_indexing(options))
    writer = SplitWriter(store, specs, (), heap_size=20 << 20, batch_size=5, arrow_copy=arrow_copy)
    writer.write([pa.RecordBatch.from_pylist(rows, schema=arrow_schema(schema))])
    (add,) = writer.finish()
    ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
    directory = SplitCache(str(tmp_path / "cache"), 1 << 30).fetch(store, store.uri, ref)
    return directory, SplitEntry(ref, {}, add.doc_mapping_json)


def _read(
    directory: str, entry: SplitEntry, schema: StructType = SCHEMA, **kwargs: Any
) -> list[dict[str, Any]]:
    kwargs.setdefault("search", SearchSpec())
    kwargs.setdefault("conditions", ())
    found = [
        r
        for b in read_split(directory, entry, arrow_schema(schema), **kwargs)
        for r in b.to_pylist()
    ]
    return sorted(found, key=lambda r: r["id"])


def _bits(rows: list[dict[str, Any]]) -> list[Any]:
    return [
        {k: struct.pack(">d", v) if isinstance(v, float) else v for k, v in row.items()}
        for row in rows
    ]


OPTIONS = {
    "spark.indextables.indexing.typemap.t": "text",
    "spark.indextables.indexing.typemap.j": "json",
}
SEARCHED = {"conditions": (Condition(">=", "id", (0,)),)}


@pytest.mark.parametrize("arrow_copy", ["required", "numeric", "all"])
def test_every_value_comes_back_on_both_read_paths(tmp_path: Path, arrow_copy: str) -> None:
    rows = _rows(23)
    directory, entry = _write(tmp_path, OPTIONS, rows, arrow_copy=arrow_copy)
    expected = _bits(pa.RecordBatch.from_pylist(rows, schema=arrow_schema(SCHEMA)).to_pylist())
    assert _bits(_read(directory, entry)) == expected
    assert _bits(_read(directory, entry, **SEARCHED)) == expected


def test_the_copy_is_keyed_and_read_batch_by_batch(tmp_path: Path) -> None:
    from indextables.search.read.rowcopy import RowCopy

    directory, _ = _write(tmp_path, OPTIONS, _rows(12), arrow_copy="all")
    copy = RowCopy.open(f"{directory}/{ROWS_FILE}")
    assert copy is not None
    assert copy.keyed
    keys = [(2 << 32) | 1, 0, (1 << 32) | 4, 3]  # rows 11, 0, 9, 3 (batches of 5 rows)
    assert copy.take(["ID"], keys)["id"].to_pylist() == [11, 0, 9, 3]


def test_dates_beyond_tantivy_are_indexed_clamped_and_ranges_stay_exact(tmp_path: Path) -> None:
    directory, entry = _write(tmp_path, OPTIONS, _rows(12))
    query = "ts:[2000-01-01T00:00:00Z TO 2100-01-01T00:00:00Z]"
    hits = _read(directory, entry, search=SearchSpec(query=query))
    assert {r["ts"] for r in hits} == {TIMES[2], TIMES[3]}
    after = _read(directory, entry, search=SearchSpec(query="ts:[2100-01-01T00:00:00Z TO *]"))
    assert {r["ts"] for r in after} == {TIMES[1], TIMES[4]}


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("ts:[2020-01-01T00:00:00.25Z TO 2020-01-01T00:00:00.3Z]", {TIMES[2]}),
        ("ts:{2020-01-01T00:00:00.3Z TO 2020-01-01T00:00:01Z}", {TIMES[3]}),
        ("ts:>2020-01-01T00:00:00.3Z AND ts:<2021-01-01T00:00:00Z", {TIMES[3]}),
        ('ts:"2020-01-01T00:00:00.7Z"', {TIMES[3]}),
        ('ts:"2020-01-01T00:00:00Z"', set()),
    ],
)
def test_sub_second_queries_on_timestamps_are_exact(
    tmp_path: Path, query: str, wanted: set[datetime]
) -> None:
    directory, entry = _write(tmp_path, OPTIONS, _basic_rows(12), BASIC)
    validate(SearchSpec(query=query), _fields(entry))
    hits = _read(directory, entry, BASIC, search=SearchSpec(query=query))
    assert {r["ts"] for r in hits} == wanted


def _fields(entry: SplitEntry) -> dict[str, Any]:
    from indextables.search.schema.mapping import specs_from_doc_mapping

    return specs_from_doc_mapping(entry.doc_mapping_json or "[]")


@pytest.mark.parametrize(
    ("arrow_copy", "copied"), [("all", ["id", "t", "x", "ts", "d"]), ("required", ["ts", "d"])]
)
def test_index_only_columns_read_as_null_everywhere_and_are_searchable(
    tmp_path: Path, arrow_copy: str, copied: list[str]
) -> None:
    options = {**OPTIONS, "spark.indextables.indexing.indexonlyfields": "s,j"}
    directory, entry = _write(tmp_path, options, _basic_rows(9), BASIC, arrow_copy)
    for found in (_read(directory, entry, BASIC), _read(directory, entry, BASIC, **SEARCHED)):
        assert [r["s"] for r in found] == [None] * 9
        assert [r["j"] for r in found] == [None] * 9
    hits = _read(directory, entry, BASIC, search=SearchSpec(field_match={"s": "word1"}))
    assert [r["id"] for r in hits] == [1, 4, 7]
    with pa.memory_map(f"{directory}/{ROWS_FILE}") as source:
        assert pa.ipc.open_file(source).schema.names == copied


def test_store_only_columns_are_not_searched(tmp_path: Path) -> None:
    options = {**OPTIONS, "spark.indextables.indexing.storeonlyfields": "s,t,j"}
    directory, entry = _write(tmp_path, options, _basic_rows(9), BASIC)
    fields = _fields(entry)
    for spec in (SearchSpec(field_match={"s": "word1"}), SearchSpec(text_search={"t": "text"})):
        with pytest.raises(FieldKindError, match="store-only"):
            validate(spec, fields)
    for query in ("s:word1", "t:text", "j.a:1"):
        # FieldLayoutError (a QuerySyntaxError) names the column; a JSON path keeps
        # Tantivy's own words.
        refused = r"column '[stj]' is not indexed|not declared as indexed|not set as indexed"
        with pytest.raises(QuerySyntaxError, match=refused):
            validate(SearchSpec(query=query), fields)
    assert [r["s"] for r in _read(directory, entry, BASIC)][:3] == ["word0", "word1", "word2"]


def test_a_json_column_keeps_bad_values_raw_and_searchable(tmp_path: Path) -> None:
    directory, entry = _write(tmp_path, OPTIONS, _basic_rows(6, bad_json=True), BASIC)
    assert [r["j"] for r in _read(directory, entry, BASIC, **SEARCHED)] == JSONS
    hits = _read(directory, entry, BASIC, search=SearchSpec(query="j.a:1"))
    assert [r["id"] for r in hits] == [0]
    raw = _read(directory, entry, BASIC, search=SearchSpec(query='j._raw:"json"'))
    assert [r["id"] for r in raw] == [1]


def test_ip_columns_read_back_as_written(tmp_path: Path) -> None:
    schema = StructType([StructField("id", LongType()), StructField("ip", StringType())])
    rows = [{"id": i, "ip": v} for i, v in enumerate(["10.0.0.1", "::1", None, "2001:db8::7"])]
    options = {"spark.indextables.indexing.typemap.ip": "ip"}
    directory, entry = _write(tmp_path, options, rows, schema)
    assert _read(directory, entry, schema) == rows
    assert _read(directory, entry, schema, **SEARCHED) == rows


def test_float_bits_survive_the_fast_field_path(tmp_path: Path) -> None:
    """A table of fast numeric columns only is read from fast fields, not stored documents."""
    schema = StructType([StructField("id", LongType()), StructField("x", DoubleType())])
    values = [-0.0, 0.0, math.nan, math.inf, -math.inf, 5e-324, None]
    rows = [{"id": i, "x": v} for i, v in enumerate(values)]
    directory, entry = _write(tmp_path, {}, rows, schema)
    assert _bits(_read(directory, entry, schema, **SEARCHED)) == _bits(rows)
