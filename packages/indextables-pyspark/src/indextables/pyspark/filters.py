"""Spark pushed filters -> conditions -> Tantivy queries and split pruning.

Every condition here describes a *superset* of the rows the Spark filter
keeps: the reader hands every filter back to Spark as unhandled, so Spark
always re-checks the rows, and a condition may only drop rows that surely do
not match. A filter that cannot be translated exactly is simply not used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import tantivy

from indextables.protocol.predicates import as_number
from indextables.pyspark.mapping import FieldKind, FieldSpec
from indextables.pyspark.partitionprune import partition_may_match
from indextables.pyspark.stats import string_max_is_exact
from pyspark.sql import datasource as ds
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

COMPARISONS = ("=", "<", "<=", ">", ">=")


@dataclass(frozen=True, slots=True)
class Condition:
    """One translated filter on a top-level column.

    Attributes:
        op: one of ``=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``null``, ``notnull``,
            ``prefix``, ``!=``.
        column: the column name as Spark gave it.
        values: the operand values (one for comparisons, several for ``in``).
    """

    op: str
    column: str
    values: tuple[Any, ...] = ()


_OPS: dict[type, str] = {
    ds.EqualTo: "=",
    ds.EqualNullSafe: "=",
    ds.LessThan: "<",
    ds.LessThanOrEqual: "<=",
    ds.GreaterThan: ">",
    ds.GreaterThanOrEqual: ">=",
}


def translate(spark_filter: ds.Filter) -> Condition | None:
    """The condition for one Spark filter, or None when it is not usable."""
    if isinstance(spark_filter, ds.Not):
        child = spark_filter.child
        if isinstance(child, ds.EqualTo) and len(child.attribute) == 1 and child.value is not None:
            return Condition("!=", child.attribute[0], (child.value,))
        return None
    attribute: tuple[str, ...] = tuple(getattr(spark_filter, "attribute", ()))
    if len(attribute) != 1:
        return None  # nested column paths are not pushed
    column = attribute[0]
    op = _OPS.get(type(spark_filter))
    if op is not None:
        value = spark_filter.value  # type: ignore[attr-defined]
        return None if value is None else Condition(op, column, (value,))
    if isinstance(spark_filter, ds.In):
        values = tuple(v for v in spark_filter.value if v is not None)
        return Condition("in", column, values)
    if isinstance(spark_filter, ds.IsNull):
        return Condition("null", column)
    if isinstance(spark_filter, ds.IsNotNull):
        return Condition("notnull", column)
    if isinstance(spark_filter, ds.StringStartsWith):
        return Condition("prefix", column, (spark_filter.value,))
    return None


def translate_all(filters: Iterable[ds.Filter]) -> tuple[Condition, ...]:
    """Conditions for every translatable filter (the rest are left to Spark alone)."""
    return tuple(c for c in (translate(f) for f in filters) if c is not None)


def translate_predicate(where: str, schema: StructType) -> tuple[Condition, ...]:
    """Conditions for the AND-ed simple comparisons of a SQL ``where`` string.

    Literals are typed by the column's Spark type, as Spark itself would
    compare them; a conjunct whose literal does not convert exactly, a
    timestamp (Spark reads those in the session time zone), a numeric-looking
    literal on a string column (Spark may compare it as a number), and
    anything the protocol's predicate grammar does not parse are left out.
    Spark still applies the whole condition to the rows.
    """
    from indextables.protocol import predicates as p
    from indextables.protocol.errors import ProtocolError

    try:
        root = p.parse_predicate(where)
    except ProtocolError:
        return ()
    types = {f.name.lower(): f.dataType for f in schema.fields}
    out: list[Condition] = []
    for part in _conjuncts(root):
        condition = _condition_of(part, types)
        if condition is not None:
            out.append(condition)
    return tuple(out)


def _conjuncts(node: Any) -> Iterator[Any]:
    from indextables.protocol import predicates as p

    if isinstance(node, p.And):
        yield from _conjuncts(node.left)
        yield from _conjuncts(node.right)
    else:
        yield node


def _condition_of(node: Any, types: Mapping[str, DataType]) -> Condition | None:
    from indextables.protocol import predicates as p

    negated = isinstance(node, p.Not) and isinstance(node.child, p.EqualTo)
    target = node.child if negated else node
    column = getattr(target, "column", None)
    data_type = types.get(column.lower()) if isinstance(column, str) else None
    if column is None or data_type is None:
        return None
    if isinstance(target, p.IsNull | p.IsNotNull):
        return Condition("null" if isinstance(target, p.IsNull) else "notnull", column)
    if isinstance(target, p.StartsWith):
        is_string = isinstance(data_type, StringType)
        return Condition("prefix", column, (target.prefix,)) if is_string else None
    texts = target.values if isinstance(target, p.In) else (getattr(target, "value", None),)
    values = tuple(_typed_literal(t, data_type) for t in texts)
    if not values or any(v is None for v in values):
        return None
    if negated:
        return Condition("!=", column, values)
    op = "in" if isinstance(target, p.In) else _PREDICATE_OPS.get(type(target).__name__)
    return None if op is None else Condition(op, column, values)


_PREDICATE_OPS = {
    "EqualTo": "=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
}
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_NUMERIC_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _typed_literal(text: Any, data_type: DataType) -> Any:
    """``text`` as the Python value Spark would compare with a ``data_type`` column, or None."""
    if not isinstance(text, str):
        return None
    try:
        if isinstance(data_type, StringType):
            return None if _NUMERIC_TEXT.match(text) else text
        if isinstance(data_type, _INTEGRAL):
            return int(text)
        if isinstance(data_type, FloatType | DoubleType):
            value = float(text)
            return value if math.isfinite(value) else None
        if isinstance(data_type, BooleanType):
            return {"true": True, "false": False}.get(text.lower())
        if isinstance(data_type, DateType):
            return date.fromisoformat(text)
    except ValueError:
        return None
    return None


# -- Tantivy queries -----------------------------------------------------------------


def to_query(condition: Condition, spec: FieldSpec, schema: tantivy.Schema) -> tantivy.Query | None:
    """A Tantivy query matching a superset of the condition's rows, or None if not exact."""
    if not spec.indexed and condition.op not in ("null", "notnull"):
        return None
    if condition.op in ("null", "notnull"):
        return _null_query(condition, spec)
    if condition.op == "!=":
        inner = to_query(Condition("=", condition.column, condition.values), spec, schema)
        if inner is None:
            return None
        # Rows where the column is null also fail `col != v` in Spark: keeping them is a superset.
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, inner)]
        )
    if spec.kind in (FieldKind.I64, FieldKind.F64):
        return _numeric_query(condition, spec, schema)
    if spec.is_exact:
        return _string_query(condition, spec, schema)
    if spec.kind is FieldKind.BOOL and condition.op == "=":
        value = condition.values[0]
        return (
            tantivy.Query.term_query(schema, spec.name, value) if isinstance(value, bool) else None
        )
    return None


