"""When the index answers a filter exactly, not just a superset of Spark's rows.

A read may over-fetch (Spark re-applies every filter); a count or aggregate
from the index may not. A translated condition is exact on a split when the
Tantivy query of :mod:`.tantivyquery` matches precisely the rows Spark keeps:

- integer columns: comparisons and IN, and ``!=`` where nulls are known
  exactly (IS NOT NULL below);
- double columns: comparisons and IN (``-0.0`` and ``0.0`` are matched
  together, as Spark compares them) on splits where the column holds no NaN
  (a NaN's sign decides where Tantivy sorts it; Spark puts every NaN above
  every number);
- exact string columns: ``=`` and IN (a value too long to be indexed cannot
  equal an operand short enough to be); a prefix, suffix, substring or any
  other ``LIKE`` pattern and an ``RLIKE`` regex Tantivy's dialect reads alike
  (:data:`LIKE_OPS`) on splits whose every value of
  the column is indexed (recorded by the writer, or checked on the split:
  :func:`split_fully_indexed`), where the regex over the term dictionary
  matches exactly the values the pattern keeps;
- booleans: ``=``, IN and comparisons (``false < true``); IS [NOT] NULL on
  numeric, boolean and date fields that are fast or indexed (an indexed one
  holds a value exactly where it holds a term).

Everything else (``!=`` on other kinds, string ranges, dates, tokenized text, clamped or
store-only fields) raises :class:`~indextables.search.aggregate.aggmerge.NotExact`
and the caller reads rows instead. Partition conditions are decided from the
log's partition values.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

import pyarrow as pa
import tantivy

from indextables.search.aggregate.aggmerge import NotExact
from indextables.search.errors import InexactDateBoundError
from indextables.search.query.conditions import Condition
from indextables.search.query.partitionprune import condition_holds
from indextables.search.query.searchoptions import SearchSpec, build_query
from indextables.search.query.tantivyquery import (
    FULLY_INDEXED_TAG,
    fully_indexed_columns,
    presence_exact,
    range_searchable,
    to_query,
)
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.schema.partitionvalues import spark_value
from indextables.search.splits.termbuffer import infix_terms_of

__all__ = ["LIKE_OPS", "count", "exact_query", "nan_free", "partition_holds"]

#: Condition operators answered by a regex over an exact string field's term dictionary:
#: exact only where every value of the column is indexed (:func:`split_fully_indexed`).
LIKE_OPS: Final = frozenset({"prefix", "suffix", "contains", "like", "rlike"})


def partition_holds(
    condition: Condition, value: str | None, data_type: pa.DataType | None
) -> bool | None:
    """Whether ``condition`` holds on a split whose partition value is ``value``.

    None when it cannot be decided (an unknown type, a value that does not
    parse, operands Spark would cast).
    """
    if data_type is None:
        return None
    try:
        actual = spark_value(value, data_type)
    except ValueError:
        return None
    if condition.op in ("null", "notnull"):
        return (actual is None) == (condition.op == "null")
    if actual is None:
        return False  # every other comparison with null is not true
    results = [condition_holds(condition.op, actual, v) for v in condition.values]
    if not results:
        return None if condition.op != "in" else False
    if condition.op == "in":
        if any(r is True for r in results):
            return True
        return False if all(r is False for r in results) else None
    return results[0]


def count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """Matching documents, counted without fetching any (``limit=0`` panics in tantivy-py)."""
    found = searcher.search(query, limit=1, count=True)
    return int(found.count)  # type: ignore[attr-defined]  # missing from tantivy's stub


def indexed_everywhere(index: tantivy.Index, searcher: tantivy.Searcher, spec: FieldSpec) -> bool:
    """Whether every value of the exact string fast field ``spec`` was indexed on this split.

    Tantivy leaves a value out of the inverted index when it passes the
    term length limit, but keeps it in the fast field. The writer of this
    package records the columns with no such value (the fully-indexed tag);
    splits without the record (the reference's) are checked here: the
    documents holding a value (fast field) are counted against those holding
    an indexed term. Equal counts on a single-valued column mean no value was
    left out. Any failure (a field that is not fast or not indexed) says no.
    """
    if not (spec.is_exact and spec.fast and spec.indexed):
        return False
    try:
        present = count(searcher, tantivy.Query.exists_query(spec.name))
        indexed = count(searcher, tantivy.Query.regex_query(index.schema, spec.name, "(?s).*"))
    except ValueError:
        return False
    return present == indexed


def split_fully_indexed(
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    fields: Mapping[str, FieldSpec],
    split_tags: Sequence[str],
    columns: Iterable[str],
) -> frozenset[str]:
    """The split's fully-indexed string columns: its writer's record, else checked here.

    Only ``columns`` (lowercase: those the caller needs exact) are checked,
    two counts each, and only on splits whose writer recorded nothing (the
    reference's, and ours from before the record).
    """
    recorded = fully_indexed_columns(split_tags)
    if any(tag.startswith(FULLY_INDEXED_TAG) for tag in split_tags):
        return recorded
    checked = {c for c in columns if c in fields and indexed_everywhere(index, searcher, fields[c])}
    return recorded | checked


def nan_query(schema: tantivy.Schema, name: str) -> tantivy.Query:
    """Documents whose double ``name`` is NaN of either sign (beyond +-inf in Tantivy's order)."""
    double = tantivy.FieldType.Float
    above = tantivy.Query.range_query(
        schema, name, double, math.inf, None, include_lower=False, include_upper=True
    )
    below = tantivy.Query.range_query(
        schema, name, double, None, -math.inf, include_lower=True, include_upper=False
    )
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, above), (tantivy.Occur.Should, below)]
    )


