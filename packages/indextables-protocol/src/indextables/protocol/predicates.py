"""Partition predicates: a small expression model, a parser, and pruning.

Values are strings, as the log stores partition values, and compare
numerically when both sides parse as integers, then as doubles, else as
strings (:func:`compare_values`). Exact evaluation (:meth:`Predicate.matches`)
uses SQL's three-valued logic: a comparison with a null (absent or empty)
value is unknown, and unknown rows do not match. Pruning
(:meth:`Predicate.may_match`) answers ``False`` only when a manifest's
partition bounds prove that no entry can match.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from indextables.protocol.predicateparser import parse_tokens, tokenize
from indextables.protocol.state import PartitionBounds

__all__ = [
    "And",
    "EqualTo",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNotNull",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "MatchNothing",
    "Not",
    "NumberCompare",
    "Or",
    "Predicate",
    "StartsWith",
    "as_number",
    "compare_values",
    "parse_predicate",
]

Values = Mapping[str, str | None]
Bounds = Mapping[str, PartitionBounds] | None
_PREFIX_END: Final = "\uffff"


def as_number(text: str) -> int | float | None:
    """The number ``compare_values`` sees in ``text`` (int, else non-NaN float), or ``None``."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return None if math.isnan(number) else number


def compare_values(a: str, b: str) -> int:
    """Compare two values: as integers, else as doubles, else as strings.

    Returns:
        -1, 0 or 1.
    """
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return (x > y) - (x < y)
    return (a > b) - (a < b)


class Predicate:
    """Base of every predicate node (frozen, slotted dataclasses)."""

    __slots__ = ()

    def columns(self) -> frozenset[str]:
        """The partition columns this predicate reads."""
        raise NotImplementedError

    def evaluate(self, values: Values) -> bool | None:
        """Three-valued evaluation on one entry's partition values (None: unknown)."""
        raise NotImplementedError

    def matches(self, values: Values) -> bool:
        """Whether an entry with these partition values satisfies the predicate."""
        return self.evaluate(values) is True

    def may_match(self, bounds: Bounds) -> bool:
        """``False`` only when ``bounds`` prove that no entry can match."""
        return True


@dataclass(frozen=True, slots=True)
class MatchNothing(Predicate):
    """Matches no entry and prunes every manifest: a snapshot's metadata alone."""

    def columns(self) -> frozenset[str]:
        return frozenset()

    def evaluate(self, values: Values) -> bool | None:
        return False

    def may_match(self, bounds: Bounds) -> bool:
        return False


def _value(values: Values, column: str) -> str | None:
    value = values.get(column)
    return value if value else None  # empty partition values are nulls


def _bounds(bounds: Bounds, column: str) -> tuple[str, str] | None:
    if bounds is None or column not in bounds:
        return None
    b = bounds[column]
    if b.min is None or b.max is None:
        return None
    return b.min, b.max


@dataclass(frozen=True, slots=True)
class _Comparison(Predicate):
    column: str
    value: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        actual = _value(values, self.column)
        if actual is None:
            return None
        return self._holds(compare_values(actual, self.value))

    def _holds(self, order: int) -> bool:
        raise NotImplementedError

    def may_match(self, bounds: Bounds) -> bool:
        found = _bounds(bounds, self.column)
        if found is None:
            return True
        low, high = found
        return self._overlaps(compare_values(low, self.value), compare_values(high, self.value))

    def _overlaps(self, low_order: int, high_order: int) -> bool:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class EqualTo(_Comparison):
    """``column = value``."""

    def _holds(self, order: int) -> bool:
        return order == 0

    def _overlaps(self, low_order: int, high_order: int) -> bool:
        return low_order <= 0 <= high_order


@dataclass(frozen=True, slots=True)
class LessThan(_Comparison):
    """``column < value``."""

    def _holds(self, order: int) -> bool:
        return order < 0

    def _overlaps(self, low_order: int, high_order: int) -> bool:
        return low_order < 0


@dataclass(frozen=True, slots=True)
class LessThanOrEqual(_Comparison):
    """``column <= value``."""

    def _holds(self, order: int) -> bool:
        return order <= 0

    def _overlaps(self, low_order: int, high_order: int) -> bool:
        return low_order <= 0


@dataclass(frozen=True, slots=True)
class GreaterThan(_Comparison):
    """``column > value``."""

    def _holds(self, order: int) -> bool:
        return order > 0

    def _overlaps(self, low_order: int, high_order: int) -> bool:
        return high_order > 0


@dataclass(frozen=True, slots=True)
class GreaterThanOrEqual(_Comparison):
    """``column >= value``."""

    def _holds(self, order: int) -> bool:
        return order >= 0

    def _overlaps(self, low_order: int, high_order: int) -> bool:
        return high_order >= 0


