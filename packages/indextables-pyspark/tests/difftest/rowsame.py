"""Exact comparison of collected rows: types, field names, NaN, -0.0, map contents."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pyspark.sql import Row


def same(a: Any, b: Any) -> bool:
    """Whether two collected values are the same value of the same Python type.

    Stricter than ``==`` where it matters (``bytes`` vs ``bytearray``, ``1`` vs
    ``True``, ``-0.0`` vs ``0.0``, a ``Row``'s field names) and looser where
    ``==`` is wrong for rows (NaN equals NaN). Dicts compare by content (the
    JVM's map order is its hash map's).
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, Row):
        fields = getattr(a, "__fields__", None) == getattr(b, "__fields__", None)
        return fields and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    return bool(a == b)


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("value", result)`` or ``("error", "<type>: <message>")``: errors compare too."""
    try:
        return ("value", call())
    except Exception as error:
        return ("error", f"{type(error).__name__}: {error}")


def same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    return a[0] == b[0] and (a[1] == b[1] if a[0] == "error" else same(a[1], b[1]))
