"""Reads equal Parquet's on the values where Tantivy and statistics differ from Spark.

Signed zeros, NaN of either sign, line breaks after a prefix, strings longer
than Tantivy's term limit and backslash escapes in ``where`` literals, on
every read path: ``spark.read`` with filter pushdown on and off, and
``itp.search`` run in the driver and distributed. Each filter's rows are
compared with the same filter over a Parquet copy of the same data.
"""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import (
    DoubleType,
    FloatType,
    LongType,
    StringType,
    StructField,
    StructType,
)

import indextables.pyspark as itp
from indextables.protocol.predicateparser import unescape_string
from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.table.tableaccess import load_view

pytestmark = [pytest.mark.spark, pytest.mark.integration]

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
MODE = "spark.indextables.search.mode"
NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0000))[0]
LONG_X = "x" * (MAX_TERM_BYTES + 10)
LONG_AB = "ab" + "y" * (MAX_TERM_BYTES + 10)
SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("d", DoubleType()),
        StructField("f", FloatType()),
        StructField("s", StringType()),
    ]
)
# One split per append; each split's statistics are what lose rows today.
APPENDS: list[list[tuple[Any, ...]]] = [
    # max(d) ignoring NaN is 1.0: `d > 5` would prune the NaN row away.
    [(0, 1.0, 1.0, "ab\ncd"), (1, math.nan, math.nan, "zz"), (2, None, None, None)],
    # -0.0 only: `d = 0.0` must find it; strings over the term limit.
    [(3, -0.0, -0.0, LONG_X), (4, 3.0, 3.0, LONG_AB)],
    # 0.0 and a NaN with its sign bit set; backslashes and quotes.
    [(5, 0.0, 0.0, "a\\b"), (6, NEGATIVE_NAN, 2.5, "it's"), (7, 2.0, 0.1, "ab\u2028")],
]
FILTERS = [
    "d = 0.0",
    "d = -0.0D",
    "d <=> 0.0",
    "d >= 0.0",
    "d <= 0.0",
    "d <= -0.0D",
    "d < 0.0",
    "d > -0.0D",
    "d IN (0.0, 7.0)",
    "d > 5",
    "d >= 3",
    "d > 0",
    "d = 'NaN'",
    "d > 'NaN'",
    "d >= 'NaN'",
    "f = 0.0",
    "f >= 0",
    "f > 5",
    "f IN (0.0, 9.0)",
    "f = 0.1",
    "s LIKE 'ab%'",
    "startswith(s, 'ab')",
    f"s = '{LONG_X}'",
    f"s IN ('{LONG_X}', 'q')",
    f"s LIKE '{LONG_AB[:100]}%'",
    "s = 'a\\\\b'",
    "s = 'it\\'s'",
    "s = 'it''s'",
    "s IN ('a\\\\b', 'zz')",
    "s LIKE 'a\\\\\\\\%'",
    "s = 'ab\\u2028'",
    "s = 'ab\\ncd'",
    's = "zz"',
]


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    """The same rows as an IndexTables table (three splits) and as Parquet."""
    root = tmp_path_factory.mktemp("semantics")
    path, parquet = str(root / "table"), str(root / "parquet")
    for rows in APPENDS:
        frame = spark.createDataFrame(rows, SCHEMA).coalesce(1)
        frame.write.format("indextables").mode("append").save(path)
        frame.write.mode("append").parquet(parquet)
    return path, parquet


def _ids(frame: Any) -> list[int]:
    return sorted(r["id"] for r in frame.collect())


@pytest.mark.parametrize("where", FILTERS)
def test_every_read_path_equals_parquet(spark: Any, tables: tuple[str, str], where: str) -> None:
    path, parquet = tables
    expected = _ids(spark.read.parquet(parquet).where(where))
    got: dict[str, list[int]] = {}
    for pushdown in ("true", "false"):
        spark.conf.set(PUSHDOWN, pushdown)
        try:
            got[f"read pushdown={pushdown}"] = _ids(
                spark.read.format("indextables").load(path).where(where)
            )
            if pushdown == "true":
                for mode in ("local", "distributed"):
                    found = itp.search(spark, path, where=where, options={MODE: mode})
                    got[f"search {mode}"] = _ids(found)
        finally:  # the session default (itp.register turns it on)
            spark.conf.set(PUSHDOWN, "true")
    assert got == dict.fromkeys(got, expected)