@dataclass(frozen=True, slots=True)
class In(Predicate):
    """``column IN (v1, v2, ...)``."""

    column: str
    values: tuple[str, ...]

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        actual = _value(values, self.column)
        if actual is None:
            return None
        return any(compare_values(actual, v) == 0 for v in self.values)

    def may_match(self, bounds: Bounds) -> bool:
        return any(EqualTo(self.column, v).may_match(bounds) for v in self.values)


@dataclass(frozen=True, slots=True)
class IsNull(Predicate):
    """``column IS NULL`` (absent or empty partition value). Never prunes."""

    column: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        return _value(values, self.column) is None


@dataclass(frozen=True, slots=True)
class IsNotNull(Predicate):
    """``column IS NOT NULL``. Never prunes."""

    column: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        return _value(values, self.column) is not None


@dataclass(frozen=True, slots=True)
class StartsWith(Predicate):
    """``column LIKE 'prefix%'`` (string comparison)."""

    column: str
    prefix: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        actual = _value(values, self.column)
        return None if actual is None else actual.startswith(self.prefix)

    def may_match(self, bounds: Bounds) -> bool:
        found = _bounds(bounds, self.column)
        if found is None:
            return True
        low, high = found
        return not (high < self.prefix or low > self.prefix + _PREFIX_END)


@dataclass(frozen=True, slots=True)
class And(Predicate):
    """``left AND right``."""

    left: Predicate
    right: Predicate

    def columns(self) -> frozenset[str]:
        return self.left.columns() | self.right.columns()

    def evaluate(self, values: Values) -> bool | None:
        a, b = self.left.evaluate(values), self.right.evaluate(values)
        if a is False or b is False:
            return False
        return None if a is None or b is None else True

    def may_match(self, bounds: Bounds) -> bool:
        return self.left.may_match(bounds) and self.right.may_match(bounds)


@dataclass(frozen=True, slots=True)
class Or(Predicate):
    """``left OR right``."""

    left: Predicate
    right: Predicate

    def columns(self) -> frozenset[str]:
        return self.left.columns() | self.right.columns()

    def evaluate(self, values: Values) -> bool | None:
        a, b = self.left.evaluate(values), self.right.evaluate(values)
        if a is True or b is True:
            return True
        return None if a is None or b is None else False

    def may_match(self, bounds: Bounds) -> bool:
        return self.left.may_match(bounds) or self.right.may_match(bounds)


@dataclass(frozen=True, slots=True)
class Not(Predicate):
    """``NOT child``. Prunes only ``NOT column = v`` when min == max == v."""

    child: Predicate

    def columns(self) -> frozenset[str]:
        return self.child.columns()

    def evaluate(self, values: Values) -> bool | None:
        result = self.child.evaluate(values)
        return None if result is None else not result

    def may_match(self, bounds: Bounds) -> bool:
        if not isinstance(self.child, EqualTo):
            return True
        found = _bounds(bounds, self.child.column)
        if found is None:
            return True
        low, high = found
        v = self.child.value
        return not (compare_values(low, v) == 0 and compare_values(high, v) == 0)


