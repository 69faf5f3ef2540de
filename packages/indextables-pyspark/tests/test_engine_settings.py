"""Engine settings given as options reach the engine, and bad values fail at planning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.protocol import open_table
from indextables.pyspark.errors import OptionError
from indextables.search.table.tableaccess import engine_config

INTERVAL = "spark.indextables.checkpoint.interval"


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        (INTERVAL, "0", ">= 1"),
        (INTERVAL, "-3", ">= 1"),
        (INTERVAL, "ten", "not a whole number"),
        ("spark.indextables.transaction.retry.maxAttempts", "0", ">= 1"),
        ("spark.indextables.purge.txLogRetentionHours", "inf", "between 0"),
        ("spark.indextables.state.retention.hours", "99999999999999", "between 0"),
        ("spark.indextables.checkpoint.enabled", "yes", "true or false"),
    ],
)
def test_bad_engine_settings_name_their_key(key: str, value: str, fragment: str) -> None:
    with pytest.raises(OptionError, match=fragment) as caught:
        engine_config({key: value})
    assert key in str(caught.value)


def test_settings_match_keys_case_insensitively() -> None:
    assert engine_config({"SPARK.INDEXTABLES.CHECKPOINT.INTERVAL": "3"}).checkpoint_interval == 3


def test_a_write_with_a_bad_setting_fails_before_any_task(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    frame = spark.createDataFrame([(1, "a")], "id long, s string")
    with pytest.raises(Exception, match=r"checkpoint\.interval") as caught:
        frame.write.format("indextables").option(INTERVAL, "0").mode("append").save(path)
    assert "OptionError" in str(caught.value) or "checkpoint.interval" in str(caught.value)
    assert not (tmp_path / "t" / "_transaction_log").exists()


def test_the_checkpoint_interval_option_reaches_the_engine(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    frame = spark.createDataFrame([(1, "a")], "id long, s string")
    for _ in range(3):
        frame.write.format("indextables").option(INTERVAL, "1").mode("append").save(path)
    states = sorted(p.name for p in (tmp_path / "t" / "_transaction_log").glob("state-v*"))
    # Every version got a state with interval 1 (the default of 10 writes none by version 3).
    assert states[-3:] == [f"state-v{v:020d}" for v in (1, 2, 3)]
    assert open_table(path).snapshot().num_files == 3


def test_itp_sql_takes_options(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    spark.createDataFrame([(1, "a")], "id long, s string").write.format("indextables").mode(
        "append"
    ).save(path)
    with pytest.raises(OptionError, match="maxAttempts"):
        itp.sql(
            spark,
            f"CHECKPOINT INDEXTABLES '{path}'",
            options={"spark.indextables.transaction.retry.maxAttempts": "0"},
        )
    rows = itp.sql(spark, f"CHECKPOINT INDEXTABLES '{path}'", options={INTERVAL: "5"}).collect()
    assert rows[0]["status"].startswith("SUCCESS")
