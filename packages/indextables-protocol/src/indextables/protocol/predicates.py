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
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

from indextables.protocol.predicateparser import parse_tokens, tokenize
from indextables.protocol.state import PartitionBounds

__all__ = [
    "And",
    "Comparison",
    "DateCompare",
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
    "iso_epoch_day",
    "parse_predicate",
    "prefix_successor",
]

Values = Mapping[str, str | None]
Bounds = Mapping[str, PartitionBounds] | None


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


def _one_sided(bounds: Bounds, column: str) -> tuple[str | None, str | None]:
    """``column``'s min and max; either may be None (it then bounds nothing)."""
    if bounds is None or column not in bounds:
        return None, None
    b = bounds[column]
    return b.min, b.max


def _bounds(bounds: Bounds, column: str) -> tuple[str, str] | None:
    if bounds is None or column not in bounds:
        return None
    b = bounds[column]
    if b.min is None or b.max is None:
        return None
    return b.min, b.max


@dataclass(frozen=True, slots=True)
class Comparison(Predicate):
    """``column op value`` on string values (base of ``EqualTo`` ... ``GreaterThanOrEqual``).

    Values compare as :func:`compare_values` orders them. Two public hooks
    carry the operator's semantics, so evaluators that compute orders in
    their own way (avrostate's column-wise statistics) need no copy of it:
    :meth:`holds` (a value's order against the literal) and :meth:`overlaps`
    (the orders of a min and a max against the literal).

    Attributes:
        column: the column.
        value: the literal.
    """

    column: str
    value: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        actual = _value(values, self.column)
        if actual is None:
            return None
        return self.holds(compare_values(actual, self.value))

    def holds(self, order: int) -> bool:
        """Whether a value whose order against :attr:`value` is ``order`` (-1/0/1) matches."""
        raise NotImplementedError

    def may_match(self, bounds: Bounds) -> bool:
        low, high = _one_sided(bounds, self.column)
        return self.overlaps(
            None if low is None else compare_values(low, self.value),
            None if high is None else compare_values(high, self.value),
        )

    def overlaps(self, low_order: int | None, high_order: int | None) -> bool:
        """Whether values between a min and a max that order so against :attr:`value` may match.

        An order is -1, 0 or 1; None where that bound is missing (it bounds
        nothing on its side).
        """
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class EqualTo(Comparison):
    """``column = value``."""

    def holds(self, order: int) -> bool:
        return order == 0

    def overlaps(self, low_order: int | None, high_order: int | None) -> bool:
        return (low_order is None or low_order <= 0) and (high_order is None or high_order >= 0)


@dataclass(frozen=True, slots=True)
class LessThan(Comparison):
    """``column < value``."""

    def holds(self, order: int) -> bool:
        return order < 0

    def overlaps(self, low_order: int | None, high_order: int | None) -> bool:
        return low_order is None or low_order < 0


@dataclass(frozen=True, slots=True)
class LessThanOrEqual(Comparison):
    """``column <= value``."""

    def holds(self, order: int) -> bool:
        return order <= 0

    def overlaps(self, low_order: int | None, high_order: int | None) -> bool:
        return low_order is None or low_order <= 0


@dataclass(frozen=True, slots=True)
class GreaterThan(Comparison):
    """``column > value``."""

    def holds(self, order: int) -> bool:
        return order > 0

    def overlaps(self, low_order: int | None, high_order: int | None) -> bool:
        return high_order is None or high_order > 0


