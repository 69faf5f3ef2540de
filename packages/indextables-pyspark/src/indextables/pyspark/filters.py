"""Pushed filters: the public names of the read path, and pruning by partition values.

The three jobs live in their own modules and are re-exported here:

- :mod:`indextables.pyspark.conditions`: Spark filter / SQL ``where`` -> condition;
- :mod:`indextables.pyspark.tantivyquery`: condition -> Tantivy query;
- :mod:`indextables.pyspark.pruning`: condition -> the protocol's stats filter.

Every condition describes a *superset* of the rows the Spark filter keeps:
the reader hands every filter back to Spark as unhandled, so Spark always
re-checks the rows, and a condition may only drop rows that surely do not
match.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from indextables.pyspark.conditions import (
    COMPARISONS,
    Condition,
    translate,
    translate_all,
    translate_predicate,
)
from indextables.pyspark.mapping import FieldSpec
from indextables.pyspark.pruning import stats_may_match, stats_node, stats_predicate
from indextables.pyspark.tantivyquery import conjunction, to_query

__all__ = [
    "COMPARISONS",
    "Condition",
    "conjunction",
    "may_match_file",
    "partition_predicate",
    "stats_node",
    "stats_predicate",
    "to_query",
    "translate",
    "translate_all",
    "translate_predicate",
]


# -- pruning by statistics and partition values --------------------------------------


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


def _all_of(parts: Sequence[Any]) -> Any | None:
    """The protocol predicates ``parts`` AND-ed together, or None for none."""
    from indextables.protocol import predicates as p

    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = p.And(combined, part)
    return combined


def _log_string(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return str(value)


def may_match_file(
    conditions: Iterable[Condition],
    *,
    partition_values: Mapping[str, str | None],
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    fields: Mapping[str, FieldSpec],
    single_columns: Collection[str] = frozenset(),
) -> bool:
    """False only when a split's partition values or min/max statistics prove no row matches.

    Statistics go through the protocol's model (:func:`~indextables.pyspark.pruning.stats_may_match`),
    as the engine's stats filter does.
    """
    lowered = {k.lower(): v for k, v in partition_values.items()}
    data: list[Condition] = []
    for condition in conditions:
        column = condition.column.lower()
        if column in lowered:
            if not _partition_may_match(condition, lowered[column]):
                return False
        else:
            data.append(condition)
    return stats_may_match(
        data,
        fields,
        min_values=min_values,
        max_values=max_values,
        single_columns=single_columns,
    )


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


def _partition_may_match(condition: Condition, value: str | None) -> bool:
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
