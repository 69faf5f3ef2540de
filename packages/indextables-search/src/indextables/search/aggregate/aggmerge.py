"""Exact merging of per-split aggregates: counts and sums add, min/max combine.

Each split yields a :data:`GroupTable`, group key tuple -> one :class:`Partial`
per metric. Tables merge by key; nothing is ever truncated (terms come from
complete per-split counts), so the merged table is what one pass over every
row would give. Final values follow Spark's ``groupBy().agg()``: an average
is the merged sum over the merged count, and a sum, min, max or average over
no (non-null) values is null.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from indextables.search.aggregate.aggspec import Metric, MetricFn

__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "GroupTable",
    "NotExact",
    "Partial",
    "final_rows",
    "merge_tables",
]

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1


class NotExact(Exception):
    """The index cannot answer exactly: the caller falls back to reading rows."""


@dataclass(frozen=True, slots=True)
class Partial:
    """One metric of one group over some rows.

    Attributes:
        count: rows (``count``) or non-null values (every other metric).
        total: sum of the values (ints stay ints).
        low: smallest value, None when there is none.
        high: largest value, None when there is none.
    """

    count: int = 0
    total: int | float = 0
    low: Any = None
    high: Any = None

    def merge(self, other: Partial) -> Partial:
        """Both partials as one."""
        return Partial(
            self.count + other.count,
            self.total + other.total,
            _pick(min, self.low, other.low),
            _pick(max, self.high, other.high),
        )


def _pick(choose: Any, a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return choose(a, b)


GroupTable = dict[tuple[Any, ...], tuple[Partial, ...]]


def merge_tables(tables: Iterable[Mapping[tuple[Any, ...], tuple[Partial, ...]]]) -> GroupTable:
    """Every table's groups in one table, partials of the same key merged."""
    merged: GroupTable = {}
    for table in tables:
        for key, parts in table.items():
            seen = merged.get(key)
            merged[key] = (
                parts
                if seen is None
                else tuple(a.merge(b) for a, b in zip(seen, parts, strict=True))
            )
    return merged


def final_value(metric: Metric, part: Partial, *, integral: bool) -> Any:
    """The Spark value of ``metric`` from its merged partial.

    ``integral`` says the metric's column is an integral type (its sum is a long).

    Raises:
        NotExact: an integral sum outside the range of a long (Spark's
            overflow behaviour is left to Spark).
    """
    if metric.fn is MetricFn.COUNT:
        return part.count
    if part.count == 0:
        return None
    if metric.fn is MetricFn.SUM:
        if integral:
            total = int(part.total)
            if not LONG_MIN <= total <= LONG_MAX:
                raise NotExact(f"sum {metric.name!r} overflows a long")
            return total
        return float(part.total)
    if metric.fn is MetricFn.AVG:
        return part.total / part.count
    return part.low if metric.fn is MetricFn.MIN else part.high


def final_rows(
    table: Mapping[tuple[Any, ...], tuple[Partial, ...]],
    metrics: Sequence[Metric],
    *,
    integral: Sequence[bool],
    grouped: bool,
) -> list[tuple[Any, ...]]:
    """One row per group (keys then metric values), sorted by key with nulls first.

    Without group keys (``grouped`` false) there is always exactly one row,
    as in Spark's global aggregation, even over no rows.
    """
    if not grouped and not table:
        table = {(): tuple(Partial() for _ in metrics)}
    rows = [
        (
            *key,
            *(
                final_value(m, p, integral=i)
                for m, p, i in zip(metrics, parts, integral, strict=True)
            ),
        )
        for key, parts in table.items()
    ]
    return sorted(rows, key=lambda row: _sort_key(row[: len(next(iter(table)))]))


def _sort_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is not None, v if v is not None else 0) for v in key)
