"""Distributed work as DataFrame jobs: the same code on classic and Spark Connect sessions.

A Spark Connect client has no ``SparkContext`` (no RDDs, broadcasts or local
properties), so every distributed step of this package (``itp.count`` and
``itp.aggregate`` above ``localMaxSplits``, MERGE SPLITS, merge-on-write, the
workers' rows of DESCRIBE INDEXTABLES ENVIRONMENT) runs through :func:`run_tasks`:

- the work items are pickled into a small DataFrame of ``(index, payload)``
  rows, spread with ``repartition(n)`` (round-robin: one item per task when
  there are ``n`` items);
- ``mapInArrow`` calls the function on each item in a Python worker (the
  function travels in the UDF's closure, pickled by PySpark's cloudpickle);
- the pickled results come back with ``toArrow()``, in the items' order.

Job descriptions go through what the session offers: on a classic session the
thread's ``spark.job.description`` (and job group, when asked) is set and
restored; over Connect the job carries a tag (``spark.addTag``) named after
the work, which ``spark.interruptTag`` can cancel.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from indextables.pyspark.errors import IndexTablesSparkError

if TYPE_CHECKING:
    import pyarrow as pa

    from pyspark.sql import SparkSession

__all__ = ["default_parallelism", "is_connect", "job_context", "run_tasks"]

T = TypeVar("T")
R = TypeVar("R")

_SCHEMA = "index long, payload binary"
_TAG_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no ``SparkContext`` in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """How many tasks keep every executor core busy.

    Classic: Spark's ``defaultParallelism``. Connect (which cannot ask the
    scheduler): the session's ``spark.default.parallelism`` if set, else the
    number of cores of this machine.
    """
    if not is_connect(spark):
        return max(1, int(spark.sparkContext.defaultParallelism))
    configured = spark.conf.get("spark.default.parallelism", None)
    if configured is not None and configured.strip().isdigit():
        return max(1, int(configured))
    return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def job_context(
    spark: SparkSession, description: str, *, tag: str, job_group: str | None = None
) -> Iterator[None]:
    """Jobs started inside carry ``description`` (classic) or a tag (Connect).

    On a classic session ``job_group`` also sets the thread's job group; the
    thread's previous group and description are restored afterwards. Over
    Connect the jobs carry the tag ``job_group`` when given, else ``tag``
    (``spark.interruptTag`` cancels them).
    """
    if is_connect(spark):
        name = _TAG_CHARS.sub("-", job_group or tag)
        spark.addTag(name)
        try:
            yield
        finally:
            spark.removeTag(name)
        return
    context = spark.sparkContext
    previous_group = context.getLocalProperty("spark.jobGroup.id")
    previous = context.getLocalProperty("spark.job.description")
    if job_group is not None:
        context.setJobGroup(job_group, description)
    else:
        context.setJobDescription(description)
    try:
        yield
    finally:
        context.setLocalProperty("spark.jobGroup.id", previous_group)  # type: ignore[arg-type]
        context.setLocalProperty("spark.job.description", previous)  # type: ignore[arg-type]


def run_tasks(
    spark: SparkSession,
    items: Sequence[T],
    fn: Callable[[T], R],
    *,
    description: str,
    tag: str,
    job_group: str | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, each call in a Spark task, results in ``items``' order.

    ``description`` names the job on a classic session, ``tag`` over Connect
    (see :func:`job_context`). ``fn`` and the items must be picklable (``fn`` by
    cloudpickle, the items and results by :mod:`pickle`). An error in a task
    reaches the caller as Spark reports it
    (:func:`indextables.pyspark.errors.from_spark_error` recovers ours).
    """
    if not items:
        return []
    rows = [
        (i, pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)) for i, item in enumerate(items)
    ]
    frame = spark.createDataFrame(rows, _SCHEMA).repartition(len(rows))
    task = _Task(fn)
    with job_context(spark, description, tag=tag, job_group=job_group):
        table = frame.mapInArrow(task, _SCHEMA).toArrow()
    indexes = table.column("index").to_pylist()
    found = sorted(zip(indexes, table.column("payload").to_pylist(), strict=True))
    if [i for i, _ in found] != list(range(len(rows))):
        raise IndexTablesSparkError(f"{description}: {len(found)} results for {len(rows)} tasks")
    return [pickle.loads(payload) for _, payload in found]


class _Task:
    """The mapInArrow function: unpickles each item, calls ``fn``, pickles its result."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            indexes = batch.column("index").to_pylist()
            payloads = batch.column("payload").to_pylist()
            results = [
                pickle.dumps(self.fn(pickle.loads(p)), protocol=pickle.HIGHEST_PROTOCOL)
                for p in payloads
            ]
            yield pa.RecordBatch.from_arrays(
                [pa.array(indexes, pa.int64()), pa.array(results, pa.binary())],
                names=["index", "payload"],
            )
