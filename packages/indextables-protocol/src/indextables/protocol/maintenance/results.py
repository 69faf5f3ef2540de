"""Typed results of the maintenance operations (the reference's output columns)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CheckpointResult",
    "DescribeStateResult",
    "DropPartitionsResult",
    "PurgeResult",
    "RepairResult",
    "TruncateResult",
    "ValidateResult",
]


@dataclass(frozen=True, slots=True)
class CheckpointResult:
    """CHECKPOINT / COMPACT INDEXTABLES: ``table_path, status, checkpoint_version,
    num_actions, num_files, protocol_version, is_multi_part`` (+ ``compacted``)."""

    table_path: str
    status: str
    checkpoint_version: int
    num_actions: int
    num_files: int
    protocol_version: int
    is_multi_part: bool = False
    compacted: bool = field(default=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class DescribeStateResult:
    """DESCRIBE INDEXTABLES STATE: ``table_path, format, version, num_files,
    num_manifests, num_tombstones, tombstone_ratio, total_bytes, needs_compaction, status``."""

    table_path: str
    format: str
    version: int
    num_files: int
    num_manifests: int
    num_tombstones: int
    tombstone_ratio: float
    total_bytes: int
    needs_compaction: bool
    status: str


@dataclass(frozen=True, slots=True)
class PurgeResult:
    """PURGE INDEXTABLE: ``table_path`` and the metrics struct ``status,
    orphaned_files_found, orphaned_files_deleted, size_mb_deleted, retention_hours,
    tx_log_files_deleted, expired_states_found, expired_states_deleted, dry_run,
    duration_ms, message`` (+ ``manifests_deleted``, the paths involved)."""

    table_path: str
    status: str
    orphaned_files_found: int
    orphaned_files_deleted: int
    size_mb_deleted: float
    retention_hours: float
    tx_log_files_deleted: int
    expired_states_found: int
    expired_states_deleted: int
    dry_run: bool
    duration_ms: int
    message: str | None = None
    manifests_deleted: int = field(default=0, kw_only=True)
    orphaned_files: tuple[str, ...] = field(default=(), kw_only=True)
    tx_log_files: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True, slots=True)
class TruncateResult:
    """TRUNCATE INDEXTABLES TIME TRAVEL: ``table_path, status, checkpoint_version,
    versions_deleted, checkpoints_deleted, files_preserved, message``."""

    table_path: str
    status: str
    checkpoint_version: int
    versions_deleted: int
    checkpoints_deleted: int
    files_preserved: int
    message: str


@dataclass(frozen=True, slots=True)
class DropPartitionsResult:
    """DROP INDEXTABLES PARTITIONS: ``table_path, status, partitions_dropped,
    splits_removed, total_size_bytes, message`` (+ the committed ``version``)."""

    table_path: str
    status: str
    partitions_dropped: int
    splits_removed: int
    total_size_bytes: int
    message: str
    version: int | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class RepairResult:
    """REPAIR INDEXFILES TRANSACTION LOG: ``source_path, target_path, source_version,
    total_splits, valid_splits, missing_splits, status``."""

    source_path: str
    target_path: str
    source_version: int
    total_splits: int
    valid_splits: int
    missing_splits: int
    status: str


@dataclass(frozen=True, slots=True)
class ValidateResult:
    """Every invariant checked: ``ok`` is true when ``problems`` is empty."""

    table_path: str
    version: int
    files_checked: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """No invariant is broken."""
        return not self.problems
