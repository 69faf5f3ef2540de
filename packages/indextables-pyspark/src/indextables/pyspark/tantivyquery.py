"""Conditions -> Tantivy queries that match a superset of Spark's rows.

Spark re-applies every filter to the rows a read returns, so a query may
return more rows than the condition keeps but never fewer. Where Tantivy
orders or indexes values differently from Spark, the query is widened
(docs/pyspark.md, "Comparison semantics"):

- Doubles: Tantivy's f64 order puts ``-0.0`` below ``0.0`` and keeps them
  apart; Spark compares them equal. Bounds at zero are widened to take in
  both signs. NaN with the sign bit clear sorts above +inf (inside every
  upward-open range), NaN with it set below -inf: ``>`` and ``>=`` add the
  range below -inf, as Spark puts every NaN above every number.
- Strings: a value longer than :data:`MAX_TERM_BYTES` UTF-8 bytes is never
  indexed. An ``=``/``IN`` operand within the limit is safe (a longer value
  cannot equal it); a longer operand is not pushed. A prefix is pushed only
  on splits whose writer recorded that every value of the column was indexed
  (:func:`fully_indexed_columns`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Sequence
from typing import Final

import tantivy

from indextables.pyspark.conditions import Condition
from indextables.pyspark.mapping import FieldKind, FieldSpec

__all__ = [
    "FULLY_INDEXED_TAG",
    "MAX_TERM_BYTES",
    "conjunction",
    "fully_indexed_columns",
    "fully_indexed_tag",
    "to_query",
]

# Tantivy indexes a term of at most this many UTF-8 bytes; longer values are
# left out of the index (measured with tantivy-py 0.27, tests/test_tantivyquery.py).
MAX_TERM_BYTES: Final = 65_530
# A split tag our writer sets: the exact string columns (JSON list) whose every
# value is at most MAX_TERM_BYTES long, hence in the term dictionary.
FULLY_INDEXED_TAG: Final = "indextables.python.fullyIndexed="


def fully_indexed_tag(columns: Iterable[str]) -> str:
    """The split tag recording that every value of ``columns`` is indexed."""
    return FULLY_INDEXED_TAG + json.dumps(sorted(columns), ensure_ascii=True)


def fully_indexed_columns(split_tags: Iterable[str] | None) -> frozenset[str]:
    """The columns (lowercase) a split's tags say are fully indexed (none without the tag)."""
    found: set[str] = set()
    for tag in split_tags or ():
        if tag.startswith(FULLY_INDEXED_TAG):
            try:
                names = json.loads(tag[len(FULLY_INDEXED_TAG) :])
            except ValueError:
                continue
            if isinstance(names, list):
                found.update(n.lower() for n in names if isinstance(n, str))
    return frozenset(found)


def to_query(
    condition: Condition,
    spec: FieldSpec,
    schema: tantivy.Schema,
    *,
    fully_indexed: Collection[str] = frozenset(),
) -> tantivy.Query | None:
    """A Tantivy query matching a superset of the condition's rows, or None if not usable.

    ``fully_indexed`` names (lowercase) the columns of this split whose
    every value is in the term dictionary; only those take prefix queries.
    """
    if not spec.indexed and condition.op not in ("null", "notnull"):
        return None
    if condition.op in ("null", "notnull"):
        return _null_query(condition, spec)
    if condition.op == "!=":
        inner = to_query(
            Condition("=", condition.column, condition.values),
            spec,
            schema,
            fully_indexed=fully_indexed,
        )
        if inner is None:
            return None
        # Rows where the column is null also fail `col != v` in Spark: keeping them is a superset.
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, inner)]
        )
    if spec.kind is FieldKind.I64:
        return _integer_query(condition, spec, schema)
    if spec.kind is FieldKind.F64:
        return _double_query(condition, spec, schema)
    if spec.is_exact:
        return _string_query(condition, spec, schema, spec.name.lower() in fully_indexed)
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


def _any_of(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    if not queries:
        return tantivy.Query.empty_query()
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])


