"""What the Spark benchmarks share: the session, the log rows, timing, a scratch run.

``run.py`` and the scripts it reaches (``count.py``, ``merge.py``,
``profile_needle.py``, ...) import from here, so each holds only its own figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


def measure(
    action: Callable[[], Any], repeat: int, *, warm: bool = True
) -> tuple[float, float, Any]:
    """Median and spread (max - min) of ``repeat`` timed runs, and the last result.

    With ``warm``, one untimed run comes first (JVM code paths, split and
    file caches), as for any query run more than once.
    """
    times, result = [], None
    if warm:
        action()
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times) - min(times), result


def logs(spark: Any, rows: int, *, partitions: int = 2) -> Any:
    """Deterministic log rows with a needle token in ~0.01% of messages."""
    return spark.range(rows, numPartitions=partitions).selectExpr(
        "id",
        "element_at(array('INFO','WARN','ERROR'), cast(pmod(hash(id), 3) + 1 as int)) as level",
        "concat('host-', pmod(hash(id, 1), 500)) as host",
        "concat('request ', id, ' served ', case when pmod(hash(id, 2), 10000) = 0 "
        "then 'needlezz' else 'ok' end) as message",
    )


def session() -> Any:
    """The benchmarks' local[2] session (pushdown on, quiet), with the format registered."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import indextables.pyspark as itp

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    itp.register(spark)
    return spark


def int_options(**defaults: int) -> argparse.Namespace:
    """The command line of a benchmark whose options are integers (``--rows 1000`` ...)."""
    parser = argparse.ArgumentParser()
    for name, default in defaults.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    return parser.parse_args()


#: Set by the smoke test, which runs every script in one process: the scripts then share
#: one session (its Python workers started and warmed once) and leave it running.
SHARED_SESSION = "INDEXTABLES_BENCH_SHARED_SESSION"


def stop(spark: Any) -> None:
    """A script's end: the session stops, unless the scripts share it (:data:`SHARED_SESSION`)."""
    if not os.environ.get(SHARED_SESSION):
        spark.stop()


@contextlib.contextmanager
def scratch_session(name: str) -> Iterator[tuple[Any, str]]:
    """The benchmark session and a scratch directory, both gone at the end."""
    spark = session()
    work = tempfile.mkdtemp(prefix=f"indextables-bench-{name}-")
    try:
        yield spark, work
    finally:
        stop(spark)
        shutil.rmtree(work, ignore_errors=True)