@dataclass(frozen=True, slots=True)
class GreaterThanOrEqual(Comparison):
    """``column >= value``."""

    def holds(self, order: int) -> bool:
        return order >= 0

    def overlaps(self, low_order: int | None, high_order: int | None) -> bool:
        return high_order is None or high_order >= 0


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
        low, high = _one_sided(bounds, self.column)
        upper = self.upper
        return self.orders_may_match(
            None if high is None else _plain_order(high, self.prefix),
            None if upper is None or low is None else _plain_order(low, upper),
        )

    @property
    def upper(self) -> str | None:
        """The least string above every string that starts with :attr:`prefix`, or None.

        See :func:`prefix_successor`.
        """
        return prefix_successor(self.prefix)

    @staticmethod
    def orders_may_match(high_vs_prefix: int | None, low_vs_upper: int | None) -> bool:
        """The pruning rule on plain string orders (-1/0/1; None: no usable bound).

        ``high_vs_prefix`` orders the max against the prefix, ``low_vs_upper``
        the min against :attr:`upper`: no value starts with the prefix when
        the max is below the prefix or the min is at or above the upper bound.
        """
        if high_vs_prefix is not None and high_vs_prefix < 0:
            return False
        return not (low_vs_upper is not None and low_vs_upper >= 0)


def _plain_order(a: str, b: str) -> int:
    return (a > b) - (a < b)


