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
    group_ends,
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
    return _Rewrite(text).span(0, len(text))


class _Rewrite:
    """One rewrite of ``text``, reading each group's inside in place (``limit`` bounds
    every scan) with the groups' ends found in one pass (``group_ends``), and each
    operand's end and next token kept by position: every character is scanned a bounded
    number of times, however deep the groups and ``NOT`` chains nest."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ends = group_ends(text)
        self.operand_ends: dict[tuple[int, int], int] = {}
        self.next_tokens: dict[tuple[int, int], str] = {}

    def group(self, position: int, limit: int) -> tuple[int, bool]:
        """The end of the group opened at ``position`` within ``limit``, and whether its
        ``)`` is there."""
        found = self.ends.get(position)
        if found is None:  # a ``(`` the one-pass scan read inside a quote
            found = group_end(self.text, position, limit)
        end = min(found, limit)
        return end, end > position + 1 and self.text[end - 1] == ")" and end == found

    def span(self, start: int, limit: int) -> str:
        """``text[start:limit]`` rewritten."""
        text = self.text
        out: list[str] = []
        position = start
        previous = ""  # the token before: "" (none in this group), "-", "+", an operator, a clause
        while position < limit:
            char = text[position]
            if char in SPACE:
                out.append(char)
                position += 1
                continue
            if char == "(":
                end, closed = self.group(position, limit)
                inner = self.span(position + 1, end - 1 if closed else end)
                out.append(f"({inner})" if closed else f"({inner}")
                position, previous = end, "clause"
                continue
            end = token_end(text, position, limit)
            if end == position:  # a stray ")": Tantivy refuses it, the text stays as written
                out.append(char)
                position += 1
                continue
            token = text[position:end]
            if token == "NOT" and end < limit and (text[end] in SPACE or text[end] == "("):
                operand_start = skip_space(text, end, limit)
                operand_end = self.operand_end(operand_start, limit)
                operand = self.span(operand_start, operand_end)
                if operand[:1] in ("-", "+"):
                    operand = f"({operand})"  # ``NOT -x``: one exclusion of another
                after = self.next_token(operand_end, limit)
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

    def next_token(self, position: int, limit: int) -> str:
        """The token at ``position`` after spaces ("" at the end, ")" for a closing one)."""
        key = (position, limit)
        found = self.next_tokens.get(key)
        if found is None:
            text = self.text
            position = skip_space(text, position, limit)
            if position >= limit:
                found = ""
            elif text[position] in "()":
                found = text[position]
            else:
                found = text[position : token_end(text, position, limit)]
            self.next_tokens[key] = found
        return found

    def operand_end(self, position: int, limit: int) -> int:
        """The end of ``NOT``'s operand starting at ``position``: a group, a clause with its
        ``-``/``+``, or another ``NOT`` and its operand."""
        key = (position, limit)
        found = self.operand_ends.get(key)
        if found is not None:
            return found
        text = self.text
        chain: list[int] = []  # the NOTs of a chain, resolved together without recursion
        while True:
            if position >= limit:
                end = position
            elif text[position] in "-+":
                if position + 1 < limit and text[position + 1] == "(":
                    end = self.group(position + 1, limit)[0]
                elif position + 1 < limit:
                    end = token_end(text, position + 1, limit)
                else:
                    end = position + 1
            elif text[position] == "(":
                end = self.group(position, limit)[0]
            else:
                end = token_end(text, position, limit)
                if text[position:end] == "NOT":
                    chain.append(position)
                    position = skip_space(text, end, limit)
                    known = self.operand_ends.get((position, limit))
                    if known is None:
                        continue
                    end = known
            break
        self.operand_ends[key] = end
        for link in chain:
            self.operand_ends[(link, limit)] = end
        return end


# Rust string literals in a parsed query's Debug form (their text may hold any character).
_DEBUG_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_BOOLEAN: Final = "BooleanQuery { subqueries: ["


def exclusion_only_groups(shape: str) -> int:
    """How many boolean groups of a parsed query (its ``repr``) hold only exclusions.

    Tantivy matches no document for such a group (``a AND (-b)`` is ``+a +(-b)``),
    where a reader means "everything without ``b``". One pass over the text, however
    deep the groups nest.
    """
    if "[(MustNot, " not in shape:
        return 0  # no group opens with an exclusion, so none holds only exclusions
    text = _DEBUG_STRING.sub('""', shape)
    found = 0
    # One entry per open bracket: the occurs of a boolean group's subquery list, else None.
    open_lists: list[list[str] | None] = []
    for mark in _MARKS.finditer(text):
        char = mark.group()
        if char == _BOOLEAN:
            open_lists.append(None)  # its ``{``
            open_lists.append([])  # its ``[``: the subqueries
        elif char in "([{":
            occurs = open_lists[-1] if open_lists else None
            if char == "(" and occurs is not None:
                element = _OCCUR.match(text, mark.end())
                occurs.append(element.group(1) if element else "")
            open_lists.append(None)
        elif open_lists:
            occurs = open_lists.pop()
            if occurs and all(o == "MustNot" for o in occurs):
                found += 1
    return found


_MARKS: Final = re.compile(re.escape(_BOOLEAN) + r"|[()\[\]{}]")
_OCCUR: Final = re.compile(r"\s*(\w+)\s*,")
