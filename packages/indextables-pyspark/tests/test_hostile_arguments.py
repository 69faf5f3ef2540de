"""Every public ``itp.*`` function checks its arguments: hostile values
raise this package's ArgumentError naming the argument, never a raw TypeError,
AttributeError or Py4JError."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import ArgumentError, IndexTablesSparkError

pytestmark = [pytest.mark.spark, pytest.mark.integration]

S, T = object(), object()  # placeholders: the session and the table path, filled in by the test

# (function, positional args, keyword args, text the message must name)
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], str]] = [
    ("sql", (S, 123), {}, "text=123"),
    ("sql", (S, None), {}, "text=None"),
    ("sql", (S, "SELECT 1"), {"options": "x"}, "options='x'"),
    ("sql", (S, "SELECT 1"), {"options": {1: "x"}}, "options key=1"),
    ("sql", ("not a session", "SELECT 1"), {}, "spark='not a session'"),
    ("textsearch", (S, T, 5, "x"), {}, "column=5"),
    ("textsearch", (S, T, "t", 5), {}, "query=5"),
    ("textsearch", (S, 5, "t", "x"), {}, "path=5"),
    ("textsearch", (None, T, "t", "x"), {}, "spark=None"),
    ("fieldmatch", (S, T, "s", 5), {}, "value=5"),
    ("fieldmatch", (S, T, None, "x"), {}, "column=None"),
    ("fieldmatch", (S, [T], "s", "x"), {}, "path=["),
    ("histogram", (5, 1), {}, "column=5"),
    ("histogram", ("id", "5"), {}, "interval='5'"),
    ("histogram", ("id", 0), {}, "interval=0"),
    ("histogram", ("id", -2.5), {}, "interval=-2.5"),
    ("histogram", ("id", float("nan")), {}, "interval=nan"),
    ("histogram", ("id", True), {}, "interval=True"),
    ("histogram", ("id", 1), {"name": 5}, "name=5"),
    ("histogram", ("", 1), {}, "column=''"),
    ("range", ("id", 5), {}, "edges=5"),
    ("range", ("id", "abc"), {}, "edges='abc'"),
    ("range", ("id", [3, 1]), {}, "edges=[3, 1]"),
    ("range", ("id", [1, 1]), {}, "edges=[1, 1]"),
    ("range", ("id", []), {}, "edges=[]"),
    ("range", ("id", [1, "2"]), {}, "edges=[1, '2']"),
    ("range", ("id", [float("inf")]), {}, "edges=[inf]"),
    ("range", (None, [1]), {}, "column=None"),
    ("date_histogram", ("ts", 5), {}, "interval=5"),
    ("date_histogram", ("ts", "0d"), {}, "interval='0d'"),
    ("date_histogram", ("ts", "1 month"), {}, "interval='1 month'"),
    ("date_histogram", ("ts", timedelta(days=-1)), {}, "interval=datetime.timedelta(days=-1)"),
    ("date_histogram", ("ts", "1d"), {"name": 1}, "name=1"),
    ("search", (S, T), {"where": 123}, "where=123"),
    ("search", (S, T), {"limit": "5"}, "limit='5'"),
    ("search", (S, T), {"limit": 10**12}, "limit=1000000000000"),
    ("search", (S, T), {"textsearch": {"t": 5}}, "textsearch['t']=5"),
    ("search", (S, T), {"fieldmatch": {5: "x"}}, "fieldmatch column=5"),
    ("search", ("x", T), {}, "spark='x'"),
    ("count", (S, T), {"where": 123}, "where=123"),
    ("count", (S, T), {"version": "1"}, "version='1'"),
    ("count", (S, 5), {}, "path=5"),
    ("count", (S, T), {"options": {"k": 1, 2: "v"}}, "options key=2"),
    ("aggregate", (S, T), {"metrics": "count"}, "metrics='count'"),
    ("aggregate", (S, T), {"metrics": {"n": "count"}, "group_by": 5}, "group_by=5"),
    ("aggregate", (S, T), {"metrics": {"n": "count"}, "where": 1.5}, "where=1.5"),
    ("write", ("not a frame", T), {}, "df='not a frame'"),
    ("write", (None, T), {}, "df=None"),
    ("register", ("x",), {}, "spark='x'"),
    ("session_options", ("x",), {}, "spark='x'"),
    ("session_options", (S, "x"), {}, "options='x'"),
    (
        "sync_companion_forever",
        (S, 5, T),
        {"source_format": "delta", "poll_seconds": 1},
        "source=5",
    ),
    (
        "sync_companion_forever",
        (S, T, T),
        {"source_format": "delta", "poll_seconds": "1"},
        "poll_seconds='1'",
    ),
    (
        "sync_companion_forever",
        (S, T, T),
        {"source_format": "delta", "poll_seconds": 0},
        "poll_seconds=0",
    ),
    (
        "sync_companion_forever",
        (S, T, T),
        {"source_format": "delta", "poll_seconds": 1, "max_cycles": 0},
        "max_cycles=0",
    ),
]


def test_every_public_function_has_hostile_cases() -> None:
    functions = {n for n in itp.__all__ if callable(getattr(itp, n)) and n[0].islower()}
    # from_spark_error takes any exception-like value and answers None for a foreign one;
    # last_metrics takes no argument
    assert functions - {c[0] for c in CASES} == {"from_spark_error", "last_metrics"}


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: Any) -> str:
    path = str(tmp_path_factory.mktemp("hostile") / "t")
    df = spark.createDataFrame([(1, "a", "hello world")], "id long, s string, t string")
    itp.write(df, path, options={"spark.indextables.indexing.typemap.t": "text"})
    return path


@pytest.mark.parametrize(
    ("function", "args", "kwargs", "named"),
    CASES,
    ids=[f"{c[0]}-{c[3]}" for c in CASES],
)
def test_hostile_arguments_raise_argument_error_naming_the_argument(
    spark: Any, table: str, function: str, args: tuple[Any, ...], kwargs: dict[str, Any], named: str
) -> None:
    filled = tuple(spark if a is S else table if a is T else a for a in args)
    with pytest.raises(ArgumentError) as raised:
        getattr(itp, function)(*filled, **kwargs)
    assert isinstance(raised.value, IndexTablesSparkError)
    assert named in str(raised.value)


def test_write_partition_by_entries_are_checked(spark: Any, tmp_path: Any) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    with pytest.raises(ArgumentError, match="partition_by entry=5"):
        itp.write(df, str(tmp_path / "t"), partition_by=[5])
    assert not (tmp_path / "t").exists()


def test_a_missing_bucket_column_is_named(spark: Any, table: str) -> None:
    specs = (itp.histogram("nope", 1), itp.range("nope", [1]), itp.date_histogram("nope", "1d"))
    for spec in specs:
        with pytest.raises(IndexTablesSparkError, match="'nope'"):
            itp.aggregate(spark, table, group_by=[spec], metrics={"n": "count"})


def test_valid_arguments_still_work(spark: Any, table: str) -> None:
    assert itp.histogram("id", 2).interval == 2
    assert itp.range("id", (0, 2.5)).edges == (0, 2.5)
    assert itp.date_histogram("ts", timedelta(hours=1)).interval_us == 3_600_000_000
    assert itp.textsearch(spark, table, "t", "hello").count() == 1
    assert itp.fieldmatch(spark, table, "s", "a").count() == 1
    assert itp.session_options(spark, {"versionAsOf": 0})["versionAsOf"] == "0"
