"""``MERGE SPLITS '<path>' ... PURGE DELETES [MIN DELETED FRACTION f]`` through ``itp.sql``.

The oracle is a Python model of the written rows minus the deleted ones; which
splits carry deletes is read from the log's ``deleteOpstamp``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import SqlCommandError
from indextables.pyspark.sqlcommands.commands import parse
from indextables.search.table.tableaccess import load_view


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("MERGE SPLITS '/t' PURGE DELETES", {"path": "/t", "purge": " PURGE DELETES"}),
        (
            "merge splits /t where day = 'x' target size 1M purge deletes "
            "min deleted fraction 0.25",
            {
                "path": "/t",
                "where": "day = 'x'",
                "size": "1M",
                "purge": " purge deletes min deleted fraction 0.25",
                "fraction": "0.25",
            },
        ),
    ],
)
def test_purge_deletes_parses(text: str, args: dict[str, str]) -> None:
    assert parse(text) == ("merge", args)


@pytest.mark.parametrize("fraction", ["0", "1.5", "x"])
def test_a_bad_fraction_is_refused(fraction: str) -> None:
    with pytest.raises(SqlCommandError, match="MIN DELETED FRACTION"):
        parse(f"MERGE SPLITS '/t' PURGE DELETES MIN DELETED FRACTION {fraction}")


@pytest.mark.spark
def test_purge_deletes_rewrites_every_split_with_deletes(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    rng = random.Random(5)
    rows = [{"id": i, "level": rng.choice(["INFO", "WARN"]), "n": i % 7} for i in range(90)]
    path = str(tmp_path / "t")
    df = spark.createDataFrame(rows, "id long, level string, n long")
    for low in (0, 30, 60):
        part = df.where(f"id >= {low} AND id < {low + 30}")
        part.write.format("indextables").mode("append").save(path)
    itp.sql(spark, f"DELETE FROM '{path}' WHERE level = 'WARN' AND id < 50")
    alive = sorted(r["id"] for r in rows if not (r["level"] == "WARN" and r["id"] < 50))
    before = load_view(path, {}).splits
    with_deletes = [s for s in before if s.delete_opstamp is not None]
    assert with_deletes

    result = itp.sql(spark, f"MERGE SPLITS '{path}' TARGET SIZE 1 PURGE DELETES").first()
    assert result["metrics"]["status"] == "success"
    assert result["metrics"]["merged_files"] == len(with_deletes)
    view = load_view(path, {})
    assert len(view.splits) == len(before)
    assert all(s.delete_opstamp is None for s in view.splits)
    frame = spark.read.format("indextables").load(path)
    assert sorted(r.id for r in frame.select("id").collect()) == alive
    assert itp.count(spark, path) == len(alive)
    again = itp.sql(spark, f"MERGE SPLITS '{path}' TARGET SIZE 1 PURGE DELETES").first()
    assert again["metrics"]["status"] == "no_action"
