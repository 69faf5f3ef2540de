"""Writing a state for a committed version, and moving ``_last_checkpoint`` forward.

A state for version ``v`` is only ever written once version ``v`` is
committed (its version file exists, or it is a state-only version of the
reference), so a state always equals the replay of the log up to ``v``. Its
creation (put-if-absent of the state root) may race with another writer
doing the same: the loser simply finds it done.
"""

from __future__ import annotations

import time
from dataclasses import replace

from indextables.protocol.actions import encode_action_object
from indextables.protocol.errors import ObjectExistsError
from indextables.protocol.jsonwire import dumps
from indextables.protocol.lastcheckpoint import (
    FORMAT_AVRO_STATE,
    LastCheckpoint,
    encode_last_checkpoint,
    state_dir_name,
)
from indextables.protocol.logreplay import LAST_CHECKPOINT_KEY, read_last_checkpoint
from indextables.protocol.metrics import emit
from indextables.protocol.protocolcheck import check_writable
from indextables.protocol.schemadedup import doc_mapping_hash
from indextables.protocol.snapshot import Snapshot, SnapshotReader, TableLayout
from indextables.protocol.state import FileEntry, StateManifest

__all__ = ["advance_last_checkpoint", "write_state_for"]


def _deduplicated(entries: list[FileEntry], registry: dict[str, str]) -> list[FileEntry]:
    """Entries with inline doc mappings replaced by references (registry updated)."""
    out = []
    for entry in entries:
        if entry.doc_mapping_json is not None:
            ref = entry.doc_mapping_ref or doc_mapping_hash(entry.doc_mapping_json)
            registry.setdefault(ref, entry.doc_mapping_json)
            entry = replace(entry, doc_mapping_json=None, doc_mapping_ref=ref)
        out.append(entry)
    return out


def write_state_for(
    reader: SnapshotReader,
    snapshot: Snapshot,
    *,
    layout: TableLayout,
    force_compaction: bool = False,
) -> StateManifest | None:
    """Write the state of ``snapshot.version`` from its base state plus the replayed delta.

    Returns:
        The new state's root record, or ``None`` if that state already exists.
    """
    check_writable(snapshot.protocol, path=reader.store.uri)
    version = snapshot.version
    if version in layout.states:
        return None
    base, replay = reader.replay_since_base(version, layout)
    registry = dict(snapshot.schema_registry)
    if base.manifest is None:
        # No state to build on (a plain log, or a legacy JSON checkpoint):
        # the new state holds every live file.
        delta, removes = list(replay.files.values()), []
    else:
        delta, removes = list(replay.added.values()), sorted(replay.removed)
    adds = _deduplicated(delta, registry)
    started = time.monotonic()
    try:
        state = reader.state_format.write_state(
            reader.store,
            version=version,
            base=base.manifest,
            adds=adds,
            removes=removes,
            schema_registry=registry,
            metadata=dumps(encode_action_object(snapshot.metadata)),
            force_compaction=force_compaction,
        )
    except ObjectExistsError:
        return None
    tags = {"table": reader.store.uri}
    emit("indextables.state.write.duration_ms", (time.monotonic() - started) * 1000, **tags)
    emit("indextables.state.write.compacted", float(not state.tombstones), **tags)
    advance_last_checkpoint(reader, state)
    return state


def advance_last_checkpoint(reader: SnapshotReader, state: StateManifest) -> None:
    """Point ``_last_checkpoint`` at ``state`` unless it already names a newer one."""
    current = read_last_checkpoint(reader.store)
    if current is not None and current.version >= state.state_version:
        return
    pointer = LastCheckpoint(
        state.state_version,
        state.num_files,
        state.total_bytes,
        state.num_files,
        state.created_at,
        format=FORMAT_AVRO_STATE,
        state_dir=state_dir_name(state.state_version),
    )
    reader.store.put(LAST_CHECKPOINT_KEY, encode_last_checkpoint(pointer))
