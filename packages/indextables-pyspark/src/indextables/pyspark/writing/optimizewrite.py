"""The reference's optimized write for ``itp.write``: rows spread over every core first.

A Python data source cannot ask Spark for a shuffle before its write (the
reference's ``RequiresDistributionAndOrdering``), but ``itp.write`` holds the
DataFrame, so with ``spark.indextables.write.optimizeWrite.enabled=true`` it
repartitions it to the executors' cores (``defaultParallelism``) before the
write: each core then indexes its share in its own task, instead of however
many partitions the DataFrame happened to have.

- ``distributionMode=hash`` (the default): by the partition columns, so the
  rows of one partition value meet in one task (one split per value and
  task); round-robin when the table is not partitioned;
- a round-robin spread is skipped when the DataFrame already has exactly one
  partition per core (the shuffle would only move rows);
- ``balanced``: round-robin whatever the partitioning, and each writer closes
  a split once the Arrow size of its rows reaches ``maxSplitSize`` (4G; the
  rolling itself happens in the engine's ``SplitWriter``);
- ``none``: the DataFrame is written as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from indextables.pyspark.sparkjobs import default_parallelism
from indextables.search.options import OptimizeWrite

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["distribute", "write_tasks"]


def write_tasks(spark: SparkSession) -> int:
    """How many write tasks keep every executor core busy (see
    :func:`~indextables.pyspark.sparkjobs.default_parallelism`)."""
    return default_parallelism(spark)


def distribute(
    df: DataFrame, *, settings: OptimizeWrite, partition_columns: Sequence[str]
) -> DataFrame:
    """``df`` spread for an optimized write (as it is when ``settings`` ask for none)."""
    if not settings.repartitions:
        return df
    tasks = write_tasks(df.sparkSession)
    if settings.distribution_mode == "hash" and partition_columns:
        return df.repartition(tasks, *partition_columns)
    if _partitions(df) == tasks:
        # Already one partition per core: a round-robin shuffle would only move the
        # rows (it cost 28% more CPU than the write itself saved, docs/performance.md).
        return df
    return df.repartition(tasks)


def _partitions(df: DataFrame) -> int | None:
    """How many partitions ``df`` has, or None when Spark cannot say (Spark Connect)."""
    try:
        return int(df.rdd.getNumPartitions())
    except Exception:  # no RDD API (Spark Connect): repartition as asked
        return None
