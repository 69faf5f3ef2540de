"""Merge-on-write and purge-on-write: maintenance run after a write has committed.

The reference runs these from the driver after the write's commit (merge
asynchronously by default). A Python data source commits in a worker process
without a SparkSession, so after ``df.write.format("indextables")`` both run
synchronously in that process right after the commit, merging the groups one
after the other. ``itp.write`` (:mod:`.tablewrite`) instead defers them to the
caller's process, where the merge groups run as Spark tasks (in a background
thread unless ``mergeOnWrite.async.enabled`` is false).
A failure of either never fails the write, whose data is already committed;
a merge group that fails is recorded as a ``mergeskip`` like MERGE SPLITS.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from indextables.pyspark.read.planguard import sweep_claims
from indextables.search.options import OnWriteOptions
from indextables.search.table.tableaccess import TableView, load_view, table_handle
from indextables.search.write.merge import (
    MergeGroup,
    MergeOutcome,
    commit_outcomes,
    plan_groups,
    run_in_process,
)

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OnWriteResult:
    """What the after-write maintenance did.

    Attributes:
        merged_groups: merge groups committed (0 when merge did not run).
        purged: True when PURGE ran.
        error: the message of a maintenance failure (the write stays committed).
    """

    merged_groups: int = 0
    purged: bool = False
    error: str | None = None


GroupRunner = Callable[
    [str, Mapping[str, str], TableView, Sequence[MergeGroup]], list[MergeOutcome]
]


def after_write(
    uri: str,
    options: Mapping[str, str],
    settings: OnWriteOptions,
    *,
    version: int,
    run_groups: GroupRunner = run_in_process,
) -> OnWriteResult:
    """Run the enabled maintenance on the table after the write that committed ``version``.

    ``run_groups`` merges the planned groups (in this process by default).
    """
    if not settings.enabled:
        return OnWriteResult()
    try:
        merged = _merge(uri, options, settings, run_groups) if settings.merge else 0
        purge = settings.purge and (
            (settings.merge and settings.purge_after_merge and merged > 0)
            or (settings.purge_after_writes > 0 and version % settings.purge_after_writes == 0)
        )
        if purge:
            _purge(uri, options, settings)
        return OnWriteResult(merged, purge)
    except Exception as error:  # the write is committed: report, never undo it
        _LOG.warning("after-write maintenance of %s failed: %s", uri, error)
        return OnWriteResult(error=f"{type(error).__name__}: {error}")


def _merge(
    uri: str, options: Mapping[str, str], settings: OnWriteOptions, run_groups: GroupRunner
) -> int:
    table = table_handle(uri, options)
    view = load_view(uri, options)
    skipped = frozenset(s.path for s in table.skipped_files())
    groups = [
        g
        for g in plan_groups(view.splits, target_size=settings.merge_target_size, skipped=skipped)
        if len(g.splits) >= settings.merge_min_splits
    ]
    if not groups:
        return 0
    return len(commit_outcomes(table, run_groups(uri, options, view, groups)))


def _purge(uri: str, options: Mapping[str, str], settings: OnWriteOptions) -> None:
    table = table_handle(uri, options)
    table.purge(
        older_than=timedelta(hours=settings.split_retention_hours),
        log_retention=timedelta(hours=settings.log_retention_hours),
    )
    sweep_claims(table.store)
