"""Fuzzy terms in query text (``f:term~1``, ``f:term~2``), answered over the split's terms.

Tantivy's parser reads ``msg:helo~1`` as other terms than meant (the analyzer
splits at the ``~``). :func:`rewrite_fuzzy_terms` replaces each fuzzy term it
can answer by the set of the split's terms of that field within the edit
distance (Levenshtein over characters, a transposition of two neighbouring
characters counting one edit, as Tantivy's fuzzy query and the reference count
it): ``f: IN ["t1" "t2"]``, or :data:`~indextables.search.query.tokenless.NOTHING`
when no term is that close. The field rules are the wildcard terms' (a term
within one token on ``default`` text fields, lowercased character by character;
no space on ``whitespace`` ones; the whole value, case-sensitive, on exact
fields); other forms are left to
:func:`~indextables.search.query.termforms.check_term_forms`, which refuses them.

A fuzzy term stands for terms of the index, each one token, so a term that the
``default`` analyzer of a text field it searches cuts into several tokens
(``msg:foo-bar~1``, ``msg:a.b~2``) is refused with a
:class:`~indextables.search.errors.QuerySyntaxError` naming the term, the column
and its tokens, and saying what to write instead: one token, a phrase (a quoted
phrase with a slop, ``msg:"foo bar"~1``, is no fuzzy term and is left alone), or
each token fuzzy.

Finding the terms walks the split's FST term dictionaries depth first, leaving
every branch whose prefix is already past the distance
(:mod:`~indextables.search.splits.nearterms`): the cost follows the prefixes
near the term, not the dictionary's size. An index the walk cannot read (one not
opened from a split directory, a dictionary not in the FST form) lists the
field's every term instead. More than the expansion limit of them
(``max_term_expansions``: the call's argument, else the option, else
:data:`~indextables.search.query.termexpand.MAX_TERM_EXPANSIONS`) is refused
with a :class:`~indextables.search.errors.QuerySyntaxError` naming the term and
the limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from rapidfuzz import process
from rapidfuzz.distance import OSA

from indextables.search.errors import QuerySyntaxError
from indextables.search.query import termexpand
from indextables.search.query.querytext import either, splice_clauses
from indextables.search.query.termexpand import term_set
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.splits.nearterms import NearTerms

__all__ = ["edit_distance", "rewrite_fuzzy_terms"]

_FUZZY: Final = re.compile(r"(?:([A-Za-z_][\w.\-]*):)?(.+)~([12])(\^\d+(?:\.\d+)?)?")

ListTerms = Callable[[str], Iterable[str]]
"""``field`` -> every term of ``field`` in the split."""


def rewrite_fuzzy_terms(
    text: str,
    fields: Mapping[str, FieldSpec],
    list_terms: ListTerms,
    option: str,
    defaults: Sequence[str] = (),
    limit: int = termexpand.MAX_TERM_EXPANSIONS,
    near_terms: NearTerms | None = None,
) -> tuple[str, bool]:
    """``text`` with each answerable fuzzy term as the set of terms it stands for, and
    whether that wrote regex clauses (the caller then parses with regexes allowed).
    ``defaults``: the fields a fuzzy term without a field searches (one group each,
    joined by OR). ``near_terms``: the split's own walk of its term dictionaries
    (:mod:`~indextables.search.splits.nearterms`); where it does not answer, every
    term of the field is listed (``list_terms``) and measured.

    Raises:
        QuerySyntaxError: a fuzzy term standing for more terms than ``limit``.
    """
    if "~" not in text:
        return text, False

    def rewrite(_: str, clause: str) -> tuple[str, bool] | None:
        found = _fuzzy_clause(clause, fields, defaults, option)
        if found is None:
            return None
        names, term, distance, boost = found
        groups = []
        regexes = False
        for name in names:
            walked = None if near_terms is None else near_terms(name, term, distance, limit)
            near = (
                _near_terms(list_terms(name), term, distance, limit) if walked is None else walked
            )
            if len(near) > limit:
                raise QuerySyntaxError(
                    f"option {option}: the fuzzy term {clause!r} stands for more "
                    f"than {limit:,} terms of column {name!r} in one split "
                    "(max_term_expansions): use a smaller distance or a longer term, or "
                    "raise the limit"
                )
            tokenized = fields[name.lower()].is_tokenized
            clause_text, with_regex = term_set(name, near, tokenized, boost)
            groups.append(clause_text)
            regexes = regexes or with_regex
        return either(groups), regexes

    written, _, regexes = splice_clauses(text, rewrite)
    return written, regexes


def _fuzzy_clause(
    clause: str, fields: Mapping[str, FieldSpec], defaults: Sequence[str], option: str
) -> tuple[list[str], str, int, str] | None:
    """(the field names, the analyzed term, the distance, the boost text) of an
    answerable fuzzy clause, else None.

    Raises:
        QuerySyntaxError: a term the analyzer of a field it searches cuts into several
            tokens (:func:`_check_one_token`).
    """
    found = _FUZZY.fullmatch(clause)
    if found is None:
        return None
    term = found.group(2)
    if term[0] in "[{<>/(-+" or any(c in term for c in '*?~"^'):
        return None
    if ":" in term and not found.group(1):
        return None  # ``1:b~1``: no field name Tantivy reads
    names = [found.group(1)] if found.group(1) else list(defaults)
    for name in names:
        _check_one_token(fields.get(name.lower()), clause, term, found.group(3), option)
    if "\\" in term:
        return None
    analyzed = None
    kept = []
    for name in names:
        spec = fields.get(name.lower())
        form = termexpand.analyzed_term(spec, term, term)
        if spec is None or form is None or (analyzed is not None and form != analyzed):
            return None
        analyzed = form
        kept.append(spec.name)
    if analyzed is None:
        return None
    return kept, analyzed, int(found.group(3)), found.group(4) or ""


def _check_one_token(
    spec: FieldSpec | None, clause: str, term: str, distance: str, option: str
) -> None:
    """Refuse a fuzzy term that the ``default`` analyzer of ``spec``'s text field cuts into
    several tokens (``msg:foo-bar~1``): a fuzzy term stands for terms of the index, each
    one token, so no indexed term is near the whole of it.

    Raises:
        QuerySyntaxError: naming the term, the column, its tokens and what to write.
    """
    if spec is None or not spec.indexed or spec.kind is not FieldKind.TEXT:
        return
    if spec.tokenizer != "default":
        return
    tokens = ["".join(c.lower() for c in run) for run in _TOKEN_RUN.findall(term)]
    if len(tokens) < 2:
        return
    name = spec.name
    each = " AND ".join(f"{name}:{t}~{distance}" for t in tokens)
    raise QuerySyntaxError(
        f"option {option}: the fuzzy term {clause!r} is {len(tokens)} tokens to the analyzer "
        f"of column {name!r} ({', '.join(tokens)}), but a fuzzy term matches one token: "
        f'write one token ({name}:{tokens[0]}~{distance}), a phrase ({name}:"'
        f'{" ".join(tokens)}"), or each token fuzzy ({each})'
    )


# A run of the ``default`` analyzer's token characters (letters and digits).
_TOKEN_RUN: Final = re.compile(r"[^\W_]+")


def _near_terms(terms: Iterable[str], term: str, distance: int, limit: int) -> list[str]:
    """The terms within ``distance`` edits of ``term`` (optimal string alignment, as
    :func:`edit_distance`), in dictionary order, at most ``limit + 1`` of them.

    The distances are computed by ``rapidfuzz`` (bit-parallel, in C++) over chunks of
    the dictionary: a split's field may hold millions of terms (a unique id in every
    message), which a Python loop took tens of seconds to walk."""
    near: list[str] = []
    chunk: list[str] = []
    for candidate in terms:
        chunk.append(candidate)
        if len(chunk) == _CHUNK_TERMS:
            near += _close(chunk, term, distance)
            chunk = []
            if len(near) > limit:
                return near[: limit + 1]
    near += _close(chunk, term, distance)
    return near[: limit + 1]


_CHUNK_TERMS: Final = 65_536
"""Dictionary terms handed to ``rapidfuzz`` at once (bounds the memory of a walk)."""


def _close(chunk: list[str], term: str, distance: int) -> list[str]:
    """The terms of ``chunk`` within ``distance`` edits of ``term``, in ``chunk``'s order."""
    if not chunk:
        return []
    found = process.extract(
        term, chunk, scorer=OSA.distance, score_cutoff=distance, limit=None, processor=None
    )
    return [chunk[index] for index in sorted(index for _, _, index in found)]


def edit_distance(first: str, second: str, most: int) -> int:
    """The optimal-string-alignment distance of two strings (insertions, deletions,
    substitutions and transpositions of neighbours, one edit each), or ``most + 1`` as
    soon as it must exceed ``most``."""
    before: list[int] = []
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i] + [0] * len(second)
        for j, b in enumerate(second, 1):
            cost = 0 if a == b else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a == second[j - 2] and first[i - 2] == b:
                best = min(best, before[j - 2] + 1)
            current[j] = best
        if min(current) > most:
            return most + 1
        before, previous = previous, current
    return previous[-1]
