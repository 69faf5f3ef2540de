"""Spark filters -> conditions, and pruning by partition values and statistics."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import datasource as ds
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from indextables.protocol.state import FileEntry
from indextables.pyspark.read.sparkfilters import translate
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.query.filters import (
    Condition,
    may_match_file,
    stats_predicate,
    translate_predicate,
)
from indextables.search.schema.mapping import FieldKind, FieldSpec

FIELDS = {
    "id": FieldSpec("id", FieldKind.I64, None, True, True, True),
    "name": FieldSpec("name", FieldKind.STRING, "raw", True, True, True),
    "body": FieldSpec("body", FieldKind.TEXT, "default", True, True, False),
}


@pytest.mark.parametrize(
    ("spark_filter", "condition"),
    [
        (ds.EqualTo(("id",), 3), Condition("=", "id", (3,))),
        (ds.In(("name",), ("a", None, "b")), Condition("in", "name", ("a", "b"))),
        (ds.IsNull(("id",)), Condition("null", "id")),
        (ds.StringStartsWith(("name",), "ab"), Condition("prefix", "name", ("ab",))),
        (ds.Not(ds.EqualTo(("id",), 1)), Condition("!=", "id", (1,))),
        (ds.EqualTo(("s", "x"), 1), Condition("=", "s", (1,), ("x",))),
        (ds.LessThan(("s", "x"), 1), None),
        (ds.StringContains(("name",), "b"), Condition("contains", "name", ("b",))),
        (ds.StringEndsWith(("name",), "b"), Condition("suffix", "name", ("b",))),
        (ds.Not(ds.IsNull(("id",))), None),
    ],
)
def test_translate(spark_filter: Any, condition: Condition | None) -> None:
    assert translate(spark_filter) == condition


def _may(conditions: list[Condition], **kwargs: Any) -> bool:
    base: dict[str, Any] = {"partition_values": {}, "min_values": None, "max_values": None}
    base.update(kwargs)
    return may_match_file(conditions, fields=FIELDS, **base)


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (Condition("=", "id", (5,)), True),
        (Condition("=", "id", (11,)), False),
        (Condition("<", "id", (1,)), False),
        (Condition(">=", "id", (10,)), True),
        (Condition("in", "id", (0, 20)), False),
        (Condition("=", "name", ("m",)), True),
        (Condition("=", "name", ("z",)), False),
        (Condition("=", "body", ("zzz",)), True),  # tokenized text is never pruned
    ],
)
def test_statistics_pruning(condition: Condition, expected: bool) -> None:
    stats = {"min_values": {"id": "1", "name": "b"}, "max_values": {"id": "10", "name": "q"}}
    assert _may([condition], **stats) is expected


_DAY = FieldSpec("day", FieldKind.DATE, None, True, True, True)
_AT = FieldSpec("at", FieldKind.DATE, None, True, True, True)
_JAN1 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (Condition("=", "day", (date(2024, 1, 15),)), True),
        (Condition("=", "day", (date(2024, 2, 1),)), False),
        (Condition(">", "day", (date(2024, 1, 31),)), False),
        (Condition(">=", "day", (date(2024, 1, 31),)), True),
        (Condition("<", "day", (date(2024, 1, 1),)), False),
        (Condition("in", "day", (date(2023, 1, 1), date(2025, 1, 1))), False),
        (Condition("in", "day", (date(2023, 1, 1), date(2024, 1, 1))), True),
        (Condition("=", "at", (_JAN1,)), True),
        (Condition("<", "at", (_JAN1,)), False),
        (Condition(">", "at", (_JAN1 + timedelta(hours=1),)), False),
        (Condition(">=", "at", (_JAN1 + timedelta(hours=1),)), True),
        # An NTZ operand is a wall-clock value, counted as if it were UTC (as the writer does).
        (Condition(">", "at", (datetime(2024, 1, 1, 1),)), False),
        (Condition("<=", "at", (datetime(2024, 1, 1),)), True),
        # Mixed operand kinds are not translated: never pruned.
        (Condition("in", "day", (date(2020, 1, 1), _JAN1)), True),
    ],
)
def test_date_and_timestamp_statistics_prune(condition: Condition, expected: bool) -> None:
    stats = {
        "min_values": {"day": "2024-01-01", "at": "1704067200000000"},
        "max_values": {"day": "2024-01-31", "at": "1704070800000000"},  # 01:00 UTC
    }
    fields = {"day": _DAY, "at": _AT}
    kept = may_match_file([condition], partition_values={}, fields=fields, **stats)
    assert kept is expected


def test_truncated_string_max_is_not_an_upper_bound() -> None:
    long_max = "m" * 32
    stats = {"min_values": {"name": "a"}, "max_values": {"name": long_max}}
    assert _may([Condition("=", "name", ("m" * 40,))], **stats)
    assert not _may([Condition("=", "name", ("0a",))], **stats)  # the min still bounds


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (Condition("=", "day", ("2024-01-01",)), True),
        (Condition("=", "day", ("2024-01-02",)), False),
        (Condition(">", "day", ("2023-12-31",)), True),
        (Condition("null", "day"), False),
        (Condition("prefix", "day", ("2024-01",)), True),
        (Condition("in", "day", ("x", "2024-01-01")), True),
        (Condition("suffix", "day", ("01-01",)), True),
        (Condition("suffix", "day", ("01-02",)), False),
        (Condition("contains", "day", ("4-01",)), True),
        (Condition("contains", "day", ("4-02",)), False),
        (Condition("notnull", "day"), True),
    ],
)
def test_partition_pruning(condition: Condition, expected: bool) -> None:
    assert _may([condition], partition_values={"day": "2024-01-01"}) is expected


def test_numeric_partition_values_compare_as_numbers() -> None:
    # As strings "10" < "9"; as the numbers Spark compares, 10 > 9.
    assert _may([Condition(">", "hour", (9,))], partition_values={"hour": "10"})
    assert not _may([Condition("<", "hour", (9,))], partition_values={"hour": "10"})


_SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("name", StringType()),
        StructField("score", DoubleType()),
        StructField("ok", BooleanType()),
        StructField("day", DateType()),
        StructField("at", TimestampType()),
    ]
)


@pytest.mark.parametrize(
    ("where", "conditions"),
    [
        ("id = 3", (Condition("=", "id", (3,)),)),
        ("ID >= '3' AND name = 'x'", (Condition(">=", "ID", (3,)), Condition("=", "name", ("x",)))),
        ("id BETWEEN 1 AND 5", (Condition(">=", "id", (1,)), Condition("<=", "id", (5,)))),
        ("name IN ('a', 'b')", (Condition("in", "name", ("a", "b")),)),
        ("name <> 'a'", (Condition("!=", "name", ("a",)),)),
        ("name LIKE 'ab%'", (Condition("prefix", "name", ("ab",)),)),
        (
            "score < 2.5 AND ok = 'true'",
            (Condition("<", "score", (2.5,)), Condition("=", "ok", (True,))),
        ),
        ("day = '2024-01-02'", (Condition("=", "day", (date(2024, 1, 2),)),)),
        (
            "name IS NULL AND id IS NOT NULL",
            (Condition("null", "name"), Condition("notnull", "id")),
        ),
        # Left to Spark alone: OR, a timestamp, a numeric literal on a string column,
        # a literal that is not of the column's type, an unknown column, a function call.
        ("id = 1 OR id = 2", ()),
        # A boolean literal is typed by its column (each AND conjunct translated alone).
        ("id = 1 AND ok = true", (Condition("=", "id", (1,)), Condition("=", "ok", (True,)))),
        ("at = '2024-01-02 00:00:00'", ()),
        ("day = '20240101'", ()),  # Python's fromisoformat reads these as 2024-01-01
        ("day = '2024-W01-1'", ()),
        ("name = 42", ()),
        ("id = 1.5", ()),
        ("nope = 1", ()),
        ("lower(name) = 'x'", ()),
        ("name NOT IN ('a')", ()),
        ("id = 1 AND (name = 'a' OR name = 'b')", (Condition("=", "id", (1,)),)),
    ],
)
def test_translate_predicate(where: str, conditions: tuple[Condition, ...]) -> None:
    assert translate_predicate(where, arrow_schema(_SCHEMA)) == conditions


# -- the engine's stats filter never prunes a split may_match_file keeps ------------

STAT_FIELDS = {
    "id": FieldSpec("id", FieldKind.I64, None, True, True, True),
    "score": FieldSpec("score", FieldKind.F64, None, True, True, True),
    "name": FieldSpec("name", FieldKind.STRING, "raw", True, True, True),
    "body": FieldSpec("body", FieldKind.TEXT, "default", True, True, False),
    "day": FieldSpec("day", FieldKind.DATE, None, True, True, True),
}
SMALL_INT = st.integers(-12, 12)
SMALL_DATE = st.integers(1, 9).map(lambda n: date(2024, 1, n))
SMALL_TEXT = st.text("abm", max_size=3)
# Small values dominate, so statistics and operands meet (equal, just above, just below).
STAT_TEXT = st.one_of(
    SMALL_INT.map(str),
    SMALL_INT.map(str),
    SMALL_INT.map(str),
    SMALL_INT.map(lambda n: str(n / 2)),
    SMALL_TEXT,
    SMALL_TEXT,
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", " 7", "1e3", "inf", "nan", "abc", "é", "a" * 31, "a" * 32, "z" * 40]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
    SMALL_DATE.map(date.isoformat),
    SMALL_DATE.map(date.isoformat),
    SMALL_DATE.map(
        lambda d: str(int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()) * 10**6)
    ),
)
STAT_MAP = st.dictionaries(st.sampled_from(sorted(STAT_FIELDS)), STAT_TEXT, max_size=4) | st.none()
STAT_MAP = STAT_MAP | st.fixed_dictionaries(
    {"id": STAT_TEXT, "score": STAT_TEXT, "name": STAT_TEXT, "day": STAT_TEXT}
)
OPERAND = st.one_of(
    SMALL_DATE,
    SMALL_DATE.map(lambda d: datetime(d.year, d.month, d.day, tzinfo=UTC)),
    SMALL_INT,
    SMALL_INT,
    SMALL_INT,
    SMALL_INT.map(lambda n: n / 2),
    SMALL_TEXT,
    SMALL_TEXT,
    SMALL_INT.map(str),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(["", "7", "1e3", "\ud800", "a" * 32]),
    st.text(max_size=4),
)
CONDITION = st.builds(
    Condition,
    st.sampled_from(["=", "<", "<=", ">", ">=", "in", "=", "<", "<=", ">", ">=", "!=", "null"]),
    st.sampled_from(
        ["id", "ID", "score", "name", "id", "score", "name", "body", "other", "day", "day"]
    ),
    st.lists(OPERAND, min_size=1, max_size=2).map(tuple),
)


def _stats_entry(i: int, mins: Any, maxs: Any) -> FileEntry:
    return FileEntry(f"f{i}", {}, 1, 0, True, 0, 0, min_values=mins, max_values=maxs)


def _old_keeps(conditions: list[Condition], entry: FileEntry) -> bool:
    return may_match_file(
        conditions,
        partition_values={},
        min_values=entry.min_values,
        max_values=entry.max_values,
        fields=STAT_FIELDS,
    )


def _truncated(entry: FileEntry, condition: Condition) -> bool:
    high = (entry.max_values or {}).get(STAT_FIELDS[condition.column.lower()].name, "")
    return len(high) >= 32


@pytest.mark.parametrize("decoder", ["cython", "python"])
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(STAT_MAP, STAT_MAP), min_size=1, max_size=16),
    st.lists(CONDITION, min_size=1, max_size=3),
)
def test_stats_filter_prunes_only_what_may_match_file_prunes(
    decoder: str, stats: list[Any], conditions: list[Condition]
) -> None:
    from indextables.avrostate import impl
    from indextables.avrostate.manifest_reader import read_manifest_entries
    from indextables.avrostate.manifest_writer import encode_manifest
    from indextables.protocol.statsfilter import entry_may_match

    entries = [_stats_entry(i, lo, hi) for i, (lo, hi) in enumerate(stats)]
    predicate = stats_predicate(conditions, STAT_FIELDS, ())
    old = [_old_keeps(conditions, e) for e in entries]
    if predicate is None:
        return
    per_entry = [entry_may_match(predicate, e) for e in entries]
    with impl.using(decoder):  # type: ignore[arg-type]
        files = read_manifest_entries(encode_manifest(entries, block_bytes=200), path="m")
        kept = set(files.stats_may_match(predicate))
    assert [i in kept for i in range(len(entries))] == per_entry  # format path == fallback
    assert all(new or not was for new, was in zip(per_entry, old, strict=True))  # never more
    for condition in conditions:
        single = stats_predicate([condition], STAT_FIELDS, ())
        if single is None:
            continue
        for entry in entries:
            if not _truncated(entry, condition):  # there the protocol keeps more, on purpose
                assert entry_may_match(single, entry) == _old_keeps([condition], entry)


@pytest.mark.parametrize(
    ("condition", "translated"),
    [
        (
            Condition(">", "ID", (5,)),
            "NumberCompare(column='id', op='>', values=(5,), floating=False, single=False)",
        ),
        (
            Condition("in", "score", (1, 2.5)),
            "NumberCompare(column='score', op='=', values=(1, 2.5), floating=True, single=False)",
        ),
        (Condition("<=", "name", ("m",)), "LessThanOrEqual(column='name', value='m')"),
        (Condition("in", "name", ("a", "b")), "In(column='name', values=('a', 'b'))"),
        (Condition("=", "name", ("7",)), None),  # numeric-looking: compared as a number there
        (Condition("=", "id", (True,)), None),
        (Condition("=", "body", ("x",)), None),  # tokenized text: never pruned
        (Condition("!=", "id", (1,)), None),
        (Condition("in", "id", ()), None),
        (Condition("=", "day", ("2024-01-01",)), None),  # a partition column
    ],
)
def test_stats_predicate_translation(condition: Condition, translated: str | None) -> None:
    fields = {**STAT_FIELDS, "day": FieldSpec("day", FieldKind.STRING, "raw", True, True, True)}
    predicate = stats_predicate([condition], fields, ("day",))
    assert (None if predicate is None else repr(predicate)) == translated


@pytest.mark.parametrize(
    ("condition", "low", "high", "expected"),
    [
        (Condition("=", "id", (2**53 + 1,)), str(2**53 + 1), str(2**53 + 1), True),
        (Condition("=", "id", (2**53,)), str(2**53 + 1), str(2**53 + 1), False),
        (Condition("=", "score", (float("nan"),)), "1.5", "2.5", True),  # Spark: NaN = NaN
        (Condition(">", "score", (3.0,)), "1.5", "nan", True),  # NaN sorts above every number
    ],
)
def test_numeric_statistics_are_compared_exactly(
    condition: Condition, low: str, high: str, expected: bool
) -> None:
    """Old and engine paths agree, and neither prunes a split that holds the value."""
    from indextables.protocol.statsfilter import entry_may_match

    column = condition.column
    entry = _stats_entry(0, {column: low}, {column: high})
    assert _old_keeps([condition], entry) is expected
    predicate = stats_predicate([condition], STAT_FIELDS, ())
    assert predicate is not None
    assert entry_may_match(predicate, entry) is expected


def test_a_nan_partition_is_kept_for_a_nan_operand() -> None:
    nan = float("nan")
    assert _may([Condition("=", "ratio", (nan,))], partition_values={"ratio": "nan"})
    # Spark sorts NaN above every number: 1.5 > NaN is false, NaN >= NaN is true.
    assert not _may([Condition(">", "ratio", (nan,))], partition_values={"ratio": "1.5"})
    assert _may([Condition(">=", "ratio", (nan,))], partition_values={"ratio": "NaN"})
    assert not _may([Condition("=", "ratio", (2.5,))], partition_values={"ratio": "1.5"})


# -- end to end: values -> our writer's statistics -> pruning keeps every match ---------

_NEG_NAN = -float("nan")  # CPython keeps the sign bit of a negated NaN
SPARK_DOUBLES = st.one_of(
    st.sampled_from([0.0, -0.0, math.nan, _NEG_NAN, math.inf, -math.inf, 1.5, -1.5]),
    st.floats(allow_nan=False, width=64),
)
SPARK_STRINGS = st.one_of(
    st.text(st.sampled_from(["a", "b", "\U0001f600", "\uffff", "\n", "é"]), max_size=5),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
)

# Dates around the edges that matter: Tantivy's span, the epoch, four-digit years.
SPARK_DATES = st.one_of(
    st.sampled_from(
        [date(1, 1, 1), date(1677, 9, 21), date(1969, 12, 31), date(1970, 1, 1), date(9999, 12, 31)]
    ),
    st.dates(),
)


def _spark_order(a: Any, b: Any) -> int:
    """Spark's order: NaN above every number and equal to NaN; strings by UTF-8 bytes."""
    if isinstance(a, str):
        x, y = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
        return (x > y) - (x < y)
    if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return int(isinstance(a, float) and math.isnan(a)) - int(
            isinstance(b, float) and math.isnan(b)
        )
    return (a > b) - (a < b)


