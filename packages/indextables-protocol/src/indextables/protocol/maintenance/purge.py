"""PURGE and TRUNCATE TIME TRAVEL: deleting what no retained version needs.

Order matters for crash safety: old states first (never the current one),
then manifests no remaining state references (and older than the safety
window, since a writer may be about to commit a state that uses a new one),
then version files covered by the current state (old enough, never the
newest one carrying protocol or metadata unless the state carries metadata),
then orphaned splits (referenced by no retained version, old enough). A crash
between any two deletions leaves a table that opens with every committed file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Final

from indextables.protocol.actions import AddAction, MetadataAction, ProtocolAction, RemoveAction
from indextables.protocol.errors import ProtocolError, RetentionTooShortError
from indextables.protocol.logreplay import LOG_DIR, version_key
from indextables.protocol.maintenance.results import PurgeResult, TruncateResult
from indextables.protocol.protocolcheck import check_writable
from indextables.protocol.snapshot import TableLayout, read_state_manifest
from indextables.protocol.statewrite import write_state_for

if TYPE_CHECKING:
    from indextables.protocol.tablelike import TableLike

__all__ = ["purge", "truncate_time_travel"]

_HOUR_MS: Final = 3_600_000
MIN_SPLIT_RETENTION_HOURS: Final = 24.0
_STATE_PREFIX: Final = LOG_DIR + "state-v"
_MANIFESTS: Final = LOG_DIR + "manifests/"


@dataclass(frozen=True, slots=True)
class _StatePlan:
    expired: tuple[int, ...]
    kept: tuple[int, ...]
    manifests: tuple[str, ...]


def _manifest_key(path: str, state_version: int) -> str:
    if "/" in path:
        return LOG_DIR + path
    return f"{_STATE_PREFIX}{state_version:020d}/{path}"


def _plan_states(
    table: TableLike, layout: TableLayout, now: int, *, keep_versions: int, retention_ms: int
) -> _StatePlan:
    states = list(layout.states)
    old = sorted(states[:-1], reverse=True)[max(keep_versions, 0) :]
    expired = []
    for version in old:
        try:
            created = read_state_manifest(table.reader, version).created_at
        except (ProtocolError, OSError):
            created = 0  # unreadable old state: garbage too
        if created < now - retention_ms:
            expired.append(version)
    kept = [v for v in states if v not in set(expired)]
    referenced = set()
    for version in kept:
        manifest = read_state_manifest(table.reader, version)
        referenced |= {_manifest_key(m.path, version) for m in manifest.manifests}
    cutoff = now - int(table.config.manifest_min_age_hours * _HOUR_MS)
    orphans = tuple(
        info.key
        for info in table.store.list(_MANIFESTS)
        if info.key not in referenced and info.last_modified_ms < cutoff
    )
    return _StatePlan(tuple(sorted(expired)), tuple(kept), orphans)


def _state_has_metadata(table: TableLike, layout: TableLayout) -> bool:
    current = layout.states[-1] if layout.states else None
    return current is not None and read_state_manifest(table.reader, current).metadata is not None


def _protected_versions(
    table: TableLike, covered: list[int], *, state_has_metadata: bool
) -> set[int]:
    """Version files that hold the newest protocol (and metadata, if the state lacks it)."""
    protected: set[int] = set()
    need = {ProtocolAction} if state_has_metadata else {ProtocolAction, MetadataAction}
    for version in sorted(covered, reverse=True):
        kinds = {type(a) for a in table.reader.actions(version)} & need
        if kinds:
            protected.add(version)
            need -= kinds
        if not need:
            break
    return protected


def _old_version_files(table: TableLike, layout: TableLayout, cutoff: int) -> list[int]:
    if not layout.states:
        return []
    current = layout.states[-1]
    covered = [v for v in layout.listing.versions if v < current]
    protected = _protected_versions(
        table, covered, state_has_metadata=_state_has_metadata(table, layout)
    )
    return sorted(
        v
        for v in covered
        if v not in protected and layout.listing.versions[v].last_modified_ms < cutoff
    )


def _old_checkpoint_files(table: TableLike, layout: TableLayout, cutoff: int) -> list[str]:
    """Legacy JSON checkpoint files below the current state, older than ``cutoff``."""
    if not layout.states:
        return []
    current = layout.states[-1]
    keys = [k for v, ks in layout.listing.checkpoint_files.items() if v < current for k in ks]
    return [k for k in keys if table.store.head(k).last_modified_ms < cutoff]


def _referenced_splits(
    table: TableLike, layout: TableLayout, kept_states: tuple[int, ...], kept_versions: set[int]
) -> set[str]:
    referenced = {f.path for f in table.reader.load(layout=layout).files}
    for version in kept_versions:
        for action in table.reader.actions(version):
            if isinstance(action, AddAction | RemoveAction):
                referenced.add(action.path)
    for version in kept_states:
        loaded = table.state_format.read_state(table.store, version)
        referenced |= {entry.path for entry in loaded.files}
    return referenced


def _split_of(key: str) -> str:
    """The split a key belongs to: itself, or the split of a Hadoop ``.x.split.crc``."""
    if not key.endswith(".crc"):
        return key
    folder, _, name = key.removesuffix(".crc").rpartition("/")
    name = name.removeprefix(".")
    return f"{folder}/{name}" if folder else name


def _orphaned_splits(table: TableLike, referenced: set[str], cutoff: int) -> list[tuple[str, int]]:
    found = []
    for info in table.store.list(""):
        if info.key.startswith(LOG_DIR) or not info.key.endswith((".split", ".split.crc")):
            continue
        base = _split_of(info.key)
        if base not in referenced and info.last_modified_ms < cutoff:
            found.append((info.key, info.size))
    return found


def _hours(value: float | timedelta | None) -> float | None:
    return value.total_seconds() / 3600 if isinstance(value, timedelta) else value


def purge(
    table: TableLike,
    *,
    older_than: float | timedelta | None = None,
    log_retention: float | timedelta | None = None,
    dry_run: bool = False,
    now_ms: int | None = None,
) -> PurgeResult:
    """Delete orphaned splits, old version files, old states and unreferenced manifests.

    Args:
        older_than: how old an orphaned split must be (hours or a timedelta;
            default 168 h, at least 24 h).
        log_retention: how old a covered version file must be (default 720 h).
        dry_run: report without deleting.
    """
    started = time.monotonic()
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    cfg = table.config
    older_than, log_retention = _hours(older_than), _hours(log_retention)
    retention = cfg.split_retention_hours if older_than is None else older_than
    refused = None
    if cfg.retention_check_enabled and retention < MIN_SPLIT_RETENTION_HOURS:
        refused = (
            f"retention {retention:g} h is below the minimum {MIN_SPLIT_RETENTION_HOURS:g} h: "
            "splits of commits in flight could be deleted. Set "
            "spark.indextables.purge.retentionCheckEnabled=false to allow it "
            "(only when no writer can be running)"
        )
        if not dry_run:  # a dry run deletes nothing: it reports, and says a real run is refused
            raise RetentionTooShortError(refused)
    log_hours = cfg.log_retention_hours if log_retention is None else log_retention
    layout = table.reader.layout()
    check_writable(table.reader.load(layout=layout).protocol, path=table.uri)
    plan = _plan_states(
        table,
        layout,
        now,
        keep_versions=cfg.state_retention_versions,
        retention_ms=int(cfg.state_retention_hours * _HOUR_MS),
    )
    log_cutoff = now - int(log_hours * _HOUR_MS)
    old_versions = _old_version_files(table, layout, log_cutoff)
    old_checkpoints = _old_checkpoint_files(table, layout, log_cutoff)
    kept_versions = set(layout.listing.versions) - set(old_versions)
    referenced = _referenced_splits(table, layout, plan.kept, kept_versions)
    orphans = _orphaned_splits(table, referenced, now - int(retention * _HOUR_MS))
    if not dry_run:
        for version in plan.expired:
            table.store.delete_many(
                [i.key for i in table.store.list(f"{_STATE_PREFIX}{version:020d}/")]
            )
        table.store.delete_many(plan.manifests)
        table.store.delete_many([version_key(v) for v in old_versions])
        table.store.delete_many(old_checkpoints)
        table.store.delete_many([key for key, _ in orphans])
        table.reader.invalidate()
    size_mb = sum(size for _, size in orphans) / (1024 * 1024)
    return PurgeResult(
        table.uri,
        "DRY_RUN" if dry_run else "SUCCESS",
        len(orphans),
        0 if dry_run else len(orphans),
        size_mb,
        retention,
        0 if dry_run else len(old_versions) + len(old_checkpoints),
        len(plan.expired),
        0 if dry_run else len(plan.expired),
        dry_run,
        int((time.monotonic() - started) * 1000),
        f"{len(old_versions)} version files, {len(plan.manifests)} manifests eligible"
        + ("" if refused is None else f"; a real run would be refused: {refused}"),
        manifests_deleted=0 if dry_run else len(plan.manifests),
        orphaned_files=tuple(key for key, _ in orphans),
        tx_log_files=(*(version_key(v) for v in old_versions), *old_checkpoints),
    )


def truncate_time_travel(table: TableLike, *, dry_run: bool = False) -> TruncateResult:
    """Make the current version the oldest reachable one.

    Writes a state at the current version if needed, then deletes every
    older version file (except those still needed for protocol/metadata),
    legacy checkpoint and state. Manifests follow the usual safety window.
    """
    layout = table.reader.layout()
    snap = table.reader.load(layout=layout)
    if snap.version not in layout.states and not dry_run:
        write_state_for(table.reader, snap, layout=layout)
        layout = table.reader.layout()
    current = snap.version
    covered = [v for v in layout.listing.versions if v < current]
    # Our states carry metadata; a dry run assumes the state it would write.
    has_metadata = _state_has_metadata(table, layout) if current in layout.states else True
    protected = _protected_versions(table, covered, state_has_metadata=has_metadata)
    versions = sorted(v for v in covered if v not in protected)
    checkpoints = [
        k for v, keys in layout.listing.checkpoint_files.items() if v < current for k in keys
    ]
    states = [s for s in layout.states if s < current]
    if not dry_run:
        table.store.delete_many([version_key(v) for v in versions])
        table.store.delete_many(checkpoints)
        for version in states:
            table.store.delete_many(
                [i.key for i in table.store.list(f"{_STATE_PREFIX}{version:020d}/")]
            )
        table.reader.invalidate()
    removed = len(checkpoints) + len(states)
    verb = "Would delete" if dry_run else "Deleted"
    return TruncateResult(
        table.uri,
        "DRY_RUN" if dry_run else "SUCCESS",
        current,
        len(versions),
        removed,
        snap.num_files,
        f"{verb} {len(versions)} version files and {removed} checkpoints/states; "
        f"table at v{current}",
    )
