"""Signaling NaNs written through Spark lose no rows: reads, counts and aggregates.

A NaN whose quiet bit is clear (R's ``NA_real_`` is ``0x7FF00000000007A2``) is
NaN to Spark: equal to every NaN and above every number. Each append below is
one split holding such a NaN between numbers; the split statistics, the
pushed filters, ``itp.count`` and ``itp.aggregate`` must give what Spark gives
over the same rows in memory (the oracle: ``spark.createDataFrame`` of the rows,
never written).
"""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StructField, StructType

import indextables.pyspark as itp
from indextables.search import open_table
from indextables.search.table.tableaccess import load_view

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _double(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


NA_REAL = 0x7FF00000000007A2
SIGNALING = _double(NA_REAL)
SIGNALING_NEGATIVE = _double(0xFFF0000000000123)
SCHEMA = StructType([StructField("id", LongType()), StructField("d", DoubleType())])
APPENDS: list[list[tuple[int, float | None]]] = [
    [(0, -1.0), (1, SIGNALING), (2, 5.0)],
    [(3, 1.0), (4, SIGNALING_NEGATIVE), (5, 2.0), (6, None)],
    [(7, math.inf), (8, SIGNALING)],
    [(9, -0.0), (10, _double(0x7FF0000000000123)), (11, 0.5)],
]
FILTERS = [
    "d = -1.0",
    "d <= 0.1",
    "d BETWEEN -2 AND 0",
    "d < 1.5",
    "d >= 1",
    "d > 5",
    "d = 0.0",
    "d IN (-1.0, 2.0)",
    "d = 'NaN'",
    "d >= 'NaN'",
    "d != 5",
    "NOT d BETWEEN -2 AND 0",
]


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: Any) -> str:
    path = str(tmp_path_factory.mktemp("nanpayloads") / "table")
    for rows in APPENDS:
        spark.createDataFrame(rows, SCHEMA).coalesce(1).write.format("indextables").mode(
            "append"
        ).save(path)
    return path


def _memory(spark: Any) -> Any:
    return spark.createDataFrame([r for rows in APPENDS for r in rows], SCHEMA)


def _ids(frame: Any) -> list[int]:
    return sorted(r["id"] for r in frame.collect())


def test_the_signaling_nans_reach_the_splits(table: str) -> None:
    """Not vacuous: the stored value keeps its bits, and each split's min is its least
    number (pyarrow's min_max alone made it 5.0 on the first split)."""
    stored = open_table(table).search(where="id = 1", columns=["d"]).column("d")
    assert struct.unpack("<Q", struct.pack("<d", stored[0].as_py()))[0] == NA_REAL
    splits = load_view(table, {}).splits
    lows = sorted(s.min_values["d"] for s in splits if s.min_values)
    assert lows == ["-1", "0", "1", "inf"]  # -0.0 is written 0
    assert all(s.max_values and s.max_values["d"] == "NaN" for s in splits)


@pytest.mark.parametrize("where", FILTERS)
def test_reads_and_counts_equal_spark(spark: Any, table: str, where: str) -> None:
    expected = _ids(_memory(spark).where(where))
    assert _ids(spark.read.format("indextables").load(table).where(where)) == expected
    assert _ids(itp.search(spark, table, where=where)) == expected
    assert itp.count(spark, table, where=where) == len(expected)


def test_aggregates_equal_spark(spark: Any, table: str) -> None:
    aggs = [F.min("d").alias("lo"), F.max("d").alias("hi"), F.count("d").alias("n")]
    want = _memory(spark).where("d != 5").agg(*aggs).first()
    got = spark.read.format("indextables").load(table).where("d != 5").agg(*aggs).first()
    found = itp.aggregate(
        spark,
        table,
        where="d != 5",
        metrics={"lo": ("min", "d"), "hi": ("max", "d"), "n": ("count", "d")},
    ).first()
    assert want["lo"] == -1.0
    assert math.isnan(want["hi"])
    for row in (got, found):
        assert row["lo"] == want["lo"]
        assert math.isnan(row["hi"])
        assert row["n"] == want["n"]
