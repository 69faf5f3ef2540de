"""Spark date and timestamp operands as the numbers the index and the statistics hold.

Spark hands a Python data source its temporal filter operands as
``datetime.date`` (``date`` columns), timezone-aware ``datetime`` in UTC
(``timestamp`` columns: instants, already converted from the session time
zone) and naive ``datetime`` (``timestamp_ntz`` columns: wall-clock values).
The writer indexes all three as epoch microseconds (a date at midnight UTC,
a wall-clock value as if it were UTC) and records their statistics the way
the reference does: dates as ``YYYY-MM-DD``, timestamps as epoch
microseconds. The same conversions are used here for operands, so both
sides always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

__all__ = [
    "MICROS_PER_DAY",
    "all_dates",
    "all_datetimes",
    "epoch_day",
    "micros_to_datetime",
    "operand_micros",
]

MICROS_PER_DAY: Final = 86_400_000_000
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
_MICROSECOND: Final = timedelta(microseconds=1)


def epoch_day(value: date) -> int:
    """Days from 1970-01-01 to ``value`` (a ``date``, not a ``datetime``)."""
    return value.toordinal() - _EPOCH_ORDINAL


def operand_micros(value: Any) -> int | None:
    """Epoch microseconds of a date, timestamp or timestamp_ntz operand; None for others."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (aware - _EPOCH) // _MICROSECOND
    if isinstance(value, date):
        return epoch_day(value) * MICROS_PER_DAY
    return None


def micros_to_datetime(micros: int) -> datetime:
    """The UTC ``datetime`` of epoch microseconds (within Python's years 1-9999)."""
    return _EPOCH + timedelta(microseconds=micros)


def all_dates(values: Sequence[Any]) -> bool:
    """True when every value is a ``date`` (and none a ``datetime``)."""
    return bool(values) and all(isinstance(v, date) and not isinstance(v, datetime) for v in values)


def all_datetimes(values: Sequence[Any]) -> bool:
    """True when every value is a ``datetime``."""
    return bool(values) and all(isinstance(v, datetime) for v in values)
