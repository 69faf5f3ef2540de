"""Spark's ``replaceWhere`` option and ``itp.write(..., replace_where=)``.

The oracle is a Python model: the rows before, minus those the condition matches,
plus the new rows; the engine's ``write_table`` tests cover the random cases.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.search import open_table


def _rows(seed: int, start: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {"id": i, "day": f"d{rng.randrange(4)}", "n": rng.randrange(50)}
        for i in range(start, start + n)
    ]


def _table(spark: Any, rows: list[dict[str, Any]]) -> Any:
    return spark.createDataFrame(rows, "id long, day string, n long")


def _ids(path: str) -> list[int]:
    return sorted(open_table(path).search(columns=["id"]).column("id").to_pylist())


def test_replace_where_option_and_itp_write_replace_the_matching_rows(
    spark: Any, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    old = _rows(1, 0, 60)
    itp.write(_table(spark, old), path, partition_by=["day"])
    before = open_table(path).version
    new = [r for r in _rows(2, 100, 40) if r["day"] == "d1"]
    (
        _table(spark, new)
        .write.format("indextables")
        .mode("overwrite")
        .option("replaceWhere", "day = 'd1'")
        .save(path)
    )
    assert open_table(path).version == before + 1
    model = [r for r in old if r["day"] != "d1"] + new
    assert _ids(path) == sorted(r["id"] for r in model)
    # a condition on a data column: rows deleted in place, new rows added, one commit
    newer = [r for r in _rows(3, 200, 40) if r["n"] < 20]
    itp.write(_table(spark, newer), path, mode="overwrite", replace_where="n < 20")
    model = [r for r in model if not r["n"] < 20] + newer
    assert _ids(path) == sorted(r["id"] for r in model)
    got = spark.read.format("indextables").load(path).orderBy("id").collect()
    assert [r.asDict() for r in got] == sorted(model, key=lambda r: r["id"])


def test_rows_outside_the_condition_fail_the_write_with_nothing_committed(
    spark: Any, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    _table(spark, _rows(4, 0, 20)).write.format("indextables").mode("append").save(path)
    version = open_table(path).version
    with pytest.raises(Exception, match=r"ReplaceWhereMismatchError|does not match"):
        itp.write(_table(spark, _rows(5, 50, 20)), path, mode="overwrite", replace_where="n < 10")
    assert open_table(path).version == version
    with pytest.raises(Exception, match="replaceWhere"):
        (
            _table(spark, _rows(6, 90, 5))
            .write.format("indextables")
            .mode("append")
            .option("replaceWhere", "n < 10")
            .save(path)
        )
    assert open_table(path).version == version
