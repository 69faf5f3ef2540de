"""Pruning splits by their partition values.

A split's partition values are the log's strings (``AddAction.partitionValues``,
read as typed values by :func:`~indextables.search.schema.partitionvalues.spark_value`).
The functions here decide whether a condition may hold on the rows of such a
split. Each answer is a superset of Spark's by construction: False only when
no row of the split can pass the filter Spark re-applies. Spark's semantics
kept here: a comparison with null is never true (only ``IS NULL`` keeps a
null partition); ``NaN = NaN`` and NaN sorts above every number; ``-0.0 =
0.0``; timestamps compare as instants whatever the session time zone; an empty
partition string is null; a value that does not parse, or an operand of
another type than the column's, never prunes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from indextables.search.schema import columntypes as ct
from indextables.search.schema.partitionvalues import log_string, spark_value

if TYPE_CHECKING:
    from indextables.search.query.conditions import Condition


def partition_predicate(
    conditions: Iterable[Condition],
    partition_columns: Sequence[str],
    types: Mapping[str, pa.DataType] | None = None,
) -> Any | None:
    """A protocol predicate for manifest-level pruning (equality and IN only), or None.

    ``types`` maps lowercase column names to their types. The protocol
    compares partition values numerically when both sides parse as numbers,
    else as strings, and prunes manifests by bounds taken in that order. That
    order is exact only on columns whose every value is a number, or none is:
    integer, date and boolean columns. Other columns (strings that may mix
    ``"10"`` and ``"2x"``, doubles with ``NaN`` and ``-0.0``, timestamps
    written in other forms by older writers) are left to
    :func:`partition_may_match`, split by split.
    """
    from indextables.protocol import predicates as p

    if not types:
        return None
    columns = {c.lower(): c for c in partition_columns}
    parts: list[Any] = []
    for condition in conditions:
        column = columns.get(condition.column.lower())
        if condition.path or column is None or condition.op not in ("=", "in"):
            continue
        if not condition.values:
            continue
        values = _manifest_strings(condition.values, types.get(column.lower()))
        if values is None:
            continue
        parts.append(p.EqualTo(column, values[0]) if len(values) == 1 else p.In(column, values))
    return _all_of(parts)


def _manifest_strings(
    values: Sequence[Any], data_type: pa.DataType | None
) -> tuple[str, ...] | None:
    """The log strings of ``values`` when the manifest order is exact for the column."""
    if data_type is not None and ct.is_integral(data_type):
        fits = all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    elif data_type is not None and ct.is_date(data_type):
        fits = all(isinstance(v, date) and not isinstance(v, datetime) for v in values)
    elif data_type is not None and ct.is_boolean(data_type):
        fits = all(isinstance(v, bool) for v in values)
    else:
        fits = False
    if not fits:
        return None
    return tuple(str(log_string(v)) for v in values)


def _all_of(parts: Sequence[Any]) -> Any | None:
    """The protocol predicates ``parts`` AND-ed together, or None for none."""
    from indextables.protocol import predicates as p

    if not parts:
        return None
    return parts[0] if len(parts) == 1 else p.And(*parts)


def partition_may_match(
    condition: Condition, value: str | None, data_type: pa.DataType | None = None
) -> bool:
    """False only when a split's partition value ``value`` proves ``condition`` false.

    ``data_type`` is the column's type; without it every type the
    operand could be compared with is tried, and the split is kept if any
    may match.
    """
    if data_type is None:
        return any(partition_may_match(condition, value, t) for t in _candidate_types(condition))
    try:
        actual = spark_value(value, data_type)
    except ValueError:
        return True
    if condition.op in ("null", "notnull"):
        return (actual is None) == (condition.op == "null")
    if actual is None:
        return False  # every other filter is false (or null) on a null value
    results = [_compare_holds(condition.op, actual, operand) for operand in condition.values]
    if condition.op == "in":
        return any(r is not False for r in results)
    return results[0] is not False if results else True


def _candidate_types(condition: Condition) -> list[pa.DataType]:
    """Column types a condition's operands may be compared with (for untyped callers)."""
    if condition.op in ("null", "notnull"):
        return [pa.string()]
    found: list[pa.DataType] = []
    for operand in condition.values:
        if isinstance(operand, bool):
            found.append(pa.bool_())
        elif isinstance(operand, int):
            found += [pa.int64(), pa.float64(), pa.decimal128(38, 0)]
        elif isinstance(operand, float):
            found += [pa.float64(), pa.float32()]
        elif isinstance(operand, Decimal):
            found.append(pa.decimal128(38, 18))
        elif isinstance(operand, str):
            found.append(pa.string())
        elif isinstance(operand, date) and not isinstance(operand, datetime):
            found.append(pa.date32())
        else:
            return [_KEEP]
    return found or [_KEEP]


# A type no partition value parses as: the split is kept.
_KEEP = pa.null()


def _category(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float | Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, datetime):
        return "timestamp" if value.tzinfo is not None else "timestamp_ntz"
    if isinstance(value, date):
        return "date"
    return None


def _order_key(value: Any) -> Any:
    """Spark's order on numbers: NaN equal to itself and above all; -0.0 equal to 0.0."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0)
    if isinstance(value, Decimal) and value.is_nan():
        return (1, 0)
    return (0, value)


def condition_holds(op: str, actual: Any, operand: Any) -> bool | None:
    """Whether ``actual op operand`` holds in Spark; None when it cannot be decided."""
    return _compare_holds(op, actual, operand)


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "prefix": str.startswith,
    "suffix": str.endswith,
    "contains": str.__contains__,
}


def _compare_holds(op: str, actual: Any, operand: Any) -> bool | None:
    """Whether ``actual op operand`` holds in Spark; None when it cannot be decided."""
    if op in _STRING_TESTS:
        if isinstance(actual, str) and isinstance(operand, str):
            return _STRING_TESTS[op](actual, operand)
        return None
    category = _category(actual)
    if category is None or category != _category(operand):
        return None  # Spark would cast one side: leave it to Spark
    if category == "number":
        actual, operand = _order_key(actual), _order_key(operand)
    try:
        return bool(
            {
                "=": actual == operand,
                "in": actual == operand,
                "!=": actual != operand,
                "<": actual < operand,
                "<=": actual <= operand,
                ">": actual > operand,
                ">=": actual >= operand,
            }[op]
        )
    except (TypeError, KeyError):
        return None
