"""Table history and change feeds, built from version files and states."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from indextables.protocol.actions import (
    Action,
    AddAction,
    MetadataAction,
    ProtocolAction,
    RemoveAction,
    SkipAction,
)
from indextables.protocol.errors import (
    VersionNotFoundError,
)
from indextables.protocol.snapshot import (
    SnapshotReader,
    TableLayout,
    read_state_manifest,
)
from indextables.protocol.state import FileEntry

__all__ = [
    "Changes",
    "HistoryEntry",
    "changes_between",
    "commit_times",
    "history_of",
    "readable_versions",
]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One retained version.

    Attributes:
        version: the version.
        timestamp: commit time (version file time, or state creation time), epoch ms.
        operation: CREATE, WRITE, REMOVE, UPDATE, MERGE, METADATA, SKIP, EMPTY,
            STATE for a version that exists only as a state, or CHECKPOINT for
            one that exists only as a legacy JSON checkpoint.
        num_adds: add actions (``None`` for a state-only version).
        num_removes: remove actions (``None`` for a state-only version).
        has_state: a state exists for this version.
    """

    version: int
    timestamp: int
    operation: str
    num_adds: int | None
    num_removes: int | None
    has_state: bool


@dataclass(frozen=True, slots=True)
class Changes:
    """Files added and removed between two versions (exclusive start, inclusive end)."""

    start_version: int
    end_version: int
    adds: tuple[FileEntry, ...]
    removes: tuple[str, ...]


_T = TypeVar("_T")


def _relisting(
    reader: SnapshotReader, layout: TableLayout | None, read: Callable[[TableLayout], _T]
) -> _T:
    """``read(layout)``, relisting the log as a snapshot load does (SnapshotReader.relisting)."""
    return reader.relisting(layout, read, metric="indextables.history.relist")


def _operation(actions: list[Action]) -> str:
    adds = [a for a in actions if isinstance(a, AddAction)]
    removes = sum(isinstance(a, RemoveAction) for a in actions)
    if any(isinstance(a, ProtocolAction) for a in actions) and not adds and not removes:
        return "CREATE"
    if adds and removes:
        return "MERGE" if not any(a.data_change for a in adds) else "UPDATE"
    if adds:
        return "WRITE"
    if removes:
        return "REMOVE"
    if any(isinstance(a, MetadataAction) for a in actions):
        return "METADATA"
    if any(isinstance(a, SkipAction) for a in actions):
        return "SKIP"
    return "EMPTY"


def _state_time(reader: SnapshotReader, version: int) -> int:
    return read_state_manifest(reader, version).created_at


def _base_time(reader: SnapshotReader, layout: TableLayout, version: int) -> int:
    """The time of a version known only by its state or legacy checkpoint."""
    if version in layout.states:
        return _state_time(reader, version)
    key = next(
        k for k in layout.listing.checkpoint_files[version] if k.endswith(".checkpoint.json")
    )
    return reader.store.head(key).last_modified_ms


def readable_versions(layout: TableLayout) -> list[int]:
    """The versions a snapshot can still be loaded at, ascending.

    A version is readable when it has a state or a legacy checkpoint, or when
    its version file follows a readable version (version 0 needs only its
    file). Version files left behind by a purge or truncate below the oldest
    base, or cut off from every base by a missing file, are not.
    """
    versions = layout.listing.versions
    bases = set(layout.states) | {
        v
        for v, keys in layout.listing.checkpoint_files.items()
        if any(k.endswith(f"{v:020d}.checkpoint.json") for k in keys)
    }
    readable: list[int] = []
    previous = False
    for version in range(max(versions.keys() | bases, default=-1) + 1):
        previous = version in bases or (version in versions and (version == 0 or previous))
        if previous:
            readable.append(version)
    return readable


def commit_times(reader: SnapshotReader, layout: TableLayout | None = None) -> dict[int, int]:
    """Version -> commit time (epoch ms) of every readable version, without reading actions."""
    return _relisting(reader, layout, lambda listed: _commit_times(reader, listed))


def _commit_times(reader: SnapshotReader, layout: TableLayout) -> dict[int, int]:
    times: dict[int, int] = {}
    for version in readable_versions(layout):
        info = layout.listing.versions.get(version)
        times[version] = (
            info.last_modified_ms if info is not None else _base_time(reader, layout, version)
        )
    return times


def history_of(reader: SnapshotReader, layout: TableLayout | None = None) -> list[HistoryEntry]:
    """One entry per readable version (version file or state), oldest first.

    Version files a snapshot can no longer be loaded at (left below the oldest
    base by a purge or an interrupted truncate) are not listed.
    """
    return _relisting(reader, layout, lambda listed: _history(reader, listed))


def _history(reader: SnapshotReader, layout: TableLayout) -> list[HistoryEntry]:
    states = set(layout.states)
    entries = []
    for version in readable_versions(layout):
        info = layout.listing.versions.get(version)
        if info is None:
            has_state = version in states
            entries.append(
                HistoryEntry(
                    version,
                    _base_time(reader, layout, version),
                    "STATE" if has_state else "CHECKPOINT",
                    None,
                    None,
                    has_state,
                )
            )
            continue
        actions = reader.actions(version)
        entries.append(
            HistoryEntry(
                version,
                info.last_modified_ms,
                _operation(actions),
                sum(isinstance(a, AddAction) for a in actions),
                sum(isinstance(a, RemoveAction) for a in actions),
                version in states,
            )
        )
    return entries


def changes_between(reader: SnapshotReader, start: int) -> Changes:
    """Adds and removes after ``start`` up to the latest version.

    Uses the version files when all are retained; otherwise (state-only
    versions) compares the two snapshots.

    Raises:
        VersionNotFoundError: ``start`` is beyond the latest version.
    """
    return _relisting(reader, None, lambda listed: _changes(reader, listed, start))


def _changes(reader: SnapshotReader, layout: TableLayout, start: int) -> Changes:
    end = layout.latest
    if start > end:
        raise VersionNotFoundError(
            f"{reader.store.uri}: no changes since version {start}: the latest version is {end}"
        )
    versions = range(start + 1, end + 1)
    if all(v in layout.listing.versions for v in versions):
        added: dict[str, FileEntry] = {}
        removed: dict[str, None] = {}
        for v in versions:
            stamp = layout.listing.versions[v].last_modified_ms
            for action in reader.actions(v):
                if isinstance(action, AddAction):
                    added[action.path] = action.to_file_entry(
                        added_at_version=v, added_at_timestamp=stamp
                    )
                    removed.pop(action.path, None)
                elif isinstance(action, RemoveAction) and added.pop(action.path, None) is None:
                    removed[action.path] = None
        return Changes(start, end, tuple(added.values()), tuple(removed))
    before = {f.path: f for f in reader.load(start, layout=layout).files} if start >= 0 else {}
    after = {f.path: f for f in reader.load(end, layout=layout).files}
    adds = tuple(f for p, f in after.items() if p not in before)
    return Changes(start, end, adds, tuple(p for p in before if p not in after))
