"""Snippets (``highlight=``) on a companion index, whose text is the source's Parquet.

The oracle is a table of this package's own splits holding the same rows, one
split per source file (so each split's term statistics, which rank the
fragments, are those of the companion split indexing that file): every hit's
``_snippet_<column>`` is the same. Values hold HTML metacharacters, quotes,
accents, nulls and long texts.
"""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indextables.search import build_companion, open_table, write_table
from indextables.search.errors import ArgumentError

WORDS = ["alpha", "beta", "error", "timeout", "<b>", "a&b", '"quoted"', "café", "x>y", "ok"]
FILES = 3
PER_FILE = 60


def _rows(seed: int, start: int) -> pa.Table:
    rng = random.Random(seed)

    def text() -> str | None:
        if rng.random() < 0.1:
            return None
        return " ".join(rng.choices(WORDS, k=rng.randrange(1, 80)))

    return pa.table(
        {
            "id": pa.array(range(start, start + PER_FILE), pa.int64()),
            "msg": pa.array([text() for _ in range(PER_FILE)], pa.string()),
            "title": pa.array([text() for _ in range(PER_FILE)], pa.string()),
            "host": pa.array([rng.choice(["web", "db"]) for _ in range(PER_FILE)]),
        }
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("companionsnippets")
    source = root / "src"
    source.mkdir()
    plain = str(root / "plain")
    options = {
        "spark.indextables.indexing.typemap.msg": "text",
        "spark.indextables.indexing.typemap.title": "text",
    }
    for number in range(FILES):
        part = _rows(number, number * PER_FILE)
        pq.write_table(part, source / f"part-{number}.parquet")
        write_table(plain, part, options=options)
    index = str(root / "idx")
    result = build_companion(
        str(source), index, source_format="parquet",
        indexing_modes={"msg": "text", "title": "text"}, target_input_size=1,
    )  # fmt: skip
    assert result.splits_created == FILES
    return index, plain


def _by_id(table: pa.Table, columns: list[str]) -> dict[int, tuple[str | None, ...]]:
    return {row["id"]: tuple(row[f"_snippet_{c}"] for c in columns) for row in table.to_pylist()}


@pytest.mark.parametrize(
    ("query", "columns", "chars"),
    [
        ("msg:error", ["msg"], 150),
        ("msg:error OR msg:café", ["msg", "title"], 40),
        ("msg:timeout AND title:alpha", ["title", "msg"], 10),
        ('msg:"a&b"', ["msg"], 2000),
        ("title:ok", ["msg"], 1),
    ],
)
def test_companion_snippets_equal_a_split_of_the_same_rows(
    tables: tuple[str, str], query: str, columns: list[str], chars: int
) -> None:
    index, plain = tables
    companion, ours = open_table(index), open_table(plain)
    got = companion.search(query, highlight=columns, snippet_chars=chars)
    want = ours.search(query, highlight=columns, snippet_chars=chars)
    assert got.num_rows == want.num_rows > 0
    assert got.column_names[-len(columns) :] == [f"_snippet_{c}" for c in columns]
    assert _by_id(got, columns) == _by_id(want, columns)
    marked = any("<b>" in (s or "") for s in got.column(f"_snippet_{columns[0]}").to_pylist())
    assert marked == (f"{columns[0]}:" in query)  # a column the query does not reach: ""


def test_companion_snippets_with_columns_and_where(tables: tuple[str, str]) -> None:
    """The highlighted text is read for its snippet even when ``columns`` leaves it out."""
    index, plain = tables
    arguments = {"columns": ["id"], "where": "host = 'web'", "highlight": ["msg"]}
    got = open_table(index).search("msg:timeout", **arguments)  # type: ignore[arg-type]
    want = open_table(plain).search("msg:timeout", **arguments)  # type: ignore[arg-type]
    assert got.column_names == ["id", "_snippet_msg"]
    assert _by_id(got, ["msg"]) == _by_id(want, ["msg"])
    everything = open_table(index).search(highlight=["msg"], columns=["id"])
    assert everything.num_rows == FILES * PER_FILE
    nulls = open_table(plain).search(where="msg IS NULL", columns=["id"])
    empty = {r["id"] for r in everything.to_pylist() if r["_snippet_msg"] is None}
    assert empty == set(nulls.column("id").to_pylist())


def test_companion_highlight_refuses_exact_columns(tables: tuple[str, str]) -> None:
    index, _ = tables
    with pytest.raises(ArgumentError, match="host"):
        open_table(index).search("msg:error", highlight=["host"])


@pytest.mark.parametrize("query", ["msg:timeout", "msg:café OR msg:timeout", "s:A"])
def test_reference_companion_split_snippets_equal_tantivy_py(tmp_path: Path, query: str) -> None:
    """A companion split in tantivy4java's layout (nothing stored, written from its
    documented form): each hit's snippet is tantivy-py's ``SnippetGenerator`` on that
    index, given a document of the row's text from the source's Parquet."""
    import tantivy
    from companion_reference_fixture import (
        reference_doc_mapping,
        source_schema,
        write_reference_split,
    )
    from test_companion import hostile

    from indextables.search.query.searchoptions import SearchSpec
    from indextables.search.read.anysplit import read_any_split
    from indextables.search.read.snippets import Highlight
    from indextables.search.read.splitreader import SplitEntry
    from indextables.search.splits.splitfetch import SplitRef

    root = tmp_path / "src"
    files = ("data/part-00000.parquet", "data/part-00001.parquet")
    (root / "data").mkdir(parents=True)
    rng = random.Random(2025)
    texts: dict[int, str | None] = {}
    for relative, first in zip(files, (0, 200), strict=True):
        table = hostile(rng, first, 40).select(source_schema().names).cast(source_schema())
        pq.write_table(table, root / relative, row_group_size=8)
        texts.update(zip(table["id"].to_pylist(), table["msg"].to_pylist(), strict=True))
    directory = str(tmp_path / "split")
    write_reference_split(directory, str(root), files, reverse=True)
    entry = SplitEntry(SplitRef("x.split", 0), {}, reference_doc_mapping())
    schema = pa.schema([source_schema().field("id")])
    batches = read_any_split(
        directory, entry, schema, search=SearchSpec(query=query), conditions=(),
        companion_root=str(root), highlight=Highlight(("msg",), 60),
    )  # fmt: skip
    got = pa.Table.from_batches(list(batches))
    assert got.column_names == ["id", "_snippet_msg"]
    index = tantivy.Index.open(directory)
    searcher = index.searcher()
    parsed = index.parse_query(query, ["msg"])
    generator = tantivy.SnippetGenerator.create(searcher, parsed, index.schema, "msg")
    generator.set_max_num_chars(60)

    def snippet(text: str | None) -> str | None:
        if text is None:
            return None
        doc = tantivy.Document()
        doc.add_text("msg", text)
        return generator.snippet_from_doc(doc).to_html()

    hits = searcher.search(parsed, limit=1000).hits
    assert got.num_rows == len(hits) > 0
    want = {i: snippet(texts[i]) for i in got["id"].to_pylist()}
    assert dict(zip(got["id"].to_pylist(), got["_snippet_msg"].to_pylist(), strict=True)) == want
    marked = any("<b>" in (s or "") for s in want.values())
    assert marked == query.startswith("msg:")
