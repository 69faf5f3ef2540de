"""Every value Spark can hold is written and read back exactly, on every read path.

One table of hostile values (NaN, signed zeros, infinities, empty and 1 MB
strings, astral characters, Tantivy syntax, dates of years 1 and 9999,
microsecond timestamps, binary, decimals and dates inside structs, empty and
null maps and arrays, maps with non-string keys, deep nesting) is written
once; each read path must return exactly the rows that went in. Floats are
compared by their bits, so ``-0.0`` and ``0.0`` or two NaNs are told apart
the way a byte-for-byte copy would.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.streamstart import run_stream

pytestmark = [pytest.mark.spark, pytest.mark.integration]
FMT = "indextables"
MODE = "spark.indextables.search.mode"

SCHEMA = (
    "id long, k string, s string, d double, f float, i int, b boolean, sh short, "
    "dt date, ts timestamp, tn timestamp_ntz, bin binary, "
    "arr array<string>, arrb array<binary>, m map<string,int>, mi map<int,string>, "
    "st struct<d:date,dec:decimal(5,1),ts:timestamp,s:string,x:double,b:binary>, "
    "nest array<struct<a:int,m:map<string,array<date>>>>, "
    "deep struct<a:struct<b:array<map<string,binary>>>>, md map<date,double>"
)

HUGE = "x" * (1 << 20)
STRINGS = [
    "",
    HUGE,
    "astral \U0001d11e\U0001f600 and \u00e9\u4e2d",
    'a:b "c" (d) [e TO f] {g} +h -i \\j *k ?l ~m ^n !o && || /p/',
    "2020-01-01T00:00:00Z",
    "line\nbreak\ttab\x00nul",
    None,
]
DOUBLES = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5, None, -1e308, 5e-324]
DATES = [
    dt.date(1, 1, 2),
    dt.date(9999, 12, 30),
    dt.date(1677, 9, 20),
    dt.date(2262, 4, 12),
    dt.date(1970, 1, 1),
    None,
    dt.date(2024, 2, 29),
]
TIMESTAMPS = [
    dt.datetime(1, 1, 3, 0, 0, 0, 1),
    dt.datetime(9999, 12, 29, 23, 59, 59, 999999),
    dt.datetime(1677, 9, 21, 0, 12, 43, 145224),
    dt.datetime(2262, 4, 11, 23, 47, 16, 854776),
    dt.datetime(2020, 1, 1, 0, 0, 0, 123456),
    None,
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
]


def _row(n: int) -> dict[str, Any]:
    def pick(values: list[Any], shift: int = 0) -> Any:
        return values[(n + shift) % len(values)]

    return {
        "id": n,
        "k": "all",
        "s": pick(STRINGS),
        "d": pick(DOUBLES),
        "f": pick(DOUBLES, 1) if pick(DOUBLES, 1) not in (-1e308, 5e-324) else 2.5,
        "i": [0, -(2**31), 2**31 - 1, None][n % 4],
        "b": [True, False, None][n % 3],
        "sh": [0, -(2**15), 2**15 - 1, None][n % 4],
        "dt": pick(DATES),
        "ts": pick(TIMESTAMPS),
        "tn": pick(TIMESTAMPS, 2),
        "bin": [b"", b"\x00\xff\x80", b"x", None][n % 4],
        "arr": [[], None, ["a", None, ""], [HUGE[:70000]]][n % 4],
        "arrb": [[b"x"], [], None, [None, b"\x00"]][n % 4],
        "m": [{}, None, {"a": None, "b": 2}, {"": 0, "k:v": -1}][n % 4],
        "mi": [{1: "one", -2: None}, {}, None, {0: ""}][n % 4],
        "st": [
            {
                "d": pick(DATES),
                "dec": Decimal("-1234.5"),
                "ts": pick(TIMESTAMPS),
                "s": pick(STRINGS, 4),
                "x": pick(DOUBLES),
                "b": b"b'x'",
            },
            None,
            {"d": None, "dec": None, "ts": None, "s": None, "x": None, "b": None},
        ][n % 3],
        "nest": [
            [{"a": 1, "m": {"k": [dt.date(1, 1, 1), None]}}, None, {"a": None, "m": {}}],
            [],
            None,
        ][n % 3],
        "deep": [{"a": {"b": [{"z": b"\x01"}, {}, None]}}, {"a": None}, None][n % 3],
        "md": [{dt.date(9999, 12, 31): -0.0, dt.date(1, 1, 1): math.nan}, {}, None][n % 3],
    }


ROWS = [_row(n) for n in range(28)]


def _canon(value: Any) -> Any:
    """A comparable form of a value: floats by their bits, maps as sorted pairs."""
    if isinstance(value, float):
        return ("f", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("m", sorted(((_canon(k), _canon(v)) for k, v in value.items()), key=repr))
    if isinstance(value, (list, tuple)):
        return ("l", [_canon(v) for v in value])
    if isinstance(value, (bytes, bytearray)):
        return ("b", bytes(value))
    return (type(value).__name__, value)


def _rows_of(df: Any) -> list[Any]:
    return sorted((_canon(r.asDict(recursive=True)) for r in df.collect()), key=repr)


@pytest.fixture(scope="module")
def hostile(spark: Any, tmp_path_factory: Any) -> Iterator[tuple[str, list[Any]]]:
    """The hostile table (written in two appends) and the canonical rows that went in."""
    path = str(tmp_path_factory.mktemp("values") / "table")
    df = spark.createDataFrame(ROWS, SCHEMA)
    expected = _rows_of(df)
    df.where("id % 2 = 0").write.format(FMT).mode("append").save(path)
    df.where("id % 2 = 1").write.format(FMT).mode("append").save(path)
    return path, expected


def _pushdown(spark: Any, enabled: bool) -> None:
    spark.conf.set("spark.sql.python.filterPushdown.enabled", str(enabled).lower())


READS = {
    "scan": lambda spark, p: spark.read.format(FMT).load(p),
    "query": lambda spark, p: spark.read.format(FMT).option("query", "k:all").load(p),
    "fieldmatch": lambda spark, p: itp.fieldmatch(spark, p, "k", "all"),
    "local": lambda spark, p: itp.search(spark, p, "k:all", options={MODE: "local"}),
    "distributed": lambda spark, p: itp.search(spark, p, "k:all", options={MODE: "distributed"}),
    "local-where": lambda spark, p: itp.search(spark, p, where="id >= 0", options={MODE: "local"}),
}


@pytest.mark.parametrize("read", sorted(READS))
def test_every_value_reads_back_exactly(spark: Any, hostile: Any, read: str) -> None:
    path, expected = hostile
    assert _rows_of(READS[read](spark, path)) == expected


def _column_schema(column: str) -> str:
    declared = {part.split(" ", 1)[0]: part.split(" ", 1)[1] for part in _split_top_level(SCHEMA)}
    return f"id long, k string, {column} {declared[column]}"


def _split_top_level(schema: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in schema:
        depth += char == "<"
        depth -= char == ">"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


@pytest.mark.parametrize("column", [p.split(" ", 1)[0] for p in _split_top_level(SCHEMA)][2:])
def test_each_column_reads_back_exactly_on_every_path(
    spark: Any, tmp_path: Path, column: str
) -> None:
    """One column at a time, so a failure names the type that does not round-trip."""
    path = str(tmp_path / column)
    df = spark.createDataFrame(
        [{"id": r["id"], "k": "all", column: r[column]} for r in ROWS], _column_schema(column)
    )
    df.write.format(FMT).mode("append").save(path)
    expected = _rows_of(df)
    for read in sorted(READS):
        assert _rows_of(READS[read](spark, path)) == expected, read
    _pushdown(spark, True)
    try:
        pushed = _rows_of(spark.read.format(FMT).load(path).where("id >= 0 AND k = 'all'"))
    finally:
        _pushdown(spark, False)
    assert pushed == expected


@pytest.mark.parametrize("pushdown", [False, True])
def test_every_value_reads_back_exactly_with_a_filter(
    spark: Any, hostile: Any, pushdown: bool
) -> None:
    path, expected = hostile
    _pushdown(spark, pushdown)
    try:
        found = _rows_of(spark.read.format(FMT).load(path).where("id >= 0 AND k = 'all'"))
    finally:
        _pushdown(spark, False)
    assert found == expected


def test_every_value_reads_back_exactly_from_a_stream(spark: Any, hostile: Any) -> None:
    path, expected = hostile
    # Started again if its source's Python worker misses Spark's 10 s start (a loaded machine).
    run_stream(
        lambda: (
            spark.readStream.format(FMT)
            .option("startingVersion", "0")
            .load(path)
            .writeStream.format("memory")
            .queryName("hostile_values_stream")
            .trigger(availableNow=True)
            .start()
        )
    )
    assert _rows_of(spark.sql("SELECT * FROM hostile_values_stream")) == expected


def test_textsearch_reads_back_exactly(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "text")
    rows = [{"t": "word", **_row(n)} for n in range(8)]
    df = spark.createDataFrame(rows, "t string, " + SCHEMA)
    options = {"spark.indextables.indexing.typemap.t": "text"}
    df.write.format(FMT).options(**options).mode("append").save(path)
    found = itp.textsearch(spark, path, "t", "word")
    assert _rows_of(found) == _rows_of(df)


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata", "Pacific/Chatham"])
def test_timestamps_round_trip_in_every_session_time_zone(
    spark: Any, tmp_path: Path, zone: str
) -> None:
    path = str(tmp_path / "zoned")
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        df = spark.sql(
            "SELECT id, 'all' AS k, "
            "timestamp'2021-03-14 02:30:00.000001' + make_interval(0,0,0,0,id,0,0) "
            "AS ts, timestamp_ntz'2021-03-14 02:30:00.999999' AS tn, "
            "timestamp'0002-06-01 10:00:00.5' AS old FROM range(5)"
        )
        df.write.format(FMT).mode("append").save(path)
        for read in ("scan", "query", "local"):
            got = (
                READS[read](spark, path)
                if read != "query"
                else (spark.read.format(FMT).option("query", "id:[0 TO 10]").load(path))
            )
            assert _rows_of(got) == _rows_of(df), read
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


# Bounds strictly inside Tantivy's date span (one microsecond past each end): the clamped
# rows compare with them as their true values do, so the query is exact.
INSIDE_LOW = "1677-09-21T00:12:43.145226Z"
INSIDE_HIGH = "2262-04-11T23:47:16.854774Z"


@pytest.mark.parametrize(
    ("query", "condition"),
    [
        (f"ts:[{INSIDE_LOW} TO *]", f"ts >= timestamp'{INSIDE_LOW[:-1]}Z'"),
        (f"ts:{{* TO {INSIDE_LOW}}}", f"ts < timestamp'{INSIDE_LOW[:-1]}Z'"),
        (f"ts:>{INSIDE_HIGH}", f"ts > timestamp'{INSIDE_HIGH[:-1]}Z'"),
        (f"ts:<={INSIDE_HIGH}", f"ts <= timestamp'{INSIDE_HIGH[:-1]}Z'"),
        (f'ts:"{INSIDE_LOW}"', f"ts = timestamp'{INSIDE_LOW[:-1]}Z'"),
    ],
)
def test_date_bounds_next_to_the_span_ends_are_exact(
    spark: Any, hostile: Any, query: str, condition: str
) -> None:
    path, _ = hostile
    got = spark.read.format(FMT).option("query", query).load(path)
    want = spark.read.format(FMT).load(path).where(condition)
    assert _rows_of(got) == _rows_of(want)
    assert want.count() > 0 or "=" in condition


@pytest.mark.parametrize(
    "query",
    [
        "ts:[1677-09-21T00:12:43.145224Z TO *]",  # below the span: matched clamped rows
        "ts:[1677-09-21T00:12:43.145225Z TO *]",  # the span's first instant
        "ts:{* TO 2262-04-11T23:47:16.854775Z]",
        "ts:>=0001-01-01T00:00:00Z",
        "ts:<9999-01-01T00:00:00+05:00",
        'ts:"2262-04-12T00:00:00Z"',
        "k:all AND (dt:[1500-01-01T00:00:00Z TO 2000-01-01T00:00:00Z])",
    ],
)
def test_date_bounds_at_or_beyond_the_span_ends_are_refused(
    spark: Any, hostile: Any, query: str
) -> None:
    path, _ = hostile
    with pytest.raises(Exception, match=r"option query: the date bound .* on column '(ts|dt)'"):
        spark.read.format(FMT).option("query", query).load(path).collect()
    with pytest.raises(itp.QuerySyntaxError, match="at or beyond an end"):
        itp.search(spark, path, query, options={MODE: "local"}).collect()


# -- date fields that are not fast compare whole seconds -------------------------------

COARSE_ROWS = [
    "1969-12-31 23:59:59.5",  # Tantivy truncates toward zero: indexed as the epoch
    "1970-01-01 00:00:00",
    "1955-05-05 01:01:01.5",  # indexed as 01:01:02
    "2024-01-01 00:00:00",
    "2024-01-01 00:00:00.000001",
    "2024-01-01 00:00:00.5",
    "2024-01-01 00:00:01",
    "2024-01-02 00:00:00",
]


@pytest.fixture(scope="module")
def coarse(spark: Any, tmp_path_factory: Any) -> str:
    """A table whose timestamp and date columns are not fast (fastfields names only id)."""
    path = str(tmp_path_factory.mktemp("coarse") / "t")
    values = ", ".join(f"({i}, timestamp'{v}')" for i, v in enumerate(COARSE_ROWS))
    df = spark.sql(
        f"SELECT id, ts, cast(ts AS date) AS d FROM VALUES {values} AS t(id, ts)"
    ).selectExpr("cast(id AS long) AS id", "ts", "d")
    df.write.format(FMT).option("spark.indextables.indexing.fastfields", "id").mode("append").save(
        path
    )
    return path


@pytest.mark.parametrize(
    ("query", "condition"),
    [
        (
            "ts:[2024-01-01T00:00:00Z TO 2024-01-02T00:00:00Z}",
            "ts >= timestamp'2024-01-01 00:00:00' AND ts < timestamp'2024-01-02 00:00:00'",
        ),
        ("ts:>=2024-01-01T00:00:01Z", "ts >= timestamp'2024-01-01 00:00:01'"),
        ("ts:<1970-01-01T00:00:01Z", "ts < timestamp'1970-01-01 00:00:01'"),
        (
            "d:[1955-05-05T00:00:00Z TO 1970-01-01T00:00:00Z]",
            "d BETWEEN '1955-05-05' AND '1970-01-01'",
        ),
        ('d:"2024-01-01T00:00:00Z"', "d = date'2024-01-01'"),
    ],
)
def test_whole_second_bounds_on_coarse_dates_are_exact(
    spark: Any, coarse: str, query: str, condition: str
) -> None:
    got = spark.read.format(FMT).option("query", query).load(coarse)
    want = spark.read.format(FMT).load(coarse).where(condition)
    assert want.count() > 0
    assert _rows_of(got) == _rows_of(want)
    local = itp.search(spark, coarse, query, options={MODE: "local"})
    assert _rows_of(local) == _rows_of(want)


@pytest.mark.parametrize(
    "query",
    [
        "ts:[2024-01-01T00:00:00.000001Z TO *]",  # the differential test's seed 120
        "ts:[2024-01-01T00:00:00Z TO 2024-01-01T00:00:01Z]",  # inclusive upper bound
        "ts:{2024-01-01T00:00:00Z TO *]",  # exclusive lower bound
        "ts:[1970-01-01T00:00:00Z TO *]",  # at the epoch: 1969-12-31T23:59:59.5 is indexed there
        "ts:[* TO 1955-05-05T01:01:02Z}",  # before it: 01:01:01.5 is indexed as 01:01:02
        'ts:"2024-01-01T00:00:00.5Z"',
        "ts:<=2024-01-02T00:00:00Z",
    ],
)
def test_other_bounds_on_coarse_timestamps_are_refused(spark: Any, coarse: str, query: str) -> None:
    pattern = r"option query: the date bound .* on column 'ts' cannot be matched exactly"
    with pytest.raises(Exception, match=pattern):
        spark.read.format(FMT).option("query", query).load(coarse).collect()
    with pytest.raises(itp.InexactDateBoundError, match="fastfields"):
        itp.search(spark, coarse, query, options={MODE: "local"}).collect()
    with pytest.raises(itp.QuerySyntaxError, match="cannot be matched exactly"):
        itp.count(spark, coarse, query=query)
