"""Query text cut into tokens as Tantivy's grammar reads them, outside quoted phrases.

A token is one clause or operator: ``f:[a TO b]``, ``f: IN [a b]`` and
``f:"a b"^2`` are one token each; a parenthesised group is found whole by
:func:`group_end`. Shared by the rewrites and checks that run before parsing.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["SPACE", "bracket_end", "group_end", "quote_end", "skip_space", "token_end"]

SPACE: Final = " \t\r\n"


def skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in SPACE:
        position += 1
    return position


def group_end(text: str, position: int) -> int:
    """The index after the ``)`` closing the group opened at ``position`` (or the end)."""
    depth = 0
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == '"':
            position = quote_end(text, position)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    return len(text)


def quote_end(text: str, position: int) -> int:
    """The index after the quoted phrase opened at ``position``."""
    position += 1
    while position < len(text):
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == '"':
            return position + 1
        position += 1
    return len(text)


def token_end(text: str, position: int) -> int:
    """The end of one clause or operator: up to a space or parenthesis outside quotes and
    brackets; ``f:[a TO b]``, ``f: IN [a b]`` and ``f:"a b"^2`` are one token each."""
    if text[position] in "-+" and (position + 1 >= len(text) or text[position + 1] in SPACE):
        return position + 1
    if text[position] in "-+" and (
        text[position + 1] == "(" or re.match(r"NOT[ \t\r\n(]", text[position + 1 :])
    ):
        return position + 1
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
        elif char == '"':
            position = quote_end(text, position)
        elif char in "[{":
            position = bracket_end(text, position)
        elif char == ":" and position + 1 < len(text) and text[position + 1] in SPACE:
            # ``f: IN [a b]`` or ``f: value``: the field's value follows the spaces.
            position = skip_space(text, position + 1)
            if text.startswith("IN", position) and text[position + 2 : position + 3] in SPACE:
                position = skip_space(text, position + 2)
        elif char in SPACE or char in "()":
            return position
        else:
            position += 1
    return len(text)


def bracket_end(text: str, position: int) -> int:
    closers = "]}"
    while position < len(text) and text[position] not in closers:
        position += 2 if text[position] == "\\" else 1
    return min(position + 1, len(text))
