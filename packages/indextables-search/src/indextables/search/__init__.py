"""indextables.search: the IndexTables split engine without Spark, Arrow in and out.

    >>> from indextables.search import open_table  # doctest: +SKIP
    >>> open_table("/data/logs").search("message:timeout", limit=10)

See docs/search.md.
"""

from indextables.search.companion.api import build_companion
from indextables.search.companion.streaming import sync_companion_forever
from indextables.search.companion.sync import CompanionResult
from indextables.search.metrics import OperationMetrics, ScanMetrics
from indextables.search.oplog import last_metrics
from indextables.search.searchtable import SearchTable, open_table
from indextables.search.table.tablehistory import CommitRecord
from indextables.search.version import __version__
from indextables.search.write.deleterows import DeleteResult, delete_rows
from indextables.search.write.mergesplits import MergeResult, merge_splits
from indextables.search.write.tablewrite import WriteResult, write_table

__all__ = [
    "CommitRecord",
    "CompanionResult",
    "DeleteResult",
    "MergeResult",
    "OperationMetrics",
    "ScanMetrics",
    "SearchTable",
    "WriteResult",
    "__version__",
    "build_companion",
    "delete_rows",
    "last_metrics",
    "merge_splits",
    "open_table",
    "sync_companion_forever",
    "write_table",
]
