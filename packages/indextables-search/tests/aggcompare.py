"""Comparing aggregation answers, shared by the engine's and the adapter's aggregation tests.

- :func:`same_rows`: two answers equal, NaN equal to NaN, ``-0.0`` to ``0.0``,
  floats to 1e-9 (sums added in another order) or a given rounding bound, instants
  as UTC micros;
- :func:`answer_paths`: which path (log, index or rows) answered each
  ``SearchTable`` call, from the engine's debug log.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import struct
from collections.abc import Callable
from typing import Any

import pytest

__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "NAN",
    "NAN_PAYLOADS",
    "WORDS",
    "answer_paths",
    "norm",
    "same_rows",
]

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
NAN = float("nan")
#: NaNs of other bits, each NaN to Spark: signaling (R's NA_real_, 0x7FF00000000007A2), sign
#: set, payloads (pyarrow's min_max restarts at a signaling one).
NAN_PAYLOADS = tuple(
    struct.unpack("<d", struct.pack("<Q", bits))[0]
    for bits in (0x7FF00000000007A2, 0xFFF0000000000123, 0x7FF8000000000001)
)
WORDS = ("alpha", "beta", "gamma", "delta")
_LOG_NAME = "indextables.search.searchtable"


def answer_paths(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """A function returning the paths (log/index/rows) that answered since its last call."""
    caplog.set_level(logging.DEBUG, logger=_LOG_NAME)

    def taken() -> list[str]:
        found = [
            r.getMessage().rsplit(" ", 1)[-1]
            for r in caplog.records
            if r.name == _LOG_NAME and " answered from the " in r.getMessage()
        ]
        caplog.clear()
        return found

    return taken


def norm(value: Any) -> Any:
    """``value`` made comparable: NaN as a string, instants as UTC micros, decimals as floats."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value + 0.0
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    if hasattr(value, "as_integer_ratio") and not isinstance(value, bool | int):
        return float(value)
    return value


def same_rows(
    got: list[tuple[Any, ...]],
    want: list[tuple[Any, ...]],
    slack: list[tuple[float, ...]] | None = None,
) -> bool:
    """Whether two answers hold the same rows in the same order (see the module's rules).

    ``slack`` gives, per row of ``want`` and column, an absolute tolerance beyond
    the module's 1e-9 (0 for none): the rounding bound of a sum or average of
    doubles, which any summation order (Spark's included) may use up.
    """
    if len(got) != len(want):
        return False
    for k, (a_row, b_row) in enumerate(zip(got, want, strict=True)):
        for j, (a, b) in enumerate(zip(a_row, b_row, strict=True)):
            a, b = norm(a), norm(b)
            if isinstance(a, float) and isinstance(b, float):
                loose = slack[k][j] if slack else 0.0
                if not (a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=max(1e-9, loose))):
                    return False
            elif a != b:
                return False
    return True
