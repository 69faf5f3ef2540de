"""A companion split's bytes: the stub doc store, and what the cuts must keep.

The stub store (``companion.stubstore``) must read like Tantivy's own store of
empty documents (tantivy-py's ``searcher.doc`` and this package's doc-store
parser) at a fixed size; phrase and exact queries on a companion must still
answer exactly as DuckDB over the source.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tantivy
from test_companion import canonical, duck

from indextables.search import build_companion, open_table
from indextables.search.companion.stubstore import STUB_BLOCK_DOCS, write_stub_stores
from indextables.search.read.docstore.store import read_store
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.tableaccess import open_table_store


def _index(directory: Path, docs: int, *, stored: bool = False) -> None:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("w", stored=stored, tokenizer_name="raw")
    builder.add_unsigned_field("n", fast=True)
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    for number in range(docs):
        doc = tantivy.Document()
        doc.add_text("w", f"w{number % 7}")
        doc.add_unsigned("n", number)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()


def _stores(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.store"))


@pytest.mark.parametrize("docs", [1, 2 * STUB_BLOCK_DOCS, 2 * STUB_BLOCK_DOCS + 1, 37_000])
def test_the_stub_store_reads_as_empty_documents_in_tantivy(tmp_path: Path, docs: int) -> None:
    _index(tmp_path, docs)
    (store,) = _stores(tmp_path)
    before = store.stat().st_size
    saved = write_stub_stores(str(tmp_path))
    after = store.stat().st_size
    assert saved == before - after
    if docs > STUB_BLOCK_DOCS:
        # Tantivy's own store costs ~4 bytes per empty document; the stub a block of
        # 1,024 and ~10 bytes per 1,024 documents
        assert before > 3 * docs
        assert saved > 0
        assert after < 5 * STUB_BLOCK_DOCS + docs // 50 + 200
    # 37,000 documents: 37 leaf checkpoints, so two upper skip-index layers are read too
    index = tantivy.Index.open(str(tmp_path))
    searcher = index.searcher()
    assert searcher.num_docs == docs
    picks = sorted({0, docs - 1, docs // 2, *range(0, docs, 997), min(docs - 1, STUB_BLOCK_DOCS)})
    for doc in picks:
        assert searcher.doc(tantivy.DocAddress(0, doc)).to_dict() == {}, doc
    with pytest.raises(ValueError):
        searcher.doc(tantivy.DocAddress(0, docs))
    # search and fast fields are untouched
    hits = searcher.search(index.parse_query("w:w3", ["w"]), limit=docs, count=True)
    assert hits.count == len(range(3, docs, 7))
    addresses = [a for _, a in hits.hits]
    assert sorted(searcher.fast_field_values("n", addresses)) == list(range(3, docs, 7))
    # this package's doc-store parser: every document in a block holding empty documents
    parsed = read_store(store.read_bytes())
    assert parsed.num_docs == docs
    assert parsed.compressor == ("none" if saved else "lz4")
    if saved:
        assert all(parsed.block_of(d) == d // STUB_BLOCK_DOCS for d in picks)


def test_tantivys_segment_merge_rewrites_stub_stores_as_ordinary_ones(tmp_path: Path) -> None:
    # Tantivy merges eight segments of one size; seven stubs and one ordinary store here.
    # Its block-copying path would misplace the stubs' shared blocks; their compressor
    # (none, the index's is lz4) sends it through re-reading every document instead.
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("n", fast=True)
    index = tantivy.Index(builder.build(), path=str(tmp_path))
    for segment in range(8):
        writer = index.writer(heap_size=50_000_000, num_threads=1)
        for number in range(segment * 3000, (segment + 1) * 3000):
            doc = tantivy.Document()
            doc.add_unsigned("n", number)
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        if segment < 7:
            assert write_stub_stores(str(tmp_path)) > 0
    (store,) = _stores(tmp_path)
    parsed = read_store(store.read_bytes())
    assert (parsed.num_docs, parsed.compressor) == (24_000, "lz4")
    index.reload()
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=24_000).hits
    addresses = [a for _, a in hits]
    assert sorted(searcher.fast_field_values("n", addresses)) == list(range(24_000))
    assert all(searcher.doc(a).to_dict() == {} for a in addresses[::97])


def test_a_store_with_stored_values_is_left_alone(tmp_path: Path) -> None:
    _index(tmp_path, 5000, stored=True)
    (store,) = _stores(tmp_path)
    before = store.read_bytes()
    assert write_stub_stores(str(tmp_path)) == 0
    assert store.read_bytes() == before
    searcher = tantivy.Index.open(str(tmp_path)).searcher()
    assert searcher.doc(tantivy.DocAddress(0, 4321)).to_dict() == {"w": [f"w{4321 % 7}"]}


# -- a companion: the store is the stub; phrase and exact queries stay exact -------------

WORDS = ["request", "served", "ok", "timeout", "café", "日本", "needle"]


def _source(root: Path, rows: int) -> pa.Table:
    rng = random.Random(25)

    def maybe(value: object) -> object:
        return None if rng.random() < 0.1 else value

    floats = [0.0, -0.0, float("nan"), float("inf"), 1.5]

    table = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "n": pa.array(
                [maybe(rng.choice([0, -1, 2**63 - 1, -(2**63), 7])) for _ in range(rows)],
                pa.int64(),
            ),
            "x": pa.array(
                [maybe(rng.choice(floats)) for _ in range(rows)],
                pa.float64(),
            ),
            "host": pa.array([maybe(f"host-{rng.randint(0, 40)}") for _ in range(rows)]),
            "message": pa.array(
                [
                    maybe(f"{rng.choice(WORDS)} {number} {rng.choice(WORDS)} {rng.choice(WORDS)}")
                    for number in range(rows)
                ]
            ),
        }
    )
    root.mkdir(parents=True)
    half = rows // 2
    pq.write_table(table.slice(0, half), root / "part-0.parquet", row_group_size=1000)
    pq.write_table(table.slice(half), root / "part-1.parquet", row_group_size=1000)
    return table


# (search query, the same as a DuckDB predicate)
QUERIES = {
    'message:"served ok"': "regexp_matches(message, '(^| )served ok( |$)')",
    'message:"ok served"': "regexp_matches(message, '(^| )ok served( |$)')",
    "message:needle": "regexp_matches(message, '(^| )needle( |$)')",
}
WHERES = [
    "id = 4321",
    "id IN (0, 9999, 5000)",
    "n = -9223372036854775808",
    "n = 9223372036854775807",
    "x = 1.5",
    "host = 'host-7'",
    "id >= 9990",
]


def test_a_companion_keeps_phrase_and_exact_queries_exact(tmp_path: Path) -> None:
    rows = 10_000
    root = tmp_path / "src"
    source_rows = _source(root, rows).to_pylist()
    index = tmp_path / "idx"
    cache = str(tmp_path / "cache")
    build_companion(
        str(root), str(index), source_format="parquet", indexing_modes={"message": "text"},
    )  # fmt: skip
    table = open_table(str(index), options={"spark.indextables.cache.directoryPath": cache})
    # the doc store of every split is the stub: a few kilobytes, not ~4 bytes a row
    store = open_table_store(str(index), {})
    for split in table._view.splits:
        directory = SplitCache(cache, 10**9).fetch(store, str(index), split.entry.ref)
        sizes = [os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)]
        stores = [
            os.path.getsize(os.path.join(directory, n))
            for n in os.listdir(directory)
            if n.endswith(".store")
        ]
        assert stores
        assert sum(stores) < 5 * STUB_BLOCK_DOCS + 1_000, stores
        assert sum(stores) < sum(sizes) // 10
    con = duckdb.connect()
    source = f"read_parquet(['{root / 'part-0.parquet'}', '{root / 'part-1.parquet'}'])"
    columns = ["id", "n", "x", "host", "message"]
    # a phrase holding a row's unique number (the benchmark's unique term per row)
    row = next(r for r in source_rows[17:] if r["message"] is not None)
    word, number = row["message"].split(" ")[:2]
    queries = {**QUERIES, f'message:"{word} {number}"': f"message LIKE '{word} {number} %'"}
    for query, predicate in queries.items():
        expected = duck(con, f"SELECT * FROM {source} WHERE {predicate}")
        found = table.search(query, columns=columns)
        assert expected.num_rows > 0, query
        assert canonical(found) == canonical(expected), query
        assert table.count(query) == expected.num_rows, query
    for where in WHERES:
        expected = duck(con, f"SELECT * FROM {source} WHERE {where}")
        found = table.search(where=where, columns=columns)
        assert expected.num_rows > 0, where
        assert canonical(found) == canonical(expected), where
    con.close()
