"""What one operation did: splits, rows, bytes, cache use and seconds per phase.

An :class:`OperationMetrics` is what :mod:`indextables.search.oplog` logs as an
operation's INFO line, and what the API hands back
(``SearchTable.last_metrics``, ``itp.last_metrics()``, the command line's
``--stats``). Every count is zero when the operation had nothing of that kind.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["COUNTERS", "PHASES", "OperationMetrics", "ScanMetrics"]

#: The counters every operation carries, in the order its log line shows them.
COUNTERS = (
    "splits_considered",
    "splits_pruned",
    "splits_read",
    "rows",
    "bytes_fetched",
    "cache_hits",
    "cache_misses",
    "splits_written",
    "bytes_written",
)
#: The timed phases, in the order the log line shows them.
PHASES = ("plan", "fetch", "search", "decode")


@dataclass(frozen=True, slots=True, kw_only=True)
class OperationMetrics:
    """The measurements of one finished operation.

    Attributes:
        operation: what ran (``search``, ``count``, ``aggregate``, ``write``,
            ``merge``, ``companion build``...).
        uri: the table's location, credentials and signed query parameters removed.
        version: the table version read or written (None when there was none).
        outcome: ``ok``, or ``error:<exception type>``.
        splits_considered: live splits of the snapshot the operation looked at.
        splits_pruned: of those, splits dropped before reading (partition values,
            statistics).
        splits_read: splits opened and read (or counted, or aggregated).
        rows: rows returned, counted, written or merged.
        bytes_fetched: bytes of splits downloaded into the local cache.
        cache_hits: splits found in the local split cache.
        cache_misses: splits downloaded.
        splits_written: new splits committed (writes, merges, companion builds).
        bytes_written: bytes of those splits.
        seconds: wall seconds of the whole operation.
        plan_seconds: planning (log replay, pruning).
        fetch_seconds: waiting for split downloads.
        search_seconds: Tantivy searches within splits.
        decode_seconds: turning the hits into Arrow rows (split reads minus searches).
        details: further fields of the log line, as (name, value) pairs.
    """

    operation: str
    uri: str
    version: int | None = None
    outcome: str = "ok"
    splits_considered: int = 0
    splits_pruned: int = 0
    splits_read: int = 0
    rows: int = 0
    bytes_fetched: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    splits_written: int = 0
    bytes_written: int = 0
    seconds: float = 0.0
    plan_seconds: float = 0.0
    fetch_seconds: float = 0.0
    search_seconds: float = 0.0
    decode_seconds: float = 0.0
    details: tuple[tuple[str, str | int | float], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The metrics as a plain mapping (JSON-ready; ``details`` as a mapping)."""
        found = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        found["details"] = dict(self.details)
        return found


#: The metrics of a read (the same fields; the name reads better at a scan's call site).
ScanMetrics = OperationMetrics
