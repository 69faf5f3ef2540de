"""Ordered top-k searches (``order_by`` + ``limit``) against independent oracles.

Random tables (seeded) with nulls, NaN, -0.0, infinities and many ties, written
in several appends and partitions (several splits), are searched with random
queries, ``where`` conditions, keys and k (0, 1, beyond the hits). The oracle
is DuckDB's ``ORDER BY`` over the unordered search's rows, with the documented
tie rule (the row's place in the unordered read) as the last key: Spark's null
and NaN order is DuckDB's with ``NULLS FIRST`` on ``ASC`` and ``NULLS LAST`` on
``DESC``. Scores are checked against tantivy-py's own search of each split.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from goldenfixtures import GOLDEN_NAMES

from indextables.protocol.splitbundle import unbundle_split
from indextables.search import SearchTable, build_companion, open_table, write_table
from indextables.search.errors import ArgumentError, CompanionError
from indextables.search.read import topk
from indextables.search.read.topk import MAX_TOP
from indextables.search.schema.tokenizers import open_index
from indextables.search.splits.termdict import dictionary_kind, to_fst

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}
WORDS = ["alpha", "beta", "gamma", "delta", "error", "timeout", "ok"]
FLOATS = [0.0, -0.0, 1.5, -2.0, math.nan, math.inf, -math.inf, None]
KEYS = ["f", "i", "ts", "host", "p", "flag"]


def rows(seed: int, count: int) -> pa.Table:
    rng = random.Random(seed)
    base = datetime(2024, 1, 1)
    return pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "f": pa.array([rng.choice(FLOATS) for _ in range(count)], pa.float64()),
            "i": pa.array([rng.choice([None, *range(-3, 4)]) for _ in range(count)], pa.int32()),
            "ts": pa.array(
                [
                    None if rng.random() < 0.1 else base + timedelta(seconds=rng.randrange(20))
                    for _ in range(count)
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "host": pa.array(
                [rng.choice([None, "", "web-1", "web-2", "db", "é"]) for _ in range(count)]
            ),
            "flag": pa.array([rng.choice([None, True, False]) for _ in range(count)]),
            "message": pa.array(
                [" ".join(rng.choices(WORDS, k=rng.randrange(1, 6))) for _ in range(count)]
            ),
            "p": pa.array([rng.choice(["a", "b", "c"]) for _ in range(count)]),
        }
    )


def build(tmp_path: Path, seed: int, count: int = 300) -> SearchTable:
    data = rows(seed, count)
    uri = str(tmp_path / f"t{seed}")
    for start in range(0, count, count // 3):
        write_table(uri, data.slice(start, count // 3), partition_by=["p"], options=OPTIONS)
    table = open_table(uri)
    assert len(table.files) >= 6
    return table


def oracle(table: SearchTable, keys: list[tuple[str, bool]], k: int, **search: object) -> pa.Table:
    """The first k rows by DuckDB over the unordered read, ties by the row's place in it."""
    found = table.search(**search)  # type: ignore[arg-type]
    found = found.append_column("rn", pa.array(range(found.num_rows), pa.int64()))
    order = ", ".join(
        f'"{c}" DESC NULLS LAST' if desc else f'"{c}" ASC NULLS FIRST' for c, desc in keys
    )
    got = (
        duckdb.from_arrow(found)
        .query("hits", f"SELECT * FROM hits ORDER BY {order}, rn LIMIT {k}")
        .arrow()
    )
    return got.read_all() if isinstance(got, pa.RecordBatchReader) else got


def same_ids(got: pa.Table, want: pa.Table) -> None:
    assert got.column("id").to_pylist() == want.column("id").to_pylist()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_field_top_k_equals_a_full_sort(tmp_path: Path, seed: int) -> None:
    table = build(tmp_path, seed)
    rng = random.Random(seed * 7)
    total = table.count()
    for _ in range(12):
        keys = [(c, rng.random() < 0.5) for c in rng.sample(KEYS, rng.randrange(1, 4))]
        k = rng.choice([0, 1, 2, 7, 40, total, total + 5])
        search: dict[str, object] = {}
        if rng.random() < 0.5:
            search["query"] = f"message:{rng.choice(WORDS)}"
        if rng.random() < 0.3:
            search["where"] = "i IS NULL OR i > -2"
        text = ", ".join(f"{c} {'DESC' if d else 'ASC'}" for c, d in keys)
        got = table.search(order_by=text, limit=k, **search)  # type: ignore[arg-type]
        want = oracle(table, keys, k, **search)
        assert got.num_rows == min(k, want.num_rows)
        same_ids(got, want)
        assert got.schema == table.schema


def test_descending_default_directions_and_spark_float_order(tmp_path: Path) -> None:
    table = build(tmp_path, 5)
    got = table.search(order_by="f", limit=10_000).column("f").to_pylist()
    nulls = got.count(None)
    assert got[:nulls] == [None] * nulls
    assert None not in got[nulls:]
    assert all(math.isnan(v) for v in got[len(got) - sum(1 for v in got[nulls:] if v != v) :])
    down = table.search(order_by="f DESC", limit=10_000).column("f").to_pylist()
    assert math.isnan(down[0])
    assert down[-1] is None


