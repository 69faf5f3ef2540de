"""itp.search(order_by=, highlight=): the first rows in Spark's own order, and snippets.

The ordered answer is compared with Spark's ``orderBy(...).limit(k)`` over the
data source's rows (Spark's null and NaN order is the oracle), with ``id`` as the
last key so the order is total; ``_score`` and snippets with the engine's
``SearchTable.search`` of the same table (tested against tantivy-py itself).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pyarrow as pa
import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import ArgumentError
from indextables.search import open_table, write_table

pytestmark = [pytest.mark.spark, pytest.mark.integration]

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: Any) -> str:
    rng = random.Random(8)
    path = str(tmp_path_factory.mktemp("ranked") / "table")
    for start in (0, 60, 120):
        ids = list(range(start, start + 60))
        write_table(
            path,
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "latency": pa.array(
                        [rng.choice([None, -0.0, 0.0, 1.5, math.nan, -math.inf]) for _ in ids],
                        pa.float64(),
                    ),
                    "level": [rng.choice(["INFO", "ERROR", None]) for _ in ids],
                    "message": [
                        " ".join(rng.choices(["timeout", "disk", "<ok>", "full"], k=5)) for _ in ids
                    ],
                }
            ),
            options=OPTIONS,
        )
    return path


@pytest.mark.parametrize(
    ("order_by", "spark_order"),
    [
        ("latency DESC, id", ["latency desc_nulls_last", "id"]),
        ("latency, id DESC", ["latency asc_nulls_first", "id desc"]),
        ("level DESC, latency, id", ["level desc_nulls_last", "latency asc_nulls_first", "id"]),
    ],
)
@pytest.mark.parametrize("k", [0, 1, 25, 500])
def test_order_by_equals_sparks_order_by(
    spark: Any, ranked: str, order_by: str, spark_order: list[str], k: int
) -> None:
    from pyspark.sql import functions as F

    got = itp.search(spark, ranked, "message:timeout", order_by=order_by, limit=k)
    columns = []
    for item in spark_order:
        name, _, how = item.partition(" ")
        columns.append(getattr(F.col(name), how)() if how else F.col(name))
    want = (
        spark.read.format("indextables")
        .option("query", "message:timeout")
        .load(ranked)
        .orderBy(*columns)
        .limit(k)
    )
    assert [r["id"] for r in got.collect()] == [r["id"] for r in want.collect()]


def test_score_and_snippets_are_the_engines(spark: Any, ranked: str) -> None:
    got = itp.search(
        spark,
        ranked,
        "message:timeout OR message:disk",
        where="level = 'ERROR'",
        order_by="_score",
        limit=9,
        highlight=["message"],
        snippet_chars=12,
    )
    want = open_table(ranked).search(
        "message:timeout OR message:disk",
        where="level = 'ERROR'",
        order_by="_score",
        limit=9,
        highlight=["message"],
        snippet_chars=12,
    )
    assert got.columns == want.column_names
    rows = got.collect()
    assert [r["id"] for r in rows] == want.column("id").to_pylist()
    assert [r["_score"] for r in rows] == want.column("_score").to_pylist()
    assert [r["_snippet_message"] for r in rows] == want.column("_snippet_message").to_pylist()
    assert all("<b>" in r["_snippet_message"] for r in rows)


def test_order_by_refusals(spark: Any, ranked: str) -> None:
    with pytest.raises(ArgumentError, match="limit"):
        itp.search(spark, ranked, order_by="latency")
    with pytest.raises(ArgumentError, match="fast field"):
        itp.search(spark, ranked, order_by="message", limit=3)
    with pytest.raises(ArgumentError, match="not a stored text"):
        itp.search(spark, ranked, highlight=["level"])
