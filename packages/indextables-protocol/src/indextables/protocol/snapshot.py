"""Snapshots: the table as of one version, and the reader that builds them.

A snapshot of version ``v`` is the highest complete state at or below ``v``
(its live entries, tombstones applied), then every version file after that
state up to ``v`` replayed in order. Tables the reference wrote hold states
without version files: a state alone then stands for its version. Protocol
and metadata come from the newest version file that has them, else from the
state's ``metadata`` record, else from older version files (usually 0).

A state created after a state of a higher version is stale: the v0.5.4
reference's PURGE, DROP PARTITIONS and TRUNCATE TIME TRAVEL wrote
``state-v0`` holding the table of a later version. A stale state is passed
over when the version files can rebuild its versions without it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from indextables.protocol.actions import (
    Action,
    MetadataAction,
    ProtocolAction,
    SkipAction,
    decode_action_object,
)
from indextables.protocol.checkpoint import read_json_checkpoint
from indextables.protocol.errors import (
    CorruptFileError,
    ObjectNotFoundError,
    TableNotFoundError,
    VersionNotFoundError,
)
from indextables.protocol.livefiles import LiveFiles
from indextables.protocol.logreplay import (
    LogListing,
    Replay,
    list_log,
    read_last_checkpoint,
    read_version,
    require_versions,
    version_has_action,
)
from indextables.protocol.metrics import emit
from indextables.protocol.predicates import Predicate
from indextables.protocol.protocolcheck import check_readable
from indextables.protocol.schemadedup import registry_from_configuration, resolve_doc_mapping
from indextables.protocol.state import FileEntry, StateManifest, with_doc_mapping_json
from indextables.protocol.stateformat import StateFormat
from indextables.protocol.statsfilter import entry_may_match, keep_by_stats
from indextables.protocol.store import ObjectStore

__all__ = ["Snapshot", "SnapshotReader", "TableLayout", "read_state_manifest"]

_ABSENT: Any = object()  # "this version file has no such action"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The table as of one version.

    Attributes:
        version: the table version.
        protocol: the protocol in force.
        metadata: the table metadata in force.
        files: live splits (``doc_mapping_json`` restored from the registry), a
            :class:`~indextables.protocol.livefiles.LiveFiles`: entries are
            built on access; ``files.paths``, ``sizes``, ``partition_values``
            and ``num_records`` read columns without building entries.
        timestamp: commit time of ``version`` (epoch ms; 0 when unknown).
        state_version: the state the snapshot was built on, if any.
        schema_registry: doc mapping hash -> JSON.
        skips: skip actions in the version files replayed after the state.
        partition_filter: the filter ``files`` was restricted by, if any.
        stats_filter: the min/max statistics filter ``files`` was pruned by, if
            any (see :mod:`indextables.protocol.statsfilter`).
    """

    version: int
    protocol: ProtocolAction
    metadata: MetadataAction
    files: Sequence[FileEntry]
    timestamp: int = 0
    state_version: int | None = None
    schema_registry: Mapping[str, str] = field(default_factory=dict)
    skips: tuple[SkipAction, ...] = ()
    partition_filter: Predicate | None = None
    stats_filter: Predicate | None = None

    @property
    def num_files(self) -> int:
        """Number of live splits."""
        return len(self.files)

    @property
    def total_bytes(self) -> int:
        """Total size of the live splits."""
        sizes = getattr(self.files, "sizes", None)
        if sizes is None:
            return sum(f.size for f in self.files)
        return sum(size or 0 for size in sizes)

    @property
    def partition_columns(self) -> tuple[str, ...]:
        """The table's partition columns."""
        return self.metadata.partition_columns


@dataclass(frozen=True, slots=True)
class TableLayout:
    """What the log holds right now: version files, states, the latest version."""

    listing: LogListing
    states: tuple[int, ...]

    @property
    def latest(self) -> int:
        """The current table version (-1 when the location holds no table)."""
        # A legacy JSON checkpoint also stands for its version once the
        # version files it covers are gone.
        checkpoints = max(
            (
                v
                for v, keys in self.listing.checkpoint_files.items()
                if any(k.endswith(f"{v:020d}.checkpoint.json") for k in keys)
            ),
            default=None,
        )
        candidates = [
            v for v in (self.listing.latest, *self.states[-1:], checkpoints) if v is not None
        ]
        return max(candidates, default=-1)

    def base_state(self, version: int) -> int | None:
        """The highest state at or below ``version``."""
        below = [s for s in self.states if s <= version]
        return below[-1] if below else None


