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
(:meth:`StatsCollector.fully_indexed`), and which tokenized text columns lost
no token to their analyzer's length limit (:meth:`StatsCollector.tokens_kept`):
a token lies within a run of characters between ASCII whitespace, and
lowercasing grows a character's UTF-8 form by at most the factor the analyzer's
own lowercase table allows (1.5), so only values and runs long enough to reach
the limit after that growth are tokenized to measure their tokens.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.schema.nans import quiet_nans
from indextables.search.write.segwriter.tokenize import (
    MAX_TOKEN_BYTES,
    Analyzer,
    analyzer_for,
    tokenize,
)

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
    dropped: dict[str, bool] = field(default_factory=dict)
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
            analyzer = _token_analyzer(spec)
            if analyzer is not None and not self.dropped.get(spec.name):
                self.dropped[spec.name] = _may_drop_tokens(column, analyzer, spec.name)
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

    def tokens_kept(self) -> dict[str, str]:
        """The tokenized text columns (name -> tokenizer name) whose analyzer dropped no
        token of any value added (only columns some batch held)."""
        names = {s.name: s.tokenizer_name for s in self.specs}
        return {
            name: str(names[name])
            for name, dropped in sorted(self.dropped.items())
            if not dropped and names.get(name)
        }

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


def _token_analyzer(spec: FieldSpec) -> Analyzer | None:
    """The analyzer of an indexed text field whose tokens :meth:`StatsCollector.tokens_kept`
    follows (the simple and whitespace ones), else None."""
    if spec.kind is not FieldKind.TEXT or not spec.indexed or spec.tokenizer_name is None:
        return None
    found = analyzer_for(spec.tokenizer_name)
    return found if found is not None and found.kind != "raw" else None


@functools.cache
def _lowercase_growth() -> float:
    """The most a character's UTF-8 form grows when the analyzers lowercase it."""
    from indextables.search.write.segwriter._unicodetables import LOWERCASE

    grown = (len(low.encode("utf-8")) / len(chr(c).encode("utf-8")) for c, low in LOWERCASE.items())
    return max(1.0, *grown)


@functools.cache
def _between_whitespace() -> str:
    """An RE2 class of the characters the whitespace tokenizer splits at."""
    from indextables.search.write.segwriter._unicodetables import WHITESPACE

    return "[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in WHITESPACE) + "]"


def _may_drop_tokens(column: pa.Array, analyzer: Analyzer, name: str) -> bool:
    """Whether ``analyzer`` may drop a token of ``column`` for its length (True also for a
    column of a type it does not read)."""
    if pa.types.is_string_view(column.type):
        column = column.cast(pa.large_string())
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return True
    limit = min(MAX_TOKEN_BYTES + 1, analyzer.limit)
    growth = _lowercase_growth()
    reach = pc.multiply(pc.binary_length(column).cast(pa.float64()), growth)
    longest = pc.max(reach).as_py()
    if longest is None or longest < limit:
        return False
    values = column.filter(pc.greater_equal(reach, limit))
    runs = pc.list_flatten(pc.split_pattern_regex(values, _between_whitespace()))
    reach = pc.multiply(pc.binary_length(runs).cast(pa.float64()), growth)
    if (pc.max(reach).as_py() or 0) >= MAX_TOKEN_BYTES + 1:
        return True  # a token beyond what any analyzer keeps may be in it
    long_runs = runs.filter(pc.greater_equal(reach, limit))
    if not len(long_runs):
        return False
    tokens = tokenize(long_runs, Analyzer(analyzer.kind, MAX_TOKEN_BYTES + 1), name=name)
    return (pc.max(pc.binary_length(tokens.terms)).as_py() or 0) >= limit


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
