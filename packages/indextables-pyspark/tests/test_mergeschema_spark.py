"""Spark writes that evolve the table's schema: ``.option("mergeSchema", "true")``.

An append (or overwrite) with the option adds the DataFrame's new columns to the
table's schema in the write's own commit and takes safe upcasts, as
``write_table(schema_mode="merge")``; the rows written before read the added columns
as null in Spark and in the engine, equal to a Python model of the rows. Without the
option the write is refused as before, its message naming the option. The same append
over PySpark's in-process Spark Connect server gives the same rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.search import open_table

pytestmark = pytest.mark.spark

FMT = "indextables"
HOSTS = ["a", "b", "c"]
LEVELS = ["INFO", "WARN", None]


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _engine_rows(
    path: str, columns: list[str], version: int | None = None
) -> list[tuple[Any, ...]]:
    table = open_table(path) if version is None else open_table(path, version=version)
    data = table.to_arrow().to_pydict()
    return sorted(zip(*(data[c] for c in columns), strict=True), key=repr)


def _first(spark: Any, path: str, n: int = 12) -> list[tuple[int, str]]:
    """Version 1 of a table (id long, host string); returns its rows."""
    rows = [(i, HOSTS[i % 3]) for i in range(n)]
    spark.createDataFrame(rows, "id long, host string").write.format(FMT).mode("append").save(path)
    return rows


def _append(df: Any, path: str, **options: str) -> None:
    df.write.format(FMT).mode("append").options(**options).save(path)


def test_append_with_a_new_column_adds_it_in_one_commit(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    first = _first(spark, path)
    before = open_table(path).version
    second = [(100 + i, HOSTS[i % 3], LEVELS[i % 3]) for i in range(9)]
    df = spark.createDataFrame(second, "id long, host string, level string")
    _append(df, path, mergeSchema="true")

    assert open_table(path).version == before + 1  # the schema and the adds: one commit
    model = [(i, h, None) for i, h in first] + second
    read = spark.read.format(FMT).load(path)
    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in read.schema.fields] == [
        ("id", "bigint", True),
        ("host", "string", True),
        ("level", "string", True),
    ]
    assert _rows(read) == sorted(model, key=repr)
    assert _engine_rows(path, ["id", "host", "level"]) == sorted(model, key=repr)
    for where, keep in (
        ("level = 'WARN'", lambda r: r[2] == "WARN"),
        ("level IS NULL", lambda r: r[2] is None),
        ("level IS NOT NULL AND host = 'a'", lambda r: r[2] is not None and r[1] == "a"),
    ):
        assert _rows(read.where(where)) == sorted(filter(keep, model), key=repr), where

    old = spark.read.format(FMT).option("versionAsOf", str(before)).load(path)
    assert old.schema.fieldNames() == ["id", "host"]
    assert _rows(old) == sorted(first, key=repr)
    assert _engine_rows(path, ["id", "host"], version=before) == sorted(first, key=repr)


def test_safe_upcast_and_a_missing_nullable_column(spark: Any, tmp_path: Path) -> None:
    """An int into the long column, no ``host`` (written as nulls), a new double column;
    through ``itp.write(merge_schema=True)``."""
    import indextables.pyspark as itp

    path = str(tmp_path / "t")
    first = _first(spark, path)
    second = [(200 + i, i / 4) for i in range(6)]
    df = spark.createDataFrame(second, "id int, score double")
    itp.write(df, path, merge_schema=True)

    read = spark.read.format(FMT).load(path)
    assert [(f.name, f.dataType.simpleString()) for f in read.schema.fields] == [
        ("id", "bigint"),
        ("host", "string"),
        ("score", "double"),
    ]
    model = [(i, h, None) for i, h in first] + [(i, None, s) for i, s in second]
    assert _rows(read) == sorted(model, key=repr)
    assert _rows(read.where("id >= 203")) == sorted((r for r in model if r[0] >= 203), key=repr)
    assert _engine_rows(path, ["id", "host", "score"]) == sorted(model, key=repr)


def test_refusals_name_the_column_and_the_option(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp
    from indextables.pyspark.errors import ArgumentError

    path = str(tmp_path / "t")
    first = _first(spark, path)
    version = open_table(path).version
    wider = spark.createDataFrame([(50, "a", "x")], "id long, host string, level string")
    with pytest.raises(Exception, match=r"'level'.*mergeSchema"):
        _append(wider, path)
    narrower = spark.createDataFrame([(50, "a")], "id int, host string")
    with pytest.raises(Exception, match=r"do not match.*mergeSchema"):
        _append(narrower, path)
    wrong = spark.createDataFrame([("50", "a")], "id string, host string")
    with pytest.raises(Exception, match=r"column 'id': the data's string .* table's bigint"):
        _append(wrong, path, mergeSchema="true")
    with pytest.raises(Exception, match=r"mergeSchema='yes' is not a boolean"):
        _append(wider, path, mergeSchema="yes")
    with pytest.raises(ArgumentError, match=r"merge_schema='true' must be bool"):
        itp.write(wider, path, merge_schema="true")  # type: ignore[arg-type]
    with pytest.raises(Exception, match=r"overwriteSchema='true' is not supported"):
        wider.write.format(FMT).mode("overwrite").option("overwriteSchema", "true").save(path)
    assert open_table(path).version == version
    assert _rows(spark.read.format(FMT).load(path)) == sorted(first, key=repr)


def test_overwrite_with_merge_schema_keeps_and_adds_columns(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _first(spark, path)
    rows = [(300 + i, LEVELS[i % 3]) for i in range(5)]
    df = spark.createDataFrame(rows, "id long, level string")
    df.write.format(FMT).mode("overwrite").option("mergeSchema", "true").save(path)
    read = spark.read.format(FMT).load(path)
    assert read.schema.fieldNames() == ["id", "host", "level"]
    model = [(i, None, level) for i, level in rows]
    assert _rows(read) == sorted(model, key=repr)
    assert _engine_rows(path, ["id", "host", "level"]) == sorted(model, key=repr)


def test_replace_where_with_merge_schema(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    first = _first(spark, path)
    rows = [(i, "z", float(i)) for i in range(4)]
    df = spark.createDataFrame(rows, "id long, host string, score double")
    (
        df.write.format(FMT)
        .mode("overwrite")
        .option("replaceWhere", "id < 4")
        .option("mergeSchema", "true")
        .save(path)
    )
    model = [(i, h, None) for i, h in first if i >= 4] + rows
    read = spark.read.format(FMT).load(path)
    assert read.schema.fieldNames() == ["id", "host", "score"]
    assert _rows(read) == sorted(model, key=repr)
    assert _engine_rows(path, ["id", "host", "score"]) == sorted(model, key=repr)


def test_a_streaming_sink_refuses_merge_schema(tmp_path: Path) -> None:
    from pyspark.sql.types import LongType, StructField, StructType

    from indextables.pyspark.errors import OptionError
    from indextables.pyspark.read.datasource import IndexTablesDataSource

    source = IndexTablesDataSource({"path": str(tmp_path / "t"), "mergeSchema": "true"})
    schema = StructType([StructField("id", LongType())])
    with pytest.raises(OptionError, match="mergeSchema applies to batch writes"):
        source.streamWriter(schema, False)


_CONNECT_SCRIPT = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["SPARK_TESTING"] = "1"  # the local server on an ephemeral port
from pyspark.sql import SparkSession
path = sys.argv[1]
spark = (
    SparkSession.builder.remote("local[2]")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
import indextables.pyspark as itp
itp.register(spark)
rows = [(100 + i, "h", ["INFO", "WARN", None][i % 3]) for i in range(6)]
df = spark.createDataFrame(rows, "id long, host string, level string")
df.write.format("indextables").mode("append").option("mergeSchema", "true").save(path)
read = spark.read.format("indextables").load(path)
out = {
    "connect": type(spark).__module__.startswith("pyspark.sql.connect"),
    "fields": read.schema.fieldNames(),
    "rows": [list(r) for r in read.collect()],
    "warn": [list(r) for r in read.where("level = 'WARN'").collect()],
}
spark.stop()
print("RESULT " + json.dumps(out))
"""


@pytest.mark.integration
@pytest.mark.slow
def test_merge_schema_over_spark_connect(spark: Any, tmp_path: Path, run_scenario: Any) -> None:
    path = str(tmp_path / "t")
    first = _first(spark, path)
    out = run_scenario(_CONNECT_SCRIPT, path, timeout=1200)
    assert out["connect"] is True
    assert out["fields"] == ["id", "host", "level"]
    second = [(100 + i, "h", LEVELS[i % 3]) for i in range(6)]
    model = [(i, h, None) for i, h in first] + second
    assert sorted(map(tuple, out["rows"]), key=repr) == sorted(model, key=repr)
    warn = [r for r in model if r[2] == "WARN"]
    assert sorted(map(tuple, out["warn"]), key=repr) == sorted(warn, key=repr)
    assert _engine_rows(path, ["id", "host", "level"]) == sorted(model, key=repr)