@dataclass(slots=True)
class _Base:
    # The base's live entries: a state's lazy sequence, or a list (legacy checkpoint).
    entries: Sequence[FileEntry]
    manifest: StateManifest | None
    metadata: MetadataAction | None
    version: int | None
    # The stats filter ``entries`` were already pruned by (they need no re-check).
    stats_filter: Predicate | None = None
    # Every entry with a docMappingRef already carries its JSON: snapshots built
    # on this base need no pass over its entries to restore them.
    resolved: bool = False


_SCANNED: dict[tuple[str, int, int, int, str], Any] = {}
_SCANNED_LOCK = threading.Lock()


# A load whose listing went stale under a concurrent purge or truncate lists again.
LOAD_ATTEMPTS = 3
_T = TypeVar("_T")

# Snapshots of large tables are large, and each distinct filter makes another one.
MAX_CACHED_SNAPSHOTS = 8


class SnapshotReader:
    """Builds snapshots of one table, caching immutable pieces.

    States and version files never change once written, so decoded states
    and snapshots of a fixed version are cached (``ttl_seconds``); the latest
    version is resolved by listing on every call.
    """

    def __init__(
        self, store: ObjectStore, state_format: StateFormat, *, ttl_seconds: float = 300.0
    ) -> None:
        self.store = store
        self.state_format = state_format
        self.ttl_seconds = ttl_seconds
        self._lock = threading.Lock()
        self._snapshots: dict[
            tuple[int, Predicate | None, Predicate | None], tuple[float, Snapshot]
        ] = {}
        self._states: dict[int, _Base] = {}
        self._versions: dict[int, list[Action]] = {}
        self._created: dict[int, int] = {}

    def invalidate(self) -> None:
        """Drop every cached snapshot and state."""
        with self._lock:
            self._snapshots.clear()
            self._states.clear()
            self._created.clear()

    def layout(self) -> TableLayout:
        """List the log: version files, legacy checkpoints and states."""
        listing = list_log(self.store)
        states = tuple(self.state_format.state_versions(self.store))
        return TableLayout(listing, states)

    def actions(self, version: int) -> list[Action]:
        """The actions of one version file (cached: version files are immutable)."""
        cached = self._versions.get(version)
        if cached is None:
            cached = read_version(self.store, version)
            with self._lock:
                if len(self._versions) > 256:
                    self._versions.clear()
                self._versions[version] = cached
        return cached

    def load(
        self,
        version: int | None = None,
        *,
        partition_filter: Predicate | None = None,
        stats_filter: Predicate | None = None,
        layout: TableLayout | None = None,
    ) -> Snapshot:
        """Return the snapshot of ``version`` (latest when ``None``).

        ``partition_filter`` keeps the entries whose partition values match;
        ``stats_filter`` drops the entries whose min/max statistics prove no
        row can match (before they are built, when the state format can).

        Raises:
            TableNotFoundError: no log at this location.
            VersionNotFoundError: the version is in the future or no longer reachable.
            UnsupportedProtocolError: the table needs a newer reader.
        """
        return self.relisting(
            layout,
            lambda listed: self._load(listed, version, partition_filter, stats_filter),
            metric="indextables.snapshot.relist",
        )

    def relisting(
        self,
        layout: TableLayout | None,
        read: Callable[[TableLayout], _T],
        *,
        metric: str,
    ) -> _T:
        """``read(layout)``, listing the log again when what the listing named went away.

        A purge or truncate may delete a version file, a state or a manifest
        between the listing and the reads (state formats raise FileNotFoundError
        kinds): list again, up to ``LOAD_ATTEMPTS`` times, counting each relist
        as ``metric``. A version that is really gone fails the same way every
        time. A caller's own ``layout`` is used as given.
        """
        if layout is not None:
            return read(layout)
        for attempt in range(LOAD_ATTEMPTS):
            try:
                return read(self.layout())
            except TableNotFoundError:
                raise
            except (ObjectNotFoundError, VersionNotFoundError, FileNotFoundError):
                if attempt + 1 == LOAD_ATTEMPTS:
                    raise
                emit(metric, 1, table=self.store.uri)
        raise AssertionError("unreachable")

    def _load(
        self,
        layout: TableLayout,
        version: int | None,
        partition_filter: Predicate | None,
        stats_filter: Predicate | None,
    ) -> Snapshot:
        latest = layout.latest
        if latest < 0:
            raise TableNotFoundError(f"{self.store.uri}: no IndexTables transaction log here")
        target = latest if version is None else version
        if not 0 <= target <= latest:
            raise VersionNotFoundError(
                f"{self.store.uri}: version {target} does not exist (latest is {latest})"
            )
        key = (target, partition_filter, stats_filter)
        with self._lock:
            cached = self._snapshots.pop(key, None)
            if cached is not None and cached[0] > time.monotonic():
                self._snapshots[key] = cached  # most recently used last
                return cached[1]
        snapshot = self._build(layout, target, partition_filter, stats_filter)
        with self._lock:
            self._remember(key, snapshot)
        return snapshot

    def _remember(
        self, key: tuple[int, Predicate | None, Predicate | None], snapshot: Snapshot
    ) -> None:
        """Cache ``snapshot``: expired entries go first, then the least recently used."""
        now = time.monotonic()
        for stale in [k for k, (expiry, _) in self._snapshots.items() if expiry <= now]:
            del self._snapshots[stale]
        while len(self._snapshots) >= MAX_CACHED_SNAPSHOTS:
            del self._snapshots[next(iter(self._snapshots))]
        self._snapshots[key] = (now + self.ttl_seconds, snapshot)

    def replay_since_base(self, version: int, layout: TableLayout) -> tuple[_Base, Replay]:
        """The (unfiltered) base of ``version`` and the replay of the files after it."""
        base = self._base(layout, version, None, None)
        start = 0 if base.version is None else base.version + 1
        require_versions(layout.listing, start, version, uri=self.store.uri)
        # On a state, only the delta (replay.added/removed) is needed; without one the
        # replay must hold every live file.
        replay = Replay({} if base.manifest is not None else {e.path: e for e in base.entries})
        for v in range(start, version + 1):
            replay.apply(v, layout.listing.versions[v].last_modified_ms, self.actions(v))
        return base, replay

    def _build(
        self, layout: TableLayout, target: int, flt: Predicate | None, stats: Predicate | None
    ) -> Snapshot:
        base = self._base(layout, target, flt, stats)
        start = 0 if base.version is None else base.version + 1
        require_versions(layout.listing, start, target, uri=self.store.uri)
        replay = Replay({})  # the delta only: the base stays as the state format built it
        for v in range(start, target + 1):
            replay.apply(v, layout.listing.versions[v].last_modified_ms, self.actions(v))
        protocol = replay.protocol or self._older(layout, start - 1, ProtocolAction)
        if protocol is None:
            protocol = _protocol_of_state(base.manifest)
        metadata = replay.metadata or base.metadata
        metadata = metadata or self._older(layout, start - 1, MetadataAction)
        if metadata is None:
            raise CorruptFileError(self.store.uri, f"no metaData action reachable at {target}")
        check_readable(protocol, path=self.store.uri)
        registry = dict(base.manifest.schema_registry) if base.manifest else {}
        registry.update(registry_from_configuration(metadata.configuration))
        files = self._live_files(base, replay, registry, flt, stats)
        return Snapshot(
            target,
            protocol,
            metadata,
            files,
            timestamp=self._timestamp(layout, target, base),
            state_version=base.version,
            schema_registry=registry,
            skips=tuple(replay.skips),
            partition_filter=flt,
            stats_filter=stats,
        )

    def _live_files(
        self,
        base: _Base,
        replay: Replay,
        registry: Mapping[str, str],
        flt: Predicate | None,
        stats: Predicate | None,
    ) -> LiveFiles:
        """The base's entries less what the replay removed or re-added, plus its adds.

        Nothing of the base is copied or built: its entries stay the state
        format's (lazy) sequence; only the replayed adds are filtered here.
        """
        uri = self.store.uri
        entries = base.entries
        resolve = getattr(entries, "resolve_doc_mappings", None)
        if resolve is not None:
            resolve(registry)  # the full registry: the state's and the metadata's
        elif not base.resolved:
            entries = [resolve_doc_mapping(f, registry, path=uri) for f in entries]
        if flt is not None and base.manifest is None:
            entries = [f for f in entries if flt.matches(f.partition_values)]
        if stats is not None and base.stats_filter != stats:
            entries = keep_by_stats(entries, stats)
        added = [resolve_doc_mapping(f, registry, path=uri) for f in replay.files.values()]
        if flt is not None:
            added = [f for f in added if flt.matches(f.partition_values)]
        if stats is not None:
            added = [f for f in added if entry_may_match(stats, f)]
        dropped = replay.removed | replay.files.keys()
        return LiveFiles.overlay(entries, dropped=dropped, added=added)

    def _timestamp(self, layout: TableLayout, version: int, base: _Base) -> int:
        info = layout.listing.versions.get(version)
        if info is not None:
            return info.last_modified_ms
        if base.manifest is not None and base.version == version:
            return base.manifest.created_at
        return 0

    def _older(self, layout: TableLayout, below: int, kind: type[Any]) -> Any:
        """The newest action of ``kind`` in the version files at or below ``below``.

        Files are only decoded when their text holds the action's key, and the
        answer is remembered: version files never change.
        """
        wire_key = "protocol" if kind is ProtocolAction else "metaData"
        uri = self.store.uri
        for v in sorted((v for v in layout.listing.versions if v <= below), reverse=True):
            info = layout.listing.versions[v]
            # Shared by every handle in the process: scanning large version files
            # is costly and each planning call opens its own handle. A table
            # re-created at the same URI writes new files, so size and
            # modification time are part of the key.
            shared = (uri, v, info.size, info.last_modified_ms, wire_key)
            found = _SCANNED.get(shared)
            if found is None:
                found = self._scan(v, wire_key, kind)
                with _SCANNED_LOCK:
                    if len(_SCANNED) > 4096:
                        _SCANNED.clear()
                    _SCANNED[shared] = found
            if found is not _ABSENT:
                return found
        return None

    def _scan(self, version: int, wire_key: str, kind: type[Any]) -> Any:
        try:
            if version not in self._versions and not version_has_action(
                self.store, version, wire_key
            ):
                return _ABSENT
            actions = self.actions(version)
        except VersionNotFoundError:
            return _ABSENT  # purged since the listing
        return next((a for a in reversed(actions) if isinstance(a, kind)), _ABSENT)

    def _state_created(self, version: int) -> int:
        created = self._created.get(version)
        if created is None:
            created = read_state_manifest(self, version).created_at
            with self._lock:
                self._created[version] = created
        return created

    def _stale(self, layout: TableLayout, state: int) -> bool:
        """Whether ``state`` was created after the next higher state (so holds a later table)."""
        higher = [s for s in layout.states if s > state]
        if not higher:
            return False
        return self._state_created(state) > self._state_created(higher[0])

    def usable_state(self, layout: TableLayout, target: int) -> int | None:
        """The highest state at or below ``target`` that stands for its own version.

        A stale state (see the module docstring) is skipped when the version
        files from the next lower state (or from 0) up to ``target`` all
        exist; otherwise it is the only way to the version and is kept.
        """
        state = layout.base_state(target)
        while state is not None and self._stale(layout, state):
            lower = layout.base_state(state - 1)
            first = 0 if lower is None else lower + 1
            if any(v not in layout.listing.versions for v in range(first, target + 1)):
                break
            state = lower
        return state

    def _base(
        self, layout: TableLayout, target: int, flt: Predicate | None, stats: Predicate | None
    ) -> _Base:
        state = self.usable_state(layout, target)
        legacy = self._legacy_checkpoint(layout, target)
        if legacy is not None and (
            state is None or (legacy.version is not None and legacy.version > state)
        ):
            return legacy
        if state is None:
            return _Base([], None, None, None)
        unfiltered = flt is None and stats is None
        if unfiltered and state in self._states:
            return self._states[state]
        base = self._read_state(state, flt, stats)
        if unfiltered:
            with self._lock:
                self._states = {state: base}  # keep the newest only: they are large
        return base

    def _read_state(self, version: int, flt: Predicate | None, stats: Predicate | None) -> _Base:
        started = time.monotonic()
        loaded = self.state_format.read_state(self.store, version, partition_filter=flt)
        manifest = loaded.manifest
        # Restore doc mappings once per state read, not on every snapshot built on it.
        registry = manifest.schema_registry
        entries = loaded.files
        resolve = getattr(entries, "resolve_doc_mappings", None)
        if resolve is not None:
            # The state format can restore them while it builds the entries
            # (avro-state does): much cheaper than a copy of each entry here.
            resolve(registry)
        if stats is not None:
            # Column-wise when the format can: pruned entries are never built.
            entries = keep_by_stats(entries, stats)
        resolved = False
        if resolve is None:
            # Once per state read (the base is cached): snapshots built on it skip the
            # pass unless a reference was left for the metadata's registry to resolve.
            entries = [_with_mapping(entry, registry) for entry in entries]
            resolved = not any(
                e.doc_mapping_json is None and e.doc_mapping_ref is not None for e in entries
            )
        files = entries
        elapsed = (time.monotonic() - started) * 1000
        tombstones = len(manifest.tombstones)
        tags = {"table": self.store.uri}
        emit("indextables.state.read.duration_ms", elapsed, **tags)
        emit("indextables.state.read.manifest_count", loaded.manifests_read, **tags)
        emit("indextables.state.read.file_count", len(files), **tags)
        emit("indextables.state.tombstone_count", tombstones, **tags)
        emit("indextables.state.tombstone_ratio", tombstones / max(len(files), 1), **tags)
        metadata = _metadata_of_state(manifest, self.store.uri)
        return _Base(files, manifest, metadata, version, stats, resolved)

    def _legacy_checkpoint(self, layout: TableLayout, target: int) -> _Base | None:
        """A legacy JSON checkpoint at or below ``target`` named by ``_last_checkpoint``."""
        if not layout.listing.checkpoint_files:
            return None
        pointer = read_last_checkpoint(self.store)
        if pointer is None or pointer.checkpoint_format == "avro-state":
            return None
        if pointer.version > target:
            return None
        replay = Replay({})
        try:
            actions = read_json_checkpoint(self.store, pointer)
        except (ObjectNotFoundError, CorruptFileError):
            # A stale or damaged pointer: when a state or every version file up to
            # the target can stand in for the checkpoint, read those instead.
            versions = layout.listing.versions
            if layout.base_state(target) is None and any(
                v not in versions for v in range(target + 1)
            ):
                raise
            emit("indextables.checkpoint.stale_pointer", 1, table=self.store.uri)
            return None
        replay.apply(pointer.version, pointer.created_time, actions)
        return _Base(list(replay.files.values()), None, replay.metadata, pointer.version)


