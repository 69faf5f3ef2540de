"""SQL ``where`` strings -> :class:`Condition` records (Spark filters: ``pyspark.sparkfilters``).

A condition describes a *superset* of the rows its filter keeps: the reader
hands every filter back to Spark as unhandled, so Spark always re-checks the
rows, and a condition only narrows what is read. A filter that cannot be
translated exactly is not used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import pyarrow as pa

from indextables.protocol.predicateparser import like_prefix
from indextables.search.query import wheregrammar as w
from indextables.search.query.likepattern import like_pieces, like_shape
from indextables.search.schema import columntypes as ct

__all__ = [
    "COMPARISONS",
    "Condition",
    "Translation",
    "decimal_precision",
    "translate_predicate",
    "translate_where",
]

COMPARISONS = ("=", "<", "<=", ">", ">=")


@dataclass(frozen=True, slots=True)
class Condition:
    """One translated filter on a top-level column.

    Attributes:
        op: one of ``=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``null``, ``notnull``,
            ``prefix``, ``suffix``, ``contains``, ``like``, ``rlike``, ``!=``.
        column: the (top-level) column name as Spark gave it.
        values: the operand values (one for comparisons, several for ``in``; for
            ``like``, the Spark ``LIKE`` pattern as written, escapes still in it; for
            ``rlike``, the Java regex).
        path: for a field nested in a struct column, the field names below
            ``column`` (``s.a.b`` is column ``s``, path ``("a", "b")``); only
            ``=`` and ``in`` conditions have one. Empty for the column itself.
    """

    op: str
    column: str
    values: tuple[Any, ...] = ()
    path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Translation:
    """What a search can use of a ``where``.

    Attributes:
        conditions: one condition for each conjunct that translates exactly.
        complete: every top-level conjunct translated (the conditions say all of it).
    """

    conditions: tuple[Condition, ...]
    complete: bool


def translate_predicate(where: str, schema: pa.Schema) -> tuple[Condition, ...]:
    """Conditions for the AND-ed simple comparisons of a SQL ``where`` string
    (:func:`translate_where`'s conditions)."""
    return translate_where(where, schema).conditions


def translate_where(where: str, schema: pa.Schema, *, tree: w.Node | None = None) -> Translation:
    """The conditions of the top-level conjuncts of a SQL ``where`` string that translate.

    The conjuncts are those of Spark's reading (:mod:`.conjuncts`, trees of
    :mod:`.wheregrammar`). A conjunct translates when it compares one
    top-level column with literals (either side), tests it for null, matches
    a ``LIKE`` pattern, or is a boolean column alone or negated;
    literals are typed by the column's type, as Spark itself would compare
    them. Left out: a literal that does not convert exactly, a timestamp
    (Spark reads those in the session time zone), a number on a string
    column or a numeric-looking string (Spark may compare it as a number), a
    ``TRUE``/``FALSE`` or ``DATE '...'`` literal on a column of another type
    (Spark casts), an unquoted dotted name (a struct field to Spark), and
    anything the grammar does not parse. Spark still applies the whole
    condition to the rows.

    ``tree``: the whole ``where`` as :func:`~.wheregrammar.parse_where` parsed it
    (whose literals it already checked), its top-level ``AND`` its conjuncts; then
    ``where`` is neither tokenized nor parsed again.

    Raises:
        QueryError: a DECIMAL literal beyond 38 digits (Spark refuses it too).
    """
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize
    from indextables.search.query.conjuncts import conjuncts

    found: list[w.Node | None] | None
    if tree is not None:
        found = list(tree.children) if isinstance(tree, w.And) else [tree]
    else:
        try:
            tokens = tokenize(where)
        except ProtocolError:
            return Translation((), False)
        _check_literal_precision(where, tokens)
        found = conjuncts(where, tokens)
    if found is None:
        return Translation((), False)
    types = {f.name.lower(): f.type for f in schema}
    conditions = [None if node is None else _condition_of(node, types) for node in found]
    out = tuple(c for c in conditions if c is not None)
    return Translation(out, len(out) == len(conditions))


# Spark reads an integer literal as a bigint, or as a DECIMAL beyond that, and a literal
# with a fraction (no exponent) as a DECIMAL; DECIMAL precision stops at 38 digits and a
# longer literal is an error. A literal with an exponent is a double (an error past its range).
_MAX_DECIMAL_DIGITS = 38
# Suffixes that make a number a DECIMAL (``BD``) or a double (``D``); other suffixes
# (``L``, ``S``, ``Y``, ``F``) make integers and floats whose range Spark checks itself.
_DECIMAL_SUFFIXES = frozenset({"", "BD"})
_DOUBLE_SUFFIXES = frozenset({"", "D"})


def _check_literal_precision(where: str, tokens: Iterable[Any]) -> None:
    """Raise as Spark does for a DECIMAL literal of more than 38 digits (an integer past
    38 digits, a fraction whose digits exceed 38, or any ``BD`` literal beyond DECIMAL(38))
    and for a double literal past the double range.

    Raises:
        QuerySyntaxError: names the literal (Spark: ``DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION``
            or ``INVALID_NUMERIC_LITERAL_RANGE``).
    """
    from indextables.search.errors import QuerySyntaxError

    listed = list(tokens)
    for number, suffix in _numbers(listed):
        text = number.text
        exponent = "e" in text.lower()
        if exponent and suffix != "BD":
            if suffix in _DOUBLE_SUFFIXES and not math.isfinite(float(text)):
                raise QuerySyntaxError(
                    f"where={where!r}: the double literal {text}{suffix} is outside the range "
                    "of a double; Spark refuses it (INVALID_NUMERIC_LITERAL_RANGE)"
                )
            continue
        if suffix not in _DECIMAL_SUFFIXES or (not exponent and len(text) <= _MAX_DECIMAL_DIGITS):
            continue  # without an exponent, a text of at most 38 characters has <= 38 digits
        digits = decimal_precision(text)
        if digits > _MAX_DECIMAL_DIGITS:
            kind = "integer" if "." not in text and not suffix else "decimal"
            raise QuerySyntaxError(
                f"where={where!r}: the {kind} literal {text}{suffix} has {digits} digits; "
                f"Spark refuses literals beyond DECIMAL({_MAX_DECIMAL_DIGITS}) "
                "(DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION). Write it as a double (1e40)"
            )


def _numbers(tokens: list[Any]) -> Iterator[tuple[Any, str]]:
    """Each number token with its type suffix (uppercase; ``""`` for none): a name token
    written right after the digits, as Spark reads ``1D``, ``2bd`` or ``3L``."""
    for position, token in enumerate(tokens):
        if token.kind != "number":
            continue
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        if (
            following is not None
            and following.kind == "name"
            and not following.quote
            and following.position == token.position + len(token.text)
        ):
            yield token, str(following.text).upper()
        else:
            yield token, ""


def decimal_precision(text: str) -> int:
    """The precision Spark gives the DECIMAL literal ``text`` (Java's ``BigDecimal``
    precision, widened to hold its scale, or its zeros when the scale is negative)."""
    _, digits, exponent = Decimal(text).as_tuple()
    assert isinstance(exponent, int)
    precision, scale = len(digits), -exponent
    if precision < scale:
        return scale
    if scale < 0:
        return precision - scale
    return precision


def _condition_of(node: w.Node, types: Mapping[str, pa.DataType]) -> Condition | None:
    """The condition of one conjunct (None: it does not translate exactly)."""
    negated = isinstance(node, w.Not)
    target = node.child if isinstance(node, w.Not) else node
    if isinstance(target, w.Truth):  # a boolean column alone: = TRUE, under NOT: = FALSE
        column = _column(target.operand, types)
        if column is None or not ct.is_boolean(types[column.lower()]):
            return None
        return Condition("=", column, (not negated,))
    if isinstance(target, w.IsNull):
        column = _column(target.operand, types)
        if column is None:
            return None
        return Condition("notnull" if negated else "null", column)
    if isinstance(target, w.Like):
        return _like(target, negated, types)
    if isinstance(target, w.Regex):
        column = _column(target.operand, types)
        if negated or column is None or not ct.is_string(types[column.lower()]):
            return None
        return Condition("rlike", column, (target.pattern.value,))
    if isinstance(target, w.InList):
        column = _column(target.operand, types)
        if column is None or negated:
            return None
        values = _typed_literals(target.values, types[column.lower()])
        return None if values is None else Condition("in", column, values)
    if not isinstance(target, w.Compare):
        return None
    op, left, right = target.op, target.left, target.right
    if isinstance(left, w.Literal):  # 4 < x is x > 4
        op, left, right = _FLIPPED[op], right, left
    column = _column(left, types)
    if column is None or not isinstance(right, w.Literal):
        return None
    if op == "<>":
        op, negated = "=", not negated
    if negated and op != "=":
        return None
    value = _typed_literal(right, types[column.lower()])
    return None if value is None else Condition("!=" if negated else op, column, (value,))


_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _like(node: w.Like, negated: bool, types: Mapping[str, pa.DataType]) -> Condition | None:
    """``[NOT] LIKE``: a prefix for ``'text%'``, an equality for a pattern without
    wildcards, and under ``LIKE`` (not negated) a suffix, a substring or the whole
    pattern (:func:`_like_pattern`); on string columns only (Spark matches another
    type's value as its string: ``5 LIKE '05'`` and ``true LIKE 'TRUE'`` are false)."""
    column = _column(node.operand, types)
    if column is None or not ct.is_string(types[column.lower()]):
        return None
    found = like_prefix(node.pattern.value)
    if found is None:
        return None if negated else _like_pattern(node.pattern.value, column)
    text, wildcard = found
    if wildcard:
        return None if negated else Condition("prefix", column, (text,))
    value = _string_value(text)
    return None if value is None else Condition("!=" if negated else "=", column, (value,))


def _like_pattern(pattern: str, column: str) -> Condition | None:
    """A ``LIKE`` pattern other than an equality or a prefix: ``suffix`` for ``'%s'``,
    ``contains`` for ``'%m%'``, else ``like`` with the pattern itself (None: an escape
    Spark refuses, left to the where filter's error)."""
    pieces = like_pieces(pattern)
    if pieces is None:
        return None
    shape = like_shape(pieces)
    if shape is not None:
        return Condition(shape[0], column, (shape[1],))
    return Condition("like", column, (pattern,))


def _column(operand: w.Operand, types: Mapping[str, pa.DataType]) -> str | None:
    """The name of the top-level column ``operand`` names, as written (None: a literal, a
    name the schema lacks, or an unquoted dotted name, which Spark reads as a struct field)."""
    if not isinstance(operand, w.Column):
        return None
    if "." in operand.name and not operand.quoted:
        return None
    return operand.name if operand.name.lower() in types else None


_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_NUMERIC_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _typed_literal(literal: w.Literal, data_type: pa.DataType) -> Any:
    """``literal`` as the Python value Spark would compare with a ``data_type`` column, or
    None."""
    if literal.kind == "boolean":  # TRUE / FALSE: on a boolean column only
        text = "true" if literal.value else "false"
        if not ct.is_boolean(data_type):
            return None
    elif literal.kind == "date":  # DATE '...': on a date column only
        text = literal.value
        if not ct.is_date(data_type):
            return None
    elif literal.kind == "string":
        text = literal.value
    elif literal.kind in ("integer", "decimal", "double") and not ct.is_string(data_type):
        text = literal.text  # as written: a suffix (5L, 1.5D) is not taken below
    else:  # NULL, timestamps, a number on a string column
        return None
    try:
        if ct.is_string(data_type):
            return _string_value(text)
        if ct.is_integral(data_type):
            # Spark reads a literal beyond the long range as a DECIMAL and folds an order
            # comparison of an integer column with it into TRUE or FALSE, null rows
            # included (DecimalPrecision): such a conjunct must never prune.
            integer = int(text)
            return integer if ct.LONG_MIN <= integer <= ct.LONG_MAX else None
        if ct.is_floating(data_type):
            value = float(text)
            return value if math.isfinite(value) else None
        if ct.is_boolean(data_type):
            return {"true": True, "false": False}.get(text.lower())
        if ct.is_date(data_type):
            # Python also reads "20240101" and "2024-W01-1"; Spark's cast does not.
            return date.fromisoformat(text) if _ISO_DATE.fullmatch(text) else None
        if ct.is_decimal(data_type) and data_type.precision <= _EXACT_DECIMAL_DIGITS:
            # A decimal literal compares with a decimal column exactly (both widened); an
            # exponent makes a double, which Spark compares after a cast: not taken.
            return Decimal(text) if _DECIMAL_TEXT.fullmatch(text) else None
    except (ValueError, ArithmeticError):
        return None
    return None


def _typed_literals(
    literals: tuple[w.Literal, ...], data_type: pa.DataType
) -> tuple[Any, ...] | None:
    """Each of ``literals`` as :func:`_typed_literal` types it, or None when one is not
    taken; in one loop for an integral column (the common long IN list)."""
    if not ct.is_integral(data_type):
        values = tuple(_typed_literal(v, data_type) for v in literals)
        return None if any(v is None for v in values) else values
    out: list[Any] = []
    low, high = ct.LONG_MIN, ct.LONG_MAX
    for literal in literals:
        if literal.kind == "integer" and literal.text.isdigit():
            value = literal.value  # plain digits: int(text) as _typed_literal reads it
            if not low <= value <= high:
                return None
        else:
            value = _typed_literal(literal, data_type)
            if value is None:
                return None
        out.append(value)
    return tuple(out)


def _string_value(text: str) -> str | None:
    """``text`` compared with a string column (None: it looks numeric, and Spark may
    compare the column as a number)."""
    return None if _NUMERIC_TEXT.match(text) else text


_DECIMAL_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)")
# Beyond this precision a string or double operand compared as a double may round.
_EXACT_DECIMAL_DIGITS = 15
