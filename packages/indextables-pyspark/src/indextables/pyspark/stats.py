"""Per-split min/max statistics as the transaction log records them.

Rules (DECISIONS.md): values as strings, integral doubles without ``.0``,
strings truncated to 32 characters, never for partition columns. A truncated
string max is no longer an upper bound, so pruning treats 32-character
values as prefixes (see :func:`string_max_is_exact`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.pyspark.mapping import FieldKind, FieldSpec

STRING_STAT_LENGTH = 32
_STAT_KINDS = (FieldKind.I64, FieldKind.F64, FieldKind.STRING, FieldKind.TEXT)


def format_number(value: float | int) -> str:
    """A statistic string for a number: ``20`` for ``20.0``, ``1.5`` for ``1.5``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def string_max_is_exact(value: str) -> bool:
    """False when a recorded string max may have been truncated (and so is not an upper bound)."""
    return len(value) < STRING_STAT_LENGTH


@dataclass(slots=True)
class StatsCollector:
    """Accumulates min/max over Arrow batches for the columns that carry statistics."""

    specs: tuple[FieldSpec, ...]
    minimums: dict[str, Any] = field(default_factory=dict)
    maximums: dict[str, Any] = field(default_factory=dict)
    num_records: int = 0

    def add(self, batch: pa.RecordBatch) -> None:
        """Fold one batch into the statistics."""
        self.num_records += batch.num_rows
        for spec in self.specs:
            if spec.kind not in _STAT_KINDS or spec.name not in batch.schema.names:
                continue
            column = batch.column(spec.name)
            if column.null_count == len(column):
                continue
            bounds = pc.min_max(column).as_py()
            self._fold(spec.name, bounds["min"], bounds["max"])

    def _fold(self, name: str, low: Any, high: Any) -> None:
        old_low, old_high = self.minimums.get(name), self.maximums.get(name)
        self.minimums[name] = low if old_low is None else min(old_low, low)
        self.maximums[name] = high if old_high is None else max(old_high, high)

    def min_values(self) -> dict[str, str]:
        """The ``minValues`` map of the AddAction."""
        return {k: _format(v) for k, v in self.minimums.items()}

    def max_values(self) -> dict[str, str]:
        """The ``maxValues`` map of the AddAction."""
        return {k: _format(v) for k, v in self.maximums.items()}


def _format(value: object) -> str:
    if isinstance(value, str):
        return value[:STRING_STAT_LENGTH]
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return format_number(value)
    return str(value)
