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

from difftest.paths import pushdown, scanned_rows

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


def _ids(frame: Any) -> list[int]:
    return sorted(r["id"] for r in frame.select("id").collect())


def _operands() -> list[str]:
    rng = random.Random(5)
    fixed = ["", "a", "%", "_", "\\", "a%", "%_", "é", "e\u0301", "İ", "\n", "日\U0001f600"]
    return fixed + [_value(rng) or "b" for _ in range(10)]


@pytest.mark.parametrize("method", ["startswith", "endswith", "contains"])
def test_pushed_string_filters_equal_parquet_and_reach_the_index(
    spark: Any, tables: tuple[str, str], method: str
) -> None:
    path, parquet = tables
    source = spark.read.parquet(parquet)
    sql = {"startswith": "startswith", "endswith": "endswith", "contains": "contains"}[method]
    for operand in _operands():
        expected = _ids(source.where(getattr(F.col("host"), method)(operand)))
        for column in ("host", "message"):
            table = spark.read.format("indextables").load(path)
            with pushdown(spark, True):
                got = _ids(table.where(getattr(F.col(column), method)(operand)))
            assert got == expected, (method, column, operand)
        literal = "'" + operand.replace("\\", "\\\\").replace("'", "\\'") + "'"
        scanned, kept = scanned_rows(spark, path, f"{sql}(host, {literal})", pushed=True)
        assert (scanned, kept) == (len(expected), len(expected)), (method, operand)
        scanned, kept = scanned_rows(spark, path, f"{sql}(message, {literal})", pushed=True)
        assert (scanned, kept) == (ROWS, len(expected)), (method, operand)


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
    for pattern in RLIKE_PATTERNS:
        expected = _ids(source.where(F.col("host").rlike(pattern)))
        literal = "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"
        got = engine.search(where=f"host RLIKE {literal}", columns=["id"])
        assert sorted(got.column("id").to_pylist()) == expected, pattern
        assert engine.count(where=f"host REGEXP {literal}") == len(expected), pattern
        on_text = engine.search(where=f"message RLIKE {literal}", columns=["id"])
        assert sorted(on_text.column("id").to_pylist()) == expected, pattern
