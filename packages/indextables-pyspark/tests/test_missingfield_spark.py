"""Spark's ``query`` option on a column a schema change added: on the splits written before
it the clause matches nothing (their index has no such field), as on a null value, so
random queries over old and added columns keep exactly the rows a Python model keeps."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import write_table

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FMT = "indextables"
TAGS = ["ab", "ac", "ba"]
WORDS = ["alpha", "bravo", "charlie"]
Row = dict[str, Any]


def _maybe(rng: random.Random, value: Any) -> Any:
    return None if rng.random() < 0.2 else value


def _clause(rng: random.Random) -> tuple[str, Callable[[Row], bool]]:
    kind = rng.randrange(6)
    tag, word, low = rng.choice(TAGS), rng.choice(WORDS), rng.randint(-3, 3)
    if kind == 0:
        return f"tag:{tag}", lambda r: r["tag"] == tag
    if kind == 1:
        return f"tag:{tag[0]}*", lambda r: r["tag"] is not None and r["tag"][0] == tag[0]
    if kind == 2:
        return f"body:{word}", lambda r: word in (r["body"] or "").split()
    if kind == 3:
        return f"n:[{low} TO 9]", lambda r: r["n"] is not None and r["n"] >= low
    if kind == 4:
        return "tag:*", lambda r: r["tag"] is not None
    host = rng.choice("abc")
    return f"host:{host}", lambda r: r["host"] == host


def _query(rng: random.Random) -> tuple[str, Callable[[Row], bool]]:
    (a, keep_a), (b, keep_b), (c, keep_c) = (_clause(rng) for _ in range(3))
    shape = rng.randrange(4)
    if shape == 0:
        return f"-{a}", lambda r: not keep_a(r)
    if shape == 1:
        return f"{a} OR {b}", lambda r: keep_a(r) or keep_b(r)
    if shape == 2:
        return f"{a} AND NOT {b}", lambda r: keep_a(r) and not keep_b(r)
    return f"({a} OR {b}) AND -{c}", lambda r: (keep_a(r) or keep_b(r)) and not keep_c(r)


def test_spark_query_option_on_added_columns_matches_nothing_on_older_splits(
    spark: Any, tmp_path: Path
) -> None:
    import indextables.pyspark as itp

    path = str(tmp_path / "t")
    rng = random.Random(41)
    old = [{"id": i, "host": rng.choice("abc")} for i in range(30)]
    write_table(path, pa.Table.from_pylist(old))
    new = [
        {
            "id": 30 + i,
            "host": rng.choice("abc"),
            "tag": _maybe(rng, rng.choice(TAGS)),
            "n": _maybe(rng, rng.randint(-4, 4)),
            "body": _maybe(rng, " ".join(rng.sample(WORDS, 2))),
        }
        for i in range(30)
    ]
    write_table(
        path,
        pa.Table.from_pylist(new),
        schema_mode="merge",
        options={"spark.indextables.indexing.typemap.body": "text"},
    )
    rows = [{"tag": None, "n": None, "body": None, **r} for r in old] + new
    for _ in range(4):
        query, keeps = _query(rng)
        want = sorted(r["id"] for r in rows if keeps(r))
        df = spark.read.format(FMT).option("query", query).load(path)
        assert sorted(r[0] for r in df.select("id").collect()) == want, query
        assert df.count() == len(want), query
    query, keeps = "tag:ab OR host:a", lambda r: r["tag"] == "ab" or r["host"] == "a"
    found = itp.search(spark, path, query).select("id").collect()
    assert sorted(r[0] for r in found) == sorted(r["id"] for r in rows if keeps(r))
