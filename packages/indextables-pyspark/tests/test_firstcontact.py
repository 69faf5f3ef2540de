"""What a newcomer meets first: file: URIs as Spark hands them over, pushdown defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.mark.parametrize("form", ["file:{}", "file://{}", "file://localhost{}"])
def test_every_file_uri_form_reads_writes_and_searches_the_table(
    spark: Any, tmp_path: Path, form: str
) -> None:
    # file:/abs is what Spark hands over (CREATE TABLE ... LOCATION, Hadoop paths).
    table = tmp_path / "t"
    uri = form.format(table)
    df = spark.createDataFrame([(1, "a b"), (2, "c d")], "id long, msg string")
    text = {"spark.indextables.indexing.typemap.msg": "text"}
    df.write.format("indextables").options(**text).mode("append").save(uri)
    assert (table / "_transaction_log").is_dir()
    assert sorted(r.id for r in spark.read.format("indextables").load(uri).collect()) == [1, 2]
    assert sorted(r.id for r in spark.read.format("indextables").load(str(table)).collect()) == [
        1,
        2,
    ]
    assert [r.id for r in itp.search(spark, uri, "msg:c").collect()] == [2]
    assert itp.count(spark, uri) == 2
    itp.write(df, uri, options=text)
    assert itp.count(spark, str(table)) == 4
    described = itp.sql(spark, f"DESCRIBE INDEXTABLES STATE '{uri}'").collect()
    # Right after the writes: no checkpoint yet, said as such.
    assert described[0]["format"] == "none"
    assert "no checkpoint yet" in described[0]["status"], described[0]["status"]
    assert "No state found" not in described[0]["status"]


def test_register_turns_filter_pushdown_on(spark: Any) -> None:
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "false")
    try:
        itp.register(spark)
        assert spark.conf.get(key) == "true"
    finally:
        spark.conf.set(key, "true")


PUSHDOWN_SCRIPT = r"""
import os, sys
from pyspark.sql import SparkSession
os.environ["PYSPARK_PYTHON"] = sys.executable
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.python.filterPushdown.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
from indextables.pyspark.read.datasource import IndexTablesDataSource
spark.dataSource.register(IndexTablesDataSource)  # as auto-registration does: no itp.register
path = sys.argv[1]
spark.range(4).write.format("indextables").mode("append").save(path)
off = spark.read.format("indextables").load(path).where("id = 2").collect()
spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
on = spark.read.format("indextables").load(path).where("id = 3").collect()
spark.stop()
print("RESULT", [r.id for r in off], [r.id for r in on], flush=True)
"""


def test_a_read_planned_with_pushdown_off_logs_one_warning(tmp_path: Path) -> None:
    from indextables.pyspark.read.reader import PUSHDOWN_OFF

    script = tmp_path / "pushdown.py"
    script.write_text(PUSHDOWN_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "t")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert "RESULT [2] [3]" in done.stdout, done.stderr[-3000:]
    # One line for the read planned with pushdown off, none for the one with it on.
    assert (done.stdout + done.stderr).count(PUSHDOWN_OFF) == 1, done.stderr[-3000:]


def test_demo_runs_each_search_on_the_table_and_on_a_parquet_copy(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    source = Path(__file__).resolve().parents[3] / "ci/demo.py"
    spec = importlib.util.spec_from_file_location("indextables_demo", source)
    assert spec is not None
    assert spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    table, parquet = str(tmp_path / "logs"), str(tmp_path / "logs.parquet")
    rows = demo.log_lines(spark, 20000)
    rows.write.format("indextables").options(**demo.WRITE_OPTIONS).mode("append").save(table)
    rows.write.partitionBy("day").parquet(parquet)
    demo.warm_up(spark, table, parquet)  # the first-query cost is explained before timings
    assert "warm-up" in capsys.readouterr().out
    counts = demo.run_searches(spark, table, parquet)
    shown = capsys.readouterr().out
    assert shown.count("IndexTables") == shown.count("Parquet") == len(demo.SEARCHES), shown
    assert len(counts) == len(demo.SEARCHES) >= 6
    assert all(index == plain for index, plain in counts), counts
    assert any(index > 0 for index, _ in counts)
