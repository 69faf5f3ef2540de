"""Phrase-prefix terms in query text (``f:"quick bro"*``, ``f:"bro"*``, bare ``"quick bro"*``).

Tantivy's parser reads ``f:"quick bro"*`` as a phrase whose last word is a prefix,
but expands that prefix to the first 50 terms only (its ``max_expansions``): with
more terms starting ``bro`` it silently finds fewer rows. A one-word phrase it
refuses. :func:`rewrite_phrase_prefixes` counts the terms the prefix stands for in
the split and writes the clause so that every one is taken:

- on a ``text`` field (``default`` or ``whitespace`` analyzer), the phrase is cut into
  tokens as the analyzer cuts it (after the phrase's ``\\`` escapes), the last one
  lowercased is the prefix; with one token the clause is the prefix term
  (``f:bro*``, as :mod:`~indextables.search.query.termexpand` writes it); with several,
  Tantivy's own phrase prefix when at most 50 terms start with the prefix, else the
  phrases of every such term joined by OR; no term: a clause matching nothing;
- on an exact (``string``) field, the whole value starts with the phrase's text
  (case-sensitive);
- without a field, each default field so, joined by OR; a boost after the ``*`` is kept;
- on other fields (``en_stem``, JSON) it is refused.

More terms than the expansion limit is refused with a
:class:`~indextables.search.errors.QuerySyntaxError` naming the term and the limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from indextables.search.errors import QuerySyntaxError
from indextables.search.query.querytext import either, quote_end, splice_clauses
from indextables.search.query.termexpand import Wild, atoms_regex
from indextables.search.query.tokenless import NOTHING
from indextables.search.schema.mapping import FieldKind, FieldSpec

__all__ = ["TANTIVY_PHRASE_PREFIX_EXPANSIONS", "rewrite_phrase_prefixes"]

TANTIVY_PHRASE_PREFIX_EXPANSIONS: Final = 50
"""The most terms Tantivy's parsed phrase prefix expands its last word to."""

_CLAUSE: Final = re.compile(r'(?:([A-Za-z_][\w.\-]*):)?(".*)\*(\^\d+(?:\.\d+)?)?', re.DOTALL)

PrefixTerms = Callable[[str, str, int], list[str]]
"""``(field, prefix, most)`` -> the split's terms of ``field`` starting with ``prefix``, at
most ``most`` of them."""


def rewrite_phrase_prefixes(
    text: str,
    fields: Mapping[str, FieldSpec],
    prefix_terms: PrefixTerms,
    option: str,
    defaults: Sequence[str],
    limit: int,
) -> tuple[str, bool]:
    """``text`` with each phrase-prefix clause written as the module doc says, and whether
    that wrote regex clauses (the caller then parses with regexes allowed).

    Raises:
        QuerySyntaxError: a prefix standing for more terms than ``limit``.
    """
    if '"' not in text or "*" not in text:
        return text, False

    def rewrite(_: str, clause: str) -> tuple[str, bool] | None:
        found = _CLAUSE.fullmatch(clause)
        if found is None or quote_end(found.group(2), 0) != len(found.group(2)):
            return None
        phrase = _unescape(found.group(2)[1:-1])
        names = [found.group(1)] if found.group(1) else list(defaults)
        specs = [fields.get(n.lower()) for n in names]
        if not specs or any(s is None for s in specs):
            return None  # a column the split does not have: Tantivy's parse names it
        refused = next((s for s in specs if s is not None and not _answerable(s)), None)
        if refused is not None:
            raise QuerySyntaxError(
                f"option {option}: the phrase prefix {clause!r} is answered on exact "
                "fields and on text fields with the default or whitespace analyzer only, "
                f"and column {refused.name!r} is indexed as {refused.kind.value!r} "
                f"({refused.tokenizer or 'no'} analyzer): Tantivy would expand its last word "
                "to its first 50 terms only"
            )
        boost = found.group(3) or ""
        groups = []
        regexes = False
        for spec in specs:
            assert spec is not None
            written, regex = _clause(spec, phrase, boost, clause, prefix_terms, option, limit)
            groups.append(written)
            regexes = regexes or regex
        return either(groups), regexes

    written, _, regexes = splice_clauses(text, rewrite)
    return written, regexes


def _answerable(spec: FieldSpec) -> bool:
    if not spec.indexed:
        return False
    return spec.is_exact or (
        spec.kind is FieldKind.TEXT and spec.tokenizer in ("default", "whitespace")
    )


def _unescape(phrase: str) -> str:
    """The phrase's text as Tantivy's parser reads it: ``\\c`` is ``c``."""
    return re.sub(r"\\(.)", r"\1", phrase, flags=re.DOTALL)


def _clause(
    spec: FieldSpec,
    phrase: str,
    boost: str,
    shown: str,
    prefix_terms: PrefixTerms,
    option: str,
    limit: int,
) -> tuple[str, bool]:
    """(the clause text on ``spec``'s field, whether it holds a regex)."""
    if spec.is_exact:
        return _prefix_regex(spec, phrase, boost, shown, prefix_terms, option, limit), True
    pattern = r"\S+" if spec.tokenizer == "whitespace" else r"[^\W_]+"
    runs = list(re.finditer(pattern, phrase))
    if not runs:
        return NOTHING, False
    last = runs[-1]
    prefix = "".join(c.lower() for c in last.group(0))
    if len(runs) == 1:
        return _prefix_regex(spec, prefix, boost, shown, prefix_terms, option, limit), True
    terms = _terms(spec, prefix, shown, prefix_terms, option, limit)
    if not terms:
        return NOTHING, False
    head = _quoted(phrase[: last.start()])
    if len(terms) <= TANTIVY_PHRASE_PREFIX_EXPANSIONS:
        return f'{spec.name}:"{head}{_quoted(last.group(0))}"*{boost}', False
    phrases = [f'{spec.name}:"{head}{_quoted(_as_written(t))}"{boost}' for t in terms]
    return "(" + " OR ".join(phrases) + ")", False


def _prefix_regex(
    spec: FieldSpec,
    prefix: str,
    boost: str,
    shown: str,
    prefix_terms: PrefixTerms,
    option: str,
    limit: int,
) -> str:
    _terms(spec, prefix, shown, prefix_terms, option, limit)
    return f"{spec.name}:/{atoms_regex([*prefix, Wild.ANY])}/{boost}"


def _terms(
    spec: FieldSpec,
    prefix: str,
    shown: str,
    prefix_terms: PrefixTerms,
    option: str,
    limit: int,
) -> list[str]:
    terms = prefix_terms(spec.name, prefix, limit + 1)
    if len(terms) > limit:
        raise QuerySyntaxError(
            f"option {option}: the phrase prefix {shown!r} stands for more than {limit:,} "
            f"terms of column {spec.name!r} in one split (max_term_expansions): write a "
            "longer last word, or raise the limit"
        )
    return terms


def _as_written(term: str) -> str:
    """A term as phrase text the analyzer turns back into it: ``i`` and a combining dot
    above (the lowercase of ``İ``, which the analyzer would split) written ``İ``."""
    return term.replace("i\u0307", "\u0130")


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
