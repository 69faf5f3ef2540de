"""Literals and arguments at the edges, against Spark over Parquet."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import IndexTablesSparkError, QuerySyntaxError

pytestmark = [pytest.mark.spark, pytest.mark.integration]

BIG = "1" + "0" * 20  # beyond bigint, within DECIMAL(38)
HUGE = "9" * 40  # beyond DECIMAL(38): Spark refuses it


def write_pair(spark: Any, root: Path, rows: list[tuple[Any, ...]], schema: str) -> tuple[str, str]:
    """The same rows as Parquet and as an IndexTables table under ``root``: their two paths."""
    df = spark.createDataFrame(rows, schema)
    df.write.parquet(str(root / "parquet"))
    itp.write(df, str(root / "it"))
    return str(root / "parquet"), str(root / "it")


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("literals")
    rows = [(i, float(i) / 2, f"r{i}") for i in range(-4, 4)] + [(None, None, "null")]
    return write_pair(spark, root, rows, "id long, d double, s string")


OUT_OF_RANGE = [
    f"id < {BIG}",
    f"id <= {BIG}",
    f"id > {BIG}",
    f"id >= {BIG}",
    f"id = {BIG}",
    f"id <> {BIG}",
    f"id > -{BIG}",
    f"id < -{BIG}",
    f"id IN (1, {BIG}, -{BIG})",
    f"id < {BIG} AND s <> 'r0'",
    "id < 9223372036854775807",
    "id > -9223372036854775808",
    "id > 9223372036854775807",
    "id < -9223372036854775808",
]


@pytest.mark.parametrize("where", OUT_OF_RANGE)
def test_out_of_range_integer_literals_answer_as_spark(
    spark: Any, tables: tuple[str, str], where: str
) -> None:
    parquet, it = tables
    expected = sorted(r["s"] for r in spark.read.parquet(parquet).where(where).collect())
    assert itp.count(spark, it, where=where) == len(expected)
    assert sorted(r["s"] for r in itp.search(spark, it, where=where).collect()) == expected
    (agg,) = itp.aggregate(spark, it, metrics={"n": "count"}, where=where).collect()
    assert agg["n"] == len(expected)
    read = spark.read.format("indextables").load(it).where(where)
    assert sorted(r["s"] for r in read.collect()) == expected


@pytest.mark.parametrize(
    "where",
    [
        f"id > {HUGE}",
        f"id < {HUGE}",
        f"d < -{HUGE}",
        f"d < {HUGE}BD",
        f"d > {HUGE}.5",  # a fraction: Spark's DECIMAL past 38 digits
        "d > 12345678901234567890123456789012345678.5",  # 39 digits
        "d > 0." + "0" * 40 + "1",  # scale 41
    ],
)
def test_literals_beyond_decimal_38_are_refused_as_spark_does(
    spark: Any, tables: tuple[str, str], where: str
) -> None:
    parquet, it = tables
    with pytest.raises(Exception, match="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"):
        spark.read.parquet(parquet).where(where).count()
    for call in (
        lambda: itp.count(spark, it, where=where),
        lambda: itp.search(spark, it, where=where).collect(),
        lambda: itp.aggregate(spark, it, metrics={"n": "count"}, where=where).collect(),
    ):
        with pytest.raises(QuerySyntaxError, match="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"):
            call()
    with pytest.raises(Exception, match="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"):
        spark.read.format("indextables").load(it).where(where).count()


@pytest.mark.parametrize("where", [f"d < {HUGE}D", f"d > -{HUGE}d", f"id < {HUGE}D", "d < 1.5D"])
def test_suffixed_double_literals_answer_as_spark(
    spark: Any, tables: tuple[str, str], where: str
) -> None:
    parquet, it = tables
    expected = sorted(r["s"] for r in spark.read.parquet(parquet).where(where).collect())
    assert itp.count(spark, it, where=where) == len(expected)
    assert sorted(r["s"] for r in itp.search(spark, it, where=where).collect()) == expected
    read = spark.read.format("indextables").load(it).where(where)
    assert sorted(r["s"] for r in read.collect()) == expected


@pytest.mark.parametrize(
    ("ddl", "names"),
    [
        ("a long, A long", ("'a'", "'A'")),
        ("id long, s struct<x: long, X: long>", ("'s.x'", "'s.X'")),
    ],
)
def test_case_only_column_names_are_refused_at_planning(
    spark: Any, tmp_path: Path, ddl: str, names: tuple[str, str]
) -> None:
    from indextables.pyspark.errors import DuplicateColumnError

    rows = [(1, 2), (3, 4)] if ddl.startswith("a ") else [(1, (2, 3))]
    df = spark.createDataFrame(rows, ddl)
    if ddl.startswith("a "):
        with pytest.raises(Exception, match="COLUMN_ALREADY_EXISTS"):
            df.write.parquet(str(tmp_path / "parquet"))
    with pytest.raises(DuplicateColumnError) as raised:
        itp.write(df, str(tmp_path / "it"))
    assert all(name in str(raised.value) for name in names)
    with pytest.raises(Exception, match="DuplicateColumnError"):
        df.write.format("indextables").mode("append").save(str(tmp_path / "it2"))
    assert not (tmp_path / "it").exists() or not any((tmp_path / "it").rglob("*.split"))


F01 = struct.unpack("f", struct.pack("f", 0.1))[0]  # 0.1f as Spark reads it back
QUERIES = [
    ("d:0", "d = 0"),
    ("d:-0.0", "d = 0"),
    ('d:"0"', "d = 0"),
    ("d:[0 TO 1]", "d >= 0 AND d <= 1"),
    ("d:{0 TO 1]", "d > 0 AND d <= 1"),
    ("d:[-1 TO 0}", "d >= -1 AND d < 0"),
    ("d:>=0", "d >= 0"),
    ("d:<0", "d < 0"),
    ("d:<=0", "d <= 0"),
    ("f:[0 TO 1]", "f >= 0 AND f <= 1"),
    ("f:0", "f = 0"),
    ("f:0.1", "f = 0.1"),
    ("f:0.5", "f = 0.5"),
]


@pytest.fixture(scope="module")
def numbers(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("numbers")
    values = [-0.0, 0.0, 0.5, -0.5, 1.0, F01, None]
    rows = [(i, v, v, "x") for i, v in enumerate(values * 3)]
    return write_pair(spark, root, rows, "id long, d double, f float, t string")


@pytest.mark.parametrize(("query", "where"), QUERIES)
def test_numeric_query_terms_compare_as_spark_filters(
    spark: Any, numbers: tuple[str, str], query: str, where: str
) -> None:
    parquet, it = numbers
    expected = sorted(r["id"] for r in spark.read.parquet(parquet).where(where).collect())
    read = spark.read.format("indextables").option("query", query).load(it)
    assert sorted(r["id"] for r in read.collect()) == expected
    assert sorted(r["id"] for r in itp.search(spark, it, query).collect()) == expected
    assert itp.count(spark, it, query=query) == len(expected)


NEGATIVE_NAN = struct.unpack(">d", bytes.fromhex("fff8000000000000"))[0]
NAN_QUERIES = [
    ("d:NaN", "d = CAST('NaN' AS DOUBLE)"),
    ("d:-NaN", "d = CAST('NaN' AS DOUBLE)"),
    ("d:[-NaN TO *]", "d >= CAST('NaN' AS DOUBLE)"),
    ("d:[* TO NaN}", "d < CAST('NaN' AS DOUBLE)"),
    ("d:[1 TO *]", "d >= 1"),
    ("d:[* TO 1]", "d <= 1"),
    ("d:>=NaN", "d >= CAST('NaN' AS DOUBLE)"),
    ("d:>inf", "d > CAST('Infinity' AS DOUBLE)"),
    ("d:-inf", "d = CAST('-Infinity' AS DOUBLE)"),
    ("f:NaN", "f = CAST('NaN' AS FLOAT)"),
    ("f:{0 TO *]", "f > 0"),
]


@pytest.fixture(scope="module")
def nans(spark: Any, tmp_path_factory: Any) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("nans")
    values = [float("nan"), NEGATIVE_NAN, float("inf"), float("-inf"), -0.0, 1.0, 2.5, None]
    rows = [(i, v, v) for i, v in enumerate(values * 2)]
    return write_pair(spark, root, rows, "id long, d double, f float")


@pytest.mark.parametrize(("query", "where"), NAN_QUERIES)
def test_nan_query_terms_compare_as_spark_filters(
    spark: Any, nans: tuple[str, str], query: str, where: str
) -> None:
    """NaN with the sign bit set (Spark keeps it in a DataFrame) equals NaN, above +inf."""
    parquet, it = nans
    stored = spark.read.format("indextables").load(it).where("id = 1").first()
    assert struct.pack(">d", stored["d"]).hex() == "fff8000000000000"
    expected = sorted(r["id"] for r in spark.read.parquet(parquet).where(where).collect())
    read = spark.read.format("indextables").option("query", query).load(it)
    assert sorted(r["id"] for r in read.collect()) == expected
    assert sorted(r["id"] for r in itp.search(spark, it, query).collect()) == expected
    assert itp.count(spark, it, query=query) == len(expected)


def test_and_not_in_query_keeps_the_rows_without_the_excluded_term(
    spark: Any, nans: tuple[str, str]
) -> None:
    """Tantivy alone answered ``a AND NOT b`` with no row at all."""
    parquet, it = nans
    where = "id <= 99 AND NOT (d <=> 1)"  # a query exclusion keeps rows without a value
    expected = sorted(r["id"] for r in spark.read.parquet(parquet).where(where).collect())
    assert expected
    query = "id:[0 TO 99] AND NOT d:1"
    read = spark.read.format("indextables").option("query", query).load(it)
    assert sorted(r["id"] for r in read.collect()) == expected
    assert itp.count(spark, it, query=query) == len(expected)


BAD_ARGUMENTS = [
    ("count", {"where": 123}, "where=123"),
    ("search", {"where": 123}, "where=123"),
    ("search", {"limit": "5"}, "limit='5'"),
    ("search", {"limit": 10**12}, "limit=1000000000000"),
    ("search", {"limit": True}, "limit=True"),
    ("aggregate", {"metrics": "count"}, "metrics='count'"),
    ("count", {"query": 5}, "query=5"),
    ("count", {"options": "x"}, "options='x'"),
]


@pytest.mark.parametrize(("helper", "kwargs", "named"), BAD_ARGUMENTS)
def test_wrong_argument_types_raise_argument_error(
    spark: Any, tables: tuple[str, str], helper: str, kwargs: dict[str, Any], named: str
) -> None:
    from indextables.pyspark.errors import ArgumentError

    _, it = tables
    call = {"count": itp.count, "search": itp.search, "aggregate": itp.aggregate}[helper]
    with pytest.raises(ArgumentError, match=named) as raised:
        call(spark, it, **kwargs)
    assert isinstance(raised.value, IndexTablesSparkError)


def test_snapshot_stats_filter_must_be_a_predicate(tables: tuple[str, str]) -> None:
    from indextables.protocol import open_table
    from indextables.protocol.errors import InvalidPredicateError

    _, it = tables
    with pytest.raises(InvalidPredicateError, match="stats_filter='n > 0'"):
        open_table(it).snapshot(stats_filter="n > 0")  # type: ignore[arg-type]
