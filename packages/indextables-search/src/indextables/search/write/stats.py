"""Per-split min/max statistics as the transaction log records them.

Rules (DECISIONS.md): values as strings, integral doubles without ``.0``,
strings truncated to 32 characters, never for partition columns. A truncated
string max is no longer an upper bound: pruning ignores a max of 32
characters or more (:func:`indextables.protocol.statsfilter.usable_max`).

Doubles follow Spark's order: NaN sorts above every number, so a column
holding NaN records the max ``NaN`` (as the reference's own calculator,
which orders with ``Double.compare``, does); the min is the least number
(``NaN`` only when every value is NaN). Every NaN counts alike, quiet or
signaling, of either sign (:func:`~indextables.search.schema.nans.quiet_nans`).
``-0.0`` and ``0.0`` are equal and both written ``0``.

Dates and timestamps follow the reference's calculator: a ``date`` column
records ``YYYY-MM-DD`` (a split holding a date outside years 1-9999, which
that form cannot write in order, records nothing for the column), a
``timestamp`` or ``timestamp_ntz`` column its epoch microseconds (a
wall-clock value counted as if it were UTC). The values are the exact ones
Spark handed over, not the clamped values Tantivy indexes.

The collector also records the longest UTF-8 value of each exact string
column, so the writer can tell which columns Tantivy indexed in full
(:meth:`StatsCollector.fully_indexed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.schema.nans import quiet_nans

STRING_STAT_LENGTH = 32
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_FIRST_DAY = date(1, 1, 1).toordinal() - _EPOCH_ORDINAL
_LAST_DAY = date(9999, 12, 31).toordinal() - _EPOCH_ORDINAL
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
    temporal: dict[str, str] = field(default_factory=dict)
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
            if column.null_count == len(column):
                continue
            if spec.kind is FieldKind.DATE:
                self._fold_temporal(spec.name, column)
                continue
            if spec.kind not in _STAT_KINDS:
                continue
            if spec.kind is FieldKind.F64:
                column = quiet_nans(column)  # pyarrow's min_max restarts at a signaling NaN
            bounds = pc.min_max(column).as_py()
            low, high = bounds["min"], bounds["max"]
            if spec.kind is FieldKind.F64 and pc.any(pc.is_nan(column)).as_py():
                high = math.nan  # pyarrow leaves NaN out unless all values are NaN
            self._fold(spec.name, low, high)

    def _fold_temporal(self, name: str, column: pa.Array) -> None:
        """Fold a date (epoch days) or timestamp (epoch microseconds) column, as integers."""
        if pa.types.is_date32(column.type):
            numbers = column.cast(pa.int32())
            unit = "date"
        elif pa.types.is_timestamp(column.type):
            numbers = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
            unit = "timestamp"
        else:
            return
        bounds = pc.min_max(numbers).as_py()
        if self.temporal.setdefault(name, unit) != unit:
            return
        self._fold(name, bounds["min"], bounds["max"])

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
        return self._formatted(self.minimums)

    def max_values(self) -> dict[str, str]:
        """The ``maxValues`` map of the AddAction."""
        return self._formatted(self.maximums)

    def _formatted(self, values: dict[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in values.items():
            if self.temporal.get(name) == "date":
                text = _iso_date(self.minimums[name], self.maximums[name], value)
                if text is not None:
                    out[name] = text
            else:
                out[name] = _format(value)
        return out


def _iso_date(low: int, high: int, days: int) -> str | None:
    """``days`` as ``YYYY-MM-DD``, or None when the column's range leaves years 1-9999."""
    if low < _FIRST_DAY or high > _LAST_DAY:
        return None  # such a statistic would not sort as dates do: record none at all
    value = date.fromordinal(days + _EPOCH_ORDINAL)
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


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
