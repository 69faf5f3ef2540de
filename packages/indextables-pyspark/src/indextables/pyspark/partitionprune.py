"""Pruning splits by their partition values.

A split's partition values are the log's strings (``AddAction.partitionValues``);
the functions here decide whether a condition may hold on every row of such a
split. Each answer is a superset of Spark's: False only when no row of the
split can pass the filter Spark re-applies.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from indextables.pyspark.conditions import Condition


def partition_predicate(
    conditions: Iterable[Condition], partition_columns: Sequence[str]
) -> Any | None:
    """A protocol predicate for manifest-level pruning (equality and IN only), or None.

    Only equality keeps Spark's semantics under the log's numeric-aware
    comparisons; ranges are left to per-file pruning.
    """
    from indextables.protocol import predicates as p

    columns = {c.lower(): c for c in partition_columns}
    parts: list[Any] = []
    for condition in conditions:
        column = columns.get(condition.column.lower())
        if column is None or condition.op not in ("=", "in") or not condition.values:
            continue
        values = tuple(_log_string(v) for v in condition.values)
        parts.append(p.EqualTo(column, values[0]) if condition.op == "=" else p.In(column, values))
    return _all_of(parts)


def _log_string(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return str(value)


def _coerce(text: str, like: Any) -> Any:
    """The log string ``text`` as a value comparable with ``like``, or None."""
    try:
        if isinstance(like, bool):
            return text.lower() == "true"
        if isinstance(like, int):
            return int(text)
        if isinstance(like, float):
            return float(text)
        if isinstance(like, datetime):
            return datetime.fromisoformat(text)
        if isinstance(like, date):
            return date.fromisoformat(text)
        if isinstance(like, str):
            return text
    except ValueError:
        return None
    return None


def partition_may_match(condition: Condition, value: str | None) -> bool:
    """False only when a split's partition value ``value`` proves ``condition`` false."""
    if condition.op in ("null", "notnull"):
        return (value is None) == (condition.op == "null")
    if value is None:
        return False  # every other filter is false (or null) on a null value
    results = [_compare_holds(condition.op, value, operand) for operand in condition.values]
    if condition.op == "in":
        return any(r is not False for r in results)
    return results[0] is not False if results else True


def _compare_holds(op: str, text: str, operand: Any) -> bool | None:
    """Whether ``text op operand`` holds; None when it cannot be decided."""
    if op == "prefix":
        return text.startswith(operand) if isinstance(operand, str) else None
    if isinstance(operand, float) and math.isnan(operand):
        return None  # Spark: NaN = NaN and NaN above every number; Python compares it false
    value = _coerce(text, operand)
    if value is None:
        return None
    try:
        return bool(
            {
                "=": value == operand,
                "in": value == operand,
                "!=": value != operand,
                "<": value < operand,
                "<=": value <= operand,
                ">": value > operand,
                ">=": value >= operand,
            }[op]
        )
    except TypeError:
        return None


def _all_of(parts: Sequence[Any]) -> Any | None:
    """The protocol predicates ``parts`` AND-ed together, or None for none."""
    from indextables.protocol import predicates as p

    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = p.And(combined, part)
    return combined
