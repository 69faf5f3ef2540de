"""Spark reads a table whose schema write_table evolved (schema_mode="merge"): the splits
written before read the added columns as null, filters on them keep exactly the rows a
Python model keeps, and time travel to a version before the change has the old schema."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import write_table

pytestmark = pytest.mark.spark

FMT = "indextables"


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def test_spark_reads_added_columns_as_null_and_time_travels_across_the_change(
    spark: Any, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    rng = random.Random(31)
    n1, n2 = 40, 30
    first = pa.table(
        {
            "id": pa.array(range(n1), pa.int64()),
            "host": [rng.choice(["a", "b", "c"]) for _ in range(n1)],
        }
    )
    before = write_table(path, first).version
    levels = [rng.choice(["INFO", "WARN", None]) for _ in range(n2)]
    latency = [rng.choice([None, rng.uniform(0, 10)]) for _ in range(n2)]
    second = pa.table(
        {
            "id": pa.array(range(n1, n1 + n2), pa.int32()),  # a safe upcast to long
            "level": levels,
            "latency": pa.array(latency, pa.float32()),  # a new column, widened by Spark
        }
    )
    write_table(path, second, schema_mode="merge")

    df = spark.read.format(FMT).load(path)
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("id", "bigint"),
        ("host", "string"),
        ("level", "string"),
        ("latency", "float"),
    ]
    model = [(i, first.column("host")[i].as_py(), None, None) for i in range(n1)]
    floats = pa.array(latency, pa.float32()).to_pylist()
    model += [(n1 + i, None, levels[i], floats[i]) for i in range(n2)]
    assert _rows(df) == sorted(model)
    nulls = [r[0] for r in model if r[2] is None]
    assert sorted(r[0] for r in df.where("level IS NULL").select("id").collect()) == nulls
    warns = [r[0] for r in model if r[2] == "WARN"]
    assert sorted(r[0] for r in df.where("level = 'WARN'").select("id").collect()) == warns
    hosts = [r[0] for r in model if r[1] is None]
    assert sorted(r[0] for r in df.where("host IS NULL").select("id").collect()) == hosts

    old = spark.read.format(FMT).option("versionAsOf", before).load(path)
    assert [f.name for f in old.schema.fields] == ["id", "host"]
    assert _rows(old) == sorted((r[0], r[1]) for r in model[:n1])


def test_itp_write_takes_error_and_ignore_as_write_table_does(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp
    from indextables.search.errors import TableExistsError

    for mode in ("error", "ignore"):
        path = str(tmp_path / mode)
        first = itp.write(spark.range(3), path, mode=mode)  # a new table: written
        assert sorted(r.id for r in spark.read.format(FMT).load(path).collect()) == [0, 1, 2]
        if mode == "error":
            with pytest.raises(TableExistsError, match="is already a table"):
                itp.write(spark.range(5), path, mode=mode)
        else:
            assert itp.write(spark.range(5), path, mode=mode).version == first.version
        assert sorted(r.id for r in spark.read.format(FMT).load(path).collect()) == [0, 1, 2]
        engine = str(tmp_path / f"engine-{mode}")
        write_table(engine, pa.table({"id": [7]}))
        with pytest.raises(TableExistsError):
            itp.write(spark.range(1), engine, mode="error")