def prefix_successor(prefix: str) -> str | None:
    """The least string greater than every string that starts with ``prefix``, or None.

    Strings compare in code-point order (UTF-8 byte order, Spark's binary
    collation). The last character below U+10FFFF is raised by one (over the
    surrogate block) and what follows it dropped; a prefix that is empty or
    only U+10FFFF characters has no such string.
    """
    text = prefix.rstrip("\U0010ffff")
    if not text:
        return None
    last = ord(text[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:
        last = 0xE000
    return text[:-1] + chr(last)


@dataclass(frozen=True, slots=True, init=False)
class And(Predicate):
    """``parts[0] AND parts[1] AND ...``: ``And(a, b, c)``.

    A chain is one node of all its parts (an ``And`` among the parts is
    merged in), so a long chain is evaluated in a loop, never by recursion
    on its length. :attr:`left` and :attr:`right` read it as a binary node.
    """

    parts: tuple[Predicate, ...]

    def __init__(self, *parts: Predicate) -> None:
        object.__setattr__(self, "parts", _merged(And, parts))

    @property
    def left(self) -> Predicate:
        """The first part."""
        return self.parts[0]

    @property
    def right(self) -> Predicate:
        """The other parts: the second, or an ``And`` of the rest."""
        return self.parts[1] if len(self.parts) == 2 else And(*self.parts[1:])

    def columns(self) -> frozenset[str]:
        return frozenset().union(*(part.columns() for part in self.parts))

    def evaluate(self, values: Values) -> bool | None:
        unknown = False
        for part in self.parts:
            result = part.evaluate(values)
            if result is False:
                return False
            unknown = unknown or result is None
        return None if unknown else True

    def may_match(self, bounds: Bounds) -> bool:
        # A loop, not all(): one frame a nesting level.
        for part in self.parts:  # noqa: SIM110
            if not part.may_match(bounds):
                return False
        return True


@dataclass(frozen=True, slots=True, init=False)
class Or(Predicate):
    """``parts[0] OR parts[1] OR ...``: ``Or(a, b, c)`` (one node, as :class:`And`)."""

    parts: tuple[Predicate, ...]

    def __init__(self, *parts: Predicate) -> None:
        object.__setattr__(self, "parts", _merged(Or, parts))

    @property
    def left(self) -> Predicate:
        """The first part."""
        return self.parts[0]

    @property
    def right(self) -> Predicate:
        """The other parts: the second, or an ``Or`` of the rest."""
        return self.parts[1] if len(self.parts) == 2 else Or(*self.parts[1:])

    def columns(self) -> frozenset[str]:
        return frozenset().union(*(part.columns() for part in self.parts))

    def evaluate(self, values: Values) -> bool | None:
        unknown = False
        for part in self.parts:
            result = part.evaluate(values)
            if result is True:
                return True
            unknown = unknown or result is None
        return None if unknown else False

    def may_match(self, bounds: Bounds) -> bool:
        for part in self.parts:  # noqa: SIM110  (one frame a nesting level)
            if part.may_match(bounds):
                return True
        return False


def _merged(kind: type[Predicate], parts: tuple[Predicate, ...]) -> tuple[Predicate, ...]:
    """``parts`` with the parts of each ``kind`` node among them in its place."""
    if not parts:
        raise ValueError(f"{kind.__name__} needs at least one part")
    if not any(isinstance(part, kind) for part in parts):
        return parts
    merged: list[Predicate] = []
    for part in parts:
        if isinstance(part, kind):
            merged.extend(part.parts)  # type: ignore[attr-defined]
        else:
            merged.append(part)
    return tuple(merged)


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


def _not_numeric(text: str | None, number: int | float | None) -> bool:
    """A statistic present but neither a number nor NaN."""
    if text is None or number is not None:
        return False
    try:
        return not math.isnan(float(text))
    except ValueError:
        return True


def _single(value: int | float | None) -> int | float | None:
    """``value`` rounded to the nearest 32-bit float (None, NaN and overflow: unknown)."""
    if value is None:
        return None
    try:
        rounded: float = struct.unpack("<f", struct.pack("<f", float(value)))[0]
    except OverflowError:
        return None  # beyond the largest float32: a writer's text we do not understand
    return None if math.isnan(rounded) else rounded


@dataclass(frozen=True, slots=True)
class NumberCompare(Predicate):
    """``column op v`` for any ``v`` in ``values``, both sides read as numbers.

    The min/max pruning rule for numeric columns (a stats filter, see
    :mod:`indextables.protocol.statsfilter`), with Spark's semantics
    (docs/pyspark.md, "Comparison semantics"). A statistic is read as
    :func:`as_number` reads it (an integer exactly, else a double; integers
    beyond 2**53 keep every digit; ``-0.0`` equals ``0.0``). A statistic that
    is absent or NaN bounds nothing on its side; ``<``/``<=`` need the min,
    ``>``/``>=`` the max, ``=`` either. A statistic that is no number at all
    (not a numeric column's) makes the entry never prune. A NaN operand
    never prunes (Spark: NaN = NaN, NaN above every number).

    Attributes:
        column: the column.
        op: one of ``=``, ``<``, ``<=``, ``>``, ``>=``.
        values: the numbers compared with (int or float; ``=`` with several
            values is ``IN``).
        floating: a float/double column. Writers may leave NaN out of a max
            (pyarrow's min_max does), while Spark puts NaN above every
            number: the max never prunes ``>``/``>=``. The min stays a lower
            bound (NaN matches no ``<``, ``<=`` or ``=`` of a number).
        single: a 32-bit float column. Writers may record a float's shortest
            text ("0.1"), which read as a double differs from the float
            Spark compares (0.100000001...): statistics are rounded to the
            nearest 32-bit float first. Implies ``floating``.
    """

    column: str
    op: str
    values: tuple[int | float, ...]
    floating: bool = field(default=False, kw_only=True)
    single: bool = field(default=False, kw_only=True)

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
        """``False`` only when ``low``/``high`` prove that no value can match."""
        lo, hi = _number_or_none(low), _number_or_none(high)
        if _not_numeric(low, lo) or _not_numeric(high, hi):
            return True
        return self.numbers_may_match(lo, hi)

    def numbers_may_match(self, low: int | float | None, high: int | float | None) -> bool:
        """:meth:`bounds_may_match` on bounds already read as numbers (None: unknown)."""
        if self._compares_nan():
            return True
        if self.single:
            low, high = _single(low), _single(high)
        if (self.floating or self.single) and self.op in (">", ">="):
            return True
        op = self.op
        if op == "=":
            return any(
                (low is None or low <= v) and (high is None or v <= high) for v in self.values
            )
        if op in ("<", "<="):
            if low is None:
                return True
            holds = _NUMBER_OPS[op]
            return any(holds(low, v) for v in self.values)
        if high is None:
            return True
        holds = _NUMBER_OPS[op]
        return any(holds(high, v) for v in self.values)

    def may_match_columns(self, lows: Sequence[str | None], highs: Sequence[str | None]) -> bytes:
        """Per entry, 1 where :meth:`bounds_may_match` holds, for whole statistic columns."""
        if self._compares_nan() or ((self.floating or self.single) and self.op in (">", ">=")):
            return b"\x01" * len(lows)
        low_numbers, high_numbers = _numbers(lows), _numbers(highs)
        # Statistics that are no numbers at all: those entries never prune.
        odd = 0
        for texts, numbers in ((lows, low_numbers), (highs, high_numbers)):
            if None in numbers:
                flags = [_not_numeric(t, n) for t, n in zip(texts, numbers, strict=True)]
                odd |= int.from_bytes(bytes(flags), "little")
        pairs: list[tuple[int | float | None, int | float | None]] = list(
            zip(low_numbers, high_numbers, strict=True)
        )
        if self.single:
            pairs = [(_single(lo), _single(hi)) for lo, hi in pairs]
        # One pass per value (IN lists are short), comparisons inline: no call per entry.
        found = 0
        for v in self.values:
            if self.op == "=":
                hits = [(lo is None or lo <= v) and (hi is None or v <= hi) for lo, hi in pairs]
            elif self.op == "<":
                hits = [lo is None or lo < v for lo, _ in pairs]
            elif self.op == "<=":
                hits = [lo is None or lo <= v for lo, _ in pairs]
            elif self.op == ">":
                hits = [hi is None or hi > v for _, hi in pairs]
            else:
                hits = [hi is None or hi >= v for _, hi in pairs]
            found |= int.from_bytes(bytes(hits), "little")
        return (found | odd).to_bytes(len(pairs), "little")

    def _compares_nan(self) -> bool:
        # Spark orders NaN above every number and NaN = NaN holds, while Python
        # compares NaN false: leave such comparisons to the rows.
        return any(isinstance(v, float) and math.isnan(v) for v in self.values)


_ISO_DATE: Final = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()


def iso_epoch_day(text: str) -> int | None:
    """The epoch day of an ISO-8601 date ``YYYY-MM-DD`` (years 1-9999), or ``None``."""
    found = _ISO_DATE.fullmatch(text)
    if found is None:
        return None
    try:
        day = date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        return None
    return day.toordinal() - _EPOCH_ORDINAL


@dataclass(frozen=True, slots=True)
class DateCompare(Predicate):
    """``column op d`` for any epoch day ``d`` in ``values``, statistics read as ISO dates.

    The min/max pruning rule for Spark ``date`` columns, whose statistics the
    writers record as ``YYYY-MM-DD`` (the reference's calculator does, and so
    does ours). A statistic in any other form (epoch days, a timestamp, a
    year beyond 9999) makes the entry never prune; an absent one bounds
    nothing on its side. Otherwise the rule is :class:`NumberCompare`'s on
    epoch days.

    Attributes:
        column: the column.
        op: one of ``=``, ``<``, ``<=``, ``>``, ``>=``.
        values: epoch days compared with (``=`` with several values is ``IN``).
    """

    column: str
    op: str
    values: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.op not in _NUMBER_OPS:
            raise ValueError(f"DateCompare: unknown operator {self.op!r} on {self.column!r}")

    def columns(self) -> frozenset[str]:
        return frozenset({self.column})

    def evaluate(self, values: Values) -> bool | None:
        text = _value(values, self.column)
        actual = None if text is None else iso_epoch_day(text)
        if actual is None:
            return None
        holds = _NUMBER_OPS[self.op]
        return any(holds(actual, v) for v in self.values)

    def may_match(self, bounds: Bounds) -> bool:
        found = bounds.get(self.column) if bounds is not None else None
        if found is None:
            return True
        low = None if found.min is None else iso_epoch_day(found.min)
        high = None if found.max is None else iso_epoch_day(found.max)
        if (found.min is not None and low is None) or (found.max is not None and high is None):
            return True  # a statistic in another form: this entry is never pruned
        return NumberCompare(self.column, self.op, self.values).numbers_may_match(low, high)


_COMPARISONS: Final[dict[str, type[Comparison]]] = {
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

    A chain of ``AND`` (or ``OR``) is one :class:`And` (:class:`Or`) of all its
    parts, so a generated filter of thousands of terms parses and evaluates;
    nesting deeper than
    :data:`~indextables.protocol.predicateparser.MAX_DEPTH` levels is refused.

    Raises:
        InvalidPredicateError: the text does not parse, or nests too deeply.
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
