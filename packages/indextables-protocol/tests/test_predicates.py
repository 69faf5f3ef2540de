"""Partition predicates: parsing, exact evaluation, bounds pruning."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indextables.protocol.errors import InvalidPredicateError
from indextables.protocol.predicates import (
    And,
    DateCompare,
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
    iso_epoch_day,
    parse_predicate,
    prefix_successor,
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


_JAN1 = 19723  # 2024-01-01 as an epoch day


@pytest.mark.parametrize(
    ("predicate", "low", "high", "expected"),
    [
        (DateCompare("d", "=", (_JAN1,)), "2023-12-31", "2024-01-02", True),
        (DateCompare("d", "=", (_JAN1,)), "2024-01-02", "2024-02-01", False),
        (DateCompare("d", "=", (_JAN1 - 400, _JAN1)), "2023-12-31", "2024-01-02", True),
        (DateCompare("d", "<", (_JAN1,)), "2024-01-01", "2024-05-01", False),
        (DateCompare("d", "<=", (_JAN1,)), "2024-01-01", "2024-05-01", True),
        (DateCompare("d", ">", (_JAN1,)), "2023-01-01", "2024-01-01", False),
        (DateCompare("d", ">=", (_JAN1,)), "2023-01-01", "2024-01-01", True),
        # Years in code-point order would put "0999" below "1000" too, but not "+10000".
        (DateCompare("d", ">", (_JAN1,)), "0999-01-01", "1000-01-01", False),
        # A statistic in another form never prunes (epoch days, a timestamp, junk).
        (DateCompare("d", "=", (_JAN1,)), "19000", "19500", True),
        (DateCompare("d", "=", (_JAN1,)), "2020-01-01", "1704067200000000", True),
        (DateCompare("d", "=", (_JAN1,)), "2020-13-01", "2020-02-01", True),
        (DateCompare("d", ">", (_JAN1,)), "2020-01-01", "+10000-01-01", True),
        # An absent bound bounds nothing on its side; the other still prunes.
        (DateCompare("d", "<", (_JAN1,)), "2024-06-01", None, False),
        (DateCompare("d", ">", (_JAN1,)), "2024-06-01", None, True),
    ],
)
def test_date_compare_on_statistics(
    predicate: DateCompare, low: str, high: str | None, expected: bool
) -> None:
    assert predicate.may_match({"d": PartitionBounds(low, high)}) is expected


def test_date_compare_evaluates_iso_dates() -> None:
    predicate = DateCompare("d", ">=", (_JAN1,))
    assert predicate.matches({"d": "2024-01-01"})
    assert not predicate.matches({"d": "2023-12-31"})
    assert predicate.evaluate({"d": "19723"}) is None
    assert predicate.columns() == frozenset({"d"})
    assert iso_epoch_day("1970-01-01") == 0
    assert iso_epoch_day("1969-12-31") == -1
    assert iso_epoch_day("2024-02-30") is None
    with pytest.raises(ValueError, match="'in'"):
        DateCompare("d", "in", (1,))


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
    assert predicate.may_match_columns(["1.5", "nan", "nan"], ["2.5", "3", big]) == bytes([0, 0, 1])
    assert NumberCompare("id", "<", (0,)).may_match_columns(["1", "-1"], ["2", "0"]) == bytes(
        [0, 1]
    )


# -- Spark's comparison semantics, one pruning rule at a time (docs/pyspark.md) -------

NAN = float("nan")


def _spark_order(a: float, b: float) -> int:
    """Spark's order of doubles: NaN above every number and equal to NaN, -0.0 == 0.0."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) - math.isnan(b)
    return (a > b) - (a < b)


_HOLDS = {
    "=": lambda o: o == 0,
    "<": lambda o: o < 0,
    "<=": lambda o: o <= 0,
    ">": lambda o: o > 0,
    ">=": lambda o: o >= 0,
}


def _stat_text(value: float) -> str:
    return "NaN" if math.isnan(value) else repr(value)


