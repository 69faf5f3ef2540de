"""A streaming query whose source's Python worker starts too slowly is started again."""

from __future__ import annotations

import stat
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import ArgumentError
from indextables.pyspark.streamstart import WORKER_CONNECT_FAILURE, run_stream, worker_start_failed


class _Query:
    def __init__(self, error: BaseException | None) -> None:
        self.error = error
        self.stopped = False
        self.waited: list[str] = []

    def awaitTermination(self) -> None:
        self.waited.append("end")
        if self.error is not None:
            raise self.error

    def processAllAvailable(self) -> None:
        self.waited.append("available")
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self.stopped = True


def _starter(*errors: BaseException | None) -> tuple[Any, list[_Query]]:
    started: list[_Query] = []

    def start() -> _Query:
        started.append(_Query(errors[len(started)]))
        return started[-1]

    return start, started


def _connect_failure() -> Exception:
    # As PySpark raises it: a StreamingQueryException whose cause carries Spark's message.
    try:
        try:
            raise RuntimeError(f"org.apache.spark.SparkException: {WORKER_CONNECT_FAILURE}.")
        except RuntimeError as cause:
            raise Exception("Query new_logs terminated with exception") from cause
    except Exception as error:
        return error


@pytest.mark.parametrize("until", ["end", "available"])
def test_a_worker_that_did_not_connect_back_is_started_again(until: Any) -> None:
    start, started = _starter(_connect_failure(), _connect_failure(), None)
    query = run_stream(start, until=until)
    assert query is started[2]
    assert [q.stopped for q in started] == [True, True, False]
    assert [q.waited for q in started] == [[until]] * 3


def test_other_failures_and_the_last_attempt_are_raised() -> None:
    start, started = _starter(ValueError("a bad option"), None)
    with pytest.raises(ValueError, match="a bad option"):
        run_stream(start)
    assert len(started) == 1  # not started again
    start, started = _starter(_connect_failure(), _connect_failure())
    with pytest.raises(Exception, match="terminated") as failed:
        run_stream(start, attempts=2)
    assert worker_start_failed(failed.value)
    assert len(started) == 2
    assert not worker_start_failed(ValueError("Python worker exited"))
    for bad in ({"attempts": 0}, {"until": "forever"}):
        with pytest.raises(ArgumentError):
            run_stream(lambda: None, **bad)


def test_a_cause_cycle_ends() -> None:
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert not worker_start_failed(first)


# The streaming source's worker is an interpreter Spark starts when the query starts;
# this wrapper delays the first one's start past Spark's 10 s wait, as a loaded machine does.
WRAPPER = """#!/bin/sh
case "$*" in
  *python_streaming_source_runner*)
    if [ ! -e "{mark}" ]; then : > "{mark}"; sleep 14; fi;;
esac
exec "{python}" "$@"
"""

SCENARIO = textwrap.dedent(
    """
    import json, os, sys
    wrapper, mark, path = sys.argv[1:4]
    os.environ["PYSPARK_PYTHON"] = wrapper
    from pyspark.sql import SparkSession
    import indextables.pyspark as itp
    from indextables.pyspark.streamstart import run_stream, worker_start_failed
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .getOrCreate())
    itp.register(spark)
    spark.range(5).write.format("indextables").mode("append").save(path)
    starts = []
    def start():
        starts.append(1)
        return (spark.readStream.format("indextables").option("startingVersion", "0")
                .load(path).writeStream.format("memory").queryName(f"rows{len(starts)}")
                .trigger(availableNow=True).start())
    result = {}
    try:  # started once, as a plain start() and awaitTermination() do
        start().awaitTermination()
        result["plain"] = "passed"
    except Exception as error:
        slow = worker_start_failed(error)
        result["plain"] = "worker did not connect back" if slow else repr(error)
    os.remove(mark)  # the next first worker is slow again
    query = run_stream(start, attempts=8)
    result["starts"] = len(starts)
    result["rows"] = sorted(r.id for r in spark.sql(f"SELECT id FROM rows{len(starts)}").collect())
    print("RESULT " + json.dumps(result))
    spark.stop()
    """
)


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.slow
def test_a_stream_whose_worker_starts_slowly_runs_when_started_again(
    tmp_path: Path, run_scenario: Any
) -> None:
    mark, wrapper = tmp_path / "slow-once", tmp_path / "python"
    wrapper.write_text(WRAPPER.format(mark=mark, python=sys.executable))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    result = run_scenario(SCENARIO, str(wrapper), str(mark), str(tmp_path / "table"))
    assert result["plain"] == "worker did not connect back"  # Spark's fixed 10 s wait ran out
    assert result["rows"] == [0, 1, 2, 3, 4]
    # The plain start, then run_stream's delayed one and at least one more (at a high load an
    # undelayed worker may miss the 10 s too, the failure this guards against: room for it).
    assert 3 <= result["starts"] <= 9
