"""Byte-range arguments of ``get_range``, checked the same way by every store."""

from __future__ import annotations

from indextables.storage.errors import StorageError

__all__ = ["check_range"]


class InvalidRangeError(StorageError, ValueError):
    """``get_range`` was called with a negative start or an end before its start."""


def check_range(key: str, start: int, end: int, *, store: str) -> None:
    """Raise if ``[start, end)`` is not a valid byte range.

    Raises:
        InvalidRangeError: ``start < 0`` or ``end < start``.
    """
    if start < 0 or end < start:
        raise InvalidRangeError(f"{store}: invalid range [{start}, {end}) for key {key!r}")