FLOATS = st.one_of(
    st.sampled_from([0.0, -0.0, NAN, math.inf, -math.inf, 1.5, -1.5, 0.1]),
    st.floats(allow_nan=False, width=64),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(FLOATS, min_size=1, max_size=5),
    st.sampled_from(sorted(_HOLDS)),
    st.lists(FLOATS, min_size=1, max_size=2),
    st.sampled_from(["spark", "ignores-nan"]),
)
def test_a_double_split_holding_a_match_is_never_pruned(
    column: list[float], op: str, operands: list[float], writer: str
) -> None:
    """Whatever a writer does with NaN (Spark's order, or leaving it out as pyarrow does)."""
    numbers = [v for v in column if not math.isnan(v)]
    if writer == "spark":
        low = min(numbers) if numbers else NAN
        high = NAN if len(numbers) < len(column) else max(numbers)
    else:
        if not numbers:
            return  # such a writer records no statistics
        low, high = min(numbers), max(numbers)
    predicate = NumberCompare("d", op, tuple(operands), floating=True)
    matches = any(_HOLDS[op](_spark_order(v, o)) for v in column for o in operands)
    if matches:
        assert predicate.bounds_may_match(_stat_text(low), _stat_text(high))
        assert predicate.may_match_columns([_stat_text(low)], [_stat_text(high)]) == b"\x01"


@pytest.mark.parametrize(
    ("predicate", "low", "high", "expected"),
    [
        # Signed zero: -0.0 equals 0.0 in Spark and in the statistics' reading.
        (NumberCompare("d", "=", (0.0,), floating=True), "-0.0", "-0.0", True),
        (NumberCompare("d", "=", (-0.0,), floating=True), "0", "0", True),
        (NumberCompare("d", "<", (0.0,), floating=True), "-0.0", "1", False),
        (NumberCompare("d", "<=", (-0.0,), floating=True), "0", "1", True),
        # A float max never prunes > / >= (it may leave NaN out) ...
        (NumberCompare("d", ">", (5.0,), floating=True), "1", "2", True),
        (NumberCompare("d", ">=", (5.0,), floating=True), "1", "2", True),
        (NumberCompare("n", ">", (5,)), "1", "2", False),  # ... an integer max does
        # ... but the min stays a lower bound, and = uses both.
        (NumberCompare("d", "<", (1.0,), floating=True), "1", "NaN", False),
        (NumberCompare("d", "=", (5.0,), floating=True), "1", "2", False),
        (NumberCompare("d", "=", (1.5,), floating=True), "1", "NaN", True),
        (NumberCompare("d", "=", (0.5,), floating=True), "1", "NaN", False),
        # A NaN operand never prunes; a NaN min (all values NaN) bounds nothing.
        (NumberCompare("d", "<", (NAN,), floating=True), "1", "2", True),
        (NumberCompare("d", "<", (1.0,), floating=True), "NaN", "NaN", True),
        # One bound is enough on its side; a bound that is no number stops pruning.
        (NumberCompare("n", "<", (1,)), "5", None, False),
        (NumberCompare("n", ">", (9,)), None, "5", False),
        (NumberCompare("n", "<", (1,)), "5", "n/a", True),
        # 32-bit floats: a writer's shortest text "0.1" is the float 0.1f Spark compares.
        (NumberCompare("f", "=", (0.10000000149011612,), single=True), "0.1", "0.1", True),
        (NumberCompare("f", "=", (0.10000000149011612,)), "0.1", "0.1", False),
        (NumberCompare("f", "<=", (0.10000000149011612,), single=True), "0.1", "0.2", True),
        (NumberCompare("f", ">", (5.0,), single=True), "1", "2", True),
        (NumberCompare("f", "=", (5.0,), single=True), "3.5e38", "3.6e38", True),  # overflow
    ],
)
def test_number_compare_rules(
    predicate: NumberCompare, low: str | None, high: str | None, expected: bool
) -> None:
    assert predicate.bounds_may_match(low, high) is expected
    assert predicate.may_match_columns([low], [high]) == bytes([expected])


