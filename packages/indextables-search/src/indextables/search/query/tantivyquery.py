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
  (:func:`fully_indexed_columns`). Suffixes and substrings (``StringEndsWith``,
  ``StringContains``, ``LIKE '%s'``, ``LIKE '%m%'``) and any other ``LIKE``
  pattern (:func:`like_pattern`) follow the same rule: on such a split the
  regex over the term dictionary matches exactly the rows the pattern keeps.
  ``RLIKE`` too, when its Java regex is of the subset
  :mod:`~indextables.search.query.rlikepattern` rewrites (else not pushed).
  Tokenized (``text``) fields take none of them: their terms are tokens, not
  values. Every regex writes each character
  but ASCII letters and digits as ``\\x{..}`` and starts with ``(?s)``, so a
  line break in a value or an operand is matched like any character.
- Null tests: an exists query reads a fast field. It is exact on numeric,
  bool and date fast fields, and on exact (raw) string fast fields of splits
  this package wrote (``readable_text_fast``): the raw fast field holds every
  value, ``""`` and over-long ones too. Tokenized text drops ``""`` from its
  fast field, and reference splits keep text fast fields in a dictionary form
  tantivy-py cannot open: neither is pushed.
- Dates and timestamps (:func:`date_bounds`): values outside Tantivy's span
  (1677-09-21 .. 2262-04-11) are indexed clamped to its ends, so a bound at or
  beyond an end is made inclusive at that end, or dropped (unbounded) when
  every clamped value passes. A date field is exact to the microsecond only
  when it is fast with microsecond precision (``exact_dates``: our writer's
  splits); otherwise Tantivy compares values truncated to whole seconds, and
  both bounds are widened by one second, inclusive.
- IP fields: the Spark column is a string, compared as a string. ``=``/IN
  are pushed as terms of the parsed address (a superset: every string equal
  to the operand parses to that address; ``1.2.3.4`` and ``::ffff:1.2.3.4``
  both match); an operand Tantivy cannot parse is not pushed. String order is
  not address order: ranges are not pushed.
"""

from __future__ import annotations

import json
import math
import operator
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Final, Literal

import tantivy

from indextables.search.query.conditions import Condition
from indextables.search.query.likepattern import ANY, ONE, like_pieces
from indextables.search.query.rlikepattern import rlike_tantivy_regex
from indextables.search.read.convert import TANTIVY_MAX_MICROS, TANTIVY_MIN_MICROS
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.temporal import micros_to_datetime, operand_micros

__all__ = [
    "FAST_RANGE_KINDS",
    "FULLY_INDEXED_TAG",
    "MAX_TERM_BYTES",
    "conjunction",
    "date_bounds",
    "fully_indexed_columns",
    "fully_indexed_tag",
    "like_pattern",
    "present_query",
    "presence_exact",
    "range_searchable",
    "to_query",
    "zero_bound",
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


#: Kinds whose every condition Tantivy answers as a range query over the fast field alone
#: (no index needed): a companion's fast-only columns are limited to these.
FAST_RANGE_KINDS = (FieldKind.I64, FieldKind.F64, FieldKind.DATE)


def range_searchable(spec: FieldSpec) -> bool:
    """Whether range queries (every query of an integer, float or date condition) work
    on ``spec``'s field: indexed, or a fast field of those kinds that is not indexed (a
    companion's fast-only column), which Tantivy searches by reading the fast field."""
    return spec.indexed or (spec.fast and spec.kind in FAST_RANGE_KINDS)


def to_query(
    condition: Condition,
    spec: FieldSpec,
    schema: tantivy.Schema,
    *,
    fully_indexed: Collection[str] = frozenset(),
    exact_dates: Collection[str] = frozenset(),
    readable_text_fast: bool = False,
    held_terms: HeldTerms | None = None,
) -> tantivy.Query | None:
    """A Tantivy query matching a superset of the condition's rows, or None if not usable.

    ``fully_indexed`` names (lowercase) the columns of this split whose
    every value is in the term dictionary; only those take prefix, suffix
    and substring queries. ``exact_dates`` names (lowercase) the date fields
    whose range queries compare microseconds (fast, microsecond precision);
    the others are compared at whole seconds. ``readable_text_fast``: the
    split's raw text fast fields can be read (splits this package wrote).

    An operand Tantivy refuses to build a query with (``ValueError``,
    ``OverflowError``) gives None as well: the condition is left to Spark,
    never raised out of planning. ``held_terms``: the split's terms of a field holding
    (ending with) a literal (:mod:`~indextables.search.splits.termbuffer`), for the
    suffix and substring conditions of exact fields, queried as those terms rather than
    as a regex walked over the term dictionary.
    """
    try:
        return _to_query(
            condition,
            spec,
            schema,
            fully_indexed=fully_indexed,
            exact_dates=exact_dates,
            readable_text_fast=readable_text_fast,
            held_terms=held_terms,
        )
    except (ValueError, OverflowError):
        return None


