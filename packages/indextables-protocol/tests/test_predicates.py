"""Partition predicates: parsing, exact evaluation, bounds pruning."""

from __future__ import annotations

import pytest

from indextables.protocol.errors import InvalidPredicateError
from indextables.protocol.predicates import (
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NumberCompare,
    Or,
    Predicate,
    StartsWith,
    compare_values,
    parse_predicate,
)
from indextables.protocol.state import PartitionBounds


@pytest.mark.parametrize(
    ("a", "b", "order"),
    [
        ("9", "10", -1),
        ("10", "9", 1),
        ("1.5", "10", -1),
        ("1e2", "99", 1),
        ("b", "a", 1),
        ("2024-01-02", "2024-01-10", -1),
        ("10", "10.0", 0),
        ("abc", "10", 1),
    ],
)
def test_compare_values_is_numeric_aware(a: str, b: str, order: int) -> None:
    assert compare_values(a, b) == order


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "date = '2024-01-01' AND region IN ('us','eu')",
            And(EqualTo("date", "2024-01-01"), In("region", ("us", "eu"))),
        ),
        ("a < 5 OR b >= 'x'", Or(LessThan("a", "5"), GreaterThanOrEqual("b", "x"))),
        ("NOT (a <= 1)", Not(LessThanOrEqual("a", "1"))),
        ("a != 'it''s'", Not(EqualTo("a", "it's"))),
        ("a <> 1", Not(EqualTo("a", "1"))),
        ("`my col` > -2.5", GreaterThan("my col", "-2.5")),
        ("a IS NULL", IsNull("a")),
        ("a is not null", IsNotNull("a")),
        ("a LIKE 'pre%'", StartsWith("a", "pre")),
        ("a NOT IN ('x')", Not(In("a", ("x",)))),
        ("a BETWEEN 1 AND 3", And(GreaterThanOrEqual("a", "1"), LessThanOrEqual("a", "3"))),
        (
            "a = 1 OR b = 2 AND c = 3",
            Or(EqualTo("a", "1"), And(EqualTo("b", "2"), EqualTo("c", "3"))),
        ),
    ],
)
def test_parse(text: str, expected: Predicate) -> None:
    assert parse_predicate(text) == expected


@pytest.mark.parametrize(
    "text", ["", "a =", "a = 1 AND", "(a = 1", "a LIKE '%x'", "a ~ 1", "a = 1 b", "= 1"]
)
def test_parse_errors(text: str) -> None:
    with pytest.raises(InvalidPredicateError):
        parse_predicate(text)


@pytest.mark.parametrize(
    ("text", "values", "result"),
    [
        ("date = '2024-01-01'", {"date": "2024-01-01"}, True),
        ("n > 9", {"n": "10"}, True),
        ("n > 9", {"n": None}, False),
        ("NOT n > 9", {"n": None}, False),
        ("NOT n > 9", {}, False),
        ("n IS NULL", {"n": ""}, True),
        ("n IS NOT NULL", {"n": "1"}, True),
        ("n > 9 OR m = 'a'", {"m": "a"}, True),
        ("n > 9 AND m = 'a'", {"m": "a"}, False),
        ("r IN ('us','eu')", {"r": "eu"}, True),
        ("r LIKE 'u%'", {"r": "us"}, True),
        ("r LIKE 'u%'", {"r": "eu"}, False),
    ],
)
def test_matches(text: str, values: dict[str, str | None], result: bool) -> None:
    predicate = parse_predicate(text)
    assert predicate.matches(values) is result


def _b(low: str | None, high: str | None) -> dict[str, PartitionBounds]:
    return {"c": PartitionBounds(low, high)}