@pytest.mark.parametrize(
    ("predicate", "low", "high", "expected"),
    [
        # Strings compare in code-point order (= UTF-8 byte order): a supplementary
        # character sorts above U+FFFF, and a value starting with the prefix is kept.
        (StartsWith("s", "ab"), "ab\U0001f600", "ab\U0001f600z", True),
        (StartsWith("s", "ab"), "ab\uffff", "ac", True),
        (StartsWith("s", "ab"), "ac", "b", False),
        (StartsWith("s", "ab"), "a", "aa", False),
        (StartsWith("s", "a\U0010ffff"), "a\U0010ffff\U0010ffff", "b", True),
        (StartsWith("s", ""), "x", "y", True),
        (StartsWith("s", "ab"), "ac", None, False),  # the min alone bounds
        (StartsWith("s", "ab"), None, "aa", False),  # the max alone bounds
        (EqualTo("s", "b"), "c", None, False),
        (EqualTo("s", "b"), None, "a", False),
        (GreaterThan("s", "b"), "a", None, True),
        (LessThan("s", "b"), None, "a", True),
    ],
)
def test_string_rules(
    predicate: Predicate, low: str | None, high: str | None, expected: bool
) -> None:
    assert predicate.may_match({"s": PartitionBounds(low, high)}) is expected


@pytest.mark.parametrize(
    ("prefix", "successor"),
    [
        ("ab", "ac"),
        ("a\U0010ffff", "b"),
        ("\U0010ffff", None),
        ("", None),
        ("a\ud7ff", "a\ue000"),
        ("a\U0001f600", "a\U0001f601"),
    ],
)
def test_prefix_successor(prefix: str, successor: str | None) -> None:
    assert prefix_successor(prefix) == successor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # String literals read as Spark's SQL parser reads them (checked against Spark
        # itself in the pyspark tests): the value the predicate compares with.
        (r"s = 'a\\b'", EqualTo("s", "a\\b")),
        (r"s = 'it\'s'", EqualTo("s", "it's")),
        ("s = 'it''s'", EqualTo("s", "it's")),
        (r"s = 'tab\there\n'", EqualTo("s", "tab\there\n")),
        (r"s = '\u00e9\U0001F600\101\0\Z'", EqualTo("s", "é😀A\x00\x1a")),
        (r"s = '100\%\_'", EqualTo("s", "100\\%\\_")),  # kept for LIKE, as Spark keeps them
        (r"s = '\q\"'", EqualTo("s", 'q"')),
        (r"s IN ('a\'', 'b\\')", In("s", ("a'", "b\\"))),
        # LIKE: backslash escapes %, _ and itself; an unescaped % only at the end.
        (r"s LIKE '100\\%'", EqualTo("s", "100%")),
        (r"s LIKE 'a\\\\%'", StartsWith("s", "a\\")),
        (r"s LIKE '\\_x%'", StartsWith("s", "_x")),
    ],
)
def test_string_literals_are_unescaped(text: str, expected: Predicate) -> None:
    assert parse_predicate(text) == expected


@pytest.mark.parametrize("text", [r"s LIKE 'a\\'", r"s LIKE 'a\\b%'", "s LIKE 'a_b%'"])
def test_unsupported_like_patterns_are_errors(text: str) -> None:
    with pytest.raises(InvalidPredicateError, match="LIKE"):
        parse_predicate(text)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("abc", ("abc", False)),
        ("ab%", ("ab", True)),
        ("", ("", False)),
        ("%", ("", True)),
        ("a\\%", ("a%", False)),
        ("a\\\\%", ("a\\", True)),
        ("a\\_b%", ("a_b", True)),
        ("a_b", None),
        ("%a", None),
        ("a%%", None),
        ("a\\", None),
        ("a\\b", None),
    ],
)
def test_like_prefix_reads_patterns_as_the_parser_does(
    pattern: str, expected: tuple[str, bool] | None
) -> None:
    """The pattern values (escapes as Spark's parser leaves them) a prefix or an equality."""
    from indextables.protocol.predicateparser import like_prefix

    assert like_prefix(pattern) == expected


def test_tokens_remember_their_quotes() -> None:
    from indextables.protocol.predicateparser import tokenize

    tokens = tokenize("\"a\" = 'x' AND `b` = 1")
    assert [(t.kind, t.text, t.quote) for t in tokens if t.kind in ("name", "string")] == [
        ("name", "a", '"'),
        ("string", "x", "'"),
        ("name", "b", "`"),
    ]
