"""Skipped files (``mergeskip``): record, count, filter candidates, expire.

A merge that cannot read a split records a skip action with a cooldown
(``retryAfter``); during the cooldown merges leave the file out, afterwards
it is a candidate again. Skipped files stay live: a skip never removes data.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from indextables.protocol.actions import AddAction, SkipAction
from indextables.protocol.errors import VersionNotFoundError
from indextables.protocol.state import FileEntry

if TYPE_CHECKING:
    from indextables.protocol.tablelike import TableLike

__all__ = ["SkipTracker"]

_Candidate = TypeVar("_Candidate", AddAction, FileEntry)


class SkipTracker:
    """The skip actions of one table."""

    def __init__(self, table: TableLike) -> None:
        self.table = table

    def all(self) -> list[SkipAction]:
        """Every skip action in the retained version files, oldest first."""
        reader = self.table.reader
        found: list[SkipAction] = []
        for version in sorted(reader.layout().listing.versions):
            try:
                actions = reader.actions(version)
            except VersionNotFoundError:
                continue  # purged since the listing
            found.extend(a for a in actions if isinstance(a, SkipAction))
        return found

    def count(self, path: str) -> int:
        """How many times ``path`` has been skipped."""
        return max((s.skip_count for s in self.all() if s.path == path), default=0)

    def record(
        self,
        path: str,
        *,
        reason: str,
        operation: str = "merge",
        cooldown_hours: float | None = None,
    ) -> int:
        """Commit a skip action for ``path``; returns the committed version."""
        hours = self.table.config.skip_cooldown_hours if cooldown_hours is None else cooldown_hours
        now = int(time.time() * 1000)
        live = {f.path: f for f in self.table.snapshot().files}
        entry = live.get(path)
        skip = SkipAction(
            path,
            now,
            reason,
            operation,
            partition_values=dict(entry.partition_values) if entry else None,
            size=entry.size if entry else None,
            retry_after=now + int(hours * 3_600_000),
            skip_count=self.count(path) + 1,
        )
        return self.table.commit_actions([skip])

    def in_cooldown(self, *, now_ms: int | None = None) -> dict[str, int]:
        """Paths still cooling down -> the latest ``retryAfter``; expired skips are left out."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        cooling: dict[str, int] = {}
        for skip in self.all():
            if skip.retry_after is not None and skip.retry_after > now:
                cooling[skip.path] = max(cooling.get(skip.path, 0), skip.retry_after)
        return cooling

    def filter_candidates(
        self, candidates: Iterable[_Candidate], *, now_ms: int | None = None
    ) -> list[_Candidate]:
        """``candidates`` without the files in cooldown."""
        cooling = self.in_cooldown(now_ms=now_ms)
        return [c for c in candidates if c.path not in cooling]