def nan_free(
    index: tantivy.Index, searcher: tantivy.Searcher, spec: FieldSpec, query: tantivy.Query
) -> None:
    """Raise NotExact unless no document of ``query`` holds NaN in the double field ``spec``."""
    if not range_searchable(spec):
        raise NotExact(f"column {spec.name!r} is not indexed: its NaN values cannot be counted")
    both = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, query), (tantivy.Occur.Must, nan_query(index.schema, spec.name))]
    )
    if count(searcher, both):
        raise NotExact(f"column {spec.name!r} holds NaN")


def exact_query(
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    fields: Mapping[str, FieldSpec],
    search: SearchSpec,
    conditions: Sequence[Condition],
    fully_indexed: frozenset[str],
    exact_dates: Collection[str] | None = None,
) -> tantivy.Query:
    """The query matching exactly the split's rows that pass ``search`` and ``conditions``.

    ``exact_dates``: the split's date fields compared at microseconds
    (:attr:`~indextables.search.read.splitreader.SplitTraits.exact_dates`).

    ``conditions`` are on data columns only. The search options are index
    semantics by definition (Spark does not re-check them on a read either).

    Raises:
        NotExact: a condition the index answers only as a superset on this split.
    """
    parts: list[tantivy.Query] = []
    if not search.is_empty:
        try:
            option_query = build_query(
                index, search, fields, exact_dates=exact_dates, missing_match_nothing=True
            )
        except InexactDateBoundError as error:
            # Here the column types are unknown (a ``date`` column is exact either way):
            # the read path, which knows them, answers or refuses.
            raise NotExact(str(error)) from None
        if option_query is not None:
            parts.append(option_query)
    for condition in conditions:
        spec = fields.get(condition.column.lower())
        if spec is None or not _exact_kind(condition, spec, fully_indexed):
            raise NotExact(f"condition {condition} is not exact on the index")
        query = to_query(
            condition,
            spec,
            index.schema,
            fully_indexed=fully_indexed,
            held_terms=infix_terms_of(index),
        )
        if query is None:
            raise NotExact(f"condition {condition} has no index query")
        parts.append(query)
    if not parts:
        return tantivy.Query.all_query()
    query = (
        parts[0]
        if len(parts) == 1
        else tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in parts])
    )
    for condition in conditions:
        spec = fields[condition.column.lower()]
        if spec.kind is FieldKind.F64 and condition.op not in ("null", "notnull"):
            nan_free(index, searcher, spec, tantivy.Query.all_query())
    return query


def _exact_kind(condition: Condition, spec: FieldSpec, fully_indexed: frozenset[str]) -> bool:
    op = condition.op
    if op in ("null", "notnull"):
        return presence_exact(spec)
    if op == "!=":
        # All rows holding a value but the operand's (nulls fail `!=` in Spark too).
        if spec.kind is FieldKind.BOOL:
            return presence_exact(spec) and isinstance(condition.values[0], bool)
        return (
            spec.kind is FieldKind.I64
            and range_searchable(spec)
            and presence_exact(spec)
            and _numbers(condition.values)
        )
    if spec.kind in (FieldKind.I64, FieldKind.F64) and range_searchable(spec):
        return op in ("=", "<", "<=", ">", ">=", "in") and _numbers(condition.values)
    if not spec.indexed:
        return False
    if spec.kind in (FieldKind.I64, FieldKind.F64):
        return op in ("=", "<", "<=", ">", ">=", "in") and _numbers(condition.values)
    if spec.is_exact:
        if op in LIKE_OPS:
            return spec.name.lower() in fully_indexed
        return op in ("=", "in")
    return (
        spec.kind is FieldKind.BOOL
        and op in ("=", "in", "<", "<=", ">", ">=")
        and all(isinstance(v, bool) for v in condition.values)
    )


def _numbers(values: Sequence[Any]) -> bool:
    return all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values
    )
