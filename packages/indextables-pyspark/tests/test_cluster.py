"""Executors in separate JVMs and Python workers: local-cluster[2,1,1024], run in a subprocess.

A second SparkContext cannot live in the test process beside the session
fixture, so the scenario runs in its own interpreter and reports JSON.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.integration]

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    import indextables.pyspark as itp
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.python.filterPushdown.enabled", "true").getOrCreate())
    itp.register(spark)
    path = sys.argv[1]
    df = spark.range(0, 1000, numPartitions=4).selectExpr(
        "id", "cast(id % 4 as string) as part", "concat('event number ', id) as message")
    (df.write.format("indextables").mode("append")
       .option("partitionBy", "part")
       .option("spark.indextables.indexing.typemap.message", "text").save(path))
    table = spark.read.format("indextables").load(path)
    result = {
        "count": table.count(),
        "filtered": table.where("id >= 990").count(),
        "after_filter": table.count(),
        "query": spark.read.format("indextables").option("query", "message:7").load(path).count(),
        "view_after_append": None,
        "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1,
    }
    # A temporary view keeps its first plan: after an append, the reused plan must
    # see the new rows (claims are read back from the table store on any executor).
    table.createOrReplaceTempView("v")
    spark.sql("SELECT * FROM v WHERE id < 5").count()
    spark.range(1000, 1010, numPartitions=2).selectExpr(
        "id", "'9' as part", "'late event' as message").write.format("indextables").mode(
        "append").option("partitionBy", "part").save(path)
    result["view_after_append"] = spark.sql("SELECT count(*) AS n FROM v").first()["n"]
    result["claims"] = len(os.listdir(os.path.join(path, "_indextables_plans")))
    print("RESULT " + json.dumps(result))
    spark.stop()
    """
)


def test_local_cluster_write_and_read(tmp_path: Path, run_scenario: Any) -> None:
    # Standalone workers write their directories under SPARK_WORKER_DIR (default: SPARK_HOME).
    result = run_scenario(
        SCRIPT, str(tmp_path / "table"), env={"SPARK_WORKER_DIR": str(tmp_path / "work")}
    )
    claims = result.pop("claims")
    assert result == {
        "count": 1000,
        "filtered": 10,
        "after_filter": 1000,  # a reused plan (the filtered one) run for a plain count
        "query": 1,
        "executors": 2,
        "view_after_append": 1010,
    }
    assert claims >= 4  # one per planned read, in the table's own store
