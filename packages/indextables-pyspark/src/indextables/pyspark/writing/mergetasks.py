"""MERGE SPLITS as Spark tasks: one task per merge group (the engine plans and commits).

The tasks are a DataFrame job (:mod:`indextables.pyspark.sparkjobs`): the same code on
classic and Spark Connect sessions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from indextables.pyspark.sparkjobs import run_tasks
from indextables.search.table.tableaccess import TableView
from indextables.search.write.merge import (
    DEFAULT_TARGET_SIZE,
    MergeGroup,
    MergeOutcome,
    merge_group,
    merge_table,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["merge_splits", "run_as_tasks"]


def merge_splits(
    spark: SparkSession,
    uri: str,
    *,
    options: Mapping[str, str] | None = None,
    target_size: int = DEFAULT_TARGET_SIZE,
    where: str | None = None,
    max_groups: int | None = None,
    max_sources: int | None = None,
    purge_deletes: bool = False,
    min_deleted_fraction: float | None = None,
) -> dict[str, Any]:
    """Run MERGE SPLITS on the table at ``uri`` with its groups as Spark tasks
    (``purge_deletes``: PURGE DELETES, see ``indextables.search.write.purgedeletes``)."""
    return merge_table(
        uri,
        run=functools.partial(run_as_tasks, spark),
        options=options,
        target_size=target_size,
        where=where,
        max_groups=max_groups,
        max_sources=max_sources,
        purge_deletes=purge_deletes,
        min_deleted_fraction=min_deleted_fraction,
    )


def run_as_tasks(
    spark: SparkSession,
    uri: str,
    options: Mapping[str, str],
    view: TableView,
    groups: Sequence[MergeGroup],
    *,
    job_group: str | None = None,
) -> list[MergeOutcome]:
    """Merge ``groups`` as Spark tasks, one task per group (a DataFrame job, so over
    Spark Connect too: :func:`~indextables.pyspark.sparkjobs.run_tasks`).

    With ``job_group``, the jobs run in that Spark job group on a classic session
    (the calling thread's own group and description are restored afterwards) and
    carry it as their tag over Connect.
    """
    task = functools.partial(
        merge_group, uri, dict(options), view.schema_json, view.partition_columns
    )
    return run_tasks(
        spark,
        list(groups),
        task,
        description=f"indextables merge of {uri}: {len(groups)} groups",
        tag="indextables-merge",
        job_group=job_group,
    )
