"""A search builds each split's query once: the fuzzy, wildcard and phrase-prefix terms of
query text are expanded over a split's terms, which costs a walk of its term dictionary,
so a second build of the same split's query would walk it again."""

from __future__ import annotations

import collections
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.query import searchoptions

TEXTS = ["helo world", "hello", "help me", "yellow", "hallo there", "jello", "held", "x"]


def _osa(first: str, second: str) -> int:
    """Optimal string alignment distance, the textbook table."""
    rows, cols = len(first) + 1, len(second) + 1
    table = [[max(i, j) if i == 0 or j == 0 else 0 for j in range(cols)] for i in range(rows)]
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if first[i - 1] == second[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and first[i - 1] == second[j - 2] and first[i - 2] == second[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[-1][-1]


def _near(term: str, distance: int) -> list[int]:
    return [i for i, t in enumerate(TEXTS) if any(_osa(term, w) <= distance for w in t.split())]


@pytest.fixture(scope="module")
def uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(Path(tmp_path_factory.mktemp("builds")) / "t")
    data = pa.table({"id": list(range(len(TEXTS))), "t": TEXTS})
    write_table(path, data, options={"spark.indextables.indexing.typemap.t": "text"})
    assert len(open_table(path).files) == 1
    return path


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """Parses of query text by the index they ran on: ``split`` (an index holding rows) or
    ``validation`` (the empty index the text is checked on before any split is read)."""
    counted: collections.Counter[str] = collections.Counter()
    parse = searchoptions._parse

    def counting(index: Any, *args: Any, **kwargs: Any) -> Any:
        counted["split" if index.searcher().num_docs else "validation"] += 1
        return parse(index, *args, **kwargs)

    monkeypatch.setattr(searchoptions, "_parse", counting)
    return counted


def _asked(uri: str) -> dict[str, Callable[[str], list[int]]]:
    table = open_table(uri)

    def ids(reader: Callable[[str], pa.Table]) -> Callable[[str], list[int]]:
        return lambda query: sorted(reader(query).column("id").to_pylist())

    def counted(query: str) -> list[int]:
        return [table.count(query)]

    def aggregated(query: str) -> list[int]:
        return [table.aggregate(metrics={"c": "count"}, query=query).column("c")[0].as_py()]

    return {
        "search": ids(lambda q: table.search(q, columns=["id"])),
        "scan": ids(lambda q: table.scan(q, columns=["id"]).read_all()),
        "count": counted,
        "aggregate": aggregated,
    }


@pytest.mark.parametrize("call", ["search", "scan", "count", "aggregate"])
@pytest.mark.parametrize(
    ("query", "term", "distance"), [("t:hello~1", "hello", 1), ("t:helo~2", "helo", 2)]
)
def test_a_fuzzy_search_of_one_split_parses_once_on_it(
    uri: str, parses: collections.Counter[str], call: str, query: str, term: str, distance: int
) -> None:
    got = _asked(uri)[call](query)
    near = _near(term, distance)
    assert near  # the oracle finds rows: the parse count is of a search with an answer
    assert got == (near if call in ("search", "scan") else [len(near)])
    assert parses["split"] == 1
    assert parses["validation"] <= 1


def test_a_wildcard_and_fuzzy_search_parses_once_per_split(
    uri: str, parses: collections.Counter[str]
) -> None:
    ids = _asked(uri)["search"]("t:hel* AND t:world~1")
    assert ids == [i for i, t in enumerate(TEXTS) if "world" in t.split()]
    assert parses["split"] == 1