_NUMBER_OPS: Final[dict[str, Callable[[float, float], bool]]] = {
    "=": lambda a, b: a == b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _number_or_none(text: str | None) -> int | float | None:
    return None if text is None else as_number(text)


# Every integer below this magnitude is exactly a double: parsing its text
# with ``float`` loses nothing, and int/float comparisons in Python are exact.
_EXACT_DOUBLE_INTEGERS: Final = 2.0**53


def _numbers(texts: Sequence[str | None]) -> list[int | float | None]:
    """``texts`` read as :func:`as_number` does, at C speed where that is exact."""
    try:
        return list(map(int, texts))  # type: ignore[arg-type]  # all integers: exact
    except (TypeError, ValueError):
        pass
    try:
        floats = list(map(float, texts))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return [_number_or_none(t) for t in texts]
    # NaN is not a number to as_number; a large integer text would lose digits.
    if all(abs(f) < _EXACT_DOUBLE_INTEGERS or math.isinf(f) for f in floats):
        return floats  # type: ignore[return-value]
    return [_number_or_none(t) for t in texts]


@dataclass(frozen=True, slots=True)
class NumberCompare(Predicate):
    """``column op v`` for any ``v`` in ``values``, both sides read as numbers.

    Meant for min/max statistics of numeric columns (a stats filter, see
    :mod:`indextables.protocol.statsfilter`). Unlike the string-valued
    comparisons above, a value is read as :func:`as_number` reads it (an
    integer exactly, else a double; integers beyond 2**53 keep every digit)
    and a value that is not a number (NaN included) is *unknown*: it never
    prunes (the string-valued nodes would compare it as a string). Pruning
    needs both bounds.

    Attributes:
        column: the column.
        op: one of ``=``, ``<``, ``<=``, ``>``, ``>=``.
        values: the numbers compared with (int or float; ``=`` with several
            values is ``IN``).
    """

    column: str
    op: str
    values: tuple[int | float, ...]

    def __post_init__(self) -> None:
        if self.op not in _NUMBER_OPS:
            raise ValueError(f"NumberCompare: unknown operator {self.op!r} on {self.column!r}")

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        actual = _number_or_none(_value(values, self.column))
        if actual is None:
            return None
        holds = _NUMBER_OPS[self.op]
        return any(holds(actual, v) for v in self.values)

    def may_match(self, bounds: Bounds) -> bool:
        found = bounds.get(self.column) if bounds is not None else None
        if found is None:
            return True
        return self.bounds_may_match(found.min, found.max)

    def bounds_may_match(self, low: str | None, high: str | None) -> bool:
        """``False`` only when ``low``/``high`` (both numbers) prove no value can match."""
        lo, hi = _number_or_none(low), _number_or_none(high)
        if lo is None or hi is None or self._compares_nan():
            return True
        return self._overlaps_numbers(lo, hi)

    def may_match_columns(self, lows: Sequence[str | None], highs: Sequence[str | None]) -> bytes:
        """Per entry, 1 where :meth:`bounds_may_match` holds, for whole statistic columns."""
        if self._compares_nan():
            return b"\x01" * len(lows)
        pairs = list(zip(_numbers(lows), _numbers(highs), strict=True))
        # One pass per value (IN lists are short), comparisons inline: no call per entry.
        found = 0
        for v in self.values:
            if self.op == "=":
                hits = [lo is None or hi is None or lo <= v <= hi for lo, hi in pairs]
            elif self.op == "<":
                hits = [lo is None or hi is None or lo < v for lo, hi in pairs]
            elif self.op == "<=":
                hits = [lo is None or hi is None or lo <= v for lo, hi in pairs]
            elif self.op == ">":
                hits = [lo is None or hi is None or hi > v for lo, hi in pairs]
            else:
                hits = [lo is None or hi is None or hi >= v for lo, hi in pairs]
            found |= int.from_bytes(bytes(hits), "little")
        return found.to_bytes(len(pairs), "little")

    def _compares_nan(self) -> bool:
        # Spark orders NaN above every number and NaN = NaN holds, while Python
        # compares NaN false: min/max statistics (which leave NaN out) prove nothing.
        return any(isinstance(v, float) and math.isnan(v) for v in self.values)

    def _overlaps_numbers(self, lo: float, hi: float) -> bool:
        op = self.op
        if op == "=":
            return any(lo <= v <= hi for v in self.values)
        holds = _NUMBER_OPS[op]
        # < and <= need a low enough minimum, > and >= a high enough maximum.
        bound = lo if op in ("<", "<=") else hi
        return any(holds(bound, v) for v in self.values)


_COMPARISONS: Final[dict[str, type[_Comparison]]] = {
    "=": EqualTo,
    "==": EqualTo,
    "<": LessThan,
    "<=": LessThanOrEqual,
    ">": GreaterThan,
    ">=": GreaterThanOrEqual,
}


def parse_predicate(text: str) -> Predicate:
    """Parse a simple SQL-like filter on partition columns.

    Supports ``=``, ``==``, ``!=``/``<>``, ``<``, ``<=``, ``>``, ``>=``,
    ``[NOT] IN (...)``, ``IS [NOT] NULL``, ``LIKE 'prefix%'``,
    ``BETWEEN a AND b``, ``AND``, ``OR``, ``NOT`` and parentheses. Literals
    are quoted strings (``'it''s'``) or bare numbers; columns are bare or
    back-quoted/double-quoted names.

    Example:
        >>> p = parse_predicate("date = '2024-01-01' AND region IN ('us','eu')")
        >>> p.matches({"date": "2024-01-01", "region": "eu"})
        True

    Raises:
        InvalidPredicateError: the text does not parse.
    """
    builders: dict[str, Callable[..., Any]] = {
        "cmp": lambda op, col, val: _COMPARISONS[op](col, val),
        "ne": lambda col, val: Not(EqualTo(col, val)),
        "in": lambda col, vals: In(col, tuple(vals)),
        "isnull": IsNull,
        "isnotnull": IsNotNull,
        "startswith": StartsWith,
        "and": And,
        "or": Or,
        "not": Not,
    }
    result: Predicate = parse_tokens(tokenize(text), text, builders)
    return result