def test_score_equals_tantivys_own_score_per_split(tmp_path: Path) -> None:
    data = rows(9, 120)
    uri = str(tmp_path / "one")
    write_table(uri, data, options=OPTIONS)
    table = open_table(uri)
    (path,) = table.files
    directory = _split_directory(table, path, tmp_path / "unbundled")
    index = open_index(directory)
    searcher = index.searcher()
    for word, k in [("error", 5), ("timeout", 1), ("alpha", 500), ("ok", 33)]:
        query = index.parse_query(word, ["message"])
        hits = searcher.search(query, limit=120).hits
        want = sorted(
            ((score, searcher.doc(address)["id"][0]) for score, address in hits),
            key=lambda hit: (-hit[0], hit[1]),
        )[:k]
        got = table.search(f"message:{word}", order_by="_score", limit=k)
        assert got.schema.field("_score").type == pa.float32()
        assert got.column("id").to_pylist() == [i for _, i in want]
        assert got.column("_score").to_pylist() == [
            float(pa.scalar(s, pa.float32()).as_py()) for s, _ in want
        ]


def test_score_merge_across_splits_equals_a_full_sort(tmp_path: Path) -> None:
    table = build(tmp_path, 11)
    hits = []  # (word, score, split number, address, id, host) of every document, per word
    for number, path in enumerate(table.files):
        index = open_index(_split_directory(table, path, tmp_path / f"s{number}"))
        searcher = index.searcher()
        for word in WORDS[:4]:
            query = index.parse_query(word, ["message"])
            for score, address in searcher.search(query, limit=1000).hits:
                doc = searcher.doc(address)
                place = (address.segment_ord, address.doc)
                hits.append((word, _f32(score), number, place, doc["id"][0], doc["host"]))
    for word in WORDS[:4]:
        ranked = sorted((h for h in hits if h[0] == word), key=lambda h: (-h[1], h[2], h[3]))
        for k in (0, 1, 3, 25, 1000):
            got = table.search(f"message:{word}", order_by="_score", limit=k)
            assert got.column("id").to_pylist() == [h[4] for h in ranked[:k]]
            assert got.column("_score").to_pylist() == [h[1] for h in ranked[:k]]
        # Keys after _score, and _score ascending: every hit of a split is scored.
        got = table.search(f"message:{word}", order_by="_score, id DESC", limit=9)
        by_id = sorted(ranked, key=lambda h: (-h[1], -h[4]))
        assert got.column("id").to_pylist() == [h[4] for h in by_id[:9]]
        got = table.search(f"message:{word}", order_by="_score ASC", limit=9)
        worst = sorted(ranked, key=lambda h: (h[1], h[2], h[3]))
        assert got.column("id").to_pylist() == [h[4] for h in worst[:9]]
        # A where filter the index does not answer: every hit is scored, then filtered.
        kept = [h for h in ranked if h[5] and h[5][0].endswith("-1")]
        where = "host LIKE '%-1'"
        got = table.search(f"message:{word}", where=where, order_by="_score", limit=7)
        assert got.column("id").to_pylist() == [h[4] for h in kept[:7]]


@pytest.mark.parametrize(
    "where", ["host = 'web-1'", "host LIKE '%-1'", "host IN ('db', 'é')", "i >= 0", "id < 150"]
)
def test_where_filters_without_changing_scores(tmp_path: Path, where: str) -> None:
    """A row's ``_score`` is its score for the query whatever ``where=`` holds (exact
    conditions the index answers are filters, not scored clauses): the scores of a
    filtered search are those of the unfiltered one, row for row (DuckDB picks the rows)."""
    table = build(tmp_path, 13)
    for word in WORDS[:3]:
        every = table.search(f"message:{word}", order_by="_score", limit=1000)
        scores = dict(
            zip(every.column("id").to_pylist(), every.column("_score").to_pylist(), strict=True)
        )
        kept = duckdb.sql(f"select id from every where {where}").fetchall()
        got = table.search(f"message:{word}", where=where, order_by="_score", limit=1000)
        assert kept
        assert sorted(got.column("id").to_pylist()) == sorted(i for (i,) in kept)
        for i, score in zip(
            got.column("id").to_pylist(), got.column("_score").to_pylist(), strict=True
        ):
            assert score == scores[i], (word, i)


def _f32(value: float) -> float:
    return float(pa.scalar(value, pa.float32()).as_py())


