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

_FLIPPED = {"=": "=", "==": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
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
    """``text`` with its literals in the grammar's forms and a left-hand literal turned around.

    Only a single condition is rewritten (a bare column, ``NOT column``,
    ``a op b`` or ``column IN (...)``), so a rewritten piece is still one
    conjunct (:func:`indextables.search.query.indexexact.where_conjuncts`
    counts pieces without rewriting them).
    """
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    try:
        tokens = tokenize(text)
    except ProtocolError:
        return None
    found = _literal_words(text, tokens, types)
    if found is None:
        return None
    words, boolean = found
    kinds = [kind for kind, _ in words]
    if kinds == ["name"] and boolean:
        return f"{words[0][1]} = 'true'"
    if kinds == ["keyword", "name"] and words[0][1] == "NOT" and boolean:
        return f"{words[1][1]} = 'false'"
    if kinds[:3] == ["name", "keyword", "punct"] and words[1][1] == "IN":
        return " ".join(word for _, word in words)
    if len(words) != 3 or kinds[1] != "op":
        return None
    (left_kind, left), (_, op), (right_kind, right) = words
    if left_kind in ("number", "string") and right_kind == "name" and op in _FLIPPED:
        return f"{right} {_FLIPPED[op]} {left}"
    if left_kind == "name" and right_kind in ("number", "string"):
        return f"{left} {op} {right}"
    return None


def _literal_words(
    text: str, tokens: list[Any], types: Mapping[str, pa.DataType] | None
) -> tuple[list[tuple[str, str]], bool] | None:
    """The tokens as written, each with its kind, where Spark's typed literals the grammar
    does not read become the strings it types the same way on the piece's one column:
    ``TRUE``/``FALSE`` on a boolean column, ``DATE '...'`` on a date column; and whether
    that column is boolean.

    None when the piece names no column or more than one, or holds AND/OR.
    """
    columns = {
        t.text.lower()
        for i, t in enumerate(tokens)
        if t.kind == "name" and not _literal_word(tokens, i)
    }
    if len(columns) != 1 or types is None:
        return None
    data_type = types.get(next(iter(columns)))
    boolean = data_type is not None and ct.is_boolean(data_type)
    dated = data_type is not None and ct.is_date(data_type)
    words: list[tuple[str, str]] = []
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if token.kind == "keyword" and token.text in ("AND", "OR"):
            return None
        written = _raw(text, tokens, i)
        literal = _literal_word(tokens, i)
        if literal == "date":
            if not dated:
                return None
            words.append(("string", _raw(text, tokens, i + 1)))
            skip = True
        elif literal == "boolean":
            if not boolean:
                return None
            words.append(("string", f"'{token.text.lower()}'"))
        else:
            words.append((token.kind, written))
    return words, boolean


def _literal_word(tokens: list[Any], i: int) -> str | None:
    """``boolean`` for an unquoted TRUE/FALSE, ``date`` for an unquoted DATE before a
    string (Spark's literals, never column names), else None."""
    token = tokens[i]
    if token.kind != "name" or token.quote:
        return None
    word = token.text.lower()
    if word in ("true", "false"):
        return "boolean"
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    typed = word == "date" and following is not None and following.kind == "string"
    return "date" if typed else None


def _raw(text: str, tokens: list[Any], i: int) -> str:
    """Token ``i`` as written (quotes and escapes kept)."""
    end = tokens[i + 1].position if i + 1 < len(tokens) else len(text)
    return text[tokens[i].position : end].strip()
