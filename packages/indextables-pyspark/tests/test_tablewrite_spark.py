"""write_table <-> Spark: each reads exactly what the other wrote, and they append to each other."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.table.tableaccess import load_view

pytestmark = pytest.mark.spark

FMT = "indextables"


def _writedata() -> Any:
    """The engine tests' random hostile data (one module, shared by path)."""
    path = Path(__file__).resolve().parents[2] / "indextables-search/tests/writedata.py"
    spec = importlib.util.spec_from_file_location("writedata", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("writedata", module)
    spec.loader.exec_module(module)
    return module


wd = _writedata()
# Top-level kinds plus a decimal partition column: every kind the engine tests cover.
PARTS = ("string", "int32", "double", "date", "timestamp", "decimal", "bool")


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


def _frame(spark: Any, data: pa.Table) -> Any:
    """A DataFrame of ``data`` typed as write_table types it (naive timestamps -> ntz)."""
    return spark.createDataFrame(data, schema=_spark_schema(data.schema))


def _spark_rows(spark: Any, path: str) -> tuple[Any, list[Any]]:
    df = spark.read.format(FMT).load(path)
    return df.schema, wd.row_multiset(df.toArrow().to_pylist())


@pytest.mark.parametrize("seed", [21, 22])
def test_spark_reads_write_table_exactly(spark: Any, tmp_path: Path, seed: int) -> None:
    import random

    data = wd.random_table(seed, 150)
    part = wd.partition_column(random.Random(seed), PARTS[seed % len(PARTS)], 150)
    data = data.append_column("part", part)
    path = str(tmp_path / "t")
    write_table(path, data, partition_by=["part"])
    schema, rows = _spark_rows(spark, path)
    assert schema == _spark_schema(data.schema)
    assert rows == wd.row_multiset(data.to_pylist())


def test_same_log_as_spark_for_the_same_data(spark: Any, tmp_path: Path) -> None:
    data = wd.random_table(5, 40).append_column("p", pa.array(["a", "b"] * 20))
    by_spark, by_engine = str(tmp_path / "spark"), str(tmp_path / "engine")
    options = {"spark.indextables.indexing.typemap.c_string": "text"}
    writer = _frame(spark, data).write.format(FMT).options(**options).option("partitionBy", "p")
    writer.mode("append").save(by_spark)
    write_table(by_engine, data, partition_by="p", options=options)
    spark_view, engine_view = load_view(by_spark, {}), load_view(by_engine, {})
    assert engine_view.schema_json == spark_view.schema_json
    assert engine_view.partition_columns == spark_view.partition_columns
    assert dict(engine_view.configuration) == dict(spark_view.configuration)
    spark_parts = sorted(json.dumps(s.partition_values) for s in spark_view.splits)
    engine_parts = sorted(json.dumps(s.partition_values) for s in engine_view.splits)
    assert sorted(set(engine_parts)) == sorted(set(spark_parts))
    assert _spark_rows(spark, by_engine) == _spark_rows(spark, by_spark)


@pytest.mark.parametrize("seed", [31, 32])
def test_open_table_reads_a_spark_table_exactly(spark: Any, tmp_path: Path, seed: int) -> None:
    import random

    from indextables.pyspark.read.sparktypes import arrow_schema

    data = wd.random_table(seed, 150).append_column(
        "part", wd.partition_column(random.Random(seed), PARTS[seed % len(PARTS)], 150)
    )
    path = str(tmp_path / "t")
    # Spark's own conversion (naive timestamps become session-time instants)
    frame = spark.createDataFrame(data).repartition(3)
    frame.write.format(FMT).option("partitionBy", "part").mode("append").save(path)
    df = spark.read.format(FMT).load(path)
    table = open_table(path)
    assert table.schema == arrow_schema(df.schema)
    got = wd.row_multiset(table.to_arrow().to_pylist())
    assert got == wd.row_multiset(df.toArrow().to_pylist())
    assert len(got) == 150


def test_spark_and_write_table_append_to_each_other(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    first, second, third = (wd.random_table(s, 60) for s in (41, 42, 43))
    part = pa.array([1, 2, 3] * 20, pa.int64())
    first, second, third = (t.append_column("p", part) for t in (first, second, third))
    write_table(path, first, partition_by=["p"])
    _frame(spark, second).write.format(FMT).mode("append").save(path)
    write_table(path, third)
    expected = wd.row_multiset(first.to_pylist() + second.to_pylist() + third.to_pylist())
    assert _spark_rows(spark, path)[1] == expected
    assert wd.row_multiset(open_table(path).to_arrow().to_pylist()) == expected
    # and an overwrite through either side replaces every row
    _frame(spark, third).write.format(FMT).mode("overwrite").save(path)
    assert _spark_rows(spark, path)[1] == wd.row_multiset(third.to_pylist())
    write_table(path, second, mode="overwrite")
    assert _spark_rows(spark, path)[1] == wd.row_multiset(second.to_pylist())


def test_pandas_input(spark: Any, tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "s": ["a", None, "ü"],
            "n": pd.array([1, None, -3], "Int64"),
            "t": pd.to_datetime(
                ["2024-01-01 00:00:00.000001999", None, "1969-12-31 23:59:59.999999999"]
            ),
        }
    )
    path = str(tmp_path / "t")
    write_table(path, frame)
    schema, rows = _spark_rows(spark, path)
    assert schema.simpleString() == "struct<s:string,n:bigint,t:timestamp_ntz>"
    # nanoseconds floored to the microsecond, as Spark's createDataFrame floors them
    expected = [
        {"s": "a", "n": 1, "t": dt.datetime(2024, 1, 1, 0, 0, 0, 1)},
        {"s": None, "n": None, "t": None},
        {"s": "ü", "n": -3, "t": dt.datetime(1969, 12, 31, 23, 59, 59, 999999)},
    ]
    assert rows == wd.row_multiset(expected)


def test_nullability_is_recorded_as_spark_records_it(spark: Any, tmp_path: Path) -> None:
    schema = pa.schema(
        [
            pa.field("a", pa.int64(), nullable=False),
            pa.field("s", pa.struct([pa.field("x", pa.int32(), nullable=False)])),
            pa.field("l", pa.list_(pa.field("e", pa.int32(), nullable=False))),
        ]
    )
    data = pa.table({"a": [1, 2], "s": [{"x": 1}, {"x": 2}], "l": [[1], None]}, schema=schema)
    by_spark, by_engine = str(tmp_path / "spark"), str(tmp_path / "engine")
    _frame(spark, data).write.format(FMT).mode("append").save(by_spark)
    write_table(by_engine, data)
    assert load_view(by_engine, {}).schema_json == load_view(by_spark, {}).schema_json
    assert _spark_rows(spark, by_engine) == _spark_rows(spark, by_spark)


def test_merge_splits_keeps_every_row_search_and_count(spark: Any, tmp_path: Path) -> None:
    """MERGE SPLITS through itp.sql (segments bundled unchanged) on hostile data with
    partitions: spark.read rows, a pushed-down search, counts and an aggregation are
    those of the sources, and all of them are Spark's own answer over Parquet."""
    import random

    import indextables.pyspark as itp

    path, parquet = str(tmp_path / "t"), str(tmp_path / "p")
    parts = []
    for seed in (31, 32, 33):
        data = wd.random_table(seed, 90)
        data = data.set_column(0, "id", pa.array(range(seed * 100, seed * 100 + 90), pa.int64()))
        part = wd.partition_column(random.Random(seed), "bool", 90)  # true, false, null
        parts.append(data.append_column("part", part))
        write_table(path, parts[-1], partition_by=["part"])
    whole = pa.concat_tables(parts)
    _frame(spark, whole).write.partitionBy("part").parquet(parquet)

    def answers(df: Any) -> dict[str, Any]:
        where = "c_double > 0 OR c_string = '' OR id BETWEEN 3110 AND 3140"
        grouped = df.groupBy("part").agg({"c_int32": "sum", "id": "count"})
        return {
            "rows": wd.row_multiset(df.toArrow().to_pylist()),
            "where": wd.row_multiset(df.where(where).toArrow().to_pylist()),
            "count": df.where("id >= 3200").count(),
            "grouped": wd.row_multiset(grouped.toArrow().to_pylist()),
        }

    before = answers(spark.read.format(FMT).load(path))
    assert before == answers(spark.read.schema(_spark_schema(whole.schema)).parquet(parquet))
    sources = len(load_view(path, {}).splits)
    merged = itp.sql(spark, f"MERGE SPLITS '{path}'").first().asDict(recursive=True)
    assert (merged["metrics"]["merged_files"], merged["new_files"]) == (sources, 3)
    assert answers(spark.read.format(FMT).load(path)) == before
    assert itp.count(spark, path, query="id:[3100 TO 3189]") == 90
