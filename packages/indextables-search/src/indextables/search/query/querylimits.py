"""The size and nesting limits of search query text, checked before anything parses it.

Tantivy's query parser recurses once per nesting level: 10,000 nested parentheses
(20 KB of text) or 100,000 chained ``NOT`` overflowed the native stack and killed the
interpreter with SIGSEGV, which no ``except`` can catch. :func:`check_query_limits`
refuses, with a :class:`~indextables.search.errors.QuerySyntaxError` naming the option
and the limit, a text of more than :data:`MAX_QUERY_BYTES` UTF-8 bytes or nesting more
than :data:`MAX_QUERY_DEPTH` levels. A group ``(...)`` and a ``NOT`` each nest one level
(``NOT (a OR (b AND c))`` is three deep); quoted phrases, escaped characters and range
brackets nest nothing. The scan is one pass over the text, without recursion.
"""

from __future__ import annotations

from typing import Final

from indextables.search.errors import QuerySyntaxError
from indextables.search.query.querytext import SPACE, bracket_end, quote_end

__all__ = ["MAX_QUERY_BYTES", "MAX_QUERY_DEPTH", "check_query_limits", "nesting_depth"]

MAX_QUERY_DEPTH: Final = 100
"""The deepest nesting of groups and ``NOT`` a query text may have."""

MAX_QUERY_BYTES: Final = 1_048_576
"""The longest query text, in UTF-8 bytes (1 MiB; a term may be 65,530 bytes)."""

_WORD_END: Final = frozenset(SPACE + '()"')


def check_query_limits(text: str, option: str) -> None:
    """Refuse ``text`` (the value of ``option``) beyond the size or nesting limit.

    Raises:
        QuerySyntaxError: naming the option, the limit and how to stay within it.
    """
    if len(text) * 4 > MAX_QUERY_BYTES:  # only then can the UTF-8 form be too long
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_QUERY_BYTES:
            raise QuerySyntaxError(
                f"option {option}: the query is {size:,} UTF-8 bytes, more than the limit of "
                f"{MAX_QUERY_BYTES:,} bytes (MAX_QUERY_BYTES): split it into several searches "
                "or filter with a where condition"
            )
    if nesting_depth(text, MAX_QUERY_DEPTH) > MAX_QUERY_DEPTH:
        raise QuerySyntaxError(
            f"option {option}: the query nests groups and NOT more than {MAX_QUERY_DEPTH} "
            f"levels deep (the limit, MAX_QUERY_DEPTH), which the query parser cannot take "
            "safely: write it with fewer nested parentheses and NOTs"
        )


def nesting_depth(text: str, stop: int | None = None) -> int:
    """The deepest nesting of ``text`` (module doc); the scan ends at the first level past
    ``stop`` when given (returning ``stop + 1``)."""
    deepest = 0
    depth = 0
    pending = 0  # NOTs read since the last operand: they nest what comes next
    opened: list[int] = []  # the levels each open group added (its NOTs and itself)
    position = 0
    length = len(text)
    while position < length:
        char = text[position]
        if char in SPACE:
            position += 1
            continue
        if char == "(":
            opened.append(pending + 1)
            depth += pending + 1
            pending = 0
            deepest = max(deepest, depth)
            if stop is not None and deepest > stop:
                return stop + 1
            position += 1
            continue
        if char == ")":
            depth -= opened.pop() if opened else 0
            position += 1
            continue
        start = position
        while position < length and text[position] not in _WORD_END:
            if text[position] == "\\":
                position += 2
            elif text[position] in "[{":
                position = bracket_end(text, position)
            else:
                position += 1
        if position < length and text[position] == '"':
            position = quote_end(text, position)  # a phrase, or ``f:"a b"``: one operand
        word = text[start:position].lstrip("+-")
        if word == "NOT":
            pending += 1
        elif word:
            deepest = max(deepest, depth + pending)
            pending = 0
        if stop is not None and deepest > stop:
            return stop + 1
    deepest = max(deepest, depth + pending)
    return stop + 1 if stop is not None and deepest > stop else deepest
