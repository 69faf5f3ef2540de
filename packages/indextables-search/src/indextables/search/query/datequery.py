"""Exact date terms in Tantivy query text.

Tantivy indexes date terms at second precision whatever the field's
precision, while range queries on a fast date field compare its fast values
(microseconds in splits this package writes). A term such as
``ts:"2024-01-01T00:00:00.5Z"`` would therefore match every row of that
second. :func:`exact_date_terms` rewrites each such term on a date field into
the one-instant range ``ts:[v TO v]``, which matches exactly, and a term set
(``ts: IN ["a" "b"]``) into the disjunction of such ranges.

Tantivy dates span 1677-09-21 .. 2262-04-11; values beyond are indexed at the
nearest end of that span (their exact value stays in the split's row copy).
A bound strictly inside the span compares a clamped value exactly as it
compares the true one, but a bound at or beyond an end would also match the
rows clamped there. :func:`edge_date_literals` finds such bounds so the
caller can refuse them.

On a date field whose range queries do not compare microseconds (a field
that is not fast, or the reference's fast fields at second precision) a
range reads the second-precision terms, so it is exact only for a bound that
a whole second decides: an inclusive lower bound or an exclusive upper bound
at a whole second after 1970-01-01T00:00:00Z, or none (``*``). (Tantivy
truncates toward zero: 1969-12-31T23:59:59.5Z is indexed as the epoch, so
whole-second bounds at or before it are not exact either.) :func:`inexact_date_literals` finds every
other date literal on such fields (including one-instant ranges, which is
what a quoted date term becomes).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime

from indextables.search.read.convert import TANTIVY_MAX_DATE, TANTIVY_MIN_DATE

_TERM = re.compile(r'([A-Za-z_][\w.\-]*):"([^"\\]*)"')
# A term set: ``ts: IN ["2024-01-01T00:00:00Z" "2024-01-02T00:00:00.5Z"]``.
_TERM_SET = re.compile(r"([A-Za-z_][\w.\-]*):\s*IN\s*\[([^\]]*)\]")
_SET_MEMBER = re.compile(r'"([^"\\]*)"|(\S+)')
_WORD = re.compile(r"[\w.\-]")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")
# A field's range clause: ``f:[a TO b]`` (any bracket mix) or ``f:>a``, ``f:>=a``, ``f:<a``...
_RANGE = re.compile(r"([A-Za-z_][\w.\-]*):\s*(?:[\[{]([^\]}]*)[\]}]|(?:>=|<=|>|<)\s*([^\s()]+))")


def exact_date_terms(text: str, date_fields: Collection[str]) -> str:
    """``text`` with every quoted RFC 3339 term on a field of ``date_fields`` made a range."""
    if not date_fields or '"' not in text:
        return text
    out: list[str] = []
    position, quoted = 0, False
    while position < len(text):
        char = text[position]
        if char == "\\":
            out.append(text[position : position + 2])
            position += 2
            continue
        found = None if quoted else _TERM_SET.match(text, position)
        if found and _starts_word(text, position) and found.group(1) in date_fields:
            members = _date_members(found.group(2))
            if members:
                field = found.group(1)
                out.append("(" + " OR ".join(f"{field}:[{v} TO {v}]" for v in members) + ")")
                position = found.end()
                continue
        match = None if quoted else _TERM.match(text, position)
        if match and _starts_word(text, position) and _is_date_term(match, date_fields):
            field, value = match.group(1), match.group(2)
            out.append(f"{field}:[{value} TO {value}]")
            position = match.end()
            continue
        if char == '"':
            quoted = not quoted
        out.append(char)
        position += 1
    return "".join(out)


def _date_members(inner: str) -> list[str]:
    """The instants of a term set whose members are all quoted RFC 3339 dates, else []."""
    members = [m.group(1) for m in _SET_MEMBER.finditer(inner)]
    dates = [m for m in members if m is not None and _RFC3339.fullmatch(m)]
    return dates if len(dates) == len(members) else []


def _starts_word(text: str, position: int) -> bool:
    """True when a clause may start at ``position``: at a word start, or after the
    exclusion operator ``-`` that itself starts a word (``-d:0``; not ``x-d:0``)."""
    if position > 0 and text[position - 1] == "-":
        position -= 1
    return position == 0 or not _WORD.match(text[position - 1])


def _is_date_term(match: re.Match[str], date_fields: Collection[str]) -> bool:
    return match.group(1) in date_fields and _RFC3339.fullmatch(match.group(2)) is not None


def edge_date_literals(text: str, date_fields: Collection[str]) -> list[tuple[str, str]]:
    """(field, literal) of every range bound on a field of ``date_fields`` that is at or
    beyond an end of Tantivy's date span (or is not a date Python can read).

    Quoted date terms should be made ranges first (:func:`exact_date_terms`).
    """
    if not date_fields:
        return []
    found: list[tuple[str, str]] = []
    for match in clauses(text, (_RANGE,)):
        field = match.group(1)
        if field in date_fields:
            bounds = match.group(2) if match.group(2) is not None else match.group(3)
            literals = (m.group(0) for m in _RFC3339.finditer(bounds))
            found.extend((field, lit) for lit in literals if _at_edge(lit))
    return found


def clauses(text: str, patterns: Sequence[re.Pattern[str]]) -> Iterator[re.Match[str]]:
    """Each clause matching one of ``patterns`` at a word start outside quotes, in order."""
    position, quoted = 0, False
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if not quoted and _starts_word(text, position):
            match = next((m for p in patterns if (m := p.match(text, position))), None)
            if match is not None:
                yield match
                position = match.end()
                continue
        if char == '"':
            quoted = not quoted
        position += 1


# A range clause with its brackets kept: ``f:[a TO b}``; or a comparison ``f:>=a``.
BRACKETS = re.compile(r"([A-Za-z_][\w.\-]*):\s*([\[{])([^\]}]*)([\]}])")
COMPARISON = re.compile(r"([A-Za-z_][\w.\-]*):\s*(>=|<=|>|<)\s*([^\s()]+)")
# A quoted value, whole (a date term if it holds only an instant): ``f:"..."``.
_QUOTED = re.compile(r'([A-Za-z_][\w.\-]*):\s*"((?:[^"\\]|\\.)*)"')
# An unquoted date value: ``f:2024-01-01T00:00:00Z``.
_VALUE = re.compile(r"([A-Za-z_][\w.\-]*):\s*(\d{4}-\d\d-\d\d[Tt][^\s\"()]*)")


def inexact_date_literals(text: str, fields: Collection[str]) -> list[tuple[str, str]]:
    """(field, literal) of every date bound on ``fields`` that second-precision terms
    cannot decide exactly (see the module's docstring).

    Quoted date terms should be made ranges first (:func:`exact_date_terms`).
    """
    if not fields:
        return []
    return [
        (match.group(1), literal)
        for match in clauses(text, (BRACKETS, COMPARISON, _QUOTED, _VALUE))
        if match.group(1) in fields
        for literal in _inexact_bounds(match)
    ]


def _inexact_bounds(match: re.Match[str]) -> list[str]:
    if match.re is BRACKETS:
        opening, inner, closing = match.group(2, 3, 4)
        low, _, high = inner.partition(" TO ")
        bounds = [(low.strip(), opening == "["), (high.strip(), closing == "}")]
    elif match.re is COMPARISON:
        operator, literal = match.group(2, 3)
        bounds = [(literal, operator in (">=", "<"))]
    elif match.re is _QUOTED:
        quoted = match.group(2).strip()
        bounds = [(quoted, False)] if _RFC3339.fullmatch(quoted) else []
    else:
        bounds = [(match.group(2), False)]
    return [lit for lit, whole_ok in bounds if lit != "*" and not (whole_ok and _whole(lit))]


def _whole(literal: str) -> bool:
    """True for an RFC 3339 instant at a whole second after the epoch (any offset)."""
    try:
        value = datetime.fromisoformat(literal.upper())
    except ValueError:
        return False
    return value.microsecond == 0 and value.timestamp() > 0


def _at_edge(literal: str) -> bool:
    try:
        value = datetime.fromisoformat(literal.upper())
    except ValueError:
        return True
    return value <= TANTIVY_MIN_DATE or value >= TANTIVY_MAX_DATE
