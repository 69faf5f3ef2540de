"""The narrow view of a table that maintenance operations and skip tracking work on.

:class:`~indextables.protocol.table.Table` satisfies it; depending on this
protocol instead of ``Table`` keeps the import graph one-way
(``table`` -> ``maintenance`` -> ``tablelike``) with no cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal, Protocol

from indextables.protocol.actions import Action, AddAction, MetadataAction, RemoveAction
from indextables.protocol.config import TableConfig
from indextables.protocol.predicates import Predicate
from indextables.protocol.snapshot import Snapshot, SnapshotReader
from indextables.protocol.state import FileEntry
from indextables.protocol.stateformat import StateFormat
from indextables.protocol.store import ObjectStore

__all__ = ["TableLike"]


class TableLike(Protocol):
    """What maintenance needs of a table: its store, reader, settings and commits."""

    store: ObjectStore
    state_format: StateFormat
    uri: str
    config: TableConfig
    reader: SnapshotReader

    def snapshot(
        self,
        version: int | None = None,
        *,
        timestamp: int | float | datetime | None = None,
        partition_filter: Predicate | str | None = None,
        stats_filter: Predicate | None = None,
    ) -> Snapshot:
        """The table as of ``version`` (latest when ``None``)."""
        ...

    def commit(
        self,
        adds: Iterable[AddAction | FileEntry] = (),
        removes: Iterable[str | RemoveAction | FileEntry] = (),
        *,
        mode: Literal["append", "overwrite"] = "append",
        metadata: MetadataAction | None = None,
        read_version: int | None = None,
    ) -> int:
        """Commit adds and removes as one new version and return it."""
        ...

    def commit_actions(self, actions: Sequence[Action]) -> int:
        """Commit prepared actions as they are."""
        ...
