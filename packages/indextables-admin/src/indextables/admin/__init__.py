"""indextables.admin: the operator's command line and Python API.

Every operation of the ``indextables`` command is a function here, taking
the table URI first and keyword-only options after it, and returning the
engine's typed result, so scripts need not shell out::

    from datetime import timedelta
    from indextables import admin

    state = admin.describe("s3://bucket/events", storage_options={"region": "eu-west-1"})
    if state.needs_compaction:
        admin.compact("s3://bucket/events", storage_options={"region": "eu-west-1"})
    report = admin.purge("/data/events", older_than=timedelta(days=7), dry_run=True)
    print(report.orphaned_files)
"""

from indextables.admin.api import (
    CheckpointResult,
    DescribeStateResult,
    DropPartitionsPlan,
    DropPartitionsResult,
    PurgeResult,
    RepairResult,
    TableDescription,
    TableSchema,
    TruncateResult,
    ValidateResult,
    changes,
    checkpoint,
    compact,
    describe,
    describe_table,
    drop_partitions,
    drop_partitions_plan,
    files,
    gc,
    gc_plan,
    history,
    purge,
    purge_plan,
    repair,
    schema,
    snapshot,
    truncate_time_travel,
    truncate_time_travel_plan,
    validate,
)
from indextables.admin.errors import AdminError, UsageError, ValidationFailedError
from indextables.admin.version import __version__

__all__ = [
    "AdminError",
    "CheckpointResult",
    "DescribeStateResult",
    "DropPartitionsPlan",
    "DropPartitionsResult",
    "PurgeResult",
    "RepairResult",
    "TableDescription",
    "TableSchema",
    "TruncateResult",
    "UsageError",
    "ValidateResult",
    "ValidationFailedError",
    "__version__",
    "changes",
    "checkpoint",
    "compact",
    "describe",
    "describe_table",
    "drop_partitions",
    "drop_partitions_plan",
    "files",
    "gc",
    "gc_plan",
    "history",
    "purge",
    "purge_plan",
    "repair",
    "schema",
    "snapshot",
    "truncate_time_travel",
    "truncate_time_travel_plan",
    "validate",
]