@pytest.mark.parametrize(
    ("text", "bounds", "may"),
    [
        ("c = 5", _b("1", "10"), True),
        ("c = 50", _b("1", "10"), False),
        ("c = 5", _b("10", "20"), False),  # numeric, not string, comparison
        ("c < 1", _b("1", "10"), False),
        ("c <= 1", _b("1", "10"), True),
        ("c > 10", _b("1", "10"), False),
        ("c >= 10", _b("1", "10"), True),
        ("c IN (0, 11)", _b("1", "10"), False),
        ("c IN (0, 5)", _b("1", "10"), True),
        ("c = 50 OR c = 5", _b("1", "10"), True),
        ("c = 50 AND c = 5", _b("1", "10"), False),
        ("c != 3", _b("3", "3"), False),
        ("c != 3", _b("3", "4"), True),
        ("NOT c > 3", _b("5", "9"), True),  # only NOT(EqualTo) prunes
        ("c LIKE 'b%'", _b("a", "az"), False),
        ("c LIKE 'b%'", _b("a", "c"), True),
        ("c LIKE 'b%'", _b("bz", "c"), True),
        ("c IS NULL", _b("1", "1"), True),
        ("c = 50", _b(None, None), True),
        ("d = 50", _b("1", "10"), True),
    ],
)
def test_may_match(text: str, bounds: dict[str, PartitionBounds], may: bool) -> None:
    assert parse_predicate(text).may_match(bounds) is may


def test_no_bounds_never_prunes() -> None:
    assert parse_predicate("c = 1").may_match(None)


def test_columns() -> None:
    assert parse_predicate("a = 1 AND (b > 2 OR NOT c IS NULL)").columns() == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("predicate", "low", "high", "expected"),
    [
        (NumberCompare("id", "=", (5,)), "1", "9", True),
        (NumberCompare("id", "=", (10,)), "1", "9", False),
        (NumberCompare("id", "=", (10, 3)), "1", "9", True),
        (NumberCompare("id", "<", (1,)), "1", "9", False),
        (NumberCompare("id", "<=", (1,)), "1", "9", True),
        (NumberCompare("id", ">", (9,)), "1", "9", False),
        (NumberCompare("id", ">=", (9.0,)), "1", "9", True),
        (NumberCompare("id", ">", (9.5,)), "1", "10", True),  # "10" > "9.5" only as numbers
        (NumberCompare("id", ">", (5,)), "1", "abc", True),  # not a number: unknown
        (NumberCompare("id", ">", (5,)), "1", None, True),  # a missing bound: unknown
        # Spark orders NaN above every number: a NaN bound proves nothing.
        (NumberCompare("id", ">", (5,)), "1", "nan", True),
        (NumberCompare("id", "=", (float("nan"),)), "1", "9", True),  # NaN = NaN in Spark
        (NumberCompare("id", "<", (float("nan"),)), "1", "9", True),
        # Integers beyond 2**53 keep every digit (as doubles both would be 2**53).
        (NumberCompare("id", "=", (2**53 + 1,)), str(2**53 + 1), str(2**53 + 1), True),
        (NumberCompare("id", "=", (2**53,)), str(2**53 + 1), str(2**53 + 1), False),
        (NumberCompare("id", ">", (2**53,)), "1", str(2**53 + 1), True),
        (NumberCompare("id", "=", (2**53 + 1,)), "1.5", str(2**53 + 1), True),  # mixed column
        (NumberCompare("id", ">", (2**53,)), "1.5", str(2**53 + 1), True),
    ],
)
def test_number_compare_on_statistics(
    predicate: NumberCompare, low: str, high: str | None, expected: bool
) -> None:
    assert predicate.may_match({"id": PartitionBounds(low, high)}) is expected
    assert predicate.may_match_columns([low], [high]) == bytes([expected])


def test_number_compare_evaluates_values_as_numbers() -> None:
    predicate = NumberCompare("n", ">", (9,))
    assert predicate.matches({"n": "10"})
    assert predicate.evaluate({"n": "x"}) is None
    assert predicate.evaluate({}) is None
    assert predicate.columns() == frozenset({"n"})
    with pytest.raises(ValueError, match="'!='"):
        NumberCompare("n", "!=", (1,))


def test_number_compare_columns_keep_large_integers_exact() -> None:
    """A column mixing fractions and integers beyond 2**53 is read exactly, entry by entry."""
    big = str(2**53 + 1)
    predicate = NumberCompare("id", "=", (2**53 + 1,))
    assert predicate.may_match_columns(["1.5", big], ["2.5", big]) == bytes([0, 1])
    # A bound that is not a number bounds nothing on its side; the other one still does.
    assert predicate.may_match_columns(["1.5", "nan", "nan"], ["2.5", "3", big]) == bytes(
        [0, 0, 1]
    )
    assert NumberCompare("id", "<", (0,)).may_match_columns(["1", "-1"], ["2", "0"]) == bytes(
        [0, 1]
    )
