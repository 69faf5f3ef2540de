"""``NOT`` in query text, as a reader of the query means it.

Tantivy's parser (tantivy-py 0.27) reads ``a AND NOT b`` as ``+a +(-b)``: the
inner group holds only an exclusion, which matches no document, so the whole
query silently matched nothing; so did ``NOT b AND a``, ``(NOT b) AND a`` and
``a OR NOT b``. :func:`rewrite_negations` rewrites each ``NOT x`` outside quoted
phrases into a form Tantivy answers as meant:

- after ``AND`` (and ``&&``): ``-x``, Tantivy's exclusion (``a AND -b`` is every
  ``a`` without ``b``);
- after ``OR``, after ``-``/``+``, or opening the query or a group and followed
  by an operator, ``)`` or the end: ``(* AND -x)``, every document without ``x``;
- elsewhere (``a NOT b``, ``NOT b a``, juxtaposed clauses): ``-x``, as Tantivy
  reads ``NOT`` there already.

``&&`` and ``||`` become ``AND`` and ``OR``: Tantivy's grammar has only the words
and read the symbols as search terms, so ``a && b`` silently meant ``a OR b``.

Each ``x`` is rewritten first (``NOT NOT b`` is ``b``). Groups a user writes with
Tantivy's ``-`` alone (``a AND (-b)``, ``a OR -b``) still match nothing in Tantivy:
:func:`exclusion_only_groups` finds them in the parsed query so the caller can
refuse them.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from indextables.search.query.querytext import (
    SPACE,
    group_end,
    skip_space,
    token_end,
)

__all__ = ["exclusion_only_groups", "rewrite_negations"]

_AND: Final = frozenset({"AND", "&&"})
_OR: Final = frozenset({"OR", "||"})
_SPELLED: Final = {"&&": "AND", "||": "OR"}


def rewrite_negations(text: str, option: str = "query") -> str:
    """``text`` with every ``NOT x`` in a form Tantivy answers as meant (module doc).

    ``option`` names the option the text came from (kept for callers' messages).
    """
    if "NOT" not in text and "&&" not in text and "||" not in text:
        return text
    return _rewritten(text)


@functools.lru_cache(maxsize=512)
def _rewritten(text: str) -> str:
    """:func:`_rewrite`, kept per text: every split of a search rewrites the same query."""
    return _rewrite(text)


def _rewrite(text: str) -> str:
    out: list[str] = []
    position = 0
    previous = ""  # the token before: "" (none in this group), "-", "+", an operator, a clause
    while position < len(text):
        char = text[position]
        if char in SPACE:
            out.append(char)
            position += 1
            continue
        if char == "(":
            end = group_end(text, position)
            out.append("(" + _rewrite(text[position + 1 : end - 1]) + text[end - 1 : end])
            position, previous = end, "clause"
            continue
        end = token_end(text, position)
        if end == position:  # a stray ")": Tantivy refuses it, the text stays as written
            out.append(char)
            position += 1
            continue
        token = text[position:end]
        if token == "NOT" and end < len(text) and (text[end] in SPACE or text[end] == "("):
            operand_start = skip_space(text, end)
            operand_end = _operand_end(text, operand_start)
            operand = _rewrite(text[operand_start:operand_end])
            if operand[:1] in ("-", "+"):
                operand = f"({operand})"  # ``NOT -x``: one exclusion of another
            after = _next_token(text, operand_end)
            alone = (
                previous in _OR
                or previous in ("-", "+")
                or (previous == "" and (after in _AND or after in _OR or after in ("", ")")))
            )
            out.append(f"(* AND -{operand})" if alone else f"-{operand}")
            position, previous = operand_end, "clause"
            continue
        if token in ("-", "+"):
            out.append(token)
            position, previous = end, token
            continue
        # Tantivy has no ``&&``/``||``: it read them as words (``a && b`` was ``a OR b``).
        out.append(_SPELLED.get(token, token))
        position = end
        previous = token if token in _AND or token in _OR else "clause"
    return "".join(out)


def _next_token(text: str, position: int) -> str:
    """The token at ``position`` after spaces ("" at the end, ")" for a closing one)."""
    position = skip_space(text, position)
    if position >= len(text):
        return ""
    if text[position] in "()":
        return text[position]
    return text[position : token_end(text, position)]


def _operand_end(text: str, position: int) -> int:
    """The end of ``NOT``'s operand starting at ``position``: a group, a clause with its
    ``-``/``+``, or another ``NOT`` and its operand."""
    if position >= len(text):
        return position
    if text[position] in "-+":
        if position + 1 < len(text) and text[position + 1] == "(":
            return group_end(text, position + 1)
        return token_end(text, position + 1) if position + 1 < len(text) else position + 1
    if text[position] == "(":
        return group_end(text, position)
    end = token_end(text, position)
    if text[position:end] == "NOT":
        return _operand_end(text, skip_space(text, end))
    return end


# Rust string literals in a parsed query's Debug form (their text may hold any character).
_DEBUG_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_BOOLEAN: Final = "BooleanQuery { subqueries: ["


def exclusion_only_groups(shape: str) -> int:
    """How many boolean groups of a parsed query (its ``repr``) hold only exclusions.

    Tantivy matches no document for such a group (``a AND (-b)`` is ``+a +(-b)``),
    where a reader means "everything without ``b``".
    """
    if "[(MustNot, " not in shape:
        return 0  # no group opens with an exclusion, so none holds only exclusions
    text = _DEBUG_STRING.sub('""', shape)
    found = 0
    start = text.find(_BOOLEAN)
    while start >= 0:
        occurs = _top_level_occurs(text, start + len(_BOOLEAN))
        if occurs and all(o == "MustNot" for o in occurs):
            found += 1
        start = text.find(_BOOLEAN, start + 1)
    return found


_BRACKET: Final = re.compile(r"[()\[\]{}]")


def _top_level_occurs(text: str, position: int) -> list[str]:
    """The occur (Must, Should, MustNot) of each element of the list opening at ``position``."""
    occurs: list[str] = []
    depth = 0
    for bracket in _BRACKET.finditer(text, position):
        char = bracket.group()
        if char in "([{":
            if depth == 0 and char == "(":
                index = bracket.start()
                occurs.append(text[index + 1 : text.find(",", index)].strip())
            depth += 1
        elif depth == 0:
            return occurs
        else:
            depth -= 1
    return occurs
