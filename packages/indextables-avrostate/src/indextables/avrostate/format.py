"""``AvroStateFormat``: the protocol's StateFormat implemented with the V4 Avro state.

Registered under the entry point group ``indextables.state_formats`` as
``avro-state``, so the engine finds it without importing this package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from indextables.avrostate.gc import GcReport, collect_garbage
from indextables.avrostate.options import StateOptions
from indextables.avrostate.state_reader import load_state_manifest, read_state, state_versions
from indextables.avrostate.state_writer import write_state
from indextables.protocol.state import FileEntry, StateManifest
from indextables.protocol.stateformat import LoadedState
from indextables.protocol.store import ObjectStore

if TYPE_CHECKING:
    from indextables.protocol.predicates import Predicate

__all__ = ["AvroStateFormat"]


class AvroStateFormat:
    """Reads and writes ``state-v*/_manifest.avro`` states and their manifests.

    Example:
        >>> fmt = AvroStateFormat(options=StateOptions(parallelism=4))
        >>> fmt.name
        'avro-state'
    """

    name: str = "avro-state"

    def __init__(self, *, options: StateOptions | None = None) -> None:
        self.options = options or StateOptions()

    def state_versions(self, store: ObjectStore) -> list[int]:
        """Versions of every complete state, ascending."""
        return state_versions(store)

    def latest_version(self, store: ObjectStore) -> int | None:
        """The current state's version (the highest complete one), or ``None``."""
        versions = state_versions(store)
        return versions[-1] if versions else None

    def read_manifest(self, store: ObjectStore, version: int) -> StateManifest:
        """Read only the root record of state ``version``."""
        return load_state_manifest(store, version)

    def read_state(
        self,
        store: ObjectStore,
        version: int,
        *,
        partition_filter: Predicate | None = None,
    ) -> LoadedState:
        """Read state ``version``; ``files`` is a lazy :class:`~.entries.FileEntries`.

        With a filter, unmatched manifests are skipped and entries whose
        partition values do not match are dropped.
        """
        return read_state(
            store, version, partition_filter=partition_filter, parallelism=self.options.parallelism
        )

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
        """Write state ``version`` incrementally, or compacted when a trigger fires."""
        return write_state(
            store,
            version=version,
            base=base,
            adds=adds,
            removes=removes,
            schema_registry=schema_registry,
            metadata=metadata,
            force_compaction=force_compaction,
            options=self.options,
        )

    def collect_garbage(
        self, store: ObjectStore, *, now_ms: int | None = None, dry_run: bool = False
    ) -> GcReport:
        """Delete expired old states and unreferenced manifests (see :mod:`.gc`)."""
        return collect_garbage(store, options=self.options, now_ms=now_ms, dry_run=dry_run)