def _to_query(
    condition: Condition,
    spec: FieldSpec,
    schema: tantivy.Schema,
    *,
    fully_indexed: Collection[str],
    exact_dates: Collection[str],
    readable_text_fast: bool,
    held_terms: HeldTerms | None = None,
) -> tantivy.Query | None:
    if not range_searchable(spec) and condition.op not in ("null", "notnull"):
        return None
    if condition.op in ("null", "notnull"):
        return _null_query(condition, spec, schema, readable_text_fast)
    if condition.op == "!=":
        if spec.kind in (FieldKind.DATE, FieldKind.IP):
            return None  # their `=` queries may match more rows than `=`: no exact complement
        inner = _to_query(
            Condition("=", condition.column, condition.values),
            spec,
            schema,
            fully_indexed=fully_indexed,
            exact_dates=exact_dates,
            readable_text_fast=False,
        )
        if inner is None:
            return None
        # Rows where the column is null fail `col != v` in Spark too: left out when the index
        # knows them exactly, else kept (a superset).
        return _all_but(inner, present_query(spec, schema))
    if spec.kind is FieldKind.I64:
        return _integer_query(condition, spec, schema)
    if spec.kind is FieldKind.F64:
        return _double_query(condition, spec, schema)
    if spec.is_exact:
        fully = spec.name.lower() in fully_indexed
        held = _held_query(condition, spec, schema, held_terms) if fully else None
        return held if held is not None else _string_query(condition, spec, schema, fully)
    if spec.kind is FieldKind.DATE:
        return _date_query(condition, spec, schema, spec.name.lower() in exact_dates)
    if spec.kind is FieldKind.IP:
        return _ip_query(condition, spec, schema)
    if spec.kind is FieldKind.BOOL:
        return _bool_query(condition, spec, schema)
    return None


#: Kinds whose every value is one term of the inverted index (an indexed field of these
#: kinds holds a value exactly where it holds a term) and whose fast field holds every value.
_VALUE_KINDS: Final = (FieldKind.I64, FieldKind.F64, FieldKind.BOOL, FieldKind.DATE)


def presence_exact(spec: FieldSpec, *, readable_text_fast: bool = False) -> bool:
    """True when :func:`present_query` has a query matching exactly the rows holding a value."""
    return _presence(spec, readable_text_fast=readable_text_fast) is not None


def _presence(spec: FieldSpec, *, readable_text_fast: bool) -> Literal["exists", "terms"] | None:
    """How a field answers IS NOT NULL exactly: its fast field, its terms, or not at all."""
    if spec.fast and (spec.kind in _VALUE_KINDS or (readable_text_fast and spec.is_exact)):
        return "exists"
    if spec.indexed and spec.kind in _VALUE_KINDS:
        return "terms"
    return None


def present_query(
    spec: FieldSpec, schema: tantivy.Schema, *, readable_text_fast: bool = False
) -> tantivy.Query | None:
    """The rows where ``spec``'s field holds a value (Spark's ``IS NOT NULL``), or None.

    A fast field answers with an exists query (exact text fast fields only on
    splits this package wrote, ``readable_text_fast``). An indexed number,
    boolean or date field that is not fast answers from its terms: every value
    is indexed as one term, so the rows holding a term of the whole domain are
    the rows holding a value (f64: both sides of -inf, where Tantivy sorts NaNs
    of either sign; dates: from the start of Tantivy's span, where earlier
    values are clamped).
    """
    presence = _presence(spec, readable_text_fast=readable_text_fast)
    if presence is None:
        return None
    if presence == "exists":
        return tantivy.Query.exists_query(spec.name)
    name = spec.name
    if spec.kind is FieldKind.I64:
        return tantivy.Query.range_query(
            schema, name, tantivy.FieldType.Integer, ct.LONG_MIN, None, include_lower=True
        )
    if spec.kind is FieldKind.F64:
        floats, query = tantivy.FieldType.Float, tantivy.Query.range_query
        return _any_of(
            [
                query(schema, name, floats, -math.inf, None, include_lower=True),
                query(schema, name, floats, None, -math.inf, include_upper=True),
            ]
        )
    if spec.kind is FieldKind.BOOL:
        return _any_of([tantivy.Query.term_query(schema, name, v) for v in (False, True)])
    start = micros_to_datetime(TANTIVY_MIN_MICROS)
    return tantivy.Query.range_query(
        schema, name, tantivy.FieldType.Date, start, None, include_lower=True
    )


