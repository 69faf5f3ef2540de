"""The distributed helpers and commands over a real Spark Connect session equal a classic one's.

A separate process (``connectrun.py``) starts PySpark's in-process local Connect
server and runs, on tables this module writes with the classic session:
``itp.count``/``itp.aggregate`` forced distributed (``localMaxSplits=1``),
MERGE SPLITS, ``itp.write`` with merge-on-write and DESCRIBE INDEXTABLES
ENVIRONMENT. Every answer must equal the classic session's on a copy of the same
table, and the counts a Python model of the rows.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

_RUNNER = Path(__file__).with_name("connectrun.py")
_DISTRIBUTED = {"spark.indextables.search.localMaxSplits": "1"}
_TYPEMAP = {"spark.indextables.indexing.typemap.message": "text"}


def _model_rows() -> list[tuple[int, str, str, float]]:
    rnd = random.Random(47)
    rows = []
    for i in range(240):
        level = rnd.choice(["ERROR", "INFO", "WARN"])
        message = f"request {i} " + rnd.choice(["timed out", "ok", "retried"])
        rows.append((i, level, message, round(rnd.uniform(0, 100), 3)))
    return rows


def _splits(path: Path) -> int:
    from indextables.search.table.tableaccess import load_view

    return len(load_view(str(path), {}).splits)


def _rows(spark: Any, path: Path) -> list[list[Any]]:
    frame = spark.read.format("indextables").load(str(path))
    return sorted([list(r) for r in frame.collect()], key=repr)


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: Any) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("connect")
    schema = "id long, level string, message string, latency double"
    frame = spark.createDataFrame(_model_rows(), schema).repartition(12)
    frame.write.format("indextables").options(**_TYPEMAP).mode("append").save(str(root / "t"))
    source = root / "merge-source"
    for start in range(0, 60, 10):
        part = spark.range(start, start + 10, numPartitions=1).selectExpr("id", "id * 2 as y")
        part.write.format("indextables").mode("append").save(str(source))
    for name in ("merge-classic", "merge-connect"):
        shutil.copytree(source, root / name)
    return {
        "table": root / "t",
        "merge-classic": root / "merge-classic",
        "merge-connect": root / "merge-connect",
        "onwrite-classic": root / "onwrite-classic",
        "onwrite-connect": root / "onwrite-connect",
        "root": root,
    }


@pytest.fixture(scope="module")
def connect(tables: dict[str, Path]) -> dict[str, Any]:
    """What the Connect session answered (one server start for the whole module)."""
    job = {
        "table": str(tables["table"]),
        "merge": str(tables["merge-connect"]),
        "onwrite": str(tables["onwrite-connect"]),
    }
    job_file = tables["root"] / "job.json"
    job_file.write_text(json.dumps(job))
    done = subprocess.run(
        [sys.executable, str(_RUNNER), str(job_file)],
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["connect"] is True
    return answer


def test_distributed_count_over_connect_equals_classic(
    spark: Any, tables: dict[str, Path], connect: dict[str, Any]
) -> None:
    import indextables.pyspark as itp

    table = str(tables["table"])
    rows = _model_rows()
    assert _splits(tables["table"]) > 1  # localMaxSplits=1: the plan runs as Spark tasks
    classic = {
        "count": itp.count(spark, table, options=_DISTRIBUTED),
        "count_query": itp.count(spark, table, query="message:timed", options=_DISTRIBUTED),
        "count_where": itp.count(spark, table, where="level = 'ERROR'", options=_DISTRIBUTED),
    }
    model = {
        "count": len(rows),
        "count_query": sum("timed" in r[2] for r in rows),
        "count_where": sum(r[1] == "ERROR" for r in rows),
    }
    assert classic == model
    assert {k: connect[k] for k in model} == model


def test_distributed_aggregate_over_connect_equals_classic(
    spark: Any, tables: dict[str, Path], connect: dict[str, Any]
) -> None:
    import indextables.pyspark as itp

    frame = itp.aggregate(
        spark,
        str(tables["table"]),
        group_by="level",
        metrics={"n": "count", "total": ("sum", "id"), "top": ("max", "latency")},
        options=_DISTRIBUTED,
    )
    classic = sorted([list(r) for r in frame.collect()], key=repr)
    model: dict[str, list[Any]] = {}
    for i, level, _, latency in _model_rows():
        n, total, top = model.get(level, [0, 0, float("-inf")])
        model[level] = [n + 1, total + i, max(top, latency)]
    by_level = {r[0]: list(r[1:]) for r in classic}
    assert by_level == model
    assert connect["aggregate"] == classic


def test_merge_splits_over_connect_equals_classic(
    spark: Any, tables: dict[str, Path], connect: dict[str, Any]
) -> None:
    import indextables.pyspark as itp

    path = tables["merge-classic"]
    merged = itp.sql(spark, f"MERGE SPLITS '{path}'").first().asDict(recursive=True)
    classic = {
        "status": merged["metrics"]["status"],
        "splits": _splits(path),
        "rows": _rows(spark, path),
    }
    assert classic["splits"] < 6
    assert sorted(tuple(r) for r in classic["rows"]) == [(i, i * 2) for i in range(60)]
    assert connect["merge"] == classic


def test_merge_on_write_over_connect_equals_classic(
    spark: Any, tables: dict[str, Path], connect: dict[str, Any]
) -> None:
    import indextables.pyspark as itp

    path = str(tables["onwrite-classic"])
    mow = "spark.indextables.mergeOnWrite."
    options = {mow + "enabled": "true", mow + "async.enabled": "false"}
    frame = spark.range(40, numPartitions=4).selectExpr("id", "cast(id % 2 as string) as part")
    itp.write(frame, path, partition_by=["part"])
    result = itp.write(frame, path, partition_by=["part"], options=options)
    assert result.maintenance is not None
    outcome = result.maintenance.result(timeout=600)
    classic = {
        "merged_groups": outcome.merged_groups,
        "error": outcome.error,
        "splits": _splits(tables["onwrite-classic"]),
        "rows": _rows(spark, tables["onwrite-classic"]),
    }
    assert (classic["merged_groups"], classic["error"], classic["splits"]) == (2, None, 2)
    assert connect["onwrite"] == classic


def test_describe_environment_over_connect_reports_the_workers(
    spark: Any, connect: dict[str, Any]
) -> None:
    import indextables.pyspark as itp

    classic = [r.asDict() for r in itp.sql(spark, "DESCRIBE INDEXTABLES ENVIRONMENT").collect()]

    def part(rows: list[dict[str, Any]], role: str, kinds: set[str]) -> set[tuple[Any, ...]]:
        return {
            tuple(r.values()) for r in rows if r["role"] == role and r["property_type"] in kinds
        }

    workers = part(classic, "worker", {"python", "package"})
    assert ("package", "indextables-pyspark") in {(w[2], w[3]) for w in workers}
    assert part(connect["environment"], "worker", {"python", "package"}) == workers
    versions = part(classic, "driver", {"python", "package"})
    assert part(connect["environment"], "driver", {"python", "package"}) == versions
    # Over Connect the session's settings are what the server tells the client.
    settings = {r["property_name"] for r in connect["environment"] if r["property_type"] == "spark"}
    assert "spark.sql.session.timeZone" in settings
