"""``SearchTable.search/count(where=...)`` return what ``spark.read...where(...)`` returns.

For a few seeds, a small random table of hostile values (nulls, NaN of both
signs, -0.0, infinities, extreme integers, empty and unicode strings, dates
near the limits, timestamps) is written by Spark, in two appends with a
partition column; random conditions are then evaluated by Spark
(``spark.read.format("indextables").load(path).where(w)``) and by the engine
without Spark (``open_table(path).search(where=w)`` and ``.count(where=w)``),
and the rows compared as multisets. Conditions the engine refuses
(``QuerySyntaxError``) are not compared; a test checks that most compile.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from indextables.search import open_table
from indextables.search.errors import QuerySyntaxError

pytestmark = [pytest.mark.spark, pytest.mark.integration]

SEEDS = (3, 17)
ROWS = 24
CONDITIONS = 24
NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0000))[0]
UTC = dt.UTC

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("i", LongType()),
        StructField("n", IntegerType()),
        StructField("d", DoubleType()),
        StructField("f", FloatType()),
        StructField("s", StringType()),
        StructField("dt", DateType()),
        StructField("ts", TimestampType()),
        StructField("b", BooleanType()),
        StructField("p", IntegerType()),
    ]
)
INTS = [0, 1, -1, 7, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 3_000_000_000]
INT32 = [0, 1, -5, 2**31 - 1, -(2**31)]
DOUBLES = [0.0, -0.0, 1.5, -2.25, 0.1, math.nan, NEG_NAN, math.inf, -math.inf, 1e300, 3.0]
STRINGS = ["", "a", "A", "ab", "a%", "a_b", "\u00e9", "\U0001f600", "z\n", "it's", "a\\b"]
DATES = [dt.date(1, 1, 1), dt.date(1970, 1, 1), dt.date(2024, 2, 29), dt.date(9999, 12, 31)]
TIMES = [
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
]

NUMBERS = [
    "0",
    "1",
    "-1",
    "7",
    "2147483647",
    "3000000000",
    "9223372036854775807",
    "100000000000000000000",
    "1.5",
    "-0.5",
    "0.1",
    "3.00",
    "1e3",
    "-2.5e0",
    "1e300",
    "0.0",
]
LITERALS: dict[str, list[str]] = {
    "i": NUMBERS,
    "n": NUMBERS,
    "p": ["0", "1", "2", "1.5", "100000000000000000000", "-100000000000000000000.5"],
    "d": NUMBERS,
    "f": ["0", "1", "-1", "1.5", "0.1", "-0.5", "1e3", "3.00", "1e300"],
    "s": [
        "''",
        "'a'",
        "'A'",
        "'a\\\\b'",
        "'it\\'s'",
        "'\u00e9'",
        "'\U0001f600'",
        "'z\\n'",
        "'a_b'",
    ],
    "dt": ["'0001-01-01'", "'1970-01-01'", "DATE '2024-02-29'", "'9999-12-31'"],
    "ts": [
        "'1970-01-01 00:00:00Z'",
        "'2024-02-29 23:59:59.999999Z'",
        "'2024-03-01T00:59:59+01:00'",
    ],
    "b": ["true", "false"],
}
PATTERNS = ["'%'", "'_'", "'a%'", "'%a%'", "'a\\\\_b'", "'a_b'", "'%\u00e9'", "''", "'it%'"]


def _rows(seed: int) -> list[tuple[Any, ...]]:
    rnd = random.Random(seed)

    def pick(values: list[Any]) -> Any:
        return rnd.choice([None, *values])

    return [
        (
            k,
            pick(INTS),
            pick(INT32),
            pick(DOUBLES),
            pick(DOUBLES),
            pick(STRINGS),
            pick(DATES),
            pick(TIMES),
            pick([True, False]),
            rnd.choice([None, 1, 2]),
        )
        for k in range(ROWS)
    ]


def _leaf(rnd: random.Random) -> str:
    column = rnd.choice(list(LITERALS))
    shape = rnd.choice(["cmp", "cmp", "in", "null", "like"])
    if shape == "null":
        return f"{column} IS {rnd.choice(['', 'NOT '])}NULL"
    if shape == "like" and column == "s":
        return f"s {rnd.choice(['', 'NOT '])}LIKE {rnd.choice(PATTERNS)}"
    values = LITERALS[column]
    if shape == "in":
        chosen = rnd.sample(values, min(len(values), rnd.randint(1, 3)))
        return f"{column} {rnd.choice(['', 'NOT '])}IN ({', '.join(chosen)})"
    op = rnd.choice(["=", "<>", "!=", "<", "<=", ">", ">="])
    name = rnd.choice([column, column.upper(), f"`{column}`"])
    return f"{name} {op} {rnd.choice(values)}"


def _condition(rnd: random.Random, depth: int = 0) -> str:
    if depth >= 2 or rnd.random() < 0.4:
        return _leaf(rnd)
    if rnd.random() < 0.2:
        return f"NOT ({_condition(rnd, depth + 1)})"
    joiner = rnd.choice(["AND", "OR"])
    return f"({_condition(rnd, depth + 1)}) {joiner} ({_condition(rnd, depth + 1)})"


def _multiset(rows: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    def key(value: Any) -> Any:
        if isinstance(value, float):
            return ("nan",) if math.isnan(value) else ("float", value)
        if isinstance(value, dt.datetime):
            return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return value

    return Counter(tuple(sorted((k, repr(key(v))) for k, v in row.items())) for row in rows)


@pytest.fixture(scope="module", params=SEEDS)
def table(request: Any, spark: Any, tmp_path_factory: Any) -> tuple[int, str]:
    seed: int = request.param
    path = str(tmp_path_factory.mktemp(f"where{seed}") / "table")
    rows = _rows(seed)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    for part in (rows[: ROWS // 2], rows[ROWS // 2 :]):
        frame = spark.createDataFrame(part, SCHEMA).coalesce(1)
        frame.write.format("indextables").option("partitionBy", "p").mode("append").save(path)
    return seed, path


def test_search_and_count_equal_spark_read(spark: Any, table: tuple[int, str]) -> None:
    seed, path = table
    rnd = random.Random(seed * 7919)
    searchable = open_table(path)
    frame = spark.read.format("indextables").load(path)
    compared, refused, differences = 0, [], []
    everything = _multiset([r.asDict() for r in frame.collect()])
    assert _multiset(searchable.search().to_pylist()) == everything
    for _ in range(CONDITIONS):
        where = _condition(rnd)
        try:
            found = searchable.search(where=where)
            counted = searchable.count(where=where)
        except QuerySyntaxError:
            refused.append(where)
            continue
        expected = _multiset([r.asDict() for r in frame.where(where).collect()])
        compared += 1
        got = _multiset(found.to_pylist())
        if got != expected or counted != sum(expected.values()):
            differences.append((where, sum(expected.values()), found.num_rows, counted))
    assert differences == []
    assert compared >= CONDITIONS * 3 // 4, refused


CHOSEN = [
    "f = 0.1",
    "f > 0.1",
    "f = 16777217",
    "d = 0",
    "d > 1e300",
    "d >= 1e308",
    "d <> 1.5",
    "NOT d < 1",
    "i < 100000000000000000000",
    "100000000000000000000 > i",
    "(i > -100000000000000000000) AND s = 'a'",
    "NOT (n < 100000000000000000000)",
    "i <> 100000000000000000000",
    "i >= 9.223372036854775807e18",
    "n > 1.5",
    "n = 2147483647",
    "s > 'a'",
    "s LIKE '_'",
    "s LIKE 'a\\\\_b'",
    "s = 'it''s'",
    "i IN (1, NULL)",
    "i IN (9223372036854775807, 0e0)",
    "i IN (9223372036854775806, 1.5)",
    "i NOT IN (1, NULL)",
    "NOT (i = 1 AND s = 'a')",
    "dt < '1970-01-01'",
    "ts > '2024-02-29 23:59:59Z'",
    "b",
    "NOT b",
    "p = 1 OR p IS NULL",
    "p > 1.5",
    # Spark folds these into TRUE or FALSE, null partitions included: never pruned.
    "p <= 100000000000000000000",
    "p > -100000000000000000000",
    "p < 100000000000000000000.5",
    "p >= 100000000000000000000",
    "i <= 100000000000000000000 AND p <= 100000000000000000000",
]


def test_chosen_conditions_equal_spark_read(spark: Any, table: tuple[int, str]) -> None:
    """Every chosen condition on every seed's table; not vacuous: some keep rows, some
    drop rows, so an engine answering nothing or everything fails."""
    _, path = table
    frame = spark.read.format("indextables").load(path)
    searchable = open_table(path)
    differences = []
    kept: list[int] = []
    for where in CHOSEN:
        expected = _multiset([r.asDict() for r in frame.where(where).collect()])
        got = _multiset(searchable.search(where=where).to_pylist())
        counted = searchable.count(where=where)
        kept.append(sum(expected.values()))
        if got != expected or counted != sum(expected.values()):
            differences.append((where, sum(expected.values()), sum(got.values()), counted))
    assert differences == []
    assert len(kept) == len(CHOSEN)
    assert any(0 < n < ROWS for n in kept), kept


def test_the_tables_hold_hostile_values(table: tuple[int, str]) -> None:
    """Not vacuous: every seed's table holds NaN, -0.0, nulls and extreme integers."""
    _, path = table
    rows = open_table(path).search().to_pylist()
    doubles = [r["d"] for r in rows] + [r["f"] for r in rows]
    assert any(v is not None and math.isnan(v) for v in doubles)
    assert any(v is None for v in doubles)
    assert any(r["i"] in (2**63 - 1, -(2**63)) for r in rows)
    assert len(rows) == ROWS
    assert Path(path).exists()
