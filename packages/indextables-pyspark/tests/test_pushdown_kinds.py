"""Pushed filters on dates, timestamps, string suffixes and substrings, nulls and IP fields.

Each filter's rows equal Parquet's over the same data (pushdown on and off),
and with pushdown on the scan returns fewer rows than the table holds: the
filter reached Tantivy or the statistics (a filter left to Spark alone would
make the scan return every row). The timestamps hold values outside Tantivy's
span (indexed clamped) and fractions of a second; some filters run in a
session time zone other than UTC.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import (
    BooleanType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from difftest.paths import pushdown, scanned_rows

from indextables.search.table.tableaccess import load_view

pytestmark = [pytest.mark.spark, pytest.mark.integration]

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("d", DateType()),
        StructField("ts", TimestampType()),
        StructField("ntz", TimestampNTZType()),
        StructField("s", StringType()),
        StructField("ip", StringType()),
        StructField("p", StringType()),
    ]
)
OPTIONS = {"spark.indextables.indexing.typemap.ip": "ip", "partitionBy": "p"}


def _ts(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


# One split per append (partition p: one split per value, null included).
APPENDS: list[list[tuple[Any, ...]]] = [
    [
        (
            0,
            date(2024, 1, 1),
            _ts(2024, 1, 1, 0, 0, 0, 500_000),
            datetime(2024, 1, 1),
            "abcd",
            "1.2.3.4",
            "x",
        ),
        (
            1,
            date(2024, 1, 15),
            _ts(2024, 1, 1, 0, 0, 0),
            datetime(2024, 1, 1, 0, 0, 0, 250_000),
            "ab\ncd",
            "::ffff:1.2.3.4",
            "x",
        ),
        (2, None, None, None, None, None, "x"),
    ],
    [
        (3, date(1500, 3, 1), _ts(1500, 3, 1, 12), datetime(1500, 3, 1), "", "10.0.0.1", None),
        (4, date(9999, 12, 31), _ts(3000, 1, 1), datetime(3000, 1, 1), "zz\n", "::1", None),
    ],
    [
        (
            5,
            date(2024, 2, 1),
            _ts(1969, 12, 31, 23, 59, 59, 750_000),
            datetime(1969, 12, 31, 23, 59, 59, 750_000),
            "x.cd",
            "2001:db8::1",
            "y",
        ),
        (
            6,
            date(2024, 2, 2),
            _ts(2024, 6, 1),
            datetime(2024, 6, 1),
            "100%",
            "0:0:0:0:0:0:0:1",
            "y",
        ),
    ],
]
TOTAL = sum(len(rows) for rows in APPENDS)
FILTERS = [
    "d = DATE'2024-01-15'",
    "d > DATE'2024-01-20'",
    "d <= DATE'2024-01-01'",
    "d < DATE'1600-01-01'",
    "d >= DATE'2262-04-12'",
    "d IN (DATE'2024-02-01', DATE'1500-03-01')",
    "ts = TIMESTAMP'2024-01-01 00:00:00.5'",
    "ts >= TIMESTAMP'2024-01-01 00:00:00.5'",
    "ts > TIMESTAMP'2024-01-01 00:00:00'",
    "ts < TIMESTAMP'1970-01-01 00:00:00'",
    "ts < TIMESTAMP'1600-01-01 00:00:00'",
    "ts > TIMESTAMP'2262-04-11 23:47:16.854775'",
    "ts IN (TIMESTAMP'2024-06-01 00:00:00', TIMESTAMP'3000-01-01 00:00:00')",
    "ntz = TIMESTAMP_NTZ'2024-01-01 00:00:00.25'",
    "ntz < TIMESTAMP_NTZ'1970-01-01 00:00:00'",
    "ntz >= TIMESTAMP_NTZ'2262-04-12 00:00:00'",
    "endswith(s, 'cd')",
    "contains(s, '\\n')",
    "s LIKE '%.%'",
    "s LIKE '%\\%'",
    "s IS NULL",
    "p IS NULL",
    "p IS NOT NULL AND p = 'y'",
    "ip = '1.2.3.4'",
    "ip = '::1'",
    "ip IN ('10.0.0.1', '2001:db8::1')",
]
# Read in another session time zone: literals are local times there, compared as instants.
ZONED = [
    "ts = TIMESTAMP'2023-12-31 16:00:00.5'",
    "ts >= TIMESTAMP'2024-05-31 17:00:00'",
    "ntz = TIMESTAMP_NTZ'2024-01-01 00:00:00.25'",
]


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("kinds")
    path, parquet = str(root / "table"), str(root / "parquet")
    for rows in APPENDS:
        frame = spark.createDataFrame(rows, SCHEMA).coalesce(1)
        writer = frame.write.format("indextables").mode("append").options(**OPTIONS)
        writer.save(path)
        frame.write.mode("append").partitionBy("p").parquet(parquet)
    return path, parquet


def _ids(frame: Any) -> list[int]:
    return sorted(r["id"] for r in frame.collect())


def _check(spark: Any, tables: tuple[str, str], where: str) -> None:
    path, parquet = tables
    expected = _ids(spark.read.parquet(parquet).where(where))
    for pushed in (False, True):
        with pushdown(spark, pushed):
            got = _ids(spark.read.format("indextables").load(path).where(where))
        assert got == expected, (where, pushed)
    scanned, kept = scanned_rows(spark, path, where, pushed=True)
    assert kept == len(expected)
    assert scanned < TOTAL, f"{where}: the scan returned every row, nothing was pushed"


@pytest.mark.parametrize("where", FILTERS)
def test_pushed_filters_equal_parquet_and_narrow_the_scan(
    spark: Any, tables: tuple[str, str], where: str
) -> None:
    _check(spark, tables, where)


@pytest.mark.parametrize("where", ZONED)
def test_timestamps_in_another_session_time_zone(
    spark: Any, tables: tuple[str, str], where: str
) -> None:
    zone = "spark.sql.session.timeZone"
    before = spark.conf.get(zone)
    spark.conf.set(zone, "America/Los_Angeles")
    try:
        _check(spark, tables, where)
    finally:
        spark.conf.set(zone, before)


def test_splits_carry_date_and_timestamp_statistics(tables: tuple[str, str]) -> None:
    """Dates as ``YYYY-MM-DD``, timestamps as epoch microseconds (the reference's forms)."""
    path, _ = tables
    by_id = {}
    for split in load_view(path, {}).splits:
        assert split.min_values is not None
        assert split.max_values is not None
        by_id[split.partition_values.get("p")] = (split.min_values, split.max_values)
    low, high = by_id["y"]
    assert (low["d"], high["d"]) == ("2024-02-01", "2024-02-02")
    assert (low["ts"], high["ts"]) == ("-250000", "1717200000000000")
    assert (low["ntz"], high["ntz"]) == ("-250000", "1717200000000000")


# -- fields inside struct columns ---------------------------------------------------------

NESTED_SCHEMA = "id long, st struct<a:string, n:long, inner:struct<a:string, d:double>>"
NESTED_APPENDS: list[list[tuple[Any, ...]]] = [
    [
        (0, ("Hello World", 5, ("deep", 0.0))),
        (1, ("hello world", -3, None)),
        (2, None),
    ],
    [
        (3, ('say "hi" \\ x', None, ("Hello World", -0.0))),
        (4, ("", 7, None)),
        (5, ("2024-01-01T00:00:00.5Z", 5, (None, None))),
    ],
]
NESTED_FILTERS = [
    "st.a = 'Hello World'",
    "st.a = 'hello world'",
    "st.a = 'say \"hi\" \\\\ x'",
    "st.n IN (5, 7)",
    "st.n = -3",
    "st.inner.a = 'deep'",
    "st.inner.a IN ('Hello World', 'nothing')",
]


@pytest.fixture(scope="module")
def nested_tables(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("nested")
    path, parquet = str(root / "table"), str(root / "parquet")
    for rows in NESTED_APPENDS:
        frame = spark.createDataFrame(rows, NESTED_SCHEMA).coalesce(1)
        frame.write.format("indextables").mode("append").save(path)
        frame.write.mode("append").parquet(parquet)
    return path, parquet


@pytest.mark.parametrize("where", NESTED_FILTERS)
def test_struct_field_filters_equal_parquet_and_narrow_the_scan(
    spark: Any, nested_tables: tuple[str, str], where: str
) -> None:
    path, parquet = nested_tables
    expected = _ids(spark.read.parquet(parquet).where(where))
    for pushed in (False, True):
        with pushdown(spark, pushed):
            got = _ids(spark.read.format("indextables").load(path).where(where))
        assert got == expected, (where, pushed)
    scanned, _ = scanned_rows(spark, path, where, pushed=True)
    total = sum(len(rows) for rows in NESTED_APPENDS)
    assert scanned < total, f"{where}: the scan returned every row, nothing was pushed"


@pytest.mark.parametrize("where", ["st.a = ''", "st.a = '2024-01-01T00:00:00.5Z'"])
def test_struct_field_filters_left_to_spark_still_equal_parquet(
    spark: Any, nested_tables: tuple[str, str], where: str
) -> None:
    path, parquet = nested_tables
    expected = _ids(spark.read.parquet(parquet).where(where))
    with pushdown(spark, True):
        assert _ids(spark.read.format("indextables").load(path).where(where)) == expected


# Booleans, null tests and `!=` are answered exactly by the index, fast fields or not: the
# table's `fastfields` names only `s`, so `i`, `b` and `d` are indexed but not fast.
EXACT_SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("i", LongType()),
        StructField("b", BooleanType()),
        StructField("d", DateType()),
        StructField("s", StringType()),
    ]
)
EXACT_FILTERS = [
    "b <= true",
    "b < true",
    "b <= false",
    "b > false",
    "b >= true",
    "b >= false",
    "b > true",
    "b < false",
    "b IN (true)",
    "b IN (false, true)",
    "b != true",
    "b IS NOT NULL",
    "b IS NULL",
    "i IS NOT NULL",
    "i IS NULL",
    "i != 3",
    "d IS NOT NULL",
    "d IS NULL",
    "d >= DATE'0001-01-01'",
    "d <= DATE'9999-12-31'",
    "i != 3 AND b IS NOT NULL",
]


