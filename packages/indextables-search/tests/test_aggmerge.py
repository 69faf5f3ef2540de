"""Pure-Python checks of the aggregation specs and the exact merge of per-split tables."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from indextables.search.aggregate.aggmerge import (
    NotExact,
    Partial,
    final_rows,
    final_value,
    merge_tables,
)
from indextables.search.aggregate.aggspec import (
    Metric,
    MetricFn,
    date_histogram,
    histogram,
    output_names,
    parse_group_by,
    parse_metrics,
    range_,
)
from indextables.search.errors import OptionError


def _partial(values: list[int]) -> Partial:
    if not values:
        return Partial()
    return Partial(len(values), sum(values), min(values), max(values))


def test_merge_equals_one_pass_over_random_splits() -> None:
    rng = random.Random(7)
    rows = [(rng.choice("abc"), rng.randint(-50, 50)) for _ in range(500)]
    cuts = sorted(rng.sample(range(1, 500), 9))
    splits = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, 500], strict=True)]
    tables = []
    for split in splits:
        keys = {k for k, _ in split}
        tables.append({(k,): (_partial([v for kk, v in split if kk == k]),) for k in keys})
    merged = merge_tables(tables)
    for key in "abc":
        expected = _partial([v for k, v in rows if k == key])
        assert merged[(key,)] == (expected,)


def test_final_values_follow_spark() -> None:
    part = Partial(4, 10, 1, 4)
    assert final_value(Metric("n", MetricFn.COUNT), Partial(count=3), integral=False) == 3
    assert final_value(Metric("s", MetricFn.SUM, "x"), part, integral=True) == 10
    assert final_value(Metric("a", MetricFn.AVG, "x"), part, integral=True) == 2.5
    assert final_value(Metric("lo", MetricFn.MIN, "x"), part, integral=True) == 1
    assert final_value(Metric("hi", MetricFn.MAX, "x"), part, integral=True) == 4
    for fn in (MetricFn.SUM, MetricFn.AVG, MetricFn.MIN, MetricFn.MAX):
        assert final_value(Metric("m", fn, "x"), Partial(), integral=True) is None
    assert final_value(Metric("c", MetricFn.COUNT, "x"), Partial(), integral=True) == 0


def test_long_overflow_is_left_to_spark() -> None:
    big = Partial(2, (1 << 63) + 5, 1, 1 << 62)
    with pytest.raises(NotExact):
        final_value(Metric("s", MetricFn.SUM, "x"), big, integral=True)


def test_global_aggregate_over_no_rows_is_one_row() -> None:
    metrics = [Metric("n", MetricFn.COUNT), Metric("s", MetricFn.SUM, "x")]
    assert final_rows({}, metrics, integral=[False, True], grouped=False) == [(0, None)]
    assert final_rows({}, metrics, integral=[False, True], grouped=True) == []


def test_rows_sorted_with_null_keys_first() -> None:
    table = {("b",): (Partial(1),), (None,): (Partial(2),), ("a",): (Partial(3),)}
    rows = final_rows(table, [Metric("n", MetricFn.COUNT)], integral=[False], grouped=True)
    assert rows == [(None, 2), ("a", 3), ("b", 1)]


def test_metric_and_group_parsing() -> None:
    metrics = parse_metrics({"n": "count", "t": ("sum", "bytes"), "m": ["MAX", "x"]})
    assert [(m.name, m.fn, m.column) for m in metrics] == [
        ("n", MetricFn.COUNT, None),
        ("t", MetricFn.SUM, "bytes"),
        ("m", MetricFn.MAX, "x"),
    ]
    groups = parse_group_by(["a", histogram("b", 10), range_("c", [1, 2.5])])
    assert [g.name for g in groups] == ["a", "b", "c"]
    assert range_("c", [0, 10.5, 20]).labels == ("*-0", "0-10.5", "10.5-20", "20-*")
    assert date_histogram("t", "6h").interval_us == 6 * 3_600_000_000
    assert date_histogram("t", timedelta(minutes=15)).interval_us == 15 * 60_000_000


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: parse_metrics({}), "metrics is empty"),
        (lambda: parse_metrics({"x": "sum"}), 'must be "count"'),
        (lambda: parse_metrics({"x": ("median", "a")}), "unknown function 'median'"),
        (lambda: histogram("a", 0), "must be positive"),
        (lambda: date_histogram("t", "1 month"), "is not like"),
        (lambda: date_histogram("t", timedelta(microseconds=5)), "whole number of milliseconds"),
        (lambda: range_("c", [3, 1]), "strictly ascending"),
        (lambda: range_("c", [float("nan")]), "finite"),
        (lambda: parse_group_by([3]), "neither a column name"),
        (lambda: output_names(parse_group_by(["a"]), parse_metrics({"A": "count"})), "twice"),
    ],
)
def test_bad_specs_fail_clearly(make: object, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        make()  # type: ignore[operator]
