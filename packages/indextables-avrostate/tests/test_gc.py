"""Garbage collection: retention of old states and the safety window for manifests."""

from __future__ import annotations

import time
from typing import Any

from indextables.avrostate import (
    StateOptions,
    collect_garbage,
    read_state,
    state_versions,
    write_state,
)
from indextables.avrostate.layout import MANIFESTS_DIR, manifest_key
from indextables.protocol.state import StateManifest

HOUR = 3_600_000


def _chain(store: Any, entries: Any, n: int, *, created: list[int]) -> StateManifest:
    state = None
    for v in range(1, n + 1):
        state = write_state(
            store,
            version=v,
            base=state,
            adds=entries(1, start=v),
            removes=[],
            schema_registry={},
            metadata=None,
            now_ms=created[v - 1],
        )
    assert state is not None
    return state


def test_old_states_past_both_retentions_are_deleted(store: Any, entries: Any) -> None:
    now = int(time.time() * 1000)
    created = [now - 500 * HOUR] * 4 + [now - 1 * HOUR, now]
    _chain(store, entries, 6, created=created)
    report = collect_garbage(
        store, options=StateOptions(retention_versions=2, retention_hours=168), now_ms=now
    )
    # current 6 always kept; 5 and 4 are the 2 newest old states; 3, 2, 1 are past 168 h
    assert report.deleted_states == (1, 2, 3)
    assert state_versions(store) == [4, 5, 6]
    assert len(read_state(store, 6).files) == 6
    # with no version retention, only the young state 5 survives besides the current one
    again = collect_garbage(store, options=StateOptions(retention_versions=0), now_ms=now)
    assert again.deleted_states == (4,)
    assert state_versions(store) == [5, 6]


def test_unreferenced_manifests_respect_the_safety_window(store: Any, entries: Any) -> None:
    now = int(time.time() * 1000)
    state = _chain(store, entries, 2, created=[now, now])
    store.put(f"{MANIFESTS_DIR}manifest-orphan0000000.avro", b"x")
    dry = collect_garbage(store, now_ms=now, dry_run=True)
    assert dry.deleted_manifests == ()  # the orphan is younger than the safety window
    later = now + 2 * HOUR
    report = collect_garbage(store, now_ms=later)
    assert report.deleted_manifests == (f"{MANIFESTS_DIR}manifest-orphan0000000.avro",)
    live = {manifest_key(m.path, 2) for m in state.manifests}
    assert {i.key for i in store.list(MANIFESTS_DIR)} == live
    assert len(read_state(store, 2).files) == 2


def test_manifests_of_kept_old_states_survive(store: Any, entries: Any) -> None:
    now = int(time.time() * 1000)
    first = write_state(
        store,
        version=1,
        base=None,
        adds=entries(5),
        removes=[],
        schema_registry={},
        metadata=None,
        now_ms=now,
    )
    write_state(
        store,
        version=2,
        base=first,
        adds=[],
        removes=[],
        schema_registry={},
        metadata=None,
        force_compaction=True,
        now_ms=now,
    )
    report = collect_garbage(store, now_ms=now + 2 * HOUR)
    assert report.deleted_manifests == ()
    assert report.kept_states == (1, 2)
    assert len(read_state(store, 1).files) == 5
    gone = collect_garbage(
        store, options=StateOptions(retention_versions=0, retention_hours=0), now_ms=now + 3 * HOUR
    )
    assert gone.deleted_states == (1,)
    assert gone.deleted_manifests == tuple(manifest_key(m.path, 1) for m in first.manifests)