def _with_mapping(entry: FileEntry, registry: Mapping[str, str]) -> FileEntry:
    if entry.doc_mapping_json is not None or entry.doc_mapping_ref is None:
        return entry
    found = registry.get(entry.doc_mapping_ref)
    return entry if found is None else with_doc_mapping_json(entry, found)


def _metadata_of_state(manifest: StateManifest, uri: str) -> MetadataAction | None:
    if manifest.metadata is None:
        return None
    try:
        obj = json.loads(manifest.metadata)
    except ValueError as exc:
        raise CorruptFileError(
            uri, f"state {manifest.state_version}: bad metadata: {exc}"
        ) from None
    except RecursionError:
        raise CorruptFileError(
            uri, f"state {manifest.state_version}: bad metadata: nested too deeply to decode"
        ) from None
    action = decode_action_object(obj, path=f"{uri} state {manifest.state_version}")
    if not isinstance(action, MetadataAction):
        raise CorruptFileError(uri, f"state {manifest.state_version}: metadata is not metaData")
    return action


def _protocol_of_state(manifest: StateManifest | None) -> ProtocolAction:
    # A state records only its protocol version; used when every version file
    # with a protocol action has been purged.
    version = manifest.protocol_version if manifest is not None else 1
    return ProtocolAction(version, version)


def read_state_manifest(reader: SnapshotReader, version: int) -> StateManifest:
    """The root record of state ``version`` (without its entries when the format allows)."""
    read_manifest = getattr(reader.state_format, "read_manifest", None)
    if read_manifest is not None:
        manifest: StateManifest = read_manifest(reader.store, version)
        return manifest
    return reader.state_format.read_state(reader.store, version).manifest
