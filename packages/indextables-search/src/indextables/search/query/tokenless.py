"""Clauses whose text yields no token, answered as clauses that match nothing.

Tantivy's query parser drops a clause whose analyzer yields no token: on a
``text`` field ``t:"!!"``, ``t:"-"``, ``t:""`` and a term of the token length
limit or longer (255 UTF-8 bytes by default) each parse to nothing, so
``b:false AND t:"!!"`` was parsed as ``b:false`` and returned every ``b:false``
row, rows ``t:"!!"`` does not match. A reader means a clause that matches
nothing: it makes a conjunction match nothing, leaves a disjunction to its other
side, and under ``NOT`` (or ``-``) matches everything.

:func:`nothing_for_tokenless` replaces each such clause in place by
``(* AND -*)``, a group that matches no document, keeping its ``+``/``-`` so the
boolean structure stays as written. Whether a clause yields a token is decided
by the parser itself (the clause parsed alone is Tantivy's ``EmptyQuery``), on
the split's own index and analyzers; only clauses that could be tokenless are
parsed alone: those with no letter or digit, and those at least as long as the
shortest token length limit of the fields.

:func:`nothing_for_missing_fields` replaces, the same way, each clause on a field
the split's index does not have: a column a schema change (``schema_mode="merge"``)
added after the split was written is null in every row of it, so no clause on it
matches there (``-col:x`` matches every row, ``col:x OR y`` is ``y``). A field
group ``col:(a OR b)`` is replaced whole; wildcards, fuzzy terms, regexes, phrases,
ranges, term sets and ``col:*`` alike. Whether the field is missing is the caller's
to say (the split's own fields, else its parser).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from indextables.search.query.querytext import clause_spans, group_end

__all__ = ["NOTHING", "nothing_for_missing_fields", "nothing_for_tokenless"]

NOTHING: Final = "(* AND -*)"
"""A group that matches no document, in Tantivy's query syntax."""

_OPERATORS: Final = frozenset({"AND", "OR", "NOT", "&&", "||", "-", "+"})
_FIELD: Final = re.compile(r"[A-Za-z_][\w.\-]*:\s*")
_FIELD_NAME: Final = re.compile(r"(\w[\w.\-]*):")
_BOOST: Final = re.compile(r"\^[\d.]+$")
_SLOP: Final = re.compile(r"~\d+$")


def nothing_for_tokenless(text: str, is_empty: Callable[[str], bool], token_limit: int) -> str:
    """``text`` with each clause that yields no token replaced by :data:`NOTHING`.

    ``is_empty(clause)`` parses one clause (without its ``+``/``-`` and boost) alone and
    says whether it is Tantivy's empty query; ``token_limit`` is the shortest token length
    limit (UTF-8 bytes) of the fields searched: shorter clauses with a letter or digit
    always yield a token and are not parsed alone.
    """
    out: list[str] = []
    copied = 0
    for token, body_start, end in clause_spans(text):
        clause = _BOOST.sub("", text[body_start:end])
        if token not in _OPERATORS and _may_be_tokenless(clause, token_limit) and is_empty(clause):
            out.append(text[copied:body_start])
            out.append(NOTHING)
            copied = end
    out.append(text[copied:])
    return "".join(out)


def nothing_for_missing_fields(text: str, is_missing: Callable[[str], bool]) -> str:
    """``text`` with each clause on a field ``is_missing`` names replaced by :data:`NOTHING`.

    ``is_missing(name)`` is asked about each field name a clause is written on (as written:
    ``attrs.k`` for a JSON path); its ``+``/``-`` stay, and ``name:(...)`` is replaced
    with its group.
    """
    if ":" not in text:
        return text
    out: list[str] = []
    copied = 0
    for token, body_start, end in clause_spans(text):
        if body_start < copied or token in _OPERATORS:
            continue  # inside a field group already replaced, or an operator
        field = _FIELD_NAME.match(text, body_start, end)
        if field is None or not is_missing(field.group(1)):
            continue
        if end < len(text) and text[end] == "(" and not text[field.end() : end].strip():
            end = group_end(text, end)  # ``name:(a OR b)``: the field's whole group
        out.append(text[copied:body_start])
        out.append(NOTHING)
        copied = end
    out.append(text[copied:])
    return "".join(out)


def _may_be_tokenless(clause: str, token_limit: int) -> bool:
    """Whether ``clause`` (a term or phrase, maybe on a field) could yield no token."""
    field = _FIELD.match(clause)
    value = clause[field.end() :] if field else clause
    if not value or value == "*" or value[0] in "[{<>/" or value.startswith("IN"):
        return False  # exists, a range, a comparison, a regex or a term set: no analyzer
    if value[0] == '"':
        value = _SLOP.sub("", value)
    if len(value.encode("utf-8", "surrogatepass")) >= token_limit:
        return True  # it may hold a token over the limit
    return not any(char.isalnum() for char in value)
