"""Column-versus-column comparisons (``a < b``) over Arrow arrays, as Spark SQL compares.

Only pairs whose Spark semantics do not depend on settings or the session are
compared; every other pair is refused with the reason (:class:`PairRefused`):

- two integral columns (any widths): exactly, as longs (Spark widens the
  narrower one, which is exact);
- two integral or decimal columns with a decimal among them: exactly, when the
  decimal Spark widens both to has at most 38 digits (beyond, Spark rounds);
- two floating columns (``float`` widened to ``double``, exact): NaN equals NaN
  and is above every other value, ``-0.0 = 0.0``;
- two strings (by their UTF-8 bytes), two booleans (false < true), two dates,
  two ``timestamp`` columns (instants) or two ``timestamp_ntz`` columns (wall
  clock).

Refused: mixed families (an integer against a double: Spark rounds the
integer to a double; a ``timestamp`` against a ``timestamp_ntz`` or a date:
Spark converts in the session time zone), and binary or nested columns.
The result is null where either side is null.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.schema import columntypes as ct

__all__ = ["PairComparer", "PairRefused", "pair_comparer"]

PairComparer = Callable[[pa.Array, pa.Array, str], pa.Array]

_MAX_PRECISION: Final = 38
_INT_DIGITS: Final = {8: 3, 16: 5, 32: 10, 64: 20}  # Spark's DecimalType.forType
_OPS: Final = {
    "=": pc.equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


class PairRefused(Exception):
    """The two column types cannot be compared exactly without Spark (the message says why)."""


def pair_comparer(left: pa.DataType, right: pa.DataType) -> PairComparer:
    """How a ``left`` column compares with a ``right`` column (op: ``=``, ``<``, ...).

    Raises:
        PairRefused: types Spark compares with settings-dependent or rounding casts.
    """
    numeric = (ct.is_integral(left) or ct.is_decimal(left)) and (
        ct.is_integral(right) or ct.is_decimal(right)
    )
    if ct.is_integral(left) and ct.is_integral(right):
        return _as(pa.int64())
    if numeric:
        return _as(_common_decimal(left, right))
    if ct.is_floating(left) and ct.is_floating(right):
        return _floats
    if ct.is_string(left) and ct.is_string(right):
        return _as(pa.string())
    if ct.is_boolean(left) and ct.is_boolean(right):
        return _as(pa.int8())
    if ct.is_date(left) and ct.is_date(right):
        return _as(pa.int32())
    instants = ct.is_timestamp(left) and ct.is_timestamp(right)
    wall_clock = ct.is_timestamp_ntz(left) and ct.is_timestamp_ntz(right)
    if instants or wall_clock:
        if left.unit != right.unit:
            raise PairRefused(f"timestamps of different units ({left.unit}, {right.unit})")
        return _as(pa.int64())
    raise PairRefused(
        f"a {ct.type_name(left)} column against a {ct.type_name(right)} column: Spark casts one "
        "side (rounding, or in the session time zone), which this evaluator does not do; "
        "columns of one kind compare (integers and decimals, float/double, strings, booleans, "
        "dates, timestamps, timestamp_ntz)"
    )


def _common_decimal(left: pa.DataType, right: pa.DataType) -> pa.DataType:
    """The decimal Spark widens both sides to, when it holds every value exactly."""

    def shape(t: pa.DataType) -> tuple[int, int]:
        if ct.is_decimal(t):
            return t.precision - t.scale, t.scale
        return _INT_DIGITS[t.bit_width], 0

    (li, ls), (ri, rs) = shape(left), shape(right)
    digits, scale = max(li, ri), max(ls, rs)
    if digits + scale > _MAX_PRECISION:
        raise PairRefused(
            f"Spark compares {ct.type_name(left)} with {ct.type_name(right)} as "
            f"decimal({digits + scale},{scale}), beyond 38 digits, and rounds"
        )
    return pa.decimal128(digits + scale, scale)


def _as(common: pa.DataType) -> PairComparer:
    def compare(a: pa.Array, b: pa.Array, op: str) -> pa.Array:
        return _OPS[op](_cast(a, common), _cast(b, common))

    return compare


def _cast(values: pa.Array, to: pa.DataType) -> pa.Array:
    if values.type == to:
        return values
    if pa.types.is_timestamp(values.type) or pa.types.is_date(values.type):
        return values.view(to) if values.type.bit_width == to.bit_width else pc.cast(values, to)
    return pc.cast(values, to)  # widening only: exact (safe casts)


def _floats(a: pa.Array, b: pa.Array, op: str) -> pa.Array:
    a, b = _cast(a, pa.float64()), _cast(b, pa.float64())
    if op == "=":
        return pc.or_(pc.equal(a, b), pc.and_(pc.is_nan(a), pc.is_nan(b)))
    if op == "<":
        return _below(a, b)
    if op == ">":
        return _below(b, a)
    if op == "<=":
        return pc.invert(_below(b, a))
    return pc.invert(_below(a, b))


def _below(a: pa.Array, b: pa.Array) -> pa.Array:
    """``a < b`` with NaN above every number (null where either is null)."""
    # A NaN is below nothing; a number is below a NaN.
    below = pc.if_else(pc.is_nan(a), False, pc.if_else(pc.is_nan(b), True, pc.less(a, b)))
    both = pc.and_(pc.is_valid(a), pc.is_valid(b))
    return pc.if_else(both, below, pa.scalar(None, pa.bool_()))
