"""Snippets (``highlight=``) against tantivy-py's own SnippetGenerator on the same splits.

Random tables (seeded) whose text holds HTML metacharacters, quotes, accents,
nulls and long values, written in several appends and partitions, are searched
with ``highlight``; each split is opened with tantivy-py, the same query parsed
there, and every hit's ``SnippetGenerator.snippet_from_doc(doc).to_html()`` is the
expected snippet of that row.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import tantivy

from indextables.protocol.splitbundle import unbundle_split
from indextables.search import SearchTable, open_table, write_table
from indextables.search.errors import ArgumentError
from indextables.search.schema.tokenizers import open_index
from indextables.search.splits.termdict import dictionary_kind, to_fst

sys.path.insert(0, str(Path(__file__).resolve().parent))
from goldenfixtures import GOLDEN_NAMES

OPTIONS = {
    "spark.indextables.indexing.typemap.message": "text",
    "spark.indextables.indexing.typemap.title": "text",
}
WORDS = ["alpha", "beta", "error", "timeout", "<b>", "a&b", '"quoted"', "café", "x>y", "ok"]


def rows(seed: int, count: int) -> pa.Table:
    rng = random.Random(seed)

    def text() -> str | None:
        if rng.random() < 0.1:
            return None
        return " ".join(rng.choices(WORDS, k=rng.randrange(1, 60)))

    return pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "message": pa.array([text() for _ in range(count)], pa.string()),
            "title": pa.array([text() for _ in range(count)], pa.string()),
            "host": pa.array([rng.choice(["web", "db"]) for _ in range(count)]),
            "p": pa.array([rng.choice(["a", "b"]) for _ in range(count)]),
        }
    )


def build(tmp_path: Path, seed: int, count: int = 180) -> SearchTable:
    data = rows(seed, count)
    uri = str(tmp_path / f"t{seed}")
    for start in range(0, count, count // 3):
        write_table(uri, data.slice(start, count // 3), partition_by=["p"], options=OPTIONS)
    return open_table(uri)


def split_index(table: SearchTable, path: str, target: Path) -> tantivy.Index:
    split = Path(table.uri) / path
    unbundle_split(split.read_bytes(), target, path=str(split))
    for term in target.glob("*.term"):
        data = term.read_bytes()
        if dictionary_kind(data) == "sstable":
            term.write_bytes(to_fst(data))
    return open_index(str(target))


def expected(
    table: SearchTable, tmp_path: Path, query: str, columns: list[str], chars: int
) -> dict[int, dict[str, str | None]]:
    """Row id -> column -> tantivy-py's snippet of that row, split by split."""
    found: dict[int, dict[str, str | None]] = {}
    for number, path in enumerate(table.files):
        index = split_index(table, path, tmp_path / f"split{number}")
        searcher = index.searcher()
        parsed = index.parse_query(query, ["message"])
        generators = {}
        for column in columns:
            generator = tantivy.SnippetGenerator.create(searcher, parsed, index.schema, column)
            generator.set_max_num_chars(chars)
            generators[column] = generator
        for _, address in searcher.search(parsed, limit=10_000).hits:
            doc = searcher.doc(address)
            found[doc["id"][0]] = {
                c: None if doc.get_first(c) is None else g.snippet_from_doc(doc).to_html()
                for c, g in generators.items()
            }
    return found


@pytest.mark.parametrize("seed", [1, 2])
def test_snippets_equal_tantivys_snippet_generator(tmp_path: Path, seed: int) -> None:
    table = build(tmp_path, seed)
    rng = random.Random(seed)
    for number in range(5):
        words = rng.sample(["alpha", "error", "timeout", "café", "b", "y"], rng.randrange(1, 3))
        query = " OR ".join(f"message:{w}" for w in words)
        chars = rng.choice([1, 10, 40, 150, 2000])
        columns = ["message", "title"] if number % 2 else ["message"]
        got = table.search(query, highlight=columns, snippet_chars=chars)
        want = expected(table, tmp_path / str(number), query, columns, chars)
        assert got.num_rows == len(want)
        assert got.column_names[-len(columns) :] == [f"_snippet_{c}" for c in columns]
        for row in got.to_pylist():
            assert {c: row[f"_snippet_{c}"] for c in columns} == want[row["id"]]
        assert any("<b>" in (row[f"_snippet_{columns[0]}"] or "") for row in got.to_pylist())


def test_snippets_with_order_by_and_where(tmp_path: Path) -> None:
    table = build(tmp_path, 3)
    query = "message:error"
    want = expected(table, tmp_path / "w", query, ["message"], 150)
    got = table.search(query, highlight=["message"], order_by="_score", limit=5)
    assert got.column_names[-2:] == ["_score", "_snippet_message"]
    for row in got.to_pylist():
        assert row["_snippet_message"] == want[row["id"]]["message"]
    kept = table.search(query, where="host = 'web'", highlight=["message"], order_by="id", limit=9)
    assert kept.num_rows == min(9, sum(1 for h in table.search(query, where="host = 'web'")["id"]))
    for row in kept.to_pylist():
        assert row["_snippet_message"] == want[row["id"]]["message"]


def test_highlight_refusals(tmp_path: Path) -> None:
    table = build(tmp_path, 4)
    bad = [
        ({"highlight": ["nope"]}, "nope"),
        ({"highlight": ["host"]}, "host"),
        ({"highlight": "message"}, "highlight"),
        ({"highlight": ["message", "MESSAGE"]}, "twice"),
        ({"highlight": ["message"], "snippet_chars": 0}, "snippet_chars"),
        ({"highlight": ["message"], "snippet_chars": True}, "snippet_chars"),
    ]
    for arguments, named in bad:
        with pytest.raises(ArgumentError, match=named):
            table.search("message:error", **arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_reference_splits_refuse_highlight_on_exact_fields(name: str, golden_copy: Any) -> None:
    """The reference tables' string fields are exact (raw tokenizer): no snippets."""
    table = open_table(str(golden_copy(name)))
    text = next(f.name for f in table.schema if pa.types.is_string(f.type))
    with pytest.raises(ArgumentError, match="not a stored text"):
        table.search(highlight=[text])
