"""Executors in separate JVMs and Python workers: local-cluster[2,1,1024], run in a subprocess.

A second SparkContext cannot live in the test process beside the session
fixture, so the scenario runs in its own interpreter and reports JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

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
        "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1,
    }
    print("RESULT " + json.dumps(result))
    spark.stop()
    """
)


def test_local_cluster_write_and_read(tmp_path: Path) -> None:
    script = tmp_path / "scenario.py"
    script.write_text(SCRIPT)
    # Standalone workers write their directories under SPARK_WORKER_DIR (default: SPARK_HOME).
    env = {**os.environ, "SPARK_WORKER_DIR": str(tmp_path / "work")}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "table")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT ") :])
    assert result == {
        "count": 1000,
        "filtered": 10,
        "after_filter": 1000,
        "query": 1,
        "executors": 2,
    }