def test_the_table_holds_what_the_filters_need(spark: Any, tables: tuple[str, str]) -> None:
    """The splits really carry the statistics that pruned rows before (not a vacuous test)."""
    path, parquet = tables
    splits = sorted(load_view(path, {}).splits, key=lambda s: s.path)
    by_min = {s.min_values["s"] if s.min_values else None: s for s in splits}
    nan_split = by_min["ab\ncd"]
    assert nan_split.max_values is not None
    assert nan_split.max_values["d"] == "NaN"
    assert nan_split.min_values is not None
    assert nan_split.min_values["d"] == "1"
    # Spark sees both zeros as equal and NaN above every number.
    assert _ids(spark.read.parquet(parquet).where("d = 0.0")) == [3, 5]
    assert _ids(spark.read.parquet(parquet).where("d > 5")) == [1, 6]


# -- string literals: the predicate parser reads them as Spark's SQL parser does ------

PIECES = [
    "a",
    "Z",
    "é",
    "😀",
    "''",
    "\\'",
    '\\"',
    "\\\\",
    "\\n",
    "\\t",
    "\\r",
    "\\b",
    "\\Z",
    "\\0",
    "\\%",
    "\\_",
    "%",
    "_",
    "\\q",
    "\\a",
    "\\é",
    "\\u0041",
    "\\u00e9",
    "\\uD83D\\uDE00",
    "\\u12",
    "\\u12g4",
    "\\U0001F600",
    "\\U00000041",
    "\\101",
    "\\012",
    "\\1",
    "\\18",
    "\\200",
    "\\777",
    "\\x41",
    '"',
    " ",
    "\\ ",
]


def _literal_bodies() -> list[str]:
    rng = random.Random(20261126)
    bodies = [*PIECES, "it\\'s", "a\\\\b", "C:\\\\temp\\\\new", "100\\%", "\\\\%"]
    for _ in range(120):
        bodies.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))))
    return bodies


def test_string_literals_unescape_as_spark_does(spark: Any) -> None:
    bodies = _literal_bodies()
    columns = ", ".join(f"'{body}' AS c{i}" for i, body in enumerate(bodies))
    row = spark.sql(f"SELECT {columns}").collect()[0]
    mismatches = {
        body: (row[f"c{i}"], unescape_string(body))
        for i, body in enumerate(bodies)
        if row[f"c{i}"] != unescape_string(body)
    }
    assert mismatches == {}


def test_escaped_literals_in_where_find_their_rows(spark: Any, tmp_path: Path) -> None:
    """The ``where`` string of itp.search narrows the search with the unescaped value."""
    path = str(tmp_path / "escaped")
    values = ["a\\b", "it's", 'say "hi"', "tab\there", "line\nbreak", "100%", "é\\u00e9"]
    spark.createDataFrame([(i, v) for i, v in enumerate(values)], "id long, s string").coalesce(
        1
    ).write.format("indextables").mode("append").save(path)
    wheres = {
        "s = 'a\\\\b'": [0],
        "s = 'it\\'s'": [1],
        "s = 'say \\\"hi\\\"'": [2],
        "s = 'tab\\there'": [3],
        "s IN ('line\\nbreak', 'x')": [4],
        "s LIKE '100\\\\%'": [5],
        "s LIKE '100\\%'": [5],  # Spark keeps the backslash of \\% in the literal
        "s = 'é\\\\u00e9'": [6],
        "s LIKE 'a\\\\\\\\%'": [0],
    }
    for where, ids in wheres.items():
        for mode in ("local", "distributed"):
            found = itp.search(spark, path, where=where, options={MODE: mode})
            assert _ids(found) == ids, (where, mode)


def test_fieldmatch_beyond_the_term_limit_is_a_planning_error(
    spark: Any, tables: tuple[str, str]
) -> None:
    """Tantivy cannot find such a value: say so instead of returning no rows."""
    from indextables.pyspark.errors import OptionError

    path, _ = tables
    with pytest.raises(OptionError, match=r"fieldmatch\.s: the value is 65,540 UTF-8 bytes"):
        itp.search(spark, path, fieldmatch={"s": LONG_X}, options={MODE: "local"})
    frame = spark.read.format("indextables").option("fieldmatch.s", LONG_X).load(path)
    with pytest.raises(Exception, match="Tantivy indexes values of at most 65,530 bytes"):
        frame.count()
    assert _ids(itp.search(spark, path, fieldmatch={"s": "zz"}, options={MODE: "local"})) == [1]
