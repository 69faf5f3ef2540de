"""Every NaN as the one quiet NaN, before a pyarrow compute kernel orders floating values.

Spark treats every NaN as one value, above every number (``+inf`` included),
whatever its bits: quiet or signaling, any payload, either sign. pyarrow's
kernels do not. Its ``min_max`` (and the ``min``/``max`` of ``group_by``)
restarts at a signaling NaN (quiet bit clear, such as R's ``NA_real_``,
``0x7FF00000000007A2``): ``min_max([-1.0, sNaN, 5.0])`` is ``(5.0, 5.0)``
and ``min_max([inf, sNaN])`` is ``(NaN, NaN)``, while quiet NaNs are left out
as intended. Hashing kernels (``unique``, group keys) tell NaN payloads apart.

:func:`quiet_nans` replaces every NaN of a ``float``/``double`` array with the
one quiet NaN of its type; values that are no NaN keep their bits (``-0.0``
stays ``-0.0``), nulls stay null. Only what a kernel computes from sees the
replacement: rows handed back to the caller keep the bits written.
"""

from __future__ import annotations

import math
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["quiet_nans"]

_Values = TypeVar("_Values", pa.Array, pa.ChunkedArray)


def quiet_nans(values: _Values) -> _Values:
    """``values`` with every NaN as the quiet NaN of its type (other types: unchanged)."""
    if not (pa.types.is_float32(values.type) or pa.types.is_float64(values.type)):
        return values
    nan = pc.is_nan(values)
    if not pc.any(nan).as_py():  # no NaN (or only nulls): nothing to replace, nothing copied
        return values
    quiet: _Values = pc.if_else(nan, pa.scalar(math.nan, values.type), values)
    return quiet
