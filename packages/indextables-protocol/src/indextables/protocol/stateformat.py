"""The state-format interface: how a checkpointed table state is stored.

indextables-avrostate implements it (format name ``avro-state``); the engine
finds an implementation through the ``indextables.state_formats`` entry point
group, so this package never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from indextables.protocol.state import FileEntry, StateManifest
from indextables.protocol.store import ObjectStore

if TYPE_CHECKING:
    from indextables.protocol.predicates import Predicate

__all__ = ["LoadedState", "StateFormat", "StatsPrunable"]


@dataclass(frozen=True, slots=True)
class LoadedState:
    """A state as read: its root record and its live files.

    ``files`` has tombstones applied and, when a partition filter was given,
    holds only entries from manifests whose bounds can match (entries are
    not filtered one by one: the caller still applies its predicate).
    ``files`` may be a lazy sequence that decodes entries on access. If it has
    a ``resolve_doc_mappings(registry)`` method, the engine calls it before
    reading entries so they come out with ``doc_mapping_json`` already
    restored from the state's schema registry (optional, for speed). If it is
    :class:`StatsPrunable`, snapshots with a stats filter prune it column-wise
    before building entries (optional, for speed; the engine checks entry by
    entry otherwise).
    """

    manifest: StateManifest
    files: Sequence[FileEntry]
    manifests_read: int
    manifests_total: int


@runtime_checkable
class StatsPrunable(Protocol):
    """A ``LoadedState.files`` sequence that evaluates stats filters without building entries.

    Optionally it also has ``select(indices) -> list[FileEntry]``, which
    builds the entries at ``indices`` (ascending) faster than one by one.
    """

    def stats_may_match(self, predicate: Predicate) -> list[int]:
        """Indices (ascending) of the entries whose statistics may satisfy ``predicate``.

        Must equal ``[i for i, e in enumerate(files) if entry_may_match(predicate, e)]``
        (see :mod:`indextables.protocol.statsfilter`): a max of 32 or more
        characters counts as absent.
        """
        ...


@runtime_checkable
class StateFormat(Protocol):
    """Reads and writes table states under ``_transaction_log/``."""

    name: str

    def state_versions(self, store: ObjectStore) -> list[int]:
        """Versions of every complete state (whose root record exists), ascending."""
        ...

    def read_state(
        self,
        store: ObjectStore,
        version: int,
        *,
        partition_filter: Predicate | None = None,
    ) -> LoadedState:
        """Read the state of ``version``, pruning manifests by ``partition_filter``."""
        ...

    def write_state(
        self,
        store: ObjectStore,
        *,
        version: int,
        base: StateManifest | None,
        adds: Sequence[FileEntry],
        removes: Sequence[str],
        schema_registry: Mapping[str, str],
        metadata: str | None,
        force_compaction: bool = False,
    ) -> StateManifest:
        """Write the state of ``version`` as ``base`` plus a delta.

        Writes incrementally (one new manifest, tombstones appended) unless a
        compaction trigger fires or ``force_compaction`` is set. The state's
        root record is created with put-if-absent: a state that already exists
        raises ``ObjectExistsError``.
        """
        ...
