"""``merge_splits``: MERGE SPLITS without Spark, as ``write_table`` writes.

The engine's one implementation (:func:`~indextables.search.write.merge.merge_table`,
which the Spark SQL command and the CLI also run) with its groups merged in this
process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from indextables.search.errors import ArgumentError
from indextables.search.write.merge import DEFAULT_TARGET_SIZE, merge_table
from indextables.search.write.purgedeletes import check_fraction

__all__ = ["MergeResult", "merge_splits"]


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What :func:`merge_splits` did.

    Attributes:
        status: ``"SUCCESS"``, ``"PARTIAL"`` (some groups failed and were recorded as
            merge skips) or ``"NO_ACTION"`` (nothing to merge or purge).
        splits_merged: source splits replaced.
        splits_written: new splits committed.
        groups: merge groups planned (a split rewritten for PURGE DELETES is a group).
        skipped_groups: groups that failed.
        bytes_before: size of the replaced splits.
        bytes_after: size of the new splits.
    """

    status: str
    splits_merged: int
    splits_written: int
    groups: int
    skipped_groups: int
    bytes_before: int
    bytes_after: int


def merge_splits(
    uri: str,
    *,
    where: str | None = None,
    target_size: int | None = None,
    purge_deletes: bool = False,
    min_deleted_fraction: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> MergeResult:
    """Bin-pack the small splits of each partition of the table at ``uri`` into bigger
    ones (MERGE SPLITS), committed in one version.

    Args:
        uri: the table's location.
        where: a condition on partition columns: only those partitions are merged.
        target_size: the merged splits' size bound in bytes (default 1 GiB).
        purge_deletes: also rewrite every split holding deleted documents, so no
            file of the new version keeps a deleted row's bytes (PURGE DELETES).
        min_deleted_fraction: with ``purge_deletes``, only splits whose deleted
            documents are at least this share (0 < f <= 1) of their documents.
        options: store credentials and merge options (``merge.*``, ``indexWriter.*``).

    Raises:
        ArgumentError: an argument of the wrong type or value.
        CompanionError: the table is a companion index.
        CommitConflictError: a concurrent commit removed a split being merged.
    """
    if not isinstance(uri, str) or not uri:
        raise ArgumentError(f"uri={uri!r} must be a non-empty string")
    if where is not None and (not isinstance(where, str) or not where.strip()):
        raise ArgumentError(f"where={where!r} must be a non-empty string")
    if target_size is not None and (
        isinstance(target_size, bool) or not isinstance(target_size, int) or target_size < 1
    ):
        raise ArgumentError(f"target_size={target_size!r} must be a positive number of bytes")
    if not isinstance(purge_deletes, bool):
        raise ArgumentError(f"purge_deletes={purge_deletes!r} must be True or False")
    fraction = check_fraction(min_deleted_fraction)
    if fraction is not None and not purge_deletes:
        raise ArgumentError("min_deleted_fraction needs purge_deletes=True")
    if options is not None and not isinstance(options, Mapping):
        raise ArgumentError(f"options={options!r} must be a mapping of option keys to values")
    row = merge_table(
        uri,
        options={str(k): str(v) for k, v in (options or {}).items()},
        target_size=target_size or DEFAULT_TARGET_SIZE,
        where=where,
        purge_deletes=purge_deletes,
        min_deleted_fraction=fraction,
    )
    return MergeResult(
        status=str(row["status"]),
        splits_merged=int(row.get("merged_files", 0)),
        splits_written=int(row.get("new_files", 0)),
        groups=int(row.get("merge_groups", 0)),
        skipped_groups=int(row.get("skipped_groups", 0)),
        bytes_before=int(row.get("original_size", 0)),
        bytes_after=int(row.get("new_size", 0)),
    )
