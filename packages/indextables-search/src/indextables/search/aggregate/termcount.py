"""A split's count of one string condition as summed document frequencies.

A count whose only condition is ``=``, IN, a prefix, suffix or substring, a ``LIKE``
pattern or an ``RLIKE`` regex on an exact ``string`` field is, on a split where

- no document is deleted (the term dictionary's frequencies count deleted documents),
- no document holds two terms of the field (single-valued: the frequencies of all
  the field's terms sum to the documents holding any; checked once per split and
  field; ``=`` and a one-value IN need no such check), and
- for the pattern operators, every value of the field is indexed (as
  :func:`~indextables.search.query.indexexact.split_fully_indexed` says; for ``=``
  and IN, each operand short enough to be a term),

the sum of the matching terms' document frequencies, read from the split's term
buffer (:mod:`~indextables.search.splits.termbuffer`) with no posting list opened:
``=``, IN and prefixes by bisection, suffixes and substrings by a byte search of the
joined terms, other ``LIKE`` patterns and ``RLIKE`` by a Python regex over the terms
of the pattern's literal prefix (:data:`MAX_WALKED_TERMS` at most, else not summed).

:func:`summed_count` returns None in every other case (the caller counts with
Tantivy). Nulls hold no term and are never counted; ``""`` is a term of its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import tantivy

from indextables.search.boundedcache import BoundedCache
from indextables.search.query.conditions import Condition
from indextables.search.query.indexexact import LIKE_OPS, count
from indextables.search.query.likepattern import ANY, like_pieces, like_python_regex
from indextables.search.query.rlikepattern import java_regex
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.read.splitreader import SplitEntry, split_traits
from indextables.search.schema.mapping import FieldSpec
from indextables.search.splits.termbuffer import TermBuffer, split_buffer

__all__ = ["MAX_WALKED_TERMS", "SUMMED_OPS", "summed_count"]

SUMMED_OPS: Final = LIKE_OPS | {"=", "in"}
"""The condition operators a count may answer by summed document frequencies."""
MAX_WALKED_TERMS: Final = 65_536
"""The most terms a ``LIKE`` pattern or ``RLIKE`` regex is matched against in Python
(more: the count is left to Tantivy's automaton)."""

# Per split (entry directory, content identity, split tags) and field spec: whether the
# field is single-valued and fully indexed.
_FACTS = 1024
_facts: BoundedCache[tuple[Any, ...], tuple[bool, bool]] = BoundedCache(max_entries=_FACTS)


def summed_count(
    directory: str,
    identity: str,
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    fields: Mapping[str, FieldSpec],
    entry: SplitEntry,
    search: SearchSpec,
    conditions: Sequence[Condition],
    fully_indexed: Callable[[Iterable[str]], frozenset[str]],
) -> int | None:
    """The split's count of ``conditions`` as summed document frequencies (module doc),
    or None when it is not answered that way. ``fully_indexed``: the split's fully
    indexed columns among those named (lowercase), as
    :func:`~indextables.search.query.indexexact.split_fully_indexed` answers.

    Raises:
        SplitReadError: the split's terms cannot be read.
    """
    if not search.is_empty or len(conditions) != 1:
        return None
    condition = conditions[0]
    spec = fields.get(condition.column.lower())
    if (
        condition.op not in SUMMED_OPS
        or condition.path
        or spec is None
        or not spec.is_exact
        or not spec.indexed
        or not condition.values
        or not all(isinstance(v, str) and _encodable(v) for v in condition.values)
    ):
        return None
    distinct = frozenset(condition.values)
    if condition.op in ("=", "in") and any(
        len(v.encode("utf-8")) > MAX_TERM_BYTES for v in distinct
    ):
        return None  # a value too long to be a term may still be in a row
    if condition.op in LIKE_OPS and len(condition.values) != 1:
        return None
    facts = _split_facts(directory, identity, index, searcher, entry, spec, fully_indexed)
    if facts is None:
        return None
    single_valued, fully = facts
    if condition.op in LIKE_OPS and not fully:
        return None
    if not single_valued and not (condition.op in ("=", "in") and len(distinct) == 1):
        return None
    buffer = split_buffer(index, directory, spec.name)
    if not buffer.counted:
        return None
    return _summed(buffer, condition.op, condition.values[0], distinct)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False  # a lone surrogate: left to the query path
    return True


def _split_facts(
    directory: str,
    identity: str,
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    entry: SplitEntry,
    spec: FieldSpec,
    fully_indexed: Callable[[Iterable[str]], frozenset[str]],
) -> tuple[bool, bool] | None:
    """``(single-valued, fully indexed)`` of ``spec``'s field on the split, or None when
    the split has deletes."""
    if split_traits(directory, identity=identity).deletes:
        return None
    key = (os.getpid(), directory, identity, tuple(entry.split_tags), spec)
    found = _facts.get(key)
    if found is None:
        name = spec.name.lower()
        fully = name in fully_indexed([name])
        buffer = split_buffer(index, directory, spec.name)
        found = (_single_valued(index, searcher, spec, buffer), fully)
        _facts.put(key, found)
    return found


def _single_valued(
    index: tantivy.Index, searcher: tantivy.Searcher, spec: FieldSpec, buffer: TermBuffer
) -> bool:
    """Whether no document holds two terms of the field: the frequencies of every term
    sum to the documents holding any term (a document of ``k`` distinct terms counts
    ``k`` in the sum and one in the count)."""
    try:
        holding = count(searcher, tantivy.Query.regex_query(index.schema, spec.name, "(?s).*"))
    except ValueError:
        return False
    return buffer.total == holding


def _summed(buffer: TermBuffer, op: str, value: str, distinct: frozenset[str]) -> int | None:
    if op in ("=", "in"):
        return sum(buffer.frequency_of(v) for v in distinct)
    if op == "prefix":
        return buffer.frequency_with_prefix(value)
    if op in ("suffix", "contains"):
        return buffer.frequency_holding(value, suffix=op == "suffix")
    if op == "like":
        return _like(buffer, value)
    if op == "rlike":
        try:
            pattern = java_regex(value).python_whole_regex()
        except ValueError:
            return None
        return _walked(buffer, pattern, 0, len(buffer.terms))
    return None


def _like(buffer: TermBuffer, value: str) -> int | None:
    pieces = like_pieces(value)
    if pieces is None:
        return None
    kinds = tuple(p.kind for p in pieces)
    if not pieces:
        return buffer.frequency_of("")
    if kinds == ("text",):
        return buffer.frequency_of(pieces[0].text)
    if kinds == (ANY,):
        return buffer.total
    if kinds == ("text", ANY):
        return buffer.frequency_with_prefix(pieces[0].text)
    if kinds in ((ANY, "text"), (ANY, "text", ANY)):
        return buffer.frequency_holding(pieces[1].text, suffix=len(pieces) == 2)
    low, high = (
        buffer.prefix_range(pieces[0].text) if kinds[0] == "text" else (0, len(buffer.terms))
    )
    return _walked(buffer, like_python_regex(pieces), low, high)


def _walked(buffer: TermBuffer, pattern: re.Pattern[str], low: int, high: int) -> int | None:
    if high - low > MAX_WALKED_TERMS:
        return None
    return buffer.frequency_matching(pattern, low, high)
