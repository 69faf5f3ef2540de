"""Numeric clauses on float/double fields in Tantivy query text, compared as Spark compares.

Spark compares doubles with two rules Tantivy's order does not follow
(docs/pyspark.md, "Comparison semantics"):

- ``-0.0`` equals ``0.0``. Tantivy keeps ``-0.0`` just below ``0.0``.
- Every NaN equals every NaN and sorts above every number, ``+inf`` included.
  Tantivy orders an f64 by its bits (``common::f64_to_u64``, in the term
  dictionary and the fast field alike): a NaN with the sign bit clear sorts
  above ``+inf``, one with it set below ``-inf``, and each NaN payload is a
  term of its own, so ``d:NaN`` finds only the one bit pattern ``0x7ff8...``.

:func:`spark_float_clauses` rewrites each term, range and comparison on a
float/double field so that Tantivy matches what the equal Spark filter keeps:

- the numbers a clause takes in become one range with explicit bounds: a bound
  at zero takes the signed zero of
  :func:`~indextables.search.query.tantivyquery.zero_bound`, a missing lower
  bound is ``-inf`` (leaving out the NaNs below it) and a missing or NaN upper
  bound is ``+inf``;
- when the Spark filter keeps NaN (an open upper end, ``<= NaN``, ``= NaN``,
  ``>= NaN``), the clause also takes ``NAN_RANGES``: everything below ``-inf``
  and above ``+inf``, which are exactly the NaNs of either sign and any payload.

Terms other than zero, NaN and the infinities are exact already and stay as written, but
every number the rewrite prints is positional (``-0.00001``, never ``-1e-05``): Tantivy's
grammar refuses a negative number with an exponent (``d:-1e5``, ``d:[-1e-5 TO 0]``), so a
literal written with one (``1e5``, ``1E+5``, ``-1.5e-7``, Spark's ``1.0E-5``) is printed
as the same double without it (:func:`positional`). A
term set (``d: IN [0 1.5 NaN]``) is Spark's ``d IN (...)``: it becomes the disjunction of
its members' terms, each rewritten as above.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from decimal import Decimal

from indextables.search.query.datequery import BRACKETS, COMPARISON, clauses
from indextables.search.query.tantivyquery import zero_bound

__all__ = ["positional", "spark_float_clauses"]

# A literal Tantivy (Rust's f64 parser) and Python read alike: a decimal number, or a signed
# NaN or infinity in any case. Other bound texts are left for Tantivy to parse or refuse.
_LITERAL = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf(?:inity)?)"
_LITERAL_TEXT = re.compile(_LITERAL)
# A number term on a field: ``d:0``, ``d:-0.0``, ``d:NaN``, ``d:"-inf"``, ``d:0^2`` (boosted).
_NUMBER_TERM = re.compile(rf'([A-Za-z_][\w.\-]*):\s*("?)({_LITERAL})\2(?=[\s()^]|$)')

# A term set: ``d: IN [0 -0.0 "NaN"]`` (members separated by whitespace, maybe quoted).
_TERM_SET = re.compile(r"([A-Za-z_][\w.\-]*):\s*IN\s*\[([^\]]*)\]")

# Where Tantivy keeps the NaNs: below -inf (sign bit set) and above +inf (sign bit clear).
_NAN_RANGES = ("[* TO -inf}", "{inf TO *]")


def spark_float_clauses(text: str, fields: Collection[str]) -> str:
    """``text`` with every numeric term, range and comparison on a field of ``fields``
    (float/double fields) rewritten to match what Spark's equal filter keeps (module doc).

    ``d:[a TO b]`` is Spark's ``d >= a AND d <= b`` (``{``/``}`` make a side strict, ``*``
    drops it), ``d:>a`` is ``d > a`` and ``d:a`` is ``d = a``.
    """
    if not fields:
        return text
    out: list[str] = []
    position = 0
    for match in clauses(text, (_TERM_SET, BRACKETS, COMPARISON, _NUMBER_TERM)):
        field = match.group(1)
        if field not in fields:
            continue
        clause = _rewritten(match, field)
        if clause is None:
            continue
        out.append(text[position : match.start()])
        out.append(clause)
        position = match.end()
    out.append(text[position:])
    return "".join(out)


_Bound = tuple[float, bool] | None  # (value, inclusive), or None for no bound


def _rewritten(match: re.Match[str], field: str) -> str | None:
    """The Spark-equal clause for one matched clause, or None to leave it as written."""
    if match.re is _NUMBER_TERM:
        return _term(field, match.group(3))
    if match.re is _TERM_SET:
        members = [m.strip('"') for m in match.group(2).split()]
        if not members or not all(_LITERAL_TEXT.fullmatch(m) for m in members):
            return None  # left to Tantivy (which refuses a non-number on a float field)
        terms = [_term(field, m) or f"{field}:{m}" for m in members]
        return "(" + " OR ".join(terms) + ")"
    if match.re is BRACKETS:
        opening, inner, closing = match.group(2, 3, 4)
        low_text, sep, high_text = inner.partition(" TO ")
        if not sep:
            return None
        low_ok, low = _bound(low_text, opening == "[")
        high_ok, high = _bound(high_text, closing == "]")
        return _between(field, low, high) if low_ok and high_ok else None
    operator, literal = match.group(2, 3)
    ok, bound = _bound(literal, operator.endswith("="))
    if not ok or bound is None:
        return None
    return (
        _between(field, bound, None) if operator.startswith(">") else _between(field, None, bound)
    )


def _term(field: str, literal: str) -> str | None:
    """The Spark-equal clause for ``field = literal``, or None when the term is exact
    as written."""
    value = float(literal)
    if value == 0 or not math.isfinite(value):
        return _between(field, (value, True), (value, True))
    if "e" in literal or "E" in literal:
        return f"{field}:{positional(value)}"  # Tantivy refuses ``-1e5``
    return None


def positional(value: float) -> str:
    """``value`` as a literal Tantivy's grammar reads back to the same double: positional
    digits (``-0.00001``, ``100000000000000000000.0``), ``inf`` or ``-inf``.

    Python's shortest repr is exact, and so is its positional expansion (at most ~330
    digits for a double); Tantivy's f64 parser rounds it back to the same double.
    """
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else f"{text}.0"


def _bound(text: str, inclusive: bool) -> tuple[bool, _Bound]:
    """(True, the bound's (value, inclusive) or None for ``*``), or (False, None) for a
    text left to Tantivy."""
    text = text.strip()
    if text == "*":
        return True, None
    if not _LITERAL_TEXT.fullmatch(text):
        return False, None
    return True, (float(text), inclusive)


def _between(field: str, low: _Bound, high: _Bound) -> str:
    """The clause matching, under Spark's order, the values between ``low`` and ``high``."""
    keeps_nan = (high is None or (math.isnan(high[0]) and high[1])) and not (
        low is not None and math.isnan(low[0]) and not low[1]
    )
    ranges: list[str] = []
    if low is None or not math.isnan(low[0]):
        low_value, low_inclusive = low if low is not None else (-math.inf, True)
        if high is None or math.isnan(high[0]):
            high_value, high_inclusive = math.inf, True
        else:
            high_value, high_inclusive = high
        lower = zero_bound(low_value, True, low_inclusive)
        upper = zero_bound(high_value, False, high_inclusive)
        opening, closing = "[" if low_inclusive else "{", "]" if high_inclusive else "}"
        ranges.append(f"{opening}{positional(lower)} TO {positional(upper)}{closing}")
    if keeps_nan:
        ranges.extend(_NAN_RANGES)
    if not ranges:
        ranges.append("{inf TO inf}")  # matches nothing
    if len(ranges) == 1:
        return f"{field}:{ranges[0]}"
    return "(" + " OR ".join(f"{field}:{r}" for r in ranges) + ")"
