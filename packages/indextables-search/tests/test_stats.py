"""Per-split statistics in Spark's order, and the record of fully indexed string columns."""

from __future__ import annotations

import math
import struct
from datetime import UTC, date, datetime

import pyarrow as pa
import pytest

from indextables.search.query.tantivyquery import MAX_TERM_BYTES
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.write.stats import StatsCollector

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0000))[0]
SPECS = (
    FieldSpec("d", FieldKind.F64, None, True, True, True),
    FieldSpec("s", FieldKind.STRING, "raw", True, True, False),
    FieldSpec("t", FieldKind.TEXT, "default", True, True, False),
)


def _collect(*batches: dict[str, list[object]]) -> StatsCollector:
    collector = StatsCollector(SPECS)
    schema = pa.schema([("d", pa.float64()), ("s", pa.string()), ("t", pa.string())])
    for columns in batches:
        collector.add(pa.RecordBatch.from_pydict(columns, schema=schema))
    return collector


@pytest.mark.parametrize(
    ("batches", "low", "high"),
    [
        ([[1.0, math.nan]], "1", "NaN"),  # NaN sorts above every number (Spark's order)
        ([[1.0], [math.nan]], "1", "NaN"),
        ([[math.nan], [2.0]], "2", "NaN"),
        ([[NEGATIVE_NAN, -3.0]], "-3", "NaN"),
        ([[math.nan, None]], "NaN", "NaN"),  # every value NaN
        ([[-0.0, 0.0]], "0", "0"),
        ([[-math.inf, 2.5]], "-inf", "2.5"),
    ],
)
def test_double_statistics_follow_sparks_order(
    batches: list[list[float | None]], low: str, high: str
) -> None:
    collector = _collect(*({"d": b, "s": [None] * len(b), "t": [None] * len(b)} for b in batches))
    assert (collector.min_values()["d"], collector.max_values()["d"]) == (low, high)


def test_fully_indexed_columns_are_the_exact_ones_within_the_term_limit() -> None:
    ok = {"d": [1.0, 2.0], "s": ["x" * MAX_TERM_BYTES, None], "t": ["y" * 70_000, "z"]}
    assert _collect(ok).fully_indexed() == ["s"]
    over = {"d": [1.0], "s": ["é" * (MAX_TERM_BYTES // 2 + 1)], "t": ["z"]}  # bytes, not chars
    assert _collect(ok, over).fully_indexed() == []
    assert _collect({"d": [None], "s": [None], "t": [None]}).fully_indexed() == ["s"]


_TEMPORAL = (
    FieldSpec("day", FieldKind.DATE, None, True, True, True),
    FieldSpec("ts", FieldKind.DATE, None, True, True, True),
    FieldSpec("ntz", FieldKind.DATE, None, True, True, True),
)
_TEMPORAL_SCHEMA = pa.schema(
    [("day", pa.date32()), ("ts", pa.timestamp("us", tz="UTC")), ("ntz", pa.timestamp("us"))]
)


def _temporal(*batches: dict[str, list[object]]) -> StatsCollector:
    collector = StatsCollector(_TEMPORAL)
    for columns in batches:
        collector.add(pa.RecordBatch.from_pydict(columns, schema=_TEMPORAL_SCHEMA))
    return collector


def test_dates_record_iso_days_and_timestamps_epoch_microseconds() -> None:
    """The reference's forms: ``YYYY-MM-DD`` for dates, epoch microseconds for timestamps."""
    first = {
        "day": [date(2024, 1, 31), date(999, 5, 6)],
        "ts": [datetime(2024, 1, 1, 0, 0, 0, 500_000, tzinfo=UTC), None],
        "ntz": [datetime(1969, 12, 31, 23, 59, 59, 999_999), datetime(1500, 1, 1)],
    }
    second = {"day": [None], "ts": [datetime(1600, 1, 1, tzinfo=UTC)], "ntz": [None]}
    collector = _temporal(first, second)
    assert collector.min_values() == {
        "day": "0999-05-06",
        "ts": str(int((datetime(1600, 1, 1, tzinfo=UTC) - _EPOCH).total_seconds()) * 10**6),
        "ntz": str(int((datetime(1500, 1, 1, tzinfo=UTC) - _EPOCH).total_seconds()) * 10**6),
    }
    assert collector.max_values() == {"day": "2024-01-31", "ts": "1704067200500000", "ntz": "-1"}


def test_dates_beyond_year_9999_record_no_statistic() -> None:
    """``+10000-01-01`` would sort below ``2024-...`` as text: the column gets none at all."""
    collector = StatsCollector(_TEMPORAL[:1])
    beyond = pa.array([date(2024, 1, 1).toordinal() - 719_163, 3_000_000], pa.date32())
    collector.add(pa.RecordBatch.from_arrays([beyond], names=["day"]))
    assert collector.min_values() == {}
    assert collector.max_values() == {}