def _null_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema, readable_text_fast: bool
) -> tantivy.Query | None:
    # exists_query reads fast fields; text fast fields of reference splits are unreadable here.
    present = present_query(spec, schema, readable_text_fast=readable_text_fast)
    if present is None or condition.op == "notnull":
        return present
    return _all_but(present)


def _all_but(query: tantivy.Query, within: tantivy.Query | None = None) -> tantivy.Query:
    """The rows of ``within`` (default: every row) that ``query`` does not match."""
    return tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, within or tantivy.Query.all_query()),
            (tantivy.Occur.MustNot, query),
        ]
    )


_BOOL_ORDER: Final[dict[str, Callable[[bool, bool], bool]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _bool_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema
) -> tantivy.Query | None:
    """``=``, IN and comparisons on a boolean column as terms (``false < true``, as Spark)."""
    values = condition.values
    if not values or not all(isinstance(v, bool) for v in values):
        return None
    if condition.op in ("=", "in"):
        kept = list(dict.fromkeys(values))
    elif condition.op in _BOOL_ORDER:
        order = _BOOL_ORDER[condition.op]
        kept = [b for b in (False, True) if order(b, values[0])]
        if len(kept) == 2:
            return present_query(spec, schema)  # every value passes: IS NOT NULL
    else:
        return None
    return _any_of([tantivy.Query.term_query(schema, spec.name, v) for v in kept])


def date_bounds(
    low: int | None,
    high: int | None,
    *,
    include_low: bool,
    include_high: bool,
    exact: bool,
) -> tuple[int | None, int | None, bool, bool]:
    """Bounds (epoch microseconds, None: unbounded) matching every indexed value in range.

    Values are indexed clamped into Tantivy's span, and, unless ``exact``,
    truncated to whole seconds (toward zero or down: either moves a value by
    less than a second). Clamping and truncating keep the order, so a value
    within ``low``..``high`` is indexed within the clamped bounds, widened by
    one second when not ``exact``. A bound at or beyond an end of the span
    becomes inclusive; one that every indexed value passes is dropped.
    """
    if low is not None:
        clamped = min(max(low, TANTIVY_MIN_MICROS), TANTIVY_MAX_MICROS)
        if clamped != low or clamped in (TANTIVY_MIN_MICROS, TANTIVY_MAX_MICROS):
            include_low = True
        if not exact:
            clamped, include_low = clamped - 1_000_000, True
        low = None if clamped <= TANTIVY_MIN_MICROS else clamped
    if high is not None:
        clamped = min(max(high, TANTIVY_MIN_MICROS), TANTIVY_MAX_MICROS)
        if clamped != high or clamped in (TANTIVY_MIN_MICROS, TANTIVY_MAX_MICROS):
            include_high = True
        if not exact:
            clamped, include_high = clamped + 1_000_000, True
        high = None if clamped >= TANTIVY_MAX_MICROS else clamped
    return low, high, include_low, include_high


def _date_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema, exact: bool
) -> tantivy.Query | None:
    micros = [operand_micros(v) for v in condition.values]
    if not micros or any(m is None for m in micros):
        return None
    date = tantivy.FieldType.Date

    def between(low: int | None, high: int | None, inc_low: bool, inc_high: bool) -> tantivy.Query:
        low, high, inc_low, inc_high = date_bounds(
            low, high, include_low=inc_low, include_high=inc_high, exact=exact
        )
        if low is None and high is None:
            return present_query(spec, schema) or tantivy.Query.all_query()
        return tantivy.Query.range_query(
            schema,
            spec.name,
            date,
            None if low is None else micros_to_datetime(low),
            None if high is None else micros_to_datetime(high),
            include_lower=inc_low,
            include_upper=inc_high,
        )

    values = [m for m in micros if m is not None]
    return _comparison(condition.op, values, between)


