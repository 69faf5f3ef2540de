"""DELETE FROM through ``itp.sql``, and Spark's reads of a table with deleted rows.

The oracle is a Python model of the written rows minus those each condition names.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import SqlCommandError
from indextables.pyspark.sqlcommands.commands import parse


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("DELETE FROM '/t' WHERE a = 1", {"path": "/t", "where": "a = 1"}),
        ("delete from \"/t\" where a = 'x';", {"path": "/t", "where": "a = 'x'"}),
        ("DELETE FROM '/t' QUERY 'msg:it''s'", {"path": "/t", "query": "msg:it''s"}),
        (
            "DELETE FROM 's3://b/t' QUERY 'level:ERROR' WHERE id > 3",
            {"path": "s3://b/t", "query": "level:ERROR", "where": "id > 3"},
        ),
    ],
)
def test_delete_statements_parse(text: str, args: dict[str, str]) -> None:
    assert parse(text) == ("delete", args)


def test_delete_from_a_catalog_table_stays_sparks() -> None:
    assert parse("DELETE FROM events WHERE id = 1") is None


def test_a_delete_statement_that_does_not_parse_is_refused() -> None:
    with pytest.raises(SqlCommandError, match="cannot parse"):
        parse("DELETE FROM '/t' QUERY level:ERROR")


def _rows(n: int) -> list[dict[str, Any]]:
    rng = random.Random(11)
    return [
        {
            "id": i,
            "level": rng.choice(["INFO", "WARN", "ERROR"]),
            "message": f"{rng.choice(['disk', 'net', 'cpu'])} event {i}",
            "day": f"2024-01-0{i % 3 + 1}",
        }
        for i in range(n)
    ]


@pytest.mark.spark
@pytest.mark.parametrize("copy", ["all", "required"])
def test_delete_from_then_spark_reads_the_rows_left(spark: Any, tmp_path: Path, copy: str) -> None:
    import indextables.pyspark as itp

    rows = _rows(150)
    path = str(tmp_path / "t")
    df = spark.createDataFrame(rows)
    options = {
        "spark.indextables.indexing.typemap.message": "text",
        "spark.indextables.indexWriter.arrowCopy": copy,
        "partitionBy": "day",
    }
    for low, high in ((0, 75), (75, 150)):
        part = df.where(f"id >= {low} AND id < {high}")
        part.write.format("indextables").options(**options).mode("append").save(path)
    alive = {r["id"] for r in rows}

    result = itp.sql(spark, f"DELETE FROM '{path}' WHERE level = 'ERROR' AND id < 100").first()
    gone = {r["id"] for r in rows if r["level"] == "ERROR" and r["id"] < 100}
    assert result["status"] == "SUCCESS"
    assert result["num_deleted_rows"] == len(gone)
    alive -= gone
    result = itp.sql(spark, f"DELETE FROM '{path}' QUERY 'message:disk'").first()
    gone = {r["id"] for r in rows if r["message"].startswith("disk ") and r["id"] in alive}
    assert result["num_deleted_rows"] == len(gone)
    alive -= gone
    result = itp.sql(spark, f"DELETE FROM '{path}' WHERE id < 0").first()
    assert result["status"] == "NO_ACTION"
    assert result["version"] is None

    frame = spark.read.format("indextables").load(path)
    assert frame.count() == len(alive)
    assert sorted(r.id for r in frame.select("id").collect()) == sorted(alive)
    warned = {r["id"] for r in rows if r["level"] == "WARN"} & alive
    assert frame.where("level = 'WARN'").count() == len(warned)
    by_day = {r.day: r[1] for r in frame.groupBy("day").count().collect()}
    assert by_day == {
        d: sum(1 for r in rows if r["id"] in alive and r["day"] == d)
        for d in {r["day"] for r in rows}
    }
    searched = itp.search(spark, path, "message:net")
    net = {r["id"] for r in rows if r["message"].startswith("net ")} & alive
    assert sorted(r.id for r in searched.select("id").collect()) == sorted(net)
    before = spark.read.format("indextables").option("versionAsOf", "2").load(path)
    assert before.count() == 150  # time travel before the deletes sees every row
    assert itp.count(spark, path) == len(alive)  # from the log's numRecords
    assert itp.count(spark, path, where="level = 'WARN'") == len(warned)  # from the index
    assert itp.count(spark, path, version=2) == 150
    totals = itp.aggregate(spark, path, group_by=["level"], metrics={"c": "count"}).collect()
    assert {r.level: r.c for r in totals} == {
        level: sum(1 for r in rows if r["id"] in alive and r["level"] == level)
        for level in {r["level"] for r in rows if r["id"] in alive}
    }


@pytest.mark.spark
def test_delete_from_without_a_condition_is_refused(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    path = str(tmp_path / "t")
    spark.createDataFrame(_rows(5)).write.format("indextables").mode("append").save(path)
    with pytest.raises(SqlCommandError, match="needs a WHERE condition or a QUERY"):
        itp.sql(spark, f"DELETE FROM '{path}'")
    assert spark.read.format("indextables").load(path).count() == 5
