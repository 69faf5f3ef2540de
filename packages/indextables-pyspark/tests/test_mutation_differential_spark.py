"""A seeded random sequence of appends, DELETE FROM (WHERE and QUERY), replaceWhere
writes, overwrites and MERGE SPLITS (with PURGE DELETES) through Spark, against DuckDB
applying the same operations: after each step and at every version (``versionAsOf``),
Spark reads DuckDB's rows."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]
CONDITIONS = ("day = 1", "n < 30", "n IS NULL", "day = 0 AND n > 50")


def _rows(rng: random.Random, start: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "day": rng.randrange(3),
            "n": None if rng.random() < 0.1 else rng.randrange(100),
            "msg": f"w{rng.randrange(4)}",
        }
        for i in range(start, start + count)
    ]


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["id"], row["day"], row["n"], row["msg"])


def test_random_mutations_through_spark_answer_as_duckdb(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    rng = random.Random(21)
    path = str(tmp_path / "t")
    schema = "id long, day long, n long, msg string"
    options = {"spark.indextables.indexing.typemap.msg": "text"}
    duck = duckdb.connect()
    duck.execute("CREATE TABLE model (id BIGINT, day BIGINT, n BIGINT, msg VARCHAR)")

    def insert(rows: list[dict[str, Any]]) -> None:
        if rows:
            duck.register("incoming", pa.Table.from_pylist(rows))
            duck.execute("INSERT INTO model SELECT id, day, n, msg FROM incoming")
            duck.unregister("incoming")

    def model() -> list[tuple[Any, ...]]:
        return sorted(duck.execute("SELECT id, day, n, msg FROM model").fetchall(), key=repr)

    def spark_rows(version: int | None = None) -> list[tuple[Any, ...]]:
        reader = spark.read.format("indextables")
        if version is not None:
            reader = reader.option("versionAsOf", str(version))
        return sorted((_key(r.asDict()) for r in reader.load(path).collect()), key=repr)

    first = _rows(rng, 0, 40)
    itp.write(spark.createDataFrame(first, schema), path, partition_by=["day"], options=options)
    insert(first)
    history = [(_version(path), model())]
    next_id = 1000
    for op in ["delete", "append", "replace", "query", "merge", "overwrite", "delete"]:
        if op == "append":
            rows = _rows(rng, next_id, 15)
            itp.write(spark.createDataFrame(rows, schema), path, options=options)
            insert(rows)
        elif op == "delete":
            where = rng.choice(CONDITIONS)
            itp.sql(spark, f"DELETE FROM '{path}' WHERE {where}")
            duck.execute(f"DELETE FROM model WHERE {where}")
        elif op == "query":
            itp.sql(spark, f"DELETE FROM '{path}' QUERY 'msg:w1'")
            duck.execute("DELETE FROM model WHERE msg = 'w1'")
        elif op == "replace":
            where = rng.choice(CONDITIONS)
            duck.register("candidates", pa.Table.from_pylist(_rows(rng, next_id, 30)))
            rows = duck.sql(f"SELECT * FROM candidates WHERE {where}").to_arrow_table().to_pylist()
            duck.unregister("candidates")
            frame = spark.createDataFrame(rows, schema)
            itp.write(frame, path, mode="overwrite", replace_where=where, options=options)
            duck.execute(f"DELETE FROM model WHERE {where}")
            insert(rows)
        elif op == "merge":
            itp.sql(spark, f"MERGE SPLITS '{path}' PURGE DELETES")
        else:
            rows = _rows(rng, next_id, 12)
            itp.write(spark.createDataFrame(rows, schema), path, mode="overwrite", options=options)
            duck.execute("DELETE FROM model")
            insert(rows)
        next_id += 1000
        assert spark_rows() == model(), op
        history.append((_version(path), model()))
    for version, expected in history:
        assert spark_rows(version) == expected, version


def _version(path: str) -> int:
    from indextables.search import open_table

    return open_table(path).version
