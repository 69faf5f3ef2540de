"""Per-split statistics in Spark's order, and the record of fully indexed string columns."""

from __future__ import annotations

import math
import struct

import pyarrow as pa
import pytest

from indextables.pyspark.mapping import FieldKind, FieldSpec
from indextables.pyspark.stats import StatsCollector
from indextables.pyspark.tantivyquery import MAX_TERM_BYTES

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
