"""Spark filters -> conditions, and pruning by partition values and statistics."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
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

from indextables.pyspark.filters import Condition, may_match_file, translate, translate_predicate
from indextables.pyspark.mapping import FieldKind

KINDS = {"id": FieldKind.I64, "name": FieldKind.STRING, "body": FieldKind.TEXT}


@pytest.mark.parametrize(
    ("spark_filter", "condition"),
    [
        (ds.EqualTo(("id",), 3), Condition("=", "id", (3,))),
        (ds.In(("name",), ("a", None, "b")), Condition("in", "name", ("a", "b"))),
        (ds.IsNull(("id",)), Condition("null", "id")),
        (ds.StringStartsWith(("name",), "ab"), Condition("prefix", "name", ("ab",))),
        (ds.Not(ds.EqualTo(("id",), 1)), Condition("!=", "id", (1,))),
        (ds.EqualTo(("s", "x"), 1), None),
        (ds.StringContains(("name",), "b"), None),
        (ds.Not(ds.IsNull(("id",))), None),
    ],
)
def test_translate(spark_filter: Any, condition: Condition | None) -> None:
    assert translate(spark_filter) == condition


def _may(conditions: list[Condition], **kwargs: Any) -> bool:
    base: dict[str, Any] = {"partition_values": {}, "min_values": None, "max_values": None}
    base.update(kwargs)
    return may_match_file(conditions, kinds=KINDS, **base)


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


def test_truncated_string_max_is_not_an_upper_bound() -> None:
    long_max = "m" * 32
    stats = {"min_values": {"name": "a"}, "max_values": {"name": long_max}}
    assert _may([Condition("=", "name", ("m" * 40,))], **stats)
    assert not _may([Condition("=", "name", ("0",))], **stats)


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (Condition("=", "day", ("2024-01-01",)), True),
        (Condition("=", "day", ("2024-01-02",)), False),
        (Condition(">", "day", ("2023-12-31",)), True),
        (Condition("null", "day"), False),
        (Condition("prefix", "day", ("2024-01",)), True),
        (Condition("in", "day", ("x", "2024-01-01")), True),
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
        ("id = 1 AND ok = true", ()),  # bare true is outside the grammar: nothing is pushed
        ("at = '2024-01-02 00:00:00'", ()),
        ("name = 42", ()),
        ("id = 1.5", ()),
        ("nope = 1", ()),
        ("lower(name) = 'x'", ()),
        ("name NOT IN ('a')", ()),
        ("id = 1 AND (name = 'a' OR name = 'b')", (Condition("=", "id", (1,)),)),
    ],
)
def test_translate_predicate(where: str, conditions: tuple[Condition, ...]) -> None:
    assert translate_predicate(where, _SCHEMA) == conditions
