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
    import glob, json, os, sys
    os.environ["PYSPARK_PYTHON"] = sys.executable
    path, driver_dir, executor_cache = sys.argv[1:4]
    os.chdir(driver_dir)  # the driver's working directory: relative paths resolve here
    from pyspark.sql import SparkSession
    import indextables.pyspark as itp
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]")
             .config("spark.ui.enabled", "false")
             # The executors' environment names another default split cache than the
             # driver's (INDEXTABLES_CACHE_DIR of this process): theirs must be used.
             .config("spark.executorEnv.INDEXTABLES_CACHE_DIR", executor_cache)
             .config("spark.sql.python.filterPushdown.enabled", "true").getOrCreate())
    itp.register(spark)
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
    driver_cache = os.environ["INDEXTABLES_CACHE_DIR"]
    result["caches"] = {
        "driver": sorted(os.listdir(driver_cache)) if os.path.isdir(driver_cache) else [],
        "executors": len(os.listdir(executor_cache)) if os.path.isdir(executor_cache) else 0,
    }
    # A relative path, written and read as Spark's Parquet source takes one.
    small = df.where("id < 40").coalesce(2)
    (small.write.format("indextables").mode("append").option("partitionBy", "part")
       .option("spark.indextables.indexing.typemap.message", "text").save("rel/logs"))
    small.write.parquet("rel/parquet")
    relative = spark.read.format("indextables").load("rel/logs")
    executor_dirs = sorted(set(spark.sparkContext.parallelize(range(4), 4).map(
        lambda _: os.getcwd()).collect()))
    result["relative"] = {
        "count": relative.count(),
        "itp_count": itp.count(spark, "rel/logs", query="message:7"),
        "splits": sorted(glob.glob("*/*.split", root_dir=os.path.join(driver_dir, "rel/logs"))),
        "parquet_here": os.path.isdir(os.path.join(driver_dir, "rel/parquet")),
        "log_here": os.path.isdir(os.path.join(driver_dir, "rel/logs/_transaction_log")),
        "executor_dirs": len(executor_dirs),
        "in_executor_dirs": [d for d in executor_dirs if os.path.exists(os.path.join(d, "rel"))],
    }
    print("RESULT " + json.dumps(result))
    spark.stop()
    """
)


def test_local_cluster_write_and_read(tmp_path: Path, run_scenario: Any) -> None:
    # Standalone workers write their directories under SPARK_WORKER_DIR (default: SPARK_HOME).
    driver_dir, driver_cache, executor_cache = (tmp_path / n for n in ("driver", "c1", "c2"))
    driver_dir.mkdir()
    args = [str(tmp_path / "table"), str(driver_dir), str(executor_cache)]
    env = {"SPARK_WORKER_DIR": str(tmp_path / "work"), "INDEXTABLES_CACHE_DIR": str(driver_cache)}
    result = run_scenario(SCRIPT, *args, env=env, timeout=1800)  # ~10 min at a load of 20
    claims = result.pop("claims")
    # The executors cached the splits they read in their own default directory, not in the
    # driver's that planned the reads.
    caches = result.pop("caches")
    assert caches["driver"] == []
    assert caches["executors"] > 0
    relative = result.pop("relative")
    splits = relative.pop("splits")
    # One table in the driver's directory, beside the Parquet written with the same path:
    # its log and the splits of every task (4 partition values, none in an executor's dir).
    assert relative == {
        "count": 40,
        "itp_count": 1,
        "parquet_here": True,
        "log_here": True,
        "executor_dirs": 2,
        "in_executor_dirs": [],
    }
    assert {s.split("/")[0] for s in splits} == {"part=0", "part=1", "part=2", "part=3"}
    assert result == {
        "count": 1000,
        "filtered": 10,
        "after_filter": 1000,  # a reused plan (the filtered one) run for a plain count
        "query": 1,
        "executors": 2,
        "view_after_append": 1010,
    }
    assert claims >= 4  # one per planned read, in the table's own store
