"""The engine's answers equal ``spark.read``'s on the same table (twin of the engine's
``test_search_differential.py``).

For a few seeds, the engine's random hostile table (every column kind, written by
``write_table`` in two appends, partitioned by a string and a decimal) is read
by Spark and by ``open_table``. Each random case (``query``/``textsearch``/
``fieldmatch`` read options, a ``where`` condition, column pairs included) is
answered by ``spark.read.format("indextables").options(...).load(path).where(w)``
and by ``SearchTable.search``/``count``; the row ids must be equal. Some
aggregations are compared with ``groupBy().agg()``.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from indextables.search import open_table, write_table

pytestmark = [
    pytest.mark.spark,
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::indextables.search.query.casenotice.CaseMismatchWarning"),
]
FMT = "indextables"
SEEDS = (5, 6)
ROWS = 120
CASES = 14


def _load(name: str) -> Any:
    """A helper module of the engine's tests (shared by path)."""
    path = Path(__file__).resolve().parents[2] / f"indextables-search/tests/{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


dc = _load("diffcases")


def _spark_ids(spark: Any, path: str, case: Any) -> list[int]:
    reader = spark.read.format(FMT)
    if case.query:
        reader = reader.option("query", case.query)
    for column, text in (case.textsearch or {}).items():
        reader = reader.option(f"textsearch.{column}", text)
    for column, value in (case.fieldmatch or {}).items():
        reader = reader.option(f"fieldmatch.{column}", value)
    frame = reader.load(path)
    if case.where:
        frame = frame.where(case.where)
    return sorted(r[0] for r in frame.select("id").collect())


@pytest.mark.parametrize("seed", SEEDS)
def test_engine_answers_as_spark_reads(spark: Any, tmp_path: Path, seed: int) -> None:
    data = dc.rows(seed, ROWS)
    path = str(tmp_path / "t")
    half = ROWS // 2
    for start in (0, half):
        write_table(path, data.slice(start, half), partition_by=dc.PARTITION_BY, options=dc.OPTIONS)
    table = open_table(path)
    # Column pairs, whose coercions the engine reproduces: checked against Spark itself.
    pairs = ["f32 < f64", "NOT (f64 = f32)", "i8 >= i16", "i32 <> i64", "dec < i32", "s > t"]
    pairs += ["s = p", "ts <= ts", "b < b OR ntz = ntz", "day <> day"]
    pairs += ["ntz >= TIMESTAMP_NTZ '1970-01-01 00:00:00'"]
    pairs += ["ts < TIMESTAMP_LTZ '2024-02-29 12:30:00.123456Z'"]
    for case in [dc.Case(where=w) for w in pairs] + dc.cases(seed, CASES):
        args = {"where": case.where, "textsearch": case.textsearch, "fieldmatch": case.fieldmatch}
        got = table.search(case.query, columns=["id"], **args).column("id").to_pylist()
        want = _spark_ids(spark, path, case)
        assert sorted(got) == want, case
        assert table.count(case.query, **args) == len(want), case
        # The oracle of the engine's own test agrees too (the tokenizer model, DuckDB).
        matched = {r["id"] for r in data.to_pylist() if case.match(r)}
        assert matched >= set(want), case


@pytest.mark.parametrize("seed", SEEDS)
def test_aggregate_as_spark_groups(spark: Any, tmp_path: Path, seed: int) -> None:
    from pyspark.sql import functions as F

    data = dc.rows(seed, ROWS)
    path = str(tmp_path / "t")
    write_table(path, data, partition_by=dc.PARTITION_BY, options=dc.OPTIONS)
    table = open_table(path)
    frame = spark.read.format(FMT).load(path)
    for group, where in (("s", "i16 > 0"), ("p", None), ("b", "f32 < f64"), ("day", "s <> t")):
        got = table.aggregate(
            group_by=[group],
            metrics={
                "n": "count",
                "total": ("sum", "i32"),
                "low": ("min", "i16"),
                "high": ("max", "f64"),
                "mean": ("avg", "i8"),
            },
            where=where,
        ).to_pylist()
        source = frame.where(where) if where else frame
        rows = source.groupBy(group).agg(
            F.count(F.lit(1)).alias("n"),
            F.sum("i32").alias("total"),
            F.min("i16").alias("low"),
            F.max("f64").alias("high"),
            F.avg("i8").alias("mean"),
        )
        want = {r[group]: r.asDict() for r in rows.collect()}
        assert len(got) == len(want), (group, where)
        for row in got:
            expected = want[row[group]]
            for name in ("n", "total", "low"):
                assert row[name] == expected[name], (group, where, name)
            for name in ("high", "mean"):
                a, b = row[name], expected[name]
                if a is None or b is None:
                    assert a is b, (group, where, name)
                elif math.isnan(b):
                    assert math.isnan(a), (group, where, name)
                else:
                    assert math.isclose(a, b, rel_tol=1e-12), (group, where, name)
