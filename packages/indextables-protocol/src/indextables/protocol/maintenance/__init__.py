"""Maintenance operations of the engine, each returning a typed result.

The results carry the output columns of the reference's SQL commands
(CHECKPOINT/COMPACT, DESCRIBE STATE, PURGE, TRUNCATE TIME TRAVEL, DROP
PARTITIONS, REPAIR) as snake_case fields, plus ``ValidateResult``.
"""

from indextables.protocol.maintenance.results import (
    CheckpointResult,
    DescribeStateResult,
    DropPartitionsResult,
    PurgeResult,
    RepairResult,
    TruncateResult,
    ValidateResult,
)

__all__ = [
    "CheckpointResult",
    "DescribeStateResult",
    "DropPartitionsResult",
    "PurgeResult",
    "RepairResult",
    "TruncateResult",
    "ValidateResult",
]