def _integer_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema
) -> tantivy.Query | None:
    values: list[int] = []
    for v in condition.values:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None
        if isinstance(v, float) and not v.is_integer():
            return None  # an integer column compared with a fraction: no exact integer query
        values.append(int(v))
    integer = tantivy.FieldType.Integer

    def between(low: int | None, high: int | None, inc_low: bool, inc_high: bool) -> tantivy.Query:
        return tantivy.Query.range_query(
            schema, spec.name, integer, low, high, include_lower=inc_low, include_upper=inc_high
        )

    if condition.op == "in":
        return _any_of([between(v, v, True, True) for v in values])
    value = values[0]
    bounds = {
        "=": (value, value, True, True),
        "<": (None, value, True, False),
        "<=": (None, value, True, True),
        ">": (value, None, False, True),
        ">=": (value, None, True, True),
    }.get(condition.op)
    return None if bounds is None else between(*bounds)


def _double_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema
) -> tantivy.Query | None:
    values: list[float] = []
    for v in condition.values:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None
        number = float(v)
        if math.isnan(number):
            return None  # NaN operands: Spark's NaN = NaN and NaN order are left to Spark
        values.append(number)
    double = tantivy.FieldType.Float

    def between(
        low: float | None, high: float | None, inc_low: bool, inc_high: bool
    ) -> tantivy.Query:
        return tantivy.Query.range_query(
            schema, spec.name, double, low, high, include_lower=inc_low, include_upper=inc_high
        )

    def equal(v: float) -> tantivy.Query:
        # Tantivy keeps -0.0 below 0.0; Spark compares them equal.
        return between(-0.0, 0.0, True, True) if v == 0 else between(v, v, True, True)

    if condition.op == "in":
        return _any_of([equal(v) for v in values])
    value = values[0]
    zero = value == 0
    if condition.op == "=":
        return equal(value)
    if condition.op == "<":
        return between(None, -0.0 if zero else value, True, False)
    if condition.op == "<=":
        return between(None, 0.0 if zero else value, True, True)
    if condition.op in (">", ">="):
        if condition.op == ">":
            above = between(0.0 if zero else value, None, False, True)
        else:
            above = between(-0.0 if zero else value, None, True, True)
        # NaN with its sign bit set sorts below -inf in Tantivy; Spark puts it above all.
        negative_nan = between(None, -math.inf, True, False)
        return _any_of([above, negative_nan])
    return None


def _utf8_length(text: str) -> int | None:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None  # a lone surrogate: no UTF-8 term holds it


def _string_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema, fully_indexed: bool
) -> tantivy.Query | None:
    values = condition.values
    if not all(isinstance(v, str) for v in values):
        return None
    lengths = [_utf8_length(v) for v in values]
    if any(n is None or n > MAX_TERM_BYTES for n in lengths):
        return None  # the matching value would be longer than any indexed term
    if condition.op == "=":
        return tantivy.Query.term_query(schema, spec.name, values[0])
    if condition.op == "in":
        # Not term_set_query: on reference splits it reads the text fast-field dictionary,
        # an SSTable that tantivy-py (compiled with FST) cannot open.
        return _any_of([tantivy.Query.term_query(schema, spec.name, v) for v in values])
    if condition.op == "prefix" and fully_indexed:
        try:
            return tantivy.Query.regex_query(schema, spec.name, prefix_pattern(values[0]))
        except ValueError:
            return None  # e.g. a pattern too large for the automaton
    return None  # Tantivy has no range queries on text fields.


def prefix_pattern(prefix: str) -> str:
    """A Tantivy regex matching every term that starts with ``prefix``.

    Every character but ASCII letters and digits is written ``\\x{..}``, and
    ``(?s)`` lets ``.`` match line breaks too.
    """
    body = "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in prefix)
    return f"(?s){body}.*"


def conjunction(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    """All of ``queries`` (the match-all query when there are none)."""
    if not queries:
        return tantivy.Query.all_query()
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])
