"""Query text cut into tokens as Tantivy's grammar reads them, outside quoted phrases.

A token is one clause or operator: ``f:[a TO b]``, ``f: IN [a b]`` and
``f:"a b"^2`` are one token each; a parenthesised group is found whole by
:func:`group_end`. Shared by the rewrites and checks that run before parsing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Final

__all__ = [
    "SPACE",
    "bracket_end",
    "clause_spans",
    "either",
    "group_ends",
    "group_end",
    "quote_end",
    "regex_end",
    "skip_space",
    "splice_clauses",
    "token_end",
]

SPACE: Final = " \t\r\n"
_NOT_WORD: Final = re.compile(r"NOT[ \t\r\n(]")

# Every scan takes an optional ``limit``: the text ends there for it (a group's inside is
# read in place, without copying it out), ``len(text)`` by default.


def skip_space(text: str, position: int, limit: int | None = None) -> int:
    end = len(text) if limit is None else limit
    while position < end and text[position] in SPACE:
        position += 1
    return position


def group_end(text: str, position: int, limit: int | None = None) -> int:
    """The index after the ``)`` closing the group opened at ``position`` (or the end)."""
    end = len(text) if limit is None else limit
    depth = 0
    while position < end:
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == '"':
            position = quote_end(text, position, end)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    return end


def group_ends(text: str) -> dict[int, int]:
    """:func:`group_end` of every ``(`` a scan from the start of ``text`` meets outside
    quotes, in one pass: the index of each ``(`` -> the index after its ``)``
    (``len(text)`` when it is never closed). A group met from another position than this
    scan reads (inside a bracket holding a quote) is not in it: ask :func:`group_end`."""
    ends: dict[int, int] = {}
    opened: list[int] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == '"':
            position = quote_end(text, position)
            continue
        if char == "(":
            opened.append(position)
        elif char == ")" and opened:
            ends[opened.pop()] = position + 1
        position += 1
    for start in opened:
        ends[start] = len(text)
    return ends


def quote_end(text: str, position: int, limit: int | None = None) -> int:
    """The index after the quoted phrase opened at ``position``."""
    end = len(text) if limit is None else limit
    position += 1
    while position < end:
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == '"':
            return position + 1
        position += 1
    return end


def token_end(text: str, position: int, limit: int | None = None) -> int:
    """The end of one clause or operator: up to a space or parenthesis outside quotes,
    brackets and regexes; ``f:[a TO b]``, ``f: IN [a b]``, ``f:"a b"^2`` and ``f:/a(b|c)/``
    are one token each."""
    end = len(text) if limit is None else limit
    if text[position] in "-+" and (position + 1 >= end or text[position + 1] in SPACE):
        return position + 1
    if text[position] in "-+" and (
        text[position + 1] == "(" or _NOT_WORD.match(text, position + 1, end)
    ):
        return position + 1
    start = value = position
    while position < end:
        char = text[position]
        if char == "\\":
            position += 2
        elif char == '"':
            position = quote_end(text, position, end)
        elif char in "[{":
            position = bracket_end(text, position, end)
        elif char == "/" and (position in (start, value) or text[position - 1] in ":+-"):
            position = regex_end(text, position, end)  # ``f:/re/``: one token, any characters
        elif char == ":" and position + 1 < end and text[position + 1] in SPACE:
            # ``f: IN [a b]`` or ``f: value``: the field's value follows the spaces.
            position = value = skip_space(text, position + 1, end)
            if text.startswith("IN", position, end) and (
                position + 2 >= end or text[position + 2] in SPACE
            ):
                position = skip_space(text, position + 2, end)
        elif char in SPACE or char in "()":
            return position
        else:
            position += 1
    return end


def regex_end(text: str, position: int, limit: int | None = None) -> int:
    """The index after the regex ``/.../`` opened at ``position`` (``\\/`` escapes a slash)."""
    end = len(text) if limit is None else limit
    position += 1
    while position < end:
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == "/":
            return position + 1
        position += 1
    return end


def bracket_end(text: str, position: int, limit: int | None = None) -> int:
    end = len(text) if limit is None else limit
    closers = "]}"
    while position < end and text[position] not in closers:
        position += 2 if text[position] == "\\" else 1
    return min(position + 1, end)


def clause_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Each token of ``text`` outside parentheses as ``(token, body, end)``: the token's
    text, where it starts after its leading ``+``/``-`` occurs, and where it ends.

    Group parentheses are stepped over, so the tokens inside a group come too; the
    rewrites that replace single clauses in place walk the text with this.
    """
    position = 0
    while position < len(text):
        position = skip_space(text, position)
        if position >= len(text):
            break
        if text[position] in "()":
            position += 1
            continue
        end = token_end(text, position)
        token = text[position:end]
        yield token, position + len(token) - len(token.lstrip("+-")), end
        position = max(end, position + 1)


ClauseRewrite = Callable[[str, str], "tuple[str, bool] | None"]
"""``(token, clause)`` -> (the clause's replacement, whether it holds a regex clause), or
None to keep the clause. ``clause`` is the token without its leading ``+``/``-``."""


def splice_clauses(text: str, rewrite: ClauseRewrite) -> tuple[str, bool, bool]:
    """``text`` with each clause (:func:`clause_spans`) replaced in place by what
    ``rewrite`` gives for it (its ``+``/``-`` kept), whether any was replaced, and whether
    any replacement holds a regex clause. ``text`` itself when nothing was replaced."""
    out: list[str] = []
    copied = 0
    regexes = False
    for token, body, end in clause_spans(text):
        written = rewrite(token, text[body:end])
        if written is None:
            continue
        out.append(text[copied:body])
        out.append(written[0])
        regexes = regexes or written[1]
        copied = end
    if copied == 0:
        return text, False, False
    out.append(text[copied:])
    return "".join(out), True, regexes


def either(groups: Sequence[str]) -> str:
    """One clause matching what any of ``groups`` matches (the group itself if alone)."""
    return groups[0] if len(groups) == 1 else "(" + " OR ".join(groups) + ")"
