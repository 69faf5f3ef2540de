"""Column-versus-literal comparisons over Arrow arrays, exactly as Spark SQL compares.

Each function takes a column (an Arrow array), an operator (``=``, ``<``, ``<=``,
``>``, ``>=``) and a literal already converted to the comparison's domain, and
returns a nullable boolean array (null where the column is null). ``<>`` is the
negation of ``=`` (the caller builds it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Context, Decimal
from fractions import Fraction
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.schema import columntypes as ct

__all__ = [
    "compare_decimal",
    "compare_floats",
    "compare_integers",
    "compare_ordered",
    "constant",
    "decimal_as_double",
    "decimal_key",
]

# Decimal arithmetic wide enough for every decimal(38, s) value, exactly.
_WIDE: Final = Context(prec=80)
_ARROW_OPS: Final = {
    "=": pc.equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


def constant(column: pa.Array, value: bool | None) -> pa.Array:
    """``value`` on every row where ``column`` is not null, null elsewhere."""
    if value is None:
        return pa.nulls(len(column), pa.bool_())
    valid = pc.is_valid(column)
    return pc.if_else(valid, pa.scalar(value), pa.scalar(None, pa.bool_()))


def compare_ordered(column: pa.Array, op: str, literal: Any) -> pa.Array:
    """``column op literal`` by Arrow's own order (strings by UTF-8 bytes, integers, dates)."""
    return _ARROW_OPS[op](column, literal)


def compare_integers(column: pa.Array, op: str, literal: Fraction) -> pa.Array:
    """An integer column against an exact rational (Spark widens both to a decimal)."""
    values = column if column.type == pa.int64() else pc.cast(column, pa.int64())
    if op == "=":
        if literal.denominator != 1:
            return constant(values, False)
        n = int(literal)
        if not ct.LONG_MIN <= n <= ct.LONG_MAX:
            return constant(values, False)
        return pc.equal(values, pa.scalar(n, pa.int64()))
    return _at_most(
        values,
        op,
        literal,
        low=ct.LONG_MIN,
        high=ct.LONG_MAX,
        bound=lambda t: pa.scalar(t, pa.int64()),
    )


def compare_floats(column: pa.Array, op: str, literal: float) -> pa.Array:
    """A double column (floats already widened) against a non-NaN double.

    Spark's order: ``-0.0 = 0.0``, NaN equals only NaN (the literal is never NaN)
    and is above every other value, ``+inf`` included.
    """
    values = column if column.type == pa.float64() else pc.cast(column, pa.float64())
    result = _ARROW_OPS[op](values, pa.scalar(literal, pa.float64()))
    if op in (">", ">="):
        result = pc.or_(result, pc.is_nan(values))
    return result


def compare_decimal(column: pa.Array, op: str, literal: Fraction) -> pa.Array:
    """A decimal column against an exact rational, exactly and column at a time.

    A ``decimal(p, s)`` value is an integer ``u`` (``|u| < 10**p``) over ``10**s``:
    ``value op literal`` is ``u op literal * 10**s``, an integer comparison with a
    threshold that is either outside the column's range (a constant) or a
    decimal of the column's own type.
    """
    t = column.type
    scaled = literal * 10**t.scale
    top = 10**t.precision - 1

    def as_value(unscaled: int) -> pa.Scalar:
        return pa.scalar(_scaled_down(unscaled, t.scale), t)

    if op == "=":
        key = decimal_key(t, literal)
        return constant(column, False) if key is None else pc.equal(column, pa.scalar(key, t))
    return _at_most(column, op, scaled, low=-top, high=top, bound=as_value)


def decimal_key(data_type: pa.DataType, literal: Fraction) -> Decimal | None:
    """The value of the decimal type ``data_type`` equal to ``literal``, or None (no value
    of the type is)."""
    scaled = literal * 10**data_type.scale
    top = 10**data_type.precision - 1
    if scaled.denominator != 1 or not -top <= scaled <= top:
        return None
    return _scaled_down(int(scaled), data_type.scale)


def _scaled_down(unscaled: int, scale: int) -> Decimal:
    # Exact at 38 digits (scaleb in the default context rounds to 28 digits).
    return Decimal(unscaled).scaleb(-scale, context=_WIDE)


def _at_most(
    column: pa.Array,
    op: str,
    literal: Fraction,
    *,
    low: int,
    high: int,
    bound: Callable[[int], pa.Scalar],
) -> pa.Array:
    """An integer-valued column (values in ``[low, high]``) against a rational, by ``op``.

    Every such comparison is ``x <= threshold`` or its negation; a threshold at
    or past an end of the range is a constant answer.
    """
    floor, ceil = math.floor(literal), math.ceil(literal)
    threshold, negate = {
        "<": (ceil - 1, False),
        "<=": (floor, False),
        ">": (floor, True),
        ">=": (ceil - 1, True),
    }[op]
    if threshold >= high:
        result = constant(column, True)
    elif threshold < low:
        result = constant(column, False)
    else:
        result = pc.less_equal(column, bound(threshold))
    return pc.invert(result) if negate else result


def decimal_as_double(column: pa.Array) -> pa.Array:
    """A decimal column of at most 15 digits as doubles, rounded as Spark's cast rounds.

    Spark divides the unscaled long by ``10**scale`` in doubles; both are exact
    doubles here (at most 15 digits, scale at most 15), and IEEE division rounds
    the true quotient correctly, as the same division does here.
    """
    t = column.type
    if t.precision > 15:
        raise ValueError(f"decimal_as_double takes at most 15 digits, not {t.precision}")
    factor = pa.scalar(Decimal(10**t.scale), pa.decimal128(t.scale + 1, 0))
    unscaled = pc.cast(pc.multiply(column, factor), pa.int64())
    return pc.divide(pc.cast(unscaled, pa.float64()), pa.scalar(float(10**t.scale)))
