"""Wildcard terms in query text (``f:pre*``, ``f:*suf``, ``f:*mid*``, ``f:a*b``,
``f:h?llo``), answered over the field's term dictionary.

Tantivy's parser reads ``msg:hel*`` as the plain term ``hel`` (its analyzer drops
the ``*``). :func:`rewrite_prefix_terms` writes each wildcard term it can answer
exactly as Tantivy's regex clause over whole terms (``f:/hel[\\s\\S]*/``; ``*``
is any characters, ``?`` one character), which the caller parses with regexes
allowed:

- on a ``text`` field with the ``default`` analyzer, a pattern within one token
  (letters and digits besides the wildcards), lowercased as the analyzer
  lowercases (character by character): ``msg:Hel*`` finds the rows with a token
  starting ``hel``;
- on a ``text`` field with the ``whitespace`` analyzer, a pattern without spaces,
  lowercased the same way;
- on an exact (``string``) field, a pattern over the whole value, case-sensitive:
  ``host:web-*`` finds the values starting ``web-``.

Other forms (fuzzy, a bare term, a boost, an escaped wildcard, ``en_stem`` and
JSON fields, a pattern spanning several tokens) are left to
:func:`~indextables.search.query.termforms.check_term_forms`, which refuses
them. A pattern matching more than :data:`MAX_TERM_EXPANSIONS` terms of a split
is refused with a :class:`~indextables.search.errors.QuerySyntaxError` naming
the term and the limit (``count_terms`` counts them on the split's index, over
the terms starting with the pattern's literal prefix: a leading wildcard walks
the field's whole term dictionary).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

from indextables.search.errors import QuerySyntaxError
from indextables.search.query.querytext import clause_spans
from indextables.search.schema.mapping import FieldKind, FieldSpec

__all__ = [
    "MAX_TERM_EXPANSIONS",
    "has_regex_terms",
    "rewrite_prefix_terms",
    "wildcard_regex",
]

MAX_TERM_EXPANSIONS: Final = 100_000
"""The most terms of one split a prefix term may stand for."""

_FIELD: Final = re.compile(r"([A-Za-z_][\w.\-]*):")
_FIELD_REGEX: Final = re.compile(r"(?:[A-Za-z_][\w.\-]*:\s*)?/")
_OPERATORS: Final = frozenset({"AND", "OR", "NOT", "&&", "||", "-", "+", "*"})
_ASCII_WORD: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

CountTerms = Callable[[str, str, "re.Pattern[str] | None", int], int]
"""``(field, prefix, pattern, most)`` -> how many of the split's terms of ``field`` start
with ``prefix`` and fully match ``pattern`` (every one when None), counting at most
``most``."""


def rewrite_prefix_terms(
    text: str, fields: Mapping[str, FieldSpec], count_terms: CountTerms | None, option: str
) -> tuple[str, bool]:
    """``text`` with each answerable prefix term as a regex clause (module doc), and
    whether any was rewritten (the caller then parses with regexes allowed).

    Raises:
        QuerySyntaxError: a prefix more terms start with than :data:`MAX_TERM_EXPANSIONS`.
    """
    if "*" not in text and "?" not in text:
        return text, False
    out: list[str] = []
    copied = 0
    for token, body, end in clause_spans(text):
        clause = _prefix_clause(text[body:end], fields)
        if clause is not None and token not in _OPERATORS:
            name, prefix, pattern, regex = clause
            if count_terms is not None:
                found = count_terms(name, prefix, pattern, MAX_TERM_EXPANSIONS + 1)
                if found > MAX_TERM_EXPANSIONS:
                    raise QuerySyntaxError(
                        f"option {option}: the wildcard term {text[body:end]!r} stands for more "
                        f"than {MAX_TERM_EXPANSIONS:,} terms of column {name!r} in one split "
                        "(MAX_TERM_EXPANSIONS): write a longer literal prefix"
                    )
            out.append(text[copied:body])
            out.append(f"{name}:/{regex}/")
            copied = end
    if copied == 0:
        return text, False
    out.append(text[copied:])
    return "".join(out), True


def has_regex_terms(text: str) -> bool:
    """Whether ``text`` holds a regex clause (``f:/re/``, Tantivy's regex over whole terms),
    which the caller then parses with regexes allowed."""
    if "/" not in text:
        return False
    return any(_FIELD_REGEX.match(text, body) is not None for _, body, _ in clause_spans(text))


def _prefix_clause(
    clause: str, fields: Mapping[str, FieldSpec]
) -> tuple[str, str, re.Pattern[str] | None, str] | None:
    """(field, literal prefix, the pattern as a Python regex or None for a plain prefix,
    Tantivy's regex) for an answerable wildcard clause, else None."""
    found = _FIELD.match(clause)
    if found is None:
        return None
    value = clause[found.end() :]
    if value in ("", "*") or not any(c in value for c in "*?"):
        return None
    if value[0] in "[{<>/(" or any(c in value for c in '~\\"^'):
        return None
    spec = fields.get(found.group(1).lower())
    pattern = analyzed_term(spec, value, value.replace("*", "").replace("?", ""))
    if spec is None or pattern is None:
        return None
    prefix = re.split(r"[*?]", pattern, maxsplit=1)[0]
    plain = pattern == prefix + "*"
    python = None if plain else re.compile(_python_regex(pattern), re.DOTALL)
    return spec.name, prefix, python, wildcard_regex(pattern)


def _python_regex(pattern: str) -> str:
    return "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)


def analyzed_term(spec: FieldSpec | None, text: str, literals: str) -> str | None:
    """``text`` as the field's analyzer leaves one term of it (exact strings as written,
    the default and whitespace analyzers lowercasing each character on its own, as
    Tantivy's filter does: no final-sigma rule), or None when ``spec`` is no indexed field
    of those kinds or ``literals`` (``text`` without its pattern characters) would not
    stay one token."""
    if spec is None or not spec.indexed:
        return None
    if spec.kind is FieldKind.STRING:
        return text
    if spec.kind is not FieldKind.TEXT:
        return None
    if spec.tokenizer == "default":
        if not all(c.isalnum() for c in literals):
            return None  # more than one token, or characters the analyzer drops
    elif spec.tokenizer != "whitespace" or any(c.isspace() for c in literals):
        return None
    return "".join(c.lower() for c in text)


def wildcard_regex(pattern: str) -> str:
    """The regex (Tantivy's dialect, in query text) of every term ``pattern`` matches
    (``*`` any characters, ``?`` one): ASCII letters and digits as themselves, every other
    character as ``\\x{hex}``, and no parenthesis (the text's scans read it as one token)."""
    parts = []
    for char in pattern:
        if char == "*":
            parts.append("[\\s\\S]*")
        elif char == "?":
            parts.append("[\\s\\S]")
        elif char in _ASCII_WORD:
            parts.append(char)
        else:
            parts.append(f"\\x{{{ord(char):x}}}")
    return "".join(parts)
