"""Shared fixtures: golden tables, a session-scoped local[2] SparkSession."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis must not depend on the machine's speed (CI runs at load 20): no deadline and no
# "input generation is slow" health check, for every test that does not set its own.
settings.register_profile(
    "machine-independent", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("machine-independent")

# The golden-table fixtures, shared with the engine's tests (its tests/goldenfixtures.py).
sys.path.append(str(Path(__file__).resolve().parents[2] / "indextables-search/tests"))
import privatecache  # noqa: E402
from goldenfixtures import GOLDEN, GOLDEN_NAMES, expected, golden_copy, sort_rows  # noqa: E402

__all__ = ["GOLDEN", "GOLDEN_NAMES", "expected", "golden_copy", "sort_rows"]


def pytest_configure(config: Any) -> None:
    """A private split cache directory for the session (never the user's default); Spark's
    Python workers inherit it through the environment."""
    privatecache.start()


def pytest_unconfigure(config: Any) -> None:
    privatecache.stop()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] SparkSession for the whole run (startup takes 5-10 s)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("indextables-pyspark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        # The suite's JVM work is short queries: the quick compiler alone and one GC thread
        # cost less CPU than C2's compiles (test_countagg + test_partitions: 212 vs 247 s).
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    import indextables.pyspark as itp

    itp.register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def logs(spark: Any, tmp_path_factory: Any) -> str:
    """200 partitioned log rows, message as text, in two appends (tests never write to it)."""
    path = str(tmp_path_factory.mktemp("logs") / "table")
    df = spark.range(200).selectExpr(
        "id",
        "concat('2024-01-0', cast(id % 3 + 1 as string)) as day",
        "case when id % 10 = 0 then 'ERROR' else 'INFO' end as level",
        "case when id % 7 = 0 then concat('request ', id, ' timed out') "
        "else concat('request ', id, ' ok') end as message",
        "cast(id as double) / 4 as latency",
    )
    options = {"spark.indextables.indexing.typemap.message": "text", "partitionBy": "day"}
    df.where("id < 100").write.format("indextables").options(**options).mode("append").save(path)
    df.where("id >= 100").write.format("indextables").options(**options).mode("append").save(path)
    return path


@pytest.fixture
def run_scenario(tmp_path: Path) -> Any:
    """A function running a script in its own interpreter and returning its ``RESULT`` JSON.

    A second SparkContext cannot live in the test process beside the session
    fixture, so sessions with other settings run as scripts that print one
    line ``RESULT <json>``. The script gets ``args`` as its arguments; ``timeout`` bounds
    a hang only (a loaded machine runs a local-cluster scenario for minutes).
    """

    def run(
        script: str, *args: str, env: dict[str, str] | None = None, timeout: float = 600
    ) -> Any:
        path = tmp_path / "scenario.py"
        path.write_text(script)
        done = subprocess.run(
            [sys.executable, str(path), *args],
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        assert lines, done.stderr[-3000:]
        return json.loads(lines[-1][len("RESULT ") :])

    return run