def _ip_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema
) -> tantivy.Query | None:
    if condition.op not in ("=", "in") or not all(isinstance(v, str) for v in condition.values):
        return None
    try:
        terms = [tantivy.Query.term_query(schema, spec.name, v) for v in condition.values]
    except ValueError:
        return None  # not an address Tantivy parses: left to Spark
    return _any_of(terms)


def _comparison(
    op: str, values: Sequence[Any], between: Callable[..., tantivy.Query]
) -> tantivy.Query | None:
    """The range query of comparison ``op`` (or IN) over ``values`` through ``between``."""
    if op == "in":
        return _any_of([between(v, v, True, True) for v in values])
    value = values[0]
    bounds = {
        "=": (value, value, True, True),
        "<": (None, value, True, False),
        "<=": (None, value, True, True),
        ">": (value, None, False, True),
        ">=": (value, None, True, True),
    }.get(op)
    return None if bounds is None else between(*bounds)


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
    if condition.op == "in" and spec.indexed and len(values) > 1:
        # One term-set query: a union of per-value range queries reads the fast field
        # once per value (an IN of 100,000 values took seconds per split).
        held = [v for v in values if ct.LONG_MIN <= v <= ct.LONG_MAX]
        return tantivy.Query.term_set_query(schema, spec.name, held) if held else _any_of([])
    integer = tantivy.FieldType.Integer

    def between(low: int | None, high: int | None, inc_low: bool, inc_high: bool) -> tantivy.Query:
        # An integer column holds i64 values only: an operand beyond that span (a 21-digit
        # literal) decides the comparison alone. Tantivy itself refuses such bounds.
        if (low is not None and (low > ct.LONG_MAX or (low == ct.LONG_MAX and not inc_low))) or (
            high is not None and (high < ct.LONG_MIN or (high == ct.LONG_MIN and not inc_high))
        ):
            return tantivy.Query.empty_query()
        if low is not None and low < ct.LONG_MIN:
            low, inc_low = None, True
        if high is not None and high > ct.LONG_MAX:
            high, inc_high = None, True
        return tantivy.Query.range_query(
            schema, spec.name, integer, low, high, include_lower=inc_low, include_upper=inc_high
        )

    return _comparison(condition.op, values, between)


def zero_bound(value: float, lower: bool, inclusive: bool) -> float:
    """The f64 bound Tantivy needs for a Spark bound ``value`` (signed zero, docs "Comparison
    semantics"): Tantivy keeps ``-0.0`` below ``0.0``, Spark compares them equal, so a bound
    at zero of either sign takes in both signs (inclusive) or leaves out both (exclusive).
    Other values are returned unchanged. The ``query`` option's numeric clauses use it too
    (:func:`indextables.search.query.floatquery.spark_float_clauses`)."""
    if value != 0:
        return value
    return -0.0 if lower == inclusive else 0.0


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
        return between(zero_bound(v, True, True), zero_bound(v, False, True), True, True)

    if condition.op == "in":
        return _any_of([equal(v) for v in values])
    value = values[0]
    if condition.op == "=":
        return equal(value)
    if condition.op == "<":
        return between(None, zero_bound(value, False, False), True, False)
    if condition.op == "<=":
        return between(None, zero_bound(value, False, True), True, True)
    if condition.op in (">", ">="):
        inclusive = condition.op == ">="
        above = between(zero_bound(value, True, inclusive), None, inclusive, True)
        # NaN with its sign bit set sorts below -inf in Tantivy; Spark puts it above all.
        negative_nan = between(None, -math.inf, True, False)
        return _any_of([above, negative_nan])
    return None


def _utf8_length(text: str) -> int | None:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None  # a lone surrogate: no UTF-8 term holds it


HeldTerms = Callable[[str, str, bool, int], "list[str] | None"]
"""``(field, literal, suffix, most)`` -> the split's terms of ``field`` holding ``literal``
(ending with it when ``suffix``), at most ``most``; None when the split cannot say."""

