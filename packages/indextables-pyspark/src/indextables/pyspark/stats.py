"""Per-split min/max statistics as the transaction log records them.

Rules (DECISIONS.md): values as strings, integral doubles without ``.0``,
strings truncated to 32 characters, never for partition columns. A truncated
string max is no longer an upper bound: pruning ignores a max of 32
characters or more (:func:`indextables.protocol.statsfilter.usable_max`).

Doubles follow Spark's order: NaN sorts above every number, so a column
holding NaN records the max ``NaN`` (as the reference's own calculator,
which orders with ``Double.compare``, does); the min is the least number
(``NaN`` only when every value is NaN). ``-0.0`` and ``0.0`` are equal and
both written ``0``.

The collector also records the longest UTF-8 value of each exact string
column, so the writer can tell which columns Tantivy indexed in full
(:meth:`StatsCollector.fully_indexed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.pyspark.mapping import FieldKind, FieldSpec
from indextables.pyspark.tantivyquery import MAX_TERM_BYTES

STRING_STAT_LENGTH = 32
_STAT_KINDS = (FieldKind.I64, FieldKind.F64, FieldKind.STRING, FieldKind.TEXT)


def format_number(value: float | int) -> str:
    """A statistic string for a number: ``20`` for ``20.0``, ``1.5`` for ``1.5``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(slots=True)
class StatsCollector:
    """Accumulates min/max over Arrow batches for the columns that carry statistics."""

    specs: tuple[FieldSpec, ...]
    minimums: dict[str, Any] = field(default_factory=dict)
    maximums: dict[str, Any] = field(default_factory=dict)
    longest: dict[str, int] = field(default_factory=dict)
    num_records: int = 0

    def add(self, batch: pa.RecordBatch) -> None:
        """Fold one batch into the statistics."""
        self.num_records += batch.num_rows
        for spec in self.specs:
            if spec.name not in batch.schema.names:
                continue
            column = batch.column(spec.name)
            if spec.is_exact and pa.types.is_string(column.type):
                self._fold_length(spec.name, column)
            if spec.kind not in _STAT_KINDS or column.null_count == len(column):
                continue
            bounds = pc.min_max(column).as_py()
            low, high = bounds["min"], bounds["max"]
            if spec.kind is FieldKind.F64 and pc.any(pc.is_nan(column)).as_py():
                high = math.nan  # pyarrow leaves NaN out unless all values are NaN
            self._fold(spec.name, low, high)

    def _fold_length(self, name: str, column: pa.Array) -> None:
        longest = pc.max(pc.binary_length(column)).as_py() if len(column) else None
        self.longest[name] = max(self.longest.get(name, 0), longest or 0)

    def _fold(self, name: str, low: Any, high: Any) -> None:
        self.minimums[name] = _spark_min(self.minimums.get(name), low)
        self.maximums[name] = _spark_max(self.maximums.get(name), high)

    def fully_indexed(self) -> list[str]:
        """The exact string columns whose every value Tantivy indexed (none over the limit)."""
        return sorted(n for n, size in self.longest.items() if size <= MAX_TERM_BYTES)

    def min_values(self) -> dict[str, str]:
        """The ``minValues`` map of the AddAction."""
        return {k: _format(v) for k, v in self.minimums.items()}

    def max_values(self) -> dict[str, str]:
        """The ``maxValues`` map of the AddAction."""
        return {k: _format(v) for k, v in self.maximums.items()}


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _spark_min(old: Any, new: Any) -> Any:
    """The lesser in Spark's order (NaN above every number)."""
    if old is None or _is_nan(old):
        return new
    return old if _is_nan(new) else min(old, new)


def _spark_max(old: Any, new: Any) -> Any:
    """The greater in Spark's order (NaN above every number)."""
    if old is None or _is_nan(new):
        return new
    return old if _is_nan(old) else max(old, new)


def _format(value: object) -> str:
    if isinstance(value, str):
        return value[:STRING_STAT_LENGTH]
    if isinstance(value, bool):
        return str(value).lower()
    if _is_nan(value):
        return "NaN"
    if isinstance(value, (int, float)):
        return format_number(value)
    return str(value)
