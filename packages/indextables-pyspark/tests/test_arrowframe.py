"""Arrow batches -> DataFrame: the one-round-trip path returns what createDataFrame returns."""

from __future__ import annotations

import datetime as dt
import textwrap
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from indextables.pyspark.read import arrowframe
from indextables.pyspark.read.arrowframe import arrow_dataframe
from indextables.pyspark.read.sparktypes import arrow_schema

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("small", IntegerType()),
        StructField("ratio", DoubleType()),
        StructField("single", FloatType()),
        StructField("flag", BooleanType()),
        StructField("text", StringType()),
        StructField("raw", BinaryType()),
        StructField("day", DateType()),
        StructField("at", TimestampType()),
        StructField("local_at", TimestampNTZType()),
        StructField("amount", DecimalType(10, 2)),
        StructField("tags", ArrayType(StringType())),
        StructField("attrs", MapType(StringType(), LongType())),
        StructField(
            "inner", StructType([StructField("a", LongType()), StructField("b", StringType())])
        ),
    ]
)

UTC = dt.UTC


def _rows() -> list[dict[str, Any]]:
    full = {
        "id": 2**40,
        "small": -7,
        "ratio": 2.5,
        "single": 0.25,
        "flag": True,
        "text": "héllo wörld",
        "raw": b"\x00\xff",
        "day": dt.date(2024, 2, 29),
        "at": dt.datetime(2024, 3, 10, 7, 30, 0, 123456, tzinfo=UTC),
        "local_at": dt.datetime(2024, 3, 10, 7, 30, 0, 5),
        "amount": Decimal("12.34"),
        "tags": ["a", "b"],
        "attrs": [("k", 1)],
        "inner": {"a": 1, "b": "x"},
    }
    return [full, dict.fromkeys(full), {**full, "id": -1, "tags": []}]


def _batches() -> list[pa.RecordBatch]:
    table = pa.Table.from_pylist(_rows(), schema=arrow_schema(SCHEMA))
    return table.to_batches(max_chunksize=2)


@pytest.fixture
def new_york(spark: Any) -> Iterator[None]:
    """The session in a zone that is not UTC, so timestamp handling shows."""
    key = "spark.sql.session.timeZone"
    before = spark.conf.get(key)
    spark.conf.set(key, "America/New_York")
    yield
    spark.conf.set(key, before)


class _WithoutJvm:
    """A session as Spark Connect presents it: createDataFrame, no Py4J gateway."""

    def __init__(self, spark: Any) -> None:
        self.createDataFrame = spark.createDataFrame


def _reference(spark: Any, batches: list[pa.RecordBatch]) -> list[Any]:
    table = pa.Table.from_batches(batches, schema=arrow_schema(SCHEMA))
    return spark.createDataFrame(table, schema=SCHEMA).collect()


def _jvm_rows(frame: Any) -> list[Any]:
    """The frame's rows collected through the JVM (a plain frame over its Dataset)."""
    return DataFrame(frame._jdf, frame.sparkSession).collect()


@pytest.mark.usefixtures("new_york")
def test_direct_path_matches_create_dataframe_on_every_type(spark: Any) -> None:
    assert arrowframe._utils(spark) is not None  # the fast path is what runs here
    frame = arrow_dataframe(spark, _batches(), SCHEMA)
    assert "LocalRelation" in frame._jdf.queryExecution().analyzed().toString()
    assert frame.schema == SCHEMA
    assert frame.collect() == _reference(spark, _batches())
    assert _jvm_rows(frame) == _reference(spark, _batches())
    assert frame.where("id = -1").count() == 1


def test_no_batches_is_an_empty_frame_with_the_schema(spark: Any) -> None:
    frame = arrow_dataframe(spark, [], SCHEMA)
    assert frame.schema == SCHEMA
    assert frame.collect() == []


def test_a_session_without_the_gateway_uses_create_dataframe(spark: Any) -> None:
    frame = arrow_dataframe(_WithoutJvm(spark), _batches(), SCHEMA)  # type: ignore[arg-type]
    assert frame.collect() == _reference(spark, _batches())


def test_a_missing_jvm_entry_point_falls_back_once(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrowframe, "_UTILS", "org.example.NoSuchUtils")
    monkeypatch.setattr(arrowframe, "_handles", type(arrowframe._handles)())
    assert arrow_dataframe(spark, _batches(), SCHEMA).collect() == _reference(spark, _batches())
    assert arrowframe._handles[spark.sparkContext] is None  # remembered: no lookup next time


ENCRYPTED = textwrap.dedent(
    """
    import json, os, sys
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    import indextables.pyspark as itp
    from indextables.pyspark.read import arrowframe
    spark = (SparkSession.builder.master("local[1]")
             .config("spark.ui.enabled", "false")
             .config("spark.io.encryption.enabled", "true").getOrCreate())
    itp.register(spark)
    path = sys.argv[1]
    spark.range(0, 50).selectExpr("id", "concat('line ', id % 5) as message").write.format(
        "indextables").mode("append").option(
        "spark.indextables.indexing.typemap.message", "text").save(path)
    mode = "spark.indextables.search.mode"
    local = itp.search(spark, path, "message:3", options={mode: "local"})
    spread = itp.search(spark, path, "message:3", options={mode: "distributed"})
    print("RESULT " + json.dumps({
        "encrypted": spark.sparkContext._encryption_enabled,
        "direct": arrowframe._utils(spark) is not None,
        # where(): a frame the JVM builds, so its rows come back through the socket.
        "local": sorted(r.id for r in local.where("id >= 0").collect()),
        "distributed": sorted(r.id for r in spread.collect()),
    }))
    spark.stop()
    """
)


@pytest.mark.integration
def test_under_io_encryption_rows_go_through_the_socket(tmp_path: Path, run_scenario: Any) -> None:
    """With I/O encryption on, PySpark's authenticated socket replaces the temporary file."""
    result = run_scenario(ENCRYPTED, str(tmp_path / "table"))
    expected = [i for i in range(50) if i % 5 == 3]
    assert result == {
        "encrypted": True,
        "direct": True,
        "local": expected,
        "distributed": expected,
    }


class _OtherSignature:
    """A PythonSQLUtils whose toDataFrame takes other arguments (as a future PySpark might)."""

    def __init__(self, real: Any) -> None:
        self.readArrowStreamFromFile = real.readArrowStreamFromFile

    def toDataFrame(self, *args: Any) -> Any:
        from py4j.protocol import Py4JError

        raise Py4JError("An error occurred while calling toDataFrame: Method does not exist")


def test_an_entry_point_with_another_signature_falls_back(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    handles = type(arrowframe._handles)()
    handles[spark.sparkContext] = _OtherSignature(arrowframe._lookup(spark))
    monkeypatch.setattr(arrowframe, "_handles", handles)
    frame = arrow_dataframe(spark, _batches(), SCHEMA)
    assert frame.collect() == _reference(spark, _batches())  # from the batches: no JVM yet
    assert handles[spark.sparkContext] is not None
    assert _jvm_rows(frame) == _reference(spark, _batches())
    assert handles[spark.sparkContext] is None


def test_batches_are_joined_up_to_the_size_limit(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = _batches()
    assert len(batches) > 1
    assert len(arrowframe._joined(batches)) == 1
    assert arrowframe._joined(batches[:1]) == batches[:1]
    monkeypatch.setattr(arrowframe, "_JOIN_MAX_BYTES", 0)
    assert arrowframe._joined(batches) == batches  # past the limit: handed over as they are
    assert _jvm_rows(arrow_dataframe(spark, batches, SCHEMA)) == _reference(spark, _batches())
