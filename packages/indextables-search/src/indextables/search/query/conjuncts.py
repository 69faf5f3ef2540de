"""The top-level AND conjuncts of a ``where``, each as a typed tree (:mod:`.wheregrammar`).

A ``where`` that parses whole is flattened at its ANDs (parentheses and
``BETWEEN`` included: ``x BETWEEN a AND b`` is two conjuncts, as Spark splits
it). One that does not (a function call, arithmetic, ``CASE``) is cut at its
top-level ``AND`` s, when that is what Spark's precedence makes of it (no
top-level ``OR``, no ``BETWEEN`` or ``CASE`` anywhere), and each piece is
parsed alone; a piece that still does not parse stays one conjunct without a
tree, so a caller counting translated conjuncts against all of them stays
sound.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from indextables.search.errors import QuerySyntaxError
from indextables.search.query.wheregrammar import And, Node, parse_tokens

if TYPE_CHECKING:
    from indextables.protocol.predicateparser import Token

__all__ = ["conjuncts"]

# Words after which cutting at AND would change the meaning (BETWEEN x AND y, CASE ... END).
_UNSAFE = frozenset({"BETWEEN", "CASE", "WHEN"})


def conjuncts(where: str, tokens: list[Token] | None = None) -> list[Node | None] | None:
    """The top-level conjuncts of ``where`` (``tokens``: its tokens, when the caller has
    them), None for each piece that does not parse; None when ``where`` neither parses
    nor can be cut into conjuncts."""
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    if tokens is None:
        try:
            tokens = tokenize(where)
        except ProtocolError:
            return None
    try:
        return list(_flattened(parse_tokens(tokens, where)))
    except QuerySyntaxError:
        pass
    pieces = _pieces(tokens)
    if pieces is None:
        return None
    found: list[Node | None] = []
    for piece in pieces:
        try:
            found.extend(_flattened(parse_tokens(piece, where)))
        except QuerySyntaxError:
            found.append(None)
    return found


def _flattened(node: Node) -> Iterator[Node]:
    # The grammar's And holds no And (chains and parentheses are merged when parsed).
    if isinstance(node, And):
        yield from node.children
    else:
        yield node


def _pieces(tokens: list[Token]) -> list[list[Token]] | None:
    """``tokens`` cut at their top-level ``AND`` keywords (None: cutting is unsafe, a
    parenthesis is unbalanced or a piece is empty)."""
    depth = 0
    pieces: list[list[Token]] = []
    current: list[Token] = []
    for token in tokens:
        kind, text = token.kind, token.text
        if kind == "punct" and text == "(":
            depth += 1
        elif kind == "punct" and text == ")":
            depth -= 1
            if depth < 0:
                return None
        elif kind in ("keyword", "name") and not token.quote:
            word = text.upper()
            if word in _UNSAFE or (depth == 0 and word == "OR"):
                return None
            if depth == 0 and word == "AND" and kind == "keyword":
                pieces.append(current)
                current = []
                continue
        current.append(token)
    pieces.append(current)
    if depth != 0 or any(not piece for piece in pieces):
        return None
    return pieces
