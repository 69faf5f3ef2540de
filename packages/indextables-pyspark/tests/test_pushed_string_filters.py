"""Spark's pushed ``StringStartsWith``/``StringEndsWith``/``StringContains`` on hostile strings,
and the engine's ``RLIKE`` against Spark's own (Java) regex.

Random values (seeded: unicode, combining marks, ``İ``, line breaks, ``""``, nulls,
``%``, ``_``, ``\\``) are written as a table and as Parquet. Each filter's rows
through the table equal Spark's filter over the Parquet copy. On the exact string
column the filters reach the term dictionary: the scan returns exactly the rows
the filter keeps. On the tokenized ``text`` column they are not pushed (its terms
are tokens): the scan returns every row and Spark's filter answers.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

from difftest.paths import scanned_ids

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

ALPHABET = ["a", "b", "-", "%", "_", "\\", "é", "e\u0301", "İ", "i", "日", "\U0001f600"]
ALPHABET += ["\n", "\r", " ", ".", "1", "$", "'"]
ROWS = 240


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return ""
    return "".join(rng.choices(ALPHABET, k=rng.randrange(1, 7)))


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("pushedstrings")
    path, parquet = str(root / "table"), str(root / "parquet")
    rng = random.Random(17)
    rows = [(i, v, v) for i, v in enumerate(_value(rng) for _ in range(ROWS))]
    for part in (rows[: ROWS // 2], rows[ROWS // 2 :]):
        frame = spark.createDataFrame(part, "id long, host string, message string").coalesce(1)
        writer = frame.write.format("indextables").mode("append")
        writer.option("spark.indextables.indexing.typemap.message", "text").save(path)
        frame.write.mode("append").parquet(parquet)
    return path, parquet


def _operands() -> list[str]:
    rng = random.Random(5)
    fixed = ["", "a", "%", "_", "\\", "a%", "%_", "é", "e\u0301", "İ", "\n", "日\U0001f600"]
    return fixed + [_value(rng) or "b" for _ in range(10)]


def _kept_ids(source: Any, flags: list[Any]) -> list[list[int]]:
    """For each boolean Column of ``flags``, the sorted ids of ``source``'s rows it keeps
    (``where``'s rule: null keeps nothing), all from one Spark job."""
    named = [flag.alias(f"k{i}") for i, flag in enumerate(flags)]
    rows = source.select("id", *named).collect()
    return [sorted(r["id"] for r in rows if r[f"k{i}"]) for i in range(len(flags))]


@pytest.mark.parametrize("method", ["startswith", "endswith", "contains"])
def test_pushed_string_filters_equal_parquet_and_reach_the_index(
    spark: Any, tables: tuple[str, str], method: str
) -> None:
    path, parquet = tables
    operands = _operands()
    # Spark's own filter over the Parquet copy is the oracle, one job for every operand.
    oracle = spark.read.parquet(parquet)
    wanted = _kept_ids(oracle, [getattr(F.col("host"), method)(op) for op in operands])
    for operand, expected in zip(operands, wanted, strict=True):
        # The exact column: pushed to the term dictionary, the scan returns only kept rows.
        condition = getattr(F.col("host"), method)(operand)
        scanned, got = scanned_ids(spark, path, condition, pushed=True)
        assert (got, scanned) == (expected, len(expected)), (method, "host", operand)
        # The text column: not pushed, the scan returns every row and Spark's filter answers.
        condition = getattr(F.col("message"), method)(operand)
        scanned, got = scanned_ids(spark, path, condition, pushed=True)
        assert (got, scanned) == (expected, ROWS), (method, "message", operand)


RLIKE_PATTERNS = [
    "",
    "a",
    "^a",
    "a$",
    "^$",
    ".",
    "^.$",
    "a.b",
    "\\\\",
    "[%_]",
    "[^a-z]",
    "\\s",
    "\\S+$",
    "\\d",
    "\\w\\W",
    "(a|b)+-",
    "é|İ",
    "e\u0301",
    "\\x{1F600}",
    "\\Q%_\\E",
    "a{2,}",
    "b*?\\$",
    "^\\r?\\n",
    ".$",
]


def test_engine_rlike_equals_spark_rlike(spark: Any, tables: tuple[str, str]) -> None:
    """The engine's ``where`` RLIKE (RE2 rows, Tantivy's regex on the index) keeps the rows
    Spark's Java regex keeps, on the Parquet copy: Java itself is the oracle."""
    from indextables.search import open_table

    path, parquet = tables
    source = spark.read.parquet(parquet)
    engine = open_table(path)
    wanted = _kept_ids(source, [F.col("host").rlike(p) for p in RLIKE_PATTERNS])
    for pattern, expected in zip(RLIKE_PATTERNS, wanted, strict=True):
        literal = "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"
        got = engine.search(where=f"host RLIKE {literal}", columns=["id"])
        assert sorted(got.column("id").to_pylist()) == expected, pattern
        assert engine.count(where=f"host REGEXP {literal}") == len(expected), pattern
        on_text = engine.search(where=f"message RLIKE {literal}", columns=["id"])
        assert sorted(on_text.column("id").to_pylist()) == expected, pattern
