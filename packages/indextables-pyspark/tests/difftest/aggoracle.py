"""The expected answer of ``itp.aggregate`` by plain arithmetic over rows, without Spark.

An independent oracle for the count/aggregate differential test: the rows come
from the Parquet copy (``collect()``), and every key and metric is computed
here in Python with Spark's rules, never with the package's own fallback
expression (``aggregation.spark_aggregate``):

- group keys: a value as it is, ``-0.0`` grouped with ``0.0`` and every NaN
  with every NaN (Spark normalizes floating keys); nulls form their own group;
- ``histogram``: ``floor(v / interval) * interval``, exact integers for an
  integral column and an integral interval (null below the lowest long, as
  documented), IEEE doubles otherwise (NaN and infinities are their own keys);
- ``range``: the label of the half-open range holding ``v``, NaN in the last
  one (NaN sorts above every number);
- ``date_histogram``: the start of the UTC-epoch-aligned bucket (epoch days for
  a date column, epoch microseconds for a timestamp);
- ``count`` (rows or non-null values), ``sum`` (exact for integers; for
  doubles NaN wins, ``+inf`` with ``-inf`` is NaN, one infinity wins, finite
  values are summed exactly), ``avg`` (the double sum over the count),
  ``min``/``max`` (NaN above every number, nulls skipped; null over no value).

A double sum is exact here but rounded in some order by Spark and by the index,
so :func:`matches` compares it within the rounding those orders can make; where
some order could overflow (the absolute values add past the double range) any
IEEE result of some order is accepted: an infinity, NaN or the exact value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from fractions import Fraction
from typing import Any

from indextables.search.aggregate.aggspec import (
    DateHistogram,
    Histogram,
    Metric,
    MetricFn,
    RangeBuckets,
    Terms,
)

LONG_MIN = -(1 << 63)
DOUBLE_MAX = Fraction(1.7976931348623157e308)
_EPOCH = datetime(1970, 1, 1)
_EPOCH_DAY = date(1970, 1, 1)
_DAY_US = 86_400_000_000
_NAN_KEY = ("NaN",)


def from_micros(micros: int) -> datetime:
    """A timestamp's epoch microseconds as a naive UTC datetime."""
    return _EPOCH + timedelta(microseconds=micros)


def key_of(value: Any) -> Any:
    """A group key as Spark groups it: -0.0 is 0.0, every NaN one key."""
    if isinstance(value, float):
        if math.isnan(value):
            return _NAN_KEY
        return value + 0.0  # -0.0 + 0.0 is 0.0
    return value


def bucket(spec: Any, value: Any, integral: bool) -> Any:
    """The key of ``value`` under one group spec (``integral``: the column is integral)."""
    if isinstance(spec, Terms):
        return value
    if value is None:
        return None
    if isinstance(spec, Histogram):
        if integral and isinstance(spec.interval, int):
            key = value // spec.interval * spec.interval
            return key if key >= LONG_MIN else None
        number = float(value)
        if not math.isfinite(number):
            return number
        return math.floor(number / spec.interval) * float(spec.interval)
    if isinstance(spec, RangeBuckets):
        position = (
            len(spec.edges)
            if isinstance(value, float) and math.isnan(value)
            else sum(1 for edge in spec.edges if value >= edge)
        )
        return spec.labels[position]
    if isinstance(spec, DateHistogram):
        if isinstance(value, datetime):
            naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
            micros = (naive - _EPOCH) // timedelta(microseconds=1)
            return _EPOCH + timedelta(microseconds=micros - micros % spec.interval_us)
        days = (value - _EPOCH_DAY).days
        step = spec.interval_us // _DAY_US
        return _EPOCH_DAY + timedelta(days=days - days % step)
    raise TypeError(f"unknown group spec {spec!r}")


def expected_groups(
    rows: Iterable[Mapping[str, Any]],
    groups: Sequence[Any],
    metrics: Sequence[Metric],
    integral: Mapping[str, bool],
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """{normalized group key: {metric name: expected value}} over ``rows``."""
    members: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        keys = tuple(
            key_of(bucket(spec, row[spec.column], integral.get(spec.column, False)))
            for spec in groups
        )
        members.setdefault(keys, []).append(row)
    if not groups:
        members.setdefault((), [])  # a global aggregation has one row, over no rows too
    return {
        keys: {m.name: _metric(m, grouped, integral) for m in metrics}
        for keys, grouped in members.items()
    }


def _metric(metric: Metric, rows: list[Mapping[str, Any]], integral: Mapping[str, bool]) -> Any:
    if metric.column is None:
        return len(rows)
    values = [row[metric.column] for row in rows if row[metric.column] is not None]
    if metric.fn is MetricFn.COUNT:
        return len(values)
    if not values:
        return None
    if metric.fn in (MetricFn.MIN, MetricFn.MAX):
        ordered = sorted(values, key=_spark_order)
        return ordered[0] if metric.fn is MetricFn.MIN else ordered[-1]
    exact = integral.get(metric.column, False)
    if metric.fn is MetricFn.SUM:
        return sum(values) if exact else DoubleSum.of(values)
    total = DoubleSum.of([float(v) for v in values])
    return total.divided(len(values))


def _spark_order(value: Any) -> tuple[int, Any]:
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


class DoubleSum:
    """A double sum (or average) known exactly, compared within rounding (module doc)."""

    def __init__(self, special: float | None, exact: Fraction, scale: Fraction, count: int):
        self.special = special  # NaN or an infinity decided by the values alone
        self.exact = exact
        self.scale = scale  # the sum of absolute values: the rounding bound's base
        self.count = count  # terms added (rounding steps)

    @classmethod
    def of(cls, values: Sequence[float]) -> DoubleSum:
        special: float | None = None
        if any(math.isnan(v) for v in values):
            special = math.nan
        else:
            infinite = {v for v in values if math.isinf(v)}
            if len(infinite) == 2:
                special = math.nan
            elif infinite:
                special = infinite.pop()
        finite = [Fraction(v) for v in values if math.isfinite(v)]
        return cls(
            special, sum(finite, Fraction(0)), sum(map(abs, finite), Fraction(0)), len(values)
        )

    def divided(self, count: int) -> DoubleSum:
        return DoubleSum(self.special, self.exact / count, self.scale / count, self.count + 1)

    def __repr__(self) -> str:
        if self.special is not None:
            return repr(self.special)
        return f"~{float(self.exact)!r}"

    def matches(self, got: Any) -> bool:
        if not isinstance(got, float):
            return False
        if self.special is not None:
            return _same_float(got, self.special)
        if self.scale > DOUBLE_MAX:
            # Some summation order overflows: any order's IEEE result is Spark's possible answer.
            return not math.isfinite(got) or self._close(got)
        return self._close(got)

    def _close(self, got: float) -> bool:
        if not math.isfinite(got):
            return False
        bound = self.scale * self.count * Fraction(2) ** -50 + Fraction(2) ** -1070
        return abs(Fraction(got) - self.exact) <= bound


def _same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def matches(want: Any, got: Any) -> bool:
    """True when ``got`` is the expected metric value ``want`` (NaN equals NaN, -0.0 0.0)."""
    if isinstance(want, DoubleSum):
        return want.matches(got)
    if isinstance(want, float) and isinstance(got, float):
        return _same_float(want, got)
    return (bool(want == got) and type(want) is type(got)) or (want is None and got is None)
