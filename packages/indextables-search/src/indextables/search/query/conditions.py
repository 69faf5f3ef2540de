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

from indextables.search.schema import columntypes as ct

__all__ = [
    "COMPARISONS",
    "Condition",
    "decimal_precision",
    "translate_predicate",
]

COMPARISONS = ("=", "<", "<=", ">", ">=")


@dataclass(frozen=True, slots=True)
class Condition:
    """One translated filter on a top-level column.

    Attributes:
        op: one of ``=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``null``, ``notnull``,
            ``prefix``, ``suffix``, ``contains``, ``!=``.
        column: the (top-level) column name as Spark gave it.
        values: the operand values (one for comparisons, several for ``in``).
        path: for a field nested in a struct column, the field names below
            ``column`` (``s.a.b`` is column ``s``, path ``("a", "b")``); only
            ``=`` and ``in`` conditions have one. Empty for the column itself.
    """

    op: str
    column: str
    values: tuple[Any, ...] = ()
    path: tuple[str, ...] = ()


def translate_predicate(where: str, schema: pa.Schema) -> tuple[Condition, ...]:
    """Conditions for the AND-ed simple comparisons of a SQL ``where`` string.

    Literals are typed by the column's type, as Spark itself would
    compare them; a conjunct whose literal does not convert exactly, a
    timestamp (Spark reads those in the session time zone), a numeric-looking
    literal on a string column (Spark may compare it as a number), and
    anything the protocol's predicate grammar does not parse are left out.
    String literals are unescaped as Spark's SQL parser does
    (:func:`indextables.protocol.predicateparser.unescape_string`); a
    double-quoted text (a string to Spark, a name to the grammar) leaves the
    whole condition to Spark.
    Spark still applies the whole condition to the rows.
    """
    from indextables.protocol import predicates as p
    from indextables.protocol.errors import ProtocolError
    from indextables.protocol.predicateparser import tokenize

    try:
        tokens = tokenize(where)
    except ProtocolError:
        return ()
    _check_literal_precision(where, tokens)
    types = {f.name.lower(): f.type for f in schema}
    try:
        if any(token.quote == '"' for token in tokens):
            return ()  # Spark reads "..." as a string literal, the grammar as a column name
        roots = [p.parse_predicate(where)]
    except ProtocolError:
        # Some conjunct is beyond the grammar: translate the others (query.conjuncts).
        from indextables.search.query.conjuncts import split_where

        pieces = split_where(where, types)
        if pieces is None:
            return ()
        roots = [piece.node for piece in pieces if piece.node is not None]
    out: list[Condition] = []
    for root in roots:
        for part in _conjuncts(root):
            condition = _condition_of(part, types)
            if condition is not None:
                out.append(condition)
    return tuple(out)


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
        if suffix not in _DECIMAL_SUFFIXES:
            continue
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


def _conjuncts(node: Any) -> Iterator[Any]:
    from indextables.protocol import predicates as p

    if isinstance(node, p.And):
        yield from _conjuncts(node.left)
        yield from _conjuncts(node.right)
    else:
        yield node


def _condition_of(node: Any, types: Mapping[str, pa.DataType]) -> Condition | None:
    from indextables.protocol import predicates as p

    negated = isinstance(node, p.Not) and isinstance(node.child, p.EqualTo)
    target = node.child if negated else node
    column = getattr(target, "column", None)
    data_type = types.get(column.lower()) if isinstance(column, str) else None
    if column is None or data_type is None:
        return None
    if isinstance(target, p.IsNull | p.IsNotNull):
        return Condition("null" if isinstance(target, p.IsNull) else "notnull", column)
    if isinstance(target, p.StartsWith):
        is_string = ct.is_string(data_type)
        return Condition("prefix", column, (target.prefix,)) if is_string else None
    texts = target.values if isinstance(target, p.In) else (getattr(target, "value", None),)
    values = tuple(_typed_literal(t, data_type) for t in texts)
    if not values or any(v is None for v in values):
        return None
    if negated:
        return Condition("!=", column, values)
    op = "in" if isinstance(target, p.In) else _PREDICATE_OPS.get(type(target).__name__)
    return None if op is None else Condition(op, column, values)


_PREDICATE_OPS = {
    "EqualTo": "=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
}
_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_NUMERIC_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _typed_literal(text: Any, data_type: pa.DataType) -> Any:
    """``text`` as the Python value Spark would compare with a ``data_type`` column, or None."""
    if not isinstance(text, str):
        return None
    try:
        if ct.is_string(data_type):
            return None if _NUMERIC_TEXT.match(text) else text
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


_DECIMAL_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)")
# Beyond this precision a string or double operand compared as a double may round.
_EXACT_DECIMAL_DIGITS = 15
