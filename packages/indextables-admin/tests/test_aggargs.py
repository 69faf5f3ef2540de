"""aggregate's --group-by/--metrics texts become itp.aggregate's specs."""

from __future__ import annotations

import pytest

from indextables.admin.aggargs import parse_group_by_args, parse_metric_args
from indextables.admin.errors import UsageError
from indextables.search.aggregate import aggspec
from indextables.search.errors import OptionError


def test_group_keys_of_every_kind() -> None:
    keys = parse_group_by_args(
        ("level, host as h", "date_histogram(ts, 1h) as hour", "range(latency, 0, 10.5)")
    )
    assert keys == [
        "level",
        aggspec.Terms("host", "h"),
        aggspec.date_histogram("ts", "1h", name="hour"),
        aggspec.range_("latency", [0, 10.5]),
    ]
    assert aggspec.parse_group_by(keys)  # the engine takes them as they are


def test_metrics_with_default_and_given_names() -> None:
    assert parse_metric_args(("count", "total=sum(bytes), avg(latency)")) == {
        "count": "count",
        "total": ("sum", "bytes"),
        "avg_latency": ("avg", "latency"),
    }
    assert [m.name for m in aggspec.parse_metrics(parse_metric_args(("n=COUNT",)))] == ["n"]


@pytest.mark.parametrize("text", ["", "histogram(x, 0)", "range(x, 2, 1)"])
def test_bad_group_keys_are_refused(text: str) -> None:
    with pytest.raises((UsageError, OptionError)):
        parse_group_by_args((text,))
