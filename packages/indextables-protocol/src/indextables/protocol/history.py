"""Table history and change feeds, built from version files and states."""

from __future__ import annotations

from dataclasses import dataclass

from indextables.protocol.actions import (
    Action,
    AddAction,
    MetadataAction,
    ProtocolAction,
    RemoveAction,
    SkipAction,
)
from indextables.protocol.snapshot import SnapshotReader, TableLayout, read_state_manifest
from indextables.protocol.state import FileEntry

__all__ = ["Changes", "HistoryEntry", "changes_between", "commit_times", "history_of"]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One retained version.

    Attributes:
        version: the version.
        timestamp: commit time (version file time, or state creation time), epoch ms.
        operation: CREATE, WRITE, REMOVE, UPDATE, MERGE, METADATA, SKIP, EMPTY,
            or STATE for a version that exists only as a state.
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


def commit_times(reader: SnapshotReader, layout: TableLayout | None = None) -> dict[int, int]:
    """Version -> commit time (epoch ms) of every retained version, without reading actions."""
    layout = layout or reader.layout()
    times = {v: info.last_modified_ms for v, info in layout.listing.versions.items()}
    for version in layout.states:
        if version not in times:
            times[version] = _state_time(reader, version)
    return times


def history_of(reader: SnapshotReader, layout: TableLayout | None = None) -> list[HistoryEntry]:
    """One entry per retained version (version file or state), oldest first."""
    layout = layout or reader.layout()
    states = set(layout.states)
    entries = []
    for version in sorted(set(layout.listing.versions) | states):
        info = layout.listing.versions.get(version)
        if info is None:
            entries.append(
                HistoryEntry(version, _state_time(reader, version), "STATE", None, None, True)
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
    """
    layout = reader.layout()
    end = layout.latest
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