def _null_query(condition: Condition, spec: FieldSpec) -> tantivy.Query | None:
    # exists_query reads fast fields; text fast fields of reference splits are unreadable here.
    if not spec.fast or spec.kind not in (
        FieldKind.I64,
        FieldKind.F64,
        FieldKind.BOOL,
        FieldKind.DATE,
    ):
        return None
    exists = tantivy.Query.exists_query(spec.name)
    if condition.op == "notnull":
        return exists
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, exists)]
    )


def _numeric_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema
) -> tantivy.Query | None:
    values = [_number(v, spec.kind) for v in condition.values]
    if any(v is None for v in values):
        return None
    field_type = (
        tantivy.FieldType.Integer if spec.kind is FieldKind.I64 else tantivy.FieldType.Float
    )
    if condition.op == "in":
        if not values:
            return tantivy.Query.empty_query()
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, _range(schema, spec, field_type, v, v)) for v in values]
        )
    value = values[0]
    bounds = {
        "=": (value, value, True, True),
        "<": (None, value, True, False),
        "<=": (None, value, True, True),
        ">": (value, None, False, True),
        ">=": (value, None, True, True),
    }.get(condition.op)
    if bounds is None:
        return None
    low, high, inc_low, inc_high = bounds
    return tantivy.Query.range_query(
        schema, spec.name, field_type, low, high, include_lower=inc_low, include_upper=inc_high
    )


def _range(
    schema: tantivy.Schema, spec: FieldSpec, field_type: Any, low: Any, high: Any
) -> tantivy.Query:
    return tantivy.Query.range_query(schema, spec.name, field_type, low, high)


def _number(value: Any, kind: FieldKind) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if kind is FieldKind.I64:
        if isinstance(value, float):
            # An integer column compared with a fraction: no exact integer query.
            return int(value) if value.is_integer() else None
        return value
    return None if isinstance(value, float) and math.isnan(value) else float(value)


def _string_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema
) -> tantivy.Query | None:
    if not all(isinstance(v, str) for v in condition.values):
        return None
    if condition.op == "=":
        return tantivy.Query.term_query(schema, spec.name, condition.values[0])
    if condition.op == "in":
        if not condition.values:
            return tantivy.Query.empty_query()
        # Not term_set_query: on reference splits it reads the text fast-field dictionary,
        # an SSTable that tantivy-py (compiled with FST) cannot open.
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(schema, spec.name, v))
                for v in condition.values
            ]
        )
    if condition.op == "prefix":
        pattern = re.escape(condition.values[0]) + ".*"
        return tantivy.Query.regex_query(schema, spec.name, pattern)
    return None  # Tantivy has no range queries on text fields.


def conjunction(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    """All of ``queries`` (the match-all query when there are none)."""
    if not queries:
        return tantivy.Query.all_query()
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])


# -- pruning by statistics and partition values --------------------------------------


def _all_of(parts: Sequence[Any]) -> Any | None:
    """The protocol predicates ``parts`` AND-ed together, or None for none."""
    from indextables.protocol import predicates as p

    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = p.And(combined, part)
    return combined


