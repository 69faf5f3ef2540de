"""The ``query`` option through Spark: clauses without a token match nothing, float bounds
in exponent notation are read, and text nested past the limit is a typed error (it had
crashed the interpreter inside Tantivy's parser)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import QuerySyntaxError
from indextables.search.query.querylimits import MAX_QUERY_DEPTH

pytestmark = [pytest.mark.spark, pytest.mark.integration]

WORDS = ["alpha", "beta", "gamma"]


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(3)
    rows = []
    for i in range(48):
        text = " ".join(w for j, w in enumerate(WORDS) if i >> j & 1)
        magnitude = rng.choice([1e-5, 1e-300, 1e20, 1e308, 5e-324, 1.0])
        rows.append({"id": i, "t": text, "b": bool(i >> 3 & 1), "d": -magnitude * rng.random()})
    return rows


ROWS = _rows()


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(Path(tmp_path_factory.mktemp("querytext")) / "t")
    df = spark.createDataFrame(ROWS, "id long, t string, b boolean, d double")
    options = {
        "spark.indextables.indexing.typemap.t": "text",
        "spark.indextables.indexing.fastfields": "d,b,id",
    }
    df.write.format("indextables").options(**options).mode("append").save(path)
    return path


def _read_ids(spark: Any, path: str, query: str) -> list[int]:
    df = spark.read.format("indextables").option("query", query).load(path)
    return sorted(r["id"] for r in df.select("id").collect())


@pytest.mark.parametrize(
    ("query", "keeps"),
    [
        ('b:false AND t:"!!"', lambda r: False),
        ("+b:false +t:" + "z" * 300, lambda r: False),
        ('t:alpha && t:"-"', lambda r: False),
        ('b:false OR t:""', lambda r: not r["b"]),
        ('t:alpha AND NOT t:"!!"', lambda r: "alpha" in r["t"].split()),
        ("d:[-1e-5 TO 0]", lambda r: -1e-5 <= r["d"] <= 0),
        ("d:<-1e20", lambda r: r["d"] < -1e20),
        ("d:[-5e-324 TO 0]", lambda r: -5e-324 <= r["d"] <= 0),
        ("d:[-1.0E308 TO -1.0E-300]", lambda r: -1e308 <= r["d"] <= -1e-300),
        # Wildcard, fuzzy and regex terms (query/termexpand.py, query/fuzzyterms.py).
        ("t:Alp*", lambda r: any(w.startswith("alp") for w in r["t"].split())),
        ("t:*mma AND NOT t:b?ta", lambda r: "gamma" in r["t"].split() and "beta" not in r["t"]),
        ("t:alpah~1", lambda r: "alpha" in r["t"].split()),
        ("t:/(be|ga).*/", lambda r: "beta" in r["t"].split() or "gamma" in r["t"].split()),
    ],
)
def test_spark_reads_answer_as_the_model(spark: Any, table: str, query: str, keeps: Any) -> None:
    want = sorted(r["id"] for r in ROWS if keeps(r))
    assert _read_ids(spark, table, query) == want
    assert sorted(r["id"] for r in itp.search(spark, table, query).collect()) == want
    assert itp.count(spark, table, query=query) == len(want)


def test_textsearch_with_a_tokenless_clause(spark: Any, table: str) -> None:
    df = spark.read.format("indextables").option("textsearch.t", 'alpha AND "!!"').load(table)
    assert df.count() == 0


@pytest.mark.parametrize("levels", [MAX_QUERY_DEPTH + 1, 10_000])
def test_nesting_past_the_limit_is_a_query_syntax_error(
    spark: Any, table: str, levels: int
) -> None:
    query = "(" * levels + "t:alpha" + ")" * levels
    with pytest.raises(QuerySyntaxError, match="MAX_QUERY_DEPTH"):
        itp.count(spark, table, query=query)
    with pytest.raises(Exception, match="MAX_QUERY_DEPTH"):
        _read_ids(spark, table, query)
    inside = "(" * MAX_QUERY_DEPTH + "t:alpha" + ")" * MAX_QUERY_DEPTH
    assert itp.count(spark, table, query=inside) == sum("alpha" in r["t"].split() for r in ROWS)
