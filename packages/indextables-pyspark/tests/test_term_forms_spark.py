"""Bare, multi-token, escaped, boosted and phrase-prefix terms through Spark: the ``query``
and ``textsearch.<column>`` options, ``itp.search`` and ``itp.count`` against a Python
model of the analyzers, and the expansion limit as a read option."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp

pytestmark = [pytest.mark.spark, pytest.mark.integration]

WORDS = ["web", "WEB", "1a", "17", "db", "\u0130stanbul", "stra\u00dfe", "quick", "brown"]
WORDS += [f"br{i:02d}" for i in range(55)]
GLUE = [" ", "-", " ", ". "]
LIMIT_KEY = "spark.indextables.query.maxTermExpansions"


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(45)
    rows = []
    for i in range(120):
        message = "".join(rng.choice(WORDS) + rng.choice(GLUE) for _ in range(rng.randint(0, 5)))
        host = rng.choice(["web-1", "web-10", "a*b", "axb", "a?b", "db-2"])
        rows.append({"id": i, "message": message, "host": host})
    return rows


ROWS = _rows()


def tokens(text: str) -> list[str]:
    """The ``default`` analyzer: runs of letters and digits, lowercased character by
    character."""
    return ["".join(c.lower() for c in run) for run in re.findall(r"[^\W_]+", text)]


def osa(first: str, second: str) -> int:
    """Optimal string alignment distance, the textbook table."""
    rows, cols = len(first) + 1, len(second) + 1
    grid = [[max(i, j) if i == 0 or j == 0 else 0 for j in range(cols)] for i in range(rows)]
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if first[i - 1] == second[j - 1] else 1
            grid[i][j] = min(grid[i - 1][j] + 1, grid[i][j - 1] + 1, grid[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and first[i - 1] == second[j - 2] and first[i - 2] == second[j - 1]:
                grid[i][j] = min(grid[i][j], grid[i - 2][j - 2] + 1)
    return grid[-1][-1]


def has_token(row: dict[str, Any], test: Any) -> bool:
    return any(test(t) for t in tokens(row["message"]))


def phrase(row: dict[str, Any], first: str, prefix: str) -> bool:
    found = tokens(row["message"])
    return any(a == first and b.startswith(prefix) for a, b in itertools.pairwise(found))


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(Path(tmp_path_factory.mktemp("termforms")) / "t")
    df = spark.createDataFrame(ROWS, "id long, message string, host string")
    options = {"spark.indextables.indexing.typemap.message": "text"}
    df.write.format("indextables").options(**options).mode("append").save(path)
    return path


def _ids(df: Any) -> list[int]:
    return sorted(r["id"] for r in df.select("id").collect())


CASES = [
    ("br0*", lambda r: has_token(r, lambda t: t.startswith("br0"))),
    (
        "message:web-1*",
        lambda r: has_token(r, lambda t: t == "web") and has_token(r, lambda t: t.startswith("1")),
    ),
    ("\u0130stan*^2", lambda r: has_token(r, lambda t: t.startswith("i\u0307stan"))),
    ("strasse~2", lambda r: has_token(r, lambda t: osa("strasse", t) <= 2)),
    ("/br[0-1]5/", lambda r: has_token(r, lambda t: t in ("br05", "br15"))),
    ('message:"quick br"*', lambda r: phrase(r, "quick", "br")),
    ("host:a\\*b", lambda r: r["host"] == "a*b"),
    ("host:web-1*", lambda r: r["host"].startswith("web-1")),
]


@pytest.mark.parametrize(("query", "keeps"), CASES)
def test_query_option_itp_search_and_count(spark: Any, table: str, query: str, keeps: Any) -> None:
    want = sorted(r["id"] for r in ROWS if keeps(r))
    read = spark.read.format("indextables").option("query", query).load(table)
    assert _ids(read) == want
    assert _ids(itp.search(spark, table, query)) == want
    assert itp.count(spark, table, query=query) == len(want)


def test_textsearch_takes_bare_patterns_on_its_column(spark: Any, table: str) -> None:
    read = spark.read.format("indextables").option("textsearch.message", '"web 1"* OR db*')
    want = [
        r["id"] for r in ROWS if phrase(r, "web", "1") or has_token(r, lambda t: t.startswith("db"))
    ]
    assert _ids(read.load(table)) == sorted(want)


def test_the_expansion_limit_is_a_read_option(spark: Any, table: str) -> None:
    from pyspark.errors import AnalysisException, PythonException

    reader = spark.read.format("indextables").option(LIMIT_KEY, "20").option("query", "br*")
    # Counted on each split, so raised by the task reading it.
    with pytest.raises(
        PythonException, match=r"QuerySyntaxError: .*'br\*' stands for more than 20 terms"
    ):
        reader.load(table).collect()
    with pytest.raises(AnalysisException, match=r"OptionError: option " + re.escape(LIMIT_KEY)):
        spark.read.format("indextables").option(LIMIT_KEY, "0").load(table).collect()
    kept = spark.read.format("indextables").option(LIMIT_KEY, "20").option("query", "br1*")
    assert _ids(kept.load(table)) == sorted(
        r["id"] for r in ROWS if has_token(r, lambda t: t.startswith("br1"))
    )
