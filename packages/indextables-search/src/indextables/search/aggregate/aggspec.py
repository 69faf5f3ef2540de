"""What ``itp.aggregate`` is asked for: group keys (terms and buckets) and metrics.

Pure records and their validation, shared by the index path and the Spark
fallback (:mod:`.aggregation`). A group key is a column name (one group per
distinct value, as ``groupBy(col)``) or a bucket spec:

- :func:`histogram`: ``floor(col / interval) * interval`` of a numeric column
  (on an integral column with an integer interval, a key below the lowest
  long, from values near -2**63, is not representable and is null);
- :func:`date_histogram`: the start of the fixed interval (aligned at the Unix
  epoch, UTC) holding a date or timestamp;
- :func:`range`: the label of the half-open range ``[low, high)`` between
  ascending edges (``"*-10"``, ``"10-20"``, ``"20-*"``).

A metric is ``"count"`` (rows) or a pair ``(function, column)`` with function
one of count/sum/min/max/avg, typed as Spark's ``groupBy().agg()`` types them.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from typing import Any

from indextables.search.errors import OptionError

__all__ = [
    "DateHistogram",
    "GroupSpec",
    "Histogram",
    "Metric",
    "MetricFn",
    "RangeBuckets",
    "Terms",
    "date_histogram",
    "histogram",
    "parse_group_by",
    "parse_metrics",
    "range_",
]


@dataclass(frozen=True, slots=True)
class Terms:
    """One group per distinct value of ``column`` (nulls are one group)."""

    column: str
    name: str


@dataclass(frozen=True, slots=True)
class Histogram:
    """Buckets ``floor(value / interval) * interval`` of a numeric column.

    Attributes:
        column: the numeric column.
        interval: a positive bucket width; an integer on an integral column keeps keys integral.
        name: the output column name (the column's name by default).
    """

    column: str
    interval: int | float
    name: str


@dataclass(frozen=True, slots=True)
class DateHistogram:
    """Fixed-width time buckets aligned at the Unix epoch (UTC), keyed by their start.

    Attributes:
        column: a date or timestamp column.
        interval_us: the bucket width in microseconds (a multiple of a millisecond).
        name: the output column name.
    """

    column: str
    interval_us: int
    name: str


@dataclass(frozen=True, slots=True)
class RangeBuckets:
    """Half-open ranges between ascending ``edges``, keyed by a label.

    Attributes:
        column: a numeric column.
        edges: strictly ascending finite numbers.
        name: the output column name.
    """

    column: str
    edges: tuple[int | float, ...]
    name: str

    @property
    def labels(self) -> tuple[str, ...]:
        """The bucket labels, lowest range first: ``*-e0``, ``e0-e1``, ..., ``en-*``."""
        texts = ["*", *(_number_text(e) for e in self.edges), "*"]
        return tuple(f"{low}-{high}" for low, high in itertools.pairwise(texts))


GroupSpec = Terms | Histogram | DateHistogram | RangeBuckets


class MetricFn(Enum):
    """An aggregate function of ``itp.aggregate``."""

    COUNT = "count"
    SUM = "sum"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


@dataclass(frozen=True, slots=True)
class Metric:
    """One output metric.

    Attributes:
        name: the output column name.
        fn: the function.
        column: its column; None for ``count`` of rows.
    """

    name: str
    fn: MetricFn
    column: str | None = None


def histogram(column: str, interval: int | float, *, name: str | None = None) -> Histogram:
    """A histogram group key: ``floor(column / interval) * interval``.

    With an integer interval on an integral column the key is a long; a key
    below the lowest long (from values near -2**63) is not representable and
    is null, as Spark's ``try_subtract`` gives.

    Raises:
        OptionError: an interval that is not a positive finite number.
    """
    if isinstance(interval, bool) or not isinstance(interval, int | float):
        raise OptionError(f"histogram({column!r}): interval {interval!r} is not a number")
    if not math.isfinite(interval) or interval <= 0:
        raise OptionError(f"histogram({column!r}): interval {interval!r} must be positive")
    return Histogram(column, interval, name or column)


_UNITS_US = {"ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
_INTERVAL = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)\s*$")


def date_histogram(
    column: str, interval: str | timedelta, *, name: str | None = None
) -> DateHistogram:
    """A date histogram group key: fixed intervals such as ``"1d"``, ``"6h"`` or a timedelta.

    Units: ``ms``, ``s``, ``m`` (minutes), ``h``, ``d`` (24 hours, UTC). Calendar
    intervals (months, years) are not fixed and not offered.

    Raises:
        OptionError: an interval that does not parse, is not positive or is not
            a whole number of milliseconds.
    """
    if isinstance(interval, timedelta):
        micros = (interval.days * 86_400 + interval.seconds) * 1_000_000 + interval.microseconds
    else:
        match = _INTERVAL.match(str(interval))
        if match is None:
            raise OptionError(
                f"date_histogram({column!r}): interval {interval!r} is not like "
                "'1d', '6h', '15m', '30s' or '500ms'"
            )
        micros = int(match.group(1)) * _UNITS_US[match.group(2)]
    if micros <= 0 or micros % 1_000:
        raise OptionError(
            f"date_histogram({column!r}): interval {interval!r} must be a positive "
            "whole number of milliseconds"
        )
    return DateHistogram(column, micros, name or column)


def range_(column: str, edges: Sequence[int | float], *, name: str | None = None) -> RangeBuckets:
    """A range group key over ascending ``edges`` (exported as ``itp.range``).

    Raises:
        OptionError: no edges, an edge that is not a finite number, or edges
            that are not strictly ascending.
    """
    values = tuple(edges)
    if not values:
        raise OptionError(f"range({column!r}): give at least one edge")
    for edge in values:
        if isinstance(edge, bool) or not isinstance(edge, int | float) or not math.isfinite(edge):
            raise OptionError(f"range({column!r}): edge {edge!r} is not a finite number")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise OptionError(f"range({column!r}): edges {list(values)} must be strictly ascending")
    return RangeBuckets(column, values, name or column)


def _number_text(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e16 else repr(value)
    return str(value)


def parse_group_by(group_by: Sequence[str | GroupSpec] | str) -> tuple[GroupSpec, ...]:
    """The group keys of ``group_by`` (a column name alone is one key).

    Raises:
        OptionError: an entry that is neither a column name nor a bucket spec.
    """
    entries: Sequence[Any] = (group_by,) if isinstance(group_by, str) else group_by
    out: list[GroupSpec] = []
    for entry in entries:
        if isinstance(entry, str):
            out.append(Terms(entry, entry))
        elif isinstance(entry, Terms | Histogram | DateHistogram | RangeBuckets):
            out.append(entry)
        else:
            raise OptionError(
                f"group_by entry {entry!r} is neither a column name nor "
                "itp.histogram/itp.date_histogram/itp.range"
            )
    return tuple(out)


def parse_metrics(metrics: Mapping[str, Any]) -> tuple[Metric, ...]:
    """The metrics of ``{name: "count" | (function, column)}``, in the mapping's order.

    Raises:
        OptionError: no metrics, or one that is not ``"count"`` or a known
            ``(function, column)`` pair.
    """
    if not metrics:
        raise OptionError('metrics is empty: give at least one, e.g. {"n": "count"}')
    out: list[Metric] = []
    for name, spec in metrics.items():
        if isinstance(spec, str):
            if spec.strip().lower() != "count":
                raise OptionError(
                    f'metric {name!r}={spec!r}: a bare string must be "count"; '
                    'use a pair such as ("sum", "bytes") for a column'
                )
            out.append(Metric(str(name), MetricFn.COUNT))
            continue
        if not (isinstance(spec, tuple | list) and len(spec) == 2 and isinstance(spec[1], str)):
            raise OptionError(f"metric {name!r}={spec!r} is not a (function, column) pair")
        try:
            fn = MetricFn(str(spec[0]).strip().lower())
        except ValueError:
            known = ", ".join(f.value for f in MetricFn)
            raise OptionError(
                f"metric {name!r}: unknown function {spec[0]!r} (known: {known})"
            ) from None
        out.append(Metric(str(name), fn, spec[1]))
    return tuple(out)


def output_names(groups: Sequence[GroupSpec], metrics: Sequence[Metric]) -> tuple[str, ...]:
    """The output columns, group keys first.

    Raises:
        OptionError: two outputs with the same (case-insensitive) name.
    """
    names = (*(g.name for g in groups), *(m.name for m in metrics))
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise OptionError(f"output column {name!r} appears twice in group_by/metrics")
        seen.add(name.lower())
    return names
