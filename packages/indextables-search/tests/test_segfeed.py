"""The segment feed (``indexWriter.feed=segments``) against the JSON feed and a model.

The same seeded hostile tables (every column kind ``write_table`` takes, nulls, NaN,
``-0.0``, unicode, empty strings, dates past Tantivy's span, other Arrow layouts,
partitions, several batches) are written with ``feed=json`` (tantivy-py) and
``feed=segments``; ``open_table`` must answer searches, counts, ordered searches and
aggregations alike, and give back the input rows exactly. The model of the rows and
of the simple searches is pyarrow's (input columns, ``pyarrow.compute``). Splits the
segment writer refuses (a schema, or one batch's values) still write every row.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import tantivy
from writedata import DOUBLES, canonical, column, row_multiset

from indextables.search import delete_rows, merge_splits, open_table, write_table
from indextables.search.errors import OptionError
from indextables.search.options import parse_indexing, parse_write
from indextables.search.schema.mapping import field_specs, tantivy_schema
from indextables.search.write import segfeed, splitwriter
from indextables.search.write.splitwriter import PartitionIndex

# A search for "a" in a split holding only "A" warns (both feeds alike).
pytestmark = pytest.mark.filterwarnings(
    "ignore::indextables.search.query.casenotice.CaseMismatchWarning"
)
FEED_KEY = "spark.indextables.indexWriter.feed"
BASE = {
    "spark.indextables.indexing.typemap.t": "text",
    "spark.indextables.indexing.typemap.w": "text",
    "spark.indextables.indexing.tokenizer.w": "whitespace",
    "spark.indextables.indexing.storeonlyfields": "c_int16",
    "spark.indextables.indexWriter.batchSize": "97",
}
KINDS = (
    "binary", "bool", "int8", "int16", "int32", "int64", "double", "float", "date",
    "timestamp", "timestamp_ntz",
)  # fmt: skip
# Exact strings (fast): short enough for the fast column (no refusal), hostile otherwise.
SHORT = ["", " ", "a", "A", "ü", "日本語", "emoji 😀", "tab\tnew\nline", 'q"b\\s', "k1", "\x00"]
WORDS = ["the", "The", "THE", "word", "Word", "été", "日本", "x" * 300, "a-b", "k1", "\u3000"]
PARTS = ["a", "b", None, "日本"]


def _text(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.12:
        return None
    if roll < 0.16:
        return ""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 9)))


def _table(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    columns: dict[str, pa.Array] = {"id": pa.array(range(n), pa.int64())}
    for kind in KINDS:
        columns[f"c_{kind}"] = column(rng, kind, n)
    strings = [None if rng.random() < 0.15 else rng.choice(SHORT) for _ in range(n)]
    columns["s"] = pa.array(strings, pa.string())
    columns["t"] = pa.array([_text(rng) for _ in range(n)], pa.string())
    columns["w"] = pa.array([_text(rng) for _ in range(n)], pa.large_string())
    columns["cat"] = pa.array(strings, pa.string()).dictionary_encode()
    columns["sv"] = pa.array(strings, pa.string_view())
    blobs = [None if rng.random() < 0.2 else rng.randbytes(rng.randint(0, 9)) for _ in range(n)]
    columns["lb"] = pa.array(blobs, pa.large_binary())
    nanos = [None if rng.random() < 0.2 else rng.randrange(-(10**18), 10**18) for _ in range(n)]
    columns["tns"] = pa.array(nanos, pa.timestamp("ns", tz="UTC"))
    columns["nothing"] = pa.nulls(n, pa.string())
    columns["p"] = pa.array([rng.choice(PARTS) for _ in range(n)], pa.string())
    table = pa.table(columns)
    # Several input batches of uneven sizes.
    cuts = sorted(rng.sample(range(1, n), 4))
    pieces = [table.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    return pa.concat_tables(pieces)


def _expected(table: pa.Table) -> pa.Table:
    """The rows as the table gives them back (Spark's types: decoded, floored to micros)."""
    floored = pc.floor_temporal(table.column("tns"), unit="microsecond")
    out = table.set_column(
        table.schema.get_field_index("tns"), "tns", floored.cast(pa.timestamp("us", tz="UTC"))
    )
    return out.set_column(
        out.schema.get_field_index("cat"), "cat", table.column("cat").cast(pa.string())
    )


class _Calls:
    """Counts calls of the write path's tantivy-py feeds and of the segment writer."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.json = 0
        self.documents = 0
        self.segments = 0
        for name, attr in (("json_lines", "json"), ("documents", "documents")):
            monkeypatch.setattr(splitwriter, name, self._counted(getattr(splitwriter, name), attr))
        monkeypatch.setattr(
            segfeed, "write_segment", self._counted(segfeed.write_segment, "segments")
        )

    def _counted(self, function: Callable[..., Any], attr: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            setattr(self, attr, getattr(self, attr) + 1)
            return function(*args, **kwargs)

        return call

    @property
    def tantivy(self) -> int:
        return self.json + self.documents


def _write(uri: str, data: pa.Table, feed: str, extra: dict[str, str] | None = None) -> None:
    options = {**BASE, FEED_KEY: feed, **(extra or {})}
    write_table(uri, data, partition_by="p", options=options, workers=1)


def _ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def _queries(data: pa.Table) -> dict[str, list[int] | None]:
    """Tantivy queries and, where pyarrow models them simply, the ids they match."""
    ids = data.column("id")

    def where(mask: Any) -> list[int]:
        return sorted(pc.filter(ids, pc.fill_null(mask, False)).to_pylist())

    def has_word(values: pa.ChunkedArray, word: str, lower: bool) -> Any:
        # Default tokenizer on ASCII words between spaces: lowercased whole words.
        rows = [
            v is not None and word in (v.lower() if lower else v).split(" ")
            for v in values.to_pylist()
        ]
        return pa.array(rows)

    i64 = data.column("c_int64")
    out: dict[str, list[int] | None] = {
        "s:k1": where(pc.equal(data.column("s"), "k1")),
        "s:a": where(pc.equal(data.column("s"), "a")),
        "t:word": where(has_word(data.column("t"), "word", True)),
        "t:the": where(has_word(data.column("t"), "the", True)),
        "w:Word": where(has_word(data.column("w"), "word", True)),
        "c_int64:>=0": where(pc.greater_equal(i64, 0)),
        "c_int64:[-1 TO 1]": where(pc.and_(pc.greater_equal(i64, -1), pc.less_equal(i64, 1))),
        "c_int8:>0": where(pc.greater(data.column("c_int8"), 0)),
        "c_bool:true": where(data.column("c_bool")),
        "c_double:[-1.5 TO 1.5]": None,
        "c_float:>0": None,
        "t:été": None,
        't:"the word"': None,
        "t:wor*": None,
        "t:wrod~1": None,
        "c_date:[2000-01-01T00:00:00Z TO *]": None,
        "c_timestamp:<1970-01-01T00:00:00Z": None,
        "c_timestamp_ntz:>=1969-12-31T23:59:59Z": None,
        "tns:>=1990-01-01T00:00:00Z": None,
        "c_int32:*": None,
        "c_date:*": None,
        "cat:k1 OR sv:a": None,
        "NOT c_bool:false": None,
    }
    return out


def _answers(uri: str, queries: dict[str, list[int] | None]) -> dict[str, Any]:
    table = open_table(uri)
    out: dict[str, Any] = {
        "count": table.count(),
        "rows": row_multiset(table.to_arrow().to_pylist()),
    }
    for query in queries:
        out[f"search {query}"] = _ids(table.search(query, columns=["id"]))
        out[f"count {query}"] = table.count(query)
    for key in ("c_int64", "c_date", "s", "c_timestamp", "c_double", "c_bool", "tns"):
        for direction in ("ASC", "DESC"):
            got = table.search(order_by=f"{key} {direction}", limit=out["count"], columns=[key])
            out[f"order {key} {direction}"] = [canonical(v) for v in got.column(key).to_pylist()]
    grouped = table.aggregate(
        group_by=["c_bool"],
        metrics={"n": "count", "top": ("max", "c_int64"), "low": ("min", "c_date")},
    )
    out["aggregate"] = row_multiset(grouped.to_pylist())
    return out


@pytest.mark.parametrize(("seed", "rows", "segment_bytes"), [(0, 700, None), (1, 500, 6_000)])
def test_segments_feed_reads_as_json_feed_and_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, rows: int, segment_bytes: int | None
) -> None:
    data = _table(seed, rows)
    if segment_bytes is not None:  # several segments per split
        monkeypatch.setattr(segfeed, "segment_bytes", lambda heap: segment_bytes)
    queries = _queries(data)
    answers = {}
    for feed in ("json", "segments"):
        calls = _Calls(monkeypatch)
        uri = str(tmp_path / feed)
        _write(uri, data, feed)
        answers[feed] = _answers(uri, queries)
        splits = len(open_table(uri).files)
        if feed == "segments":
            assert calls.tantivy == 0  # no row went through tantivy-py
            assert calls.segments >= splits
            if segment_bytes is not None:
                assert calls.segments >= 2 * splits
        else:
            assert calls.segments == 0
            assert calls.json > 0
    json_feed, segments = answers["json"], answers["segments"]
    assert segments["count"] == rows
    assert segments["rows"] == row_multiset(_expected(data).to_pylist())
    for query, model in queries.items():
        if model is not None:
            assert segments[f"search {query}"] == model, query
            assert segments[f"count {query}"] == len(model), query
    assert sorted(segments) == sorted(json_feed)
    for key in json_feed:
        assert segments[key] == json_feed[key], key
    i64 = [v for v in data.column("c_int64").to_pylist() if v is not None]
    nulls = rows - len(i64)
    assert segments["order c_int64 ASC"] == [None] * nulls + sorted(i64)


def test_refused_schemas_write_through_tantivy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    n = 150
    base = _table(5, n)
    refusing = {
        "strs": (  # a JSON field of lists of strings
            pa.array([[rng.choice(WORDS)] if rng.random() < 0.8 else None for _ in range(n)]),
            {},
        ),
        "map": (column(rng, "map", n), {}),
        "st": (column(rng, "struct", n), {}),
        "stem": (
            base.column("t"),
            {
                "spark.indextables.indexing.typemap.stem": "text",
                "spark.indextables.indexing.tokenizer.stem": "en_stem",
            },
        ),
        "ft": (  # a fast text field with the default tokenizer
            base.column("t"),
            {
                "spark.indextables.indexing.typemap.ft": "text",
                "spark.indextables.indexing.fastfields": "ft,c_int64,s",
            },
        ),
    }
    for name, (values, extra) in refusing.items():
        data = base.append_column(name, values)
        calls = _Calls(monkeypatch)
        got = {}
        for feed in ("json", "segments"):
            uri = str(tmp_path / f"{name}-{feed}")
            _write(uri, data, feed, extra)
            table = open_table(uri)
            got[feed] = (
                row_multiset(table.to_arrow().to_pylist()),
                _ids(table.search("t:word OR s:k1", columns=["id"])),
                table.count("c_int64:>=0"),
            )
        assert calls.segments == 0, name  # refused before any segment is written
        assert got["segments"] == got["json"], name
        assert got["segments"][0] == row_multiset(_expected(data).to_pylist()), name


def test_a_refused_value_sends_the_kept_batches_through_tantivy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The third segment of a split is refused after earlier segments of the same split
    # were written; they stay, the rest goes through tantivy-py. A fast exact string past
    # 65,535 bytes rides along (the writer cuts its fast value as Tantivy does).
    n = 600
    data = _table(7, n)
    strings = data.column("s").to_pylist()
    strings[450] = "z" * 70_000
    data = data.set_column(data.schema.get_field_index("s"), "s", pa.array(strings))
    data = data.set_column(data.schema.get_field_index("p"), "p", pa.nulls(n, pa.string()))
    monkeypatch.setattr(segfeed, "segment_bytes", lambda heap: 8_000)
    monkeypatch.setattr(segfeed, "write_segment", _refusing_third(segfeed.write_segment))
    answers = {}
    for feed in ("json", "segments"):
        calls = _Calls(monkeypatch)
        uri = str(tmp_path / feed)
        _write(uri, data, feed)
        table = open_table(uri)
        answers[feed] = {
            "rows": row_multiset(table.to_arrow().to_pylist()),
            "long": _ids(table.search(where=f"s = '{'z' * 70_000}'", columns=["id"])),
            "k1": _ids(table.search("s:k1", columns=["id"])),
            "word": _ids(table.search("t:word", columns=["id"])),
            "order": table.search(order_by="c_int64", limit=n, columns=["id"]).num_rows,
        }
        if feed == "segments":
            assert calls.segments >= 2
            assert calls.tantivy > 0
    assert answers["segments"] == answers["json"]
    assert answers["segments"]["rows"] == row_multiset(_expected(data).to_pylist())
    assert answers["segments"]["long"] == [450]


def _refusing_third(write: Callable[..., Any]) -> Callable[..., Any]:
    """``write_segment`` refusing its third segment (as for a value it cannot write)."""
    made = [0]

    def call(*args: Any, **kwargs: Any) -> Any:
        made[0] += 1
        if made[0] == 3:
            raise segfeed.SegmentWriteError("refused for the test")
        return write(*args, **kwargs)

    return call


def test_a_value_refused_at_commit_writes_the_split_through_tantivy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = pa.table({"id": [1, 2, 3], "s": ["a", "x" * 70_000, None], "n": [1, None, -1]})

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise segfeed.SegmentWriteError("refused for the test")

    monkeypatch.setattr(segfeed, "write_segment", refuse)
    calls = _Calls(monkeypatch)
    uri = str(tmp_path / "t")
    write_table(uri, data, options={FEED_KEY: "segments"}, workers=1)
    assert calls.tantivy > 0
    table = open_table(uri)
    assert row_multiset(table.to_arrow().to_pylist()) == row_multiset(data.to_pylist())
    assert _ids(table.search("s:a", columns=["id"])) == [1]


def test_merge_splits_over_segments_and_json_splits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segfeed, "segment_bytes", lambda heap: 10_000)
    data = _table(11, 600)
    thirds = [data.slice(0, 200), data.slice(200, 200), data.slice(400, 200)]
    queries = _queries(data)
    uri = str(tmp_path / "mixed")
    for piece, feed in zip(thirds, ("segments", "json", "segments"), strict=True):
        _write(uri, piece, feed)
    plain = str(tmp_path / "plain")
    _write(plain, data, "json")
    before = _answers(uri, queries)
    result = merge_splits(uri)
    assert result.splits_merged > 0
    assert result.splits_written > 0
    after = _answers(uri, queries)
    want = _answers(plain, queries)
    assert after["rows"] == row_multiset(_expected(data).to_pylist())
    zero, negative_zero = canonical(0.0), canonical(-0.0)
    for key in want:
        if key.startswith("order"):
            # Ties (0.0 and -0.0) come in split order, which merging changes.
            def tied(values: list[Any]) -> list[Any]:
                return [zero if v == negative_zero else v for v in values]

            assert tied(before[key]) == tied(after[key]) == tied(want[key]), key
        else:
            assert before[key] == after[key] == want[key], key


def test_purge_deletes_reindexes_through_the_segments_feed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _table(13, 400)
    uri = str(tmp_path / "t")
    _write(uri, data, "json")
    gone = ", ".join(str(i) for i in range(0, 400, 3))
    delete_rows(uri, where=f"id IN ({gone})")
    calls = _Calls(monkeypatch)
    result = merge_splits(uri, purge_deletes=True, options={FEED_KEY: "segments"})
    assert result.splits_written > 0
    assert calls.segments >= result.splits_written
    assert calls.tantivy == 0
    # pyarrow filters no string_view column: the model holds it as strings.
    plain = data.drop_columns(["sv"]).append_column("sv", data.column("sv").cast(pa.string()))
    live = plain.filter(pa.array([i % 3 != 0 for i in data.column("id").to_pylist()]))
    queries = _queries(live)
    got = _answers(uri, queries)
    assert got["rows"] == row_multiset(_expected(live).to_pylist())
    for query, model in queries.items():
        if model is not None:
            assert got[f"search {query}"] == model, query
            assert got[f"count {query}"] == len(model), query


def test_feed_option_takes_segments() -> None:
    assert parse_write({FEED_KEY: "segments"}).feed == "segments"
    assert parse_write({FEED_KEY.lower(): " Segments "}).feed == "segments"
    assert parse_write({}).feed == "segments"  # the default
    with pytest.raises(OptionError, match=r"indexWriter\.feed"):
        parse_write({FEED_KEY: "segment"})


def test_partition_index_with_the_segments_feed() -> None:
    data = pa.record_batch({"s": ["a", None, "b"], "d": pa.array([1.5, -0.0, None])})
    specs = field_specs(data.schema, parse_indexing({}))
    schema = tantivy_schema(specs, row_key=True)
    # A companion's index (hidden fast fields) keeps its tantivy-py writer.
    companion = PartitionIndex.create(
        specs, schema, heap_size=20 << 20, hidden_fast=["h"], feed="segments"
    )
    try:
        assert companion.segments is None
        assert companion.writer_open
    finally:
        companion.discard()
    part = PartitionIndex.create(specs, schema, heap_size=20 << 20, feed="segments")
    assert part.segments is not None
    assert not part.writer_open
    directory = part.directory
    part.add(data, specs, schema, feed="segments")
    part.add(data.slice(1), specs, schema, feed="segments")
    part.commit()
    try:
        index = tantivy.Index.open(directory)
        searcher = index.searcher()
        assert searcher.num_docs == 5
        query = tantivy.Query.term_query(index.schema, "s", "b")
        assert searcher.search(query, 10).count == 2
        with open(os.path.join(directory, "meta.json"), encoding="utf-8") as handle:
            assert [s["max_doc"] for s in json.load(handle)["segments"]] == [5]
    finally:
        part.discard()
    assert not os.path.exists(directory)
    # A feed never committed leaves nothing behind either.
    dropped = PartitionIndex.create(specs, schema, heap_size=20 << 20, feed="segments")
    dropped.add(data, specs, schema, feed="segments")
    dropped.discard()
    assert not os.path.exists(dropped.directory)


def test_doubles_survive_both_ways(tmp_path: Path) -> None:
    values = [*DOUBLES, None]
    data = pa.table({"id": range(len(values)), "f": pa.array(values, pa.float64())})
    uri = str(tmp_path / "t")
    write_table(uri, data, options={FEED_KEY: "segments"}, workers=1)
    got = open_table(uri).to_arrow().sort_by("id")
    assert [canonical(v) for v in got.column("f").to_pylist()] == [canonical(v) for v in values]
