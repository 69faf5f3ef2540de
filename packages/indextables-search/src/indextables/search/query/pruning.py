"""Conditions -> the protocol's stats filter: pruning splits by min/max statistics.

There is one pruning model, the protocol's
(:mod:`indextables.protocol.predicates`, :mod:`indextables.protocol.statsfilter`):
this module only translates conditions into its predicates. The engine
evaluates them before building entries (column-wise on avro states) and the
reader evaluates the same predicates on each planned split
(:func:`stats_may_match`), so both prune exactly alike. Partition values are
pruned elsewhere.

What is translated (docs/pyspark.md, "Comparison semantics"):

- Integer columns (I64): comparisons and IN as
  :class:`~indextables.protocol.predicates.NumberCompare`.
- Float/double columns (F64): the same with ``floating`` (a max may leave NaN
  out, so it never prunes ``>``/``>=``) and, for Spark ``float`` columns,
  ``single`` (statistics rounded to 32-bit floats).
- Date and timestamp columns (DATE): ``date`` operands as
  :class:`~indextables.protocol.predicates.DateCompare` (statistics
  ``YYYY-MM-DD``), ``timestamp``/``timestamp_ntz`` operands as
  ``NumberCompare`` on epoch microseconds (:mod:`indextables.search.temporal`);
  a statistic in another form never prunes.
- Exact string columns (STRING): comparisons and IN on strings in code-point
  order, only for literals that do not look like numbers (the protocol's
  string comparisons are numeric-aware). A possibly truncated max bounds
  nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from indextables.protocol import predicates as p
from indextables.protocol.statsfilter import bounds_of
from indextables.search.query.conditions import COMPARISONS, Condition
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.temporal import all_dates, all_datetimes, epoch_day, operand_micros

__all__ = ["stats_may_match", "stats_node", "stats_predicate"]

_STRING_NODES: dict[str, type[p.Comparison]] = {
    "=": p.EqualTo,
    "<": p.LessThan,
    "<=": p.LessThanOrEqual,
    ">": p.GreaterThan,
    ">=": p.GreaterThanOrEqual,
}


def stats_predicate(
    conditions: Iterable[Condition],
    fields: Mapping[str, FieldSpec],
    partition_columns: Sequence[str],
    *,
    single_columns: Collection[str] = frozenset(),
) -> p.Predicate | None:
    """The protocol stats filter (``Table.snapshot(stats_filter=...)``) for ``conditions``.

    Args:
        conditions: the pushed conditions.
        fields: the fields pruning may use, by lowercase name.
        partition_columns: left out (pruned by partition values).
        single_columns: lowercase names of Spark ``float`` (32-bit) columns.

    Returns:
        The AND of every translatable condition, or None when there is none.
    """
    partitions = {c.lower() for c in partition_columns}
    parts: list[p.Predicate] = []
    for condition in conditions:
        column = condition.column.lower()
        spec = fields.get(column)
        if column in partitions or spec is None or condition.path:
            continue
        node = stats_node(condition, spec, single=column in single_columns)
        if node is not None:
            parts.append(node)
    return _all_of(parts)


def stats_node(
    condition: Condition, spec: FieldSpec, *, single: bool = False
) -> p.Predicate | None:
    """The protocol predicate for one condition on a non-partition column, or None."""
    op, values = condition.op, condition.values
    if op not in (*COMPARISONS, "in") or not values:
        return None
    if spec.kind in (FieldKind.I64, FieldKind.F64):
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            return None
        floating = spec.kind is FieldKind.F64
        return p.NumberCompare(
            spec.name,
            "=" if op == "in" else op,
            tuple(values),
            floating=floating,
            single=floating and single,
        )
    if spec.kind is FieldKind.DATE:
        return _temporal_node(spec.name, "=" if op == "in" else op, values)
    if spec.kind is not FieldKind.STRING or not all(_plain_text(v) for v in values):
        return None
    if op == "in":
        return p.In(spec.name, tuple(values))
    node = _STRING_NODES[op]
    # Any operand may match (comparisons from Spark have one).
    found = [node(spec.name, value) for value in values]
    return found[0] if len(found) == 1 else p.Or(*found)


def _temporal_node(column: str, op: str, values: Sequence[Any]) -> p.Predicate | None:
    """Date operands against ISO date statistics, timestamps against epoch microseconds."""
    if all_dates(values):
        return p.DateCompare(column, op, tuple(epoch_day(v) for v in values))
    if all_datetimes(values):
        micros = tuple(m for m in (operand_micros(v) for v in values) if m is not None)
        return p.NumberCompare(column, op, micros)
    return None


def stats_may_match(
    conditions: Iterable[Condition],
    fields: Mapping[str, FieldSpec],
    *,
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    partition_columns: Sequence[str] = (),
    single_columns: Collection[str] = frozenset(),
) -> bool:
    """False only when one split's min/max statistics prove that no row matches.

    The same predicate the engine evaluates (:func:`stats_predicate`), on
    the bounds it would see (:func:`indextables.protocol.statsfilter.bounds_of`).
    """
    predicate = stats_predicate(
        conditions, fields, partition_columns, single_columns=single_columns
    )
    if predicate is None:
        return True
    return predicate.may_match(bounds_of(min_values, max_values, predicate.columns()))


def _all_of(parts: Sequence[p.Predicate]) -> p.Predicate | None:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else p.And(*parts)


def _plain_text(value: Any) -> bool:
    """A string the protocol compares with statistics in code-point order."""
    if not isinstance(value, str) or p.as_number(value) is not None:
        return False
    try:
        value.encode("utf-8")  # lone surrogates: the column-wise decoder compares UTF-8
    except UnicodeEncodeError:
        return False
    return True