def test_order_by_refusals(tmp_path: Path) -> None:
    table = build(tmp_path, 4)
    bad = [
        ({"order_by": "nope", "limit": 3}, "nope"),
        ({"order_by": "message", "limit": 3}, "message"),
        ({"order_by": "ts SIDEWAYS", "limit": 3}, "SIDEWAYS"),
        ({"order_by": "ts, ts DESC", "limit": 3}, "twice"),
        ({"order_by": "ts", "limit": None}, "limit"),
        ({"order_by": "ts", "limit": MAX_TOP + 1}, "limit"),
        ({"order_by": "ts,", "limit": 3}, "empty"),
        ({"order_by": "ts DESC now", "limit": 3}, "is not 'column'"),
        ({"order_by": 5, "limit": 3}, "order_by"),
    ]
    for arguments, named in bad:
        with pytest.raises(ArgumentError, match=named):
            table.search(**arguments)  # type: ignore[arg-type]


def _split_directory(table: SearchTable, path: str, target: Path) -> str:
    """The split's files unbundled into ``target``, as tantivy-py opens them."""
    split = Path(table.uri) / path
    unbundle_split(split.read_bytes(), target, path=str(split))
    for term in target.glob("*.term"):
        data = term.read_bytes()
        if dictionary_kind(data) == "sstable":
            term.write_bytes(to_fst(data))
    return str(target)


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_reference_splits_order_by_their_fast_fields(name: str, golden_copy: Any) -> None:
    table = open_table(str(golden_copy(name)))
    fast = [
        f.name
        for f in table.schema
        if f.name.lower() in table.partition_columns or _is_fast(table, f.name)
    ]
    assert fast
    rng = random.Random(name)
    for _ in range(4):
        keys = [(c, rng.random() < 0.5) for c in rng.sample(fast, min(2, len(fast)))]
        k = rng.choice([0, 1, 3, 1000])
        text = ", ".join(f"{c} {'DESC' if d else 'ASC'}" for c, d in keys)
        same_ids(table.search(order_by=text, limit=k), oracle(table, keys, k))
    if table.count():
        scored = table.search(order_by="_score", limit=5)
        assert scored.column("_score").to_pylist() == [1.0] * scored.num_rows


def _is_fast(table: SearchTable, name: str) -> bool:
    try:
        table.search(order_by=name, limit=0)
    except ArgumentError:
        return False
    return True


def test_score_beside_a_column_named_score_is_refused(tmp_path: Path) -> None:
    uri = str(tmp_path / "named")
    write_table(uri, pa.table({"_score": [1, 2], "m": ["a b", "b"]}))
    table = open_table(uri)
    with pytest.raises(ArgumentError, match="shadow"):
        table.search("m:b", order_by="_score", limit=1)
    assert table.search(order_by="m", limit=1).column("_score").to_pylist() == [1]


def test_companion_index_orders_by_fast_fields_and_refuses_score(tmp_path: Path) -> None:
    rng = random.Random(21)
    source = tmp_path / "src"
    source.mkdir()
    for number in range(3):
        count = 40
        part = pa.table(
            {
                "id": pa.array(range(number * count, (number + 1) * count), pa.int64()),
                "f": pa.array([rng.choice(FLOATS) for _ in range(count)], pa.float64()),
                "i": pa.array([rng.choice([None, 1, 2]) for _ in range(count)], pa.int64()),
            }
        )
        pq.write_table(part, source / f"part-{number:03d}.parquet")
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    table = open_table(str(tmp_path / "idx"))
    for text, keys in [
        ("f DESC, i", [("f", True), ("i", False)]),
        ("i, f", [("i", False), ("f", False)]),
    ]:
        for k in (0, 1, 17, 500):
            same_ids(table.search(order_by=text, limit=k), oracle(table, keys, k))
    with pytest.raises(CompanionError, match="_score"):
        table.search(order_by="_score", limit=3)


@pytest.mark.parametrize("seed", range(4))
def test_topk_merging_batch_by_batch_equals_duckdbs_order(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Merges after every batch (a tiny merge threshold) keep the same rows as one sort."""
    monkeypatch.setattr(topk, "_MIN_MERGE", 1)
    rng = random.Random(seed)
    data = rows(seed, 400).drop_columns(["p"])
    keys = [(c, rng.random() < 0.5) for c in rng.sample(["f", "i", "ts", "host", "flag"], 2)]
    numbered = data.append_column("rn", pa.array(range(data.num_rows), pa.int64()))
    order = ", ".join(f'"{c}" {"DESC NULLS LAST" if d else "ASC NULLS FIRST"}' for c, d in keys)
    for k in (1, 5, 64, 399, 1000):
        top = topk.TopK([topk.OrderKey(c, d) for c, d in keys], k)
        start = 0
        while start < data.num_rows:
            size = rng.randrange(1, 50)
            for batch in data.slice(start, size).to_batches():
                top.add(batch)
            start += size
        got = top.result()
        assert got is not None
        want = (
            duckdb.from_arrow(numbered)
            .query("t", f"SELECT id FROM t ORDER BY {order}, rn LIMIT {k}")
            .fetchall()
        )
        assert got.column("id").to_pylist() == [r[0] for r in want]