@pytest.fixture(scope="module", params=["not_fast", "fast"])
def exact_tables(
    request: pytest.FixtureRequest, spark: Any, tmp_path_factory: Any
) -> tuple[str, str]:
    root = tmp_path_factory.mktemp(f"exact-{request.param}")
    path, parquet = str(root / "table"), str(root / "parquet")
    values_i = [None, 3, -(2**63), 2**63 - 1, 0]
    values_b = [None, True, False]
    values_d = [None, date(1, 1, 1), date(9999, 12, 31), date(1677, 9, 21), date(2024, 2, 29)]
    rows = [
        (n, values_i[n % 5], values_b[(n // 5) % 3], values_d[(n // 3) % 5], f"s{n % 4}")
        for n in range(60)
    ]
    options = {"spark.indextables.indexing.fastfields": "s"} if request.param == "not_fast" else {}
    for half in (rows[:30], rows[30:]):
        frame = spark.createDataFrame(half, EXACT_SCHEMA).coalesce(1)
        frame.write.format("indextables").mode("append").options(**options).save(path)
        frame.write.mode("append").parquet(parquet)
    for split in load_view(path, {}).splits:
        fast = {f["name"]: f["fast"] for f in json.loads(split.entry.doc_mapping_json)}
        assert {fast["i"], fast["b"], fast["d"]} == {request.param == "fast"}
    return path, parquet


@pytest.mark.parametrize("where", EXACT_FILTERS)
def test_booleans_null_tests_and_not_equal_are_answered_by_the_index(
    spark: Any, exact_tables: tuple[str, str], where: str
) -> None:
    path, parquet = exact_tables
    expected = _ids(spark.read.parquet(parquet).where(where))
    scanned, kept = scanned_rows(spark, path, where, pushed=True)
    assert kept == len(expected)
    assert scanned == kept, f"{where}: the scan returned {scanned} rows for {kept} kept"
    with pushdown(spark, True):
        assert _ids(spark.read.format("indextables").load(path).where(where)) == expected
