"""The top-level AND conjuncts of a ``where`` the protocol's grammar cannot parse whole.

The grammar (:func:`indextables.protocol.predicates.parse_predicate`) reads
``column op literal`` comparisons and their AND/OR/NOT; a single conjunct it
cannot read (``x < y``, ``4 < x``, ``b = true``) used to leave the whole
``where`` untranslated, so no conjunct narrowed the search and every count
read rows. Here such a ``where`` is cut at its top-level ``AND`` s (only when
that is what Spark's precedence makes of it: no top-level ``OR``, no
``BETWEEN`` or ``CASE`` anywhere) and each piece is parsed alone, after two
rewrites that keep Spark's meaning:

- a literal on the left (``4 < x``) is turned around (``x > 4``);
- ``b = true``/``b = false`` and a bare ``b`` on a **boolean** column become
  ``b = 'true'``/``'false'`` (typed to a boolean by the translation).

A piece that still does not parse is kept as one untranslated conjunct, so the
caller's exactness check (translated conditions == conjuncts) stays sound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from indextables.search.schema import columntypes as ct

__all__ = ["Piece", "split_where"]

_FLIPPED = {"=": "=", "==": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# Words after which cutting at AND would change the meaning (BETWEEN x AND y, CASE ... END).
_UNSAFE = frozenset({"BETWEEN", "CASE", "WHEN"})


class Piece:
    """One top-level conjunct: its text and its parsed predicate (None when it does not parse)."""

    __slots__ = ("node", "text")

    def __init__(self, text: str, node: Any) -> None:
        self.text = text
        self.node = node


def split_where(where: str, types: Mapping[str, pa.DataType] | None = None) -> list[Piece] | None:
    """The top-level conjuncts of ``where``, each parsed alone; None when it cannot be cut.

    ``types`` (lowercase column name -> Arrow type) enables the boolean
    rewrite; without it (counting conjuncts) pieces are parsed as written
    or turned around only.
    """
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    try:
        tokens = tokenize(where)
    except ProtocolError:
        return None
    depth, cuts = 0, []
    for token in tokens:
        if token.kind == "punct" and token.text == "(":
            depth += 1
        elif token.kind == "punct" and token.text == ")":
            depth -= 1
        elif token.kind in ("keyword", "name") and not token.quote:
            word = token.text.upper()
            if word in _UNSAFE or (depth == 0 and word == "OR"):
                return None
            if depth == 0 and word == "AND" and token.kind == "keyword":
                cuts.append(token.position)
        if depth < 0:
            return None
    if depth != 0:
        return None
    bounds = [0, *(c + 3 for c in cuts)]
    ends = [*cuts, len(where)]
    texts = [where[a:b].strip() for a, b in zip(bounds, ends, strict=True)]
    if any(not t for t in texts):
        return None
    return [Piece(text, _parse(text, types)) for text in texts]


def _parse(text: str, types: Mapping[str, pa.DataType] | None) -> Any:
    from indextables.protocol import predicates as p
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    for candidate in (text, _rewritten(text, types)):
        if candidate is None:
            continue
        try:
            if any(token.quote == '"' for token in tokenize(candidate)):
                return None  # a string to Spark, a name to the grammar
            return p.parse_predicate(candidate)
        except ProtocolError:
            continue
    return None


def _rewritten(text: str, types: Mapping[str, pa.DataType] | None) -> str | None:
    """``text`` with a left-hand literal turned around or a boolean literal quoted."""
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    try:
        tokens = tokenize(text)
    except ProtocolError:
        return None
    if len(tokens) == 1 and tokens[0].kind == "name" and _boolean(tokens[0].text, types):
        return f"{_raw(text, tokens, 0)} = 'true'"
    if len(tokens) != 3 or tokens[1].kind != "op":
        return None
    left, op, right = tokens
    if left.kind in ("number", "string") and right.kind == "name" and op.text in _FLIPPED:
        return f"{_raw(text, tokens, 2)} {_FLIPPED[op.text]} {_raw(text, tokens, 0)}"
    if (
        left.kind == "name"
        and right.kind == "name"
        and not right.quote
        and right.text.lower() in ("true", "false")
        and op.text in ("=", "==")
        and _boolean(left.text, types)
    ):
        return f"{_raw(text, tokens, 0)} = '{right.text.lower()}'"
    return None


def _boolean(column: str, types: Mapping[str, pa.DataType] | None) -> bool:
    found = types.get(column.lower()) if types is not None else None
    return found is not None and ct.is_boolean(found)


def _raw(text: str, tokens: list[Any], i: int) -> str:
    """Token ``i`` as written (quotes and escapes kept)."""
    end = tokens[i + 1].position if i + 1 < len(tokens) else len(text)
    return text[tokens[i].position : end].strip()