# The most terms a suffix or substring condition is queried as (more: the regex).
MAX_HELD_TERMS: Final = 4096


def _held_query(
    condition: Condition, spec: FieldSpec, schema: tantivy.Schema, held_terms: HeldTerms | None
) -> tantivy.Query | None:
    """The query of the exact terms a suffix or substring condition (``endswith``,
    ``contains``, ``LIKE '%s'``, ``LIKE '%m%'``) keeps, or None (not such a condition,
    no reader, more than :data:`MAX_HELD_TERMS` terms)."""
    if held_terms is None or len(condition.values) != 1:
        return None
    value = condition.values[0]
    if not isinstance(value, str) or not value or _utf8_length(value) is None:
        return None
    if condition.op in ("suffix", "contains"):
        literal, suffix = value, condition.op == "suffix"
    elif condition.op == "like":
        pieces = like_pieces(value)
        if pieces is None or len(pieces) not in (2, 3) or pieces[0].kind != ANY:
            return None
        if pieces[1].kind != "text" or (len(pieces) == 3 and pieces[2].kind != ANY):
            return None
        literal, suffix = pieces[1].text, len(pieces) == 2
    else:
        return None
    terms = held_terms(spec.name, literal, suffix, MAX_HELD_TERMS + 1)
    if terms is None or len(terms) > MAX_HELD_TERMS:
        return None
    return _any_of([tantivy.Query.term_query(schema, spec.name, t) for t in terms])


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
    pattern = _PATTERNS.get(condition.op)
    if pattern is not None and fully_indexed:
        regex = pattern(values[0])
        if regex is None or regex in _REFUSED_REGEXES:
            return None
        try:
            return tantivy.Query.regex_query(schema, spec.name, regex)
        except ValueError:
            # A pattern too large for the automaton (Tantivy gives up after building up
            # to its size limit, ~0.3-1.5 s): not tried again on the next split.
            with _REFUSED_LOCK:  # splits are read on several threads
                if len(_REFUSED_REGEXES) >= _MAX_REFUSED:
                    _REFUSED_REGEXES.pop(next(iter(_REFUSED_REGEXES)))
                _REFUSED_REGEXES[regex] = None
            return None
    return None  # Tantivy has no range queries on text fields.


# Regexes Tantivy refused (insertion order: the oldest is dropped first), bounded.
_REFUSED_REGEXES: Final[dict[str, None]] = {}
_MAX_REFUSED: Final = 64
_REFUSED_LOCK: Final = threading.Lock()


def _literal(text: str) -> str:
    """``text`` as a regex matching exactly it: every character but ASCII alphanumerics escaped."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in text)


def prefix_pattern(prefix: str) -> str:
    """A Tantivy regex matching every term that starts with ``prefix``.

    Every character but ASCII letters and digits is written ``\\x{..}``, and
    ``(?s)`` lets ``.`` match line breaks too.
    """
    return f"(?s){_literal(prefix)}.*"


def suffix_pattern(suffix: str) -> str:
    """A Tantivy regex matching every term that ends with ``suffix`` (escaped as a prefix is)."""
    return f"(?s).*{_literal(suffix)}"


def contains_pattern(part: str) -> str:
    """A Tantivy regex matching every term that contains ``part`` (escaped as a prefix is)."""
    return f"(?s).*{_literal(part)}.*"


def like_pattern(pattern: str) -> str | None:
    """A Tantivy regex matching exactly the terms Spark's ``LIKE pattern`` keeps (None: an
    escape Spark refuses): ``%`` is ``.*``, ``_`` is ``.`` (one code point), the literal
    runs are escaped as a prefix is. Tantivy matches a regex against whole terms."""
    pieces = like_pieces(pattern)
    if pieces is None:
        return None
    parts = [".*" if p.kind == ANY else "." if p.kind == ONE else _literal(p.text) for p in pieces]
    return "(?s)" + "".join(parts)


_PATTERNS: Final[dict[str, Callable[[str], str | None]]] = {
    "prefix": prefix_pattern,
    "suffix": suffix_pattern,
    "contains": contains_pattern,
    "like": like_pattern,
    "rlike": rlike_tantivy_regex,
}


def conjunction(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    """All of ``queries`` (the match-all query when there are none)."""
    if not queries:
        return tantivy.Query.all_query()
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])
