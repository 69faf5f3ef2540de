"""Garbage collection: old state directories and unreferenced manifests.

Old states (never the current one) are deleted when they are older than the
retention window *and* not among the ``retention_versions`` newest old
states. Manifests no remaining state references are deleted once older than
the safety window: a writer may have written a manifest whose state it has
not committed yet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from indextables.avrostate.errors import AvroStateError
from indextables.avrostate.layout import MANIFESTS_DIR, manifest_key, state_dir
from indextables.avrostate.options import StateOptions
from indextables.avrostate.state_reader import load_state_manifest, state_versions
from indextables.protocol.store import ObjectStore

__all__ = ["GcReport", "collect_garbage"]


@dataclass(frozen=True, slots=True)
class GcReport:
    """What a collection deleted (or would delete, in a dry run)."""

    deleted_states: tuple[int, ...]
    deleted_manifests: tuple[str, ...]
    kept_states: tuple[int, ...]


def _expired_states(
    store: ObjectStore, versions: list[int], cutoff_ms: int, keep: int
) -> list[int]:
    old = sorted(versions[:-1], reverse=True)  # never the current (highest) state
    candidates = []
    for version in old[max(keep, 0) :]:
        try:
            created = load_state_manifest(store, version).created_at
        except AvroStateError:
            created = 0  # an unreadable old state is garbage too
        if created < cutoff_ms:
            candidates.append(version)
    return sorted(candidates)


def _referenced(store: ObjectStore, versions: list[int]) -> set[str]:
    keys: set[str] = set()
    for version in versions:
        state = load_state_manifest(store, version)
        keys.update(manifest_key(m.path, version) for m in state.manifests)
    return keys


def collect_garbage(
    store: ObjectStore,
    *,
    options: StateOptions | None = None,
    now_ms: int | None = None,
    dry_run: bool = False,
) -> GcReport:
    """Delete expired old states, then manifests no kept state references.

    Args:
        store: the table's store.
        options: retention_versions, retention_hours and gc_safety_hours.
        now_ms: the current time (epoch ms), for tests.
        dry_run: only report what would be deleted.
    """
    opts = options or StateOptions()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    versions = state_versions(store)
    expired = _expired_states(
        store, versions, now - int(opts.retention_hours * 3_600_000), opts.retention_versions
    )
    kept = [v for v in versions if v not in set(expired)]
    referenced = _referenced(store, kept)
    safety_cutoff = now - int(opts.gc_safety_hours * 3_600_000)
    orphans = [
        info.key
        for info in store.list(MANIFESTS_DIR)
        if info.key not in referenced and info.last_modified_ms < safety_cutoff
    ]
    if not dry_run:
        for version in expired:
            store.delete_many([info.key for info in store.list(state_dir(version))])
        store.delete_many(orphans)
    return GcReport(tuple(expired), tuple(orphans), tuple(kept))