def _spark_holds(op: str, value: Any, operands: tuple[Any, ...]) -> bool:
    orders = [_spark_order(value, o) for o in operands]
    return {
        "=": orders[0] == 0,
        "in": any(o == 0 for o in orders),
        "<": orders[0] < 0,
        "<=": orders[0] <= 0,
        ">": orders[0] > 0,
        ">=": orders[0] >= 0,
    }[op]


@settings(max_examples=300, deadline=None)
@given(
    st.data(),
    st.sampled_from(["d", "n", "s", "day", "ts", "ntz"]),
    st.sampled_from(["=", "in", "<", "<=", ">", ">="]),
)
def test_our_statistics_never_prune_a_matching_split(data: Any, column: str, op: str) -> None:
    import pyarrow as pa

    from indextables.search.write.stats import StatsCollector

    values_of = {
        "d": SPARK_DOUBLES,
        "n": st.integers(-(2**63), 2**63 - 1),
        "s": SPARK_STRINGS,
        "day": SPARK_DATES,
        "ts": st.datetimes(timezones=st.just(UTC)),
        "ntz": st.datetimes(),
    }[column]
    values = data.draw(st.lists(values_of | st.none(), min_size=1, max_size=6))
    operands = tuple(data.draw(st.lists(values_of, min_size=1, max_size=2 if op == "in" else 1)))
    specs = {
        "d": FieldSpec("d", FieldKind.F64, None, True, True, True),
        "n": FieldSpec("n", FieldKind.I64, None, True, True, True),
        "s": FieldSpec("s", FieldKind.STRING, "raw", True, True, False),
        "day": FieldSpec("day", FieldKind.DATE, None, True, True, True),
        "ts": FieldSpec("ts", FieldKind.DATE, None, True, True, True),
        "ntz": FieldSpec("ntz", FieldKind.DATE, None, True, True, True),
    }
    arrow_type = {
        "d": pa.float64(),
        "n": pa.int64(),
        "s": pa.string(),
        "day": pa.date32(),
        "ts": pa.timestamp("us", tz="UTC"),
        "ntz": pa.timestamp("us"),
    }[column]
    collector = StatsCollector((specs[column],))
    collector.add(pa.RecordBatch.from_pydict({column: values}, pa.schema([(column, arrow_type)])))
    matches = any(v is not None and _spark_holds(op, v, operands) for v in values)
    kept = may_match_file(
        [Condition(op, column, operands)],
        partition_values={},
        min_values=collector.min_values(),
        max_values=collector.max_values(),
        fields=specs,
    )
    assert kept or not matches, (values, collector.min_values(), collector.max_values())
