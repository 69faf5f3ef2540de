"""Rows collected from the driver's Arrow batches equal the JVM's ``collect()``, on random data.

``itp.search`` / ``itp.aggregate`` frames answer ``collect()`` and friends from
the Arrow batches the driver holds (``read/lazyframe.py``). Here both answers
are taken from the same frame, on random tables of every type IndexTables
holds (nulls at every depth, NaN, infinities, -0.0, empty and huge strings,
astral characters, dates and timestamps from year 1 to 9999) and in several
local time zones of the Python process (classic ``collect()`` turns
``TIMESTAMP`` values into that zone's wall time). A value the JVM's path cannot
turn into Python must fail the same way on ours.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from difftest.rowsame import outcome, same, same_outcome
from difftest.tables import NESTED, REFUSABLE, SCALARS
from difftest.values import value_for

from indextables.pyspark.read.arrowframe import arrow_dataframe
from indextables.pyspark.read.arrowrows import convertible
from indextables.pyspark.read.lazyframe import ArrowFrame
from indextables.pyspark.read.sparktypes import arrow_schema

ZONES = (
    "UTC",
    "America/New_York",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "America/St_Johns",
    "Australia/Lord_Howe",
    "Pacific/Kiritimati",
    "America/Sao_Paulo",
)
TYPES: dict[str, DataType] = {**SCALARS, **NESTED, **REFUSABLE}
SEEDS = [int(s) for s in os.environ.get("INDEXTABLES_ARROWROWS_SEEDS", "1-6").split("-")]


def _seeds() -> list[int]:
    low, high = (SEEDS[0], SEEDS[-1])
    return list(range(low, high + 1))


@pytest.fixture
def zone() -> Iterator[Any]:
    """Set the Python process's local time zone (restored after the test)."""
    before = os.environ.get("TZ")

    def use(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield use
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


def _arrow_value(value: Any, data_type: DataType) -> Any:
    """A generated value in the form ``pa.Table.from_pylist`` takes (structs as dicts)."""
    if value is None:
        return None
    if isinstance(data_type, StructType):
        return {
            f.name: _arrow_value(v, f.dataType)
            for f, v in zip(data_type.fields, value, strict=True)
        }
    if isinstance(data_type, ArrayType):
        return [_arrow_value(v, data_type.elementType) for v in value]
    if isinstance(data_type, MapType):
        return [(k, _arrow_value(v, data_type.valueType)) for k, v in value.items()]
    return value


def _random_table(seed: int) -> tuple[StructType, list[pa.RecordBatch]]:
    rng = random.Random(seed)
    names = rng.sample(sorted(TYPES), rng.randint(4, len(TYPES)))
    schema = StructType([StructField(n, TYPES[n]) for n in names])
    null_rate = rng.choice([0.0, 0.2, 0.6])
    count = rng.choice([0, 1, 37, 240])
    records = [
        {f.name: _arrow_value(value_for(rng, f.dataType, null_rate), f.dataType) for f in schema}
        for _ in range(count)
    ]
    table = pa.Table.from_pylist(records, schema=arrow_schema(schema))
    return schema, table.to_batches(max_chunksize=rng.choice([7, 1000]))


def _jvm_collect(frame: ArrowFrame) -> list[Any]:
    """The same frame's rows through the JVM: a plain classic frame over its Dataset."""
    return DataFrame(frame._jdf, frame.sparkSession).collect()


@pytest.mark.parametrize("seed", _seeds())
def test_rows_from_arrow_equal_the_jvm_collect_in_every_zone(
    spark: Any, zone: Any, seed: int
) -> None:
    schema, batches = _random_table(seed)
    frame = arrow_dataframe(spark, batches, schema)
    assert isinstance(frame, ArrowFrame)
    assert convertible(schema)
    for name in ZONES:
        zone(name)
        local = outcome(frame.collect)
        jvm = outcome(lambda: _jvm_collect(frame))
        assert same_outcome(local, jvm), (seed, name, schema.simpleString(), local, jvm)
        if local[0] == "value":
            rows = local[1]
            assert same(frame.take(5), rows[:5])
            assert same(frame.head(), rows[0] if rows else None)
            assert same(list(frame.toLocalIterator()), rows)
            assert frame.count() == len(rows) == frame._jdf.count()
            assert frame.isEmpty() is (not rows)


@pytest.mark.parametrize("setting", ["false", " FALSE ", "true"])
def test_binary_values_follow_the_sessions_binary_as_bytes(spark: Any, setting: str) -> None:
    schema = StructType(
        [StructField("raw", BinaryType()), StructField("many", ArrayType(BinaryType()))]
    )
    table = pa.Table.from_pylist(
        [{"raw": b"\x00\xff", "many": [b"", None, b"x"]}, {"raw": None, "many": None}],
        schema=arrow_schema(schema),
    )
    frame = arrow_dataframe(spark, table.to_batches(), schema)
    key = "spark.sql.execution.pyspark.binaryAsBytes"
    spark.conf.set(key, setting)
    try:
        local = outcome(frame.collect)
        jvm = outcome(lambda: _jvm_collect(frame))
    finally:
        spark.conf.unset(key)
    assert same_outcome(local, jvm), (local, jvm)
    if setting.strip().lower() == "false":
        assert type(local[1][0].raw) is bytearray


def test_nothing_reaches_the_jvm_until_a_method_needs_it(spark: Any) -> None:
    schema, batches = _random_table(3)
    frame = arrow_dataframe(spark, batches, schema)
    assert isinstance(frame, ArrowFrame)
    frame.collect(), frame.take(2), frame.first(), frame.count(), frame.isEmpty()
    assert frame.schema == schema
    assert frame.columns == schema.names
    assert repr(frame).startswith("DataFrame[")
    assert frame._built is None  # answered from the batches alone
    derived = frame.where("true")
    assert frame._built is not None
    assert not isinstance(derived, ArrowFrame)
    assert same(derived.collect(), frame.collect())


def test_the_jvm_frame_is_built_once_when_threads_race(spark: Any) -> None:
    schema, batches = _random_table(4)
    built: list[int] = []
    gate = threading.Barrier(4)

    def build() -> Any:
        built.append(1)
        time.sleep(0.2)  # keep the others waiting on the lock, whatever the load
        return arrow_dataframe(spark, batches, schema)._jdf

    frame = ArrowFrame(spark, batches, schema, build)

    def touch() -> None:
        gate.wait()
        frame._jdf.count()

    threads = [threading.Thread(target=touch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == [1]


def test_a_negative_take_is_sparks_own_error(spark: Any) -> None:
    schema, batches = _random_table(5)
    frame = arrow_dataframe(spark, batches, schema)
    plain = DataFrame(frame._jdf, spark)
    local, jvm = outcome(lambda: frame.take(-1)), outcome(lambda: plain.take(-1))
    assert local[0] == jvm[0] == "error"


@pytest.mark.parametrize(
    "data_type",
    [
        VariantType(),
        MapType(BinaryType(), StringType()),
        MapType(ArrayType(StringType()), StringType()),
        StructType([StructField("a", StringType()), StructField("a", StringType())]),
        ArrayType(VariantType()),
    ],
)
def test_types_not_converted_here_are_left_to_the_jvm(data_type: DataType) -> None:
    assert not convertible(StructType([StructField("c", data_type)]))


def test_every_type_of_the_random_tables_is_converted_here() -> None:
    for name, data_type in TYPES.items():
        assert convertible(StructType([StructField(name, data_type)])), name
    assert convertible(StructType([StructField("d", DecimalType(38, 18))]))