def stats_predicate(
    conditions: Iterable[Condition],
    fields: Mapping[str, FieldSpec],
    partition_columns: Sequence[str],
) -> Any | None:
    """A protocol stats filter (``Table.snapshot(stats_filter=...)``) for ``conditions``, or None.

    It never drops a split that :func:`may_match_file` keeps: only conditions
    on non-partition I64/F64/STRING columns (``fields``, by lowercase name)
    with comparisons or IN are used. Numbers use
    :class:`~indextables.protocol.predicates.NumberCompare` (integers compared
    exactly, else as doubles; a statistic that is not a number, or a NaN
    operand, never prunes, as here); strings use the
    string-valued comparisons, which compare in code-point order only when the
    literal is not a number, so numeric-looking string literals are left to
    the per-split check. Where the protocol keeps more (a truncated string max
    bounds nothing there, not even with the min), pruning is only weaker.
    """

    partitions = {c.lower() for c in partition_columns}
    parts: list[Any] = []
    for condition in conditions:
        column = condition.column.lower()
        spec = fields.get(column)
        if column in partitions or spec is None:
            continue
        node = _stats_node(condition, spec)
        if node is not None:
            parts.append(node)
    return _all_of(parts)


def _stats_node(condition: Condition, spec: FieldSpec) -> Any | None:
    from indextables.protocol import predicates as p

    op, values = condition.op, condition.values
    if op not in (*COMPARISONS, "in") or not values:
        return None
    if spec.kind in (FieldKind.I64, FieldKind.F64):
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            return None
        return p.NumberCompare(spec.name, "=" if op == "in" else op, tuple(values))
    if spec.kind is not FieldKind.STRING or not all(_plain_text(v) for v in values):
        return None
    if op == "in":
        return p.In(spec.name, tuple(values))
    nodes = {
        "=": p.EqualTo,
        "<": p.LessThan,
        "<=": p.LessThanOrEqual,
        ">": p.GreaterThan,
        ">=": p.GreaterThanOrEqual,
    }
    # Any operand may match, as in _stats_may_match (comparisons from Spark have one).
    found: Any = nodes[op](spec.name, values[0])
    for value in values[1:]:
        found = p.Or(found, nodes[op](spec.name, value))
    return found


def _plain_text(value: Any) -> bool:
    """A string the protocol compares with statistics in code-point order, as here."""
    from indextables.protocol.predicates import as_number

    if not isinstance(value, str) or as_number(value) is not None:
        return False
    try:
        value.encode("utf-8")  # lone surrogates: the column-wise decoder compares UTF-8
    except UnicodeEncodeError:
        return False
    return True


def may_match_file(
    conditions: Iterable[Condition],
    *,
    partition_values: Mapping[str, str | None],
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    kinds: Mapping[str, FieldKind],
    partition_types: Mapping[str, DataType] | None = None,
) -> bool:
    """False only when a split's partition values or min/max statistics prove no row matches.

    ``partition_types`` maps lowercase partition column names to Spark types.
    """
    lowered = {k.lower(): v for k, v in partition_values.items()}
    types = partition_types or {}
    for condition in conditions:
        column = condition.column.lower()
        if column in lowered or column in types:
            if not partition_may_match(condition, lowered.get(column), types.get(column)):
                return False
        elif not _stats_may_match(condition, column, min_values, max_values, kinds):
            return False
    return True


def _stats_may_match(
    condition: Condition,
    column: str,
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    kinds: Mapping[str, FieldKind],
) -> bool:
    kind = kinds.get(column)
    if kind not in (FieldKind.I64, FieldKind.F64, FieldKind.STRING) or condition.op not in (
        *COMPARISONS,
        "in",
    ):
        return True
    low = _stat(min_values, column)
    high = _stat(max_values, column)
    if low is None or high is None:
        return True
    if kind is FieldKind.STRING and not string_max_is_exact(high):
        high = None  # a truncated max bounds nothing
    if not condition.values:
        return True
    return any(_overlaps(condition.op, v, low, high, kind) for v in condition.values)


def _stat(values: Mapping[str, str] | None, column: str) -> str | None:
    if not values:
        return None
    for key, value in values.items():
        if key.lower() == column:
            return value
    return None


def _overlaps(op: str, operand: Any, low: str, high: str | None, kind: FieldKind) -> bool:
    if kind is FieldKind.STRING:
        if not isinstance(operand, str):
            return True
        lo: Any = low
        hi: Any = high
    else:
        if isinstance(operand, bool) or not isinstance(operand, (int, float)):
            return True
        if isinstance(operand, float) and math.isnan(operand):
            return True  # Spark: NaN = NaN and NaN > every number; statistics leave NaN out
        # Integers exactly (a double loses digits beyond 2**53), else doubles; NaN and
        # non-numbers bound nothing.
        lo, hi = as_number(low), as_number(high) if high is not None else None
        if lo is None or (high is not None and hi is None):
            return True
    if op in ("=", "in"):
        return lo <= operand and (hi is None or operand <= hi)
    if op == "<":
        return bool(lo < operand)
    if op == "<=":
        return bool(lo <= operand)
    if op == ">":
        return hi is None or bool(hi > operand)
    return hi is None or bool(hi >= operand)
