"""CHECKPOINT, COMPACT and DESCRIBE STATE."""

from __future__ import annotations

from typing import TYPE_CHECKING

from indextables.protocol.lastcheckpoint import FORMAT_AVRO_STATE
from indextables.protocol.logreplay import read_last_checkpoint
from indextables.protocol.maintenance.results import CheckpointResult, DescribeStateResult
from indextables.protocol.snapshot import read_state_manifest
from indextables.protocol.statewrite import advance_last_checkpoint, write_state_for

if TYPE_CHECKING:
    from indextables.protocol.snapshot import Snapshot
    from indextables.protocol.tablelike import TableLike

__all__ = ["checkpoint", "compact", "describe_state"]

TOMBSTONE_THRESHOLD = 0.10
MAX_MANIFESTS = 20


def checkpoint(table: TableLike) -> CheckpointResult:
    """Write a state at the current version (nothing to do if one exists)."""
    layout = table.reader.layout()
    snap = table.reader.load(layout=layout)
    state = write_state_for(table.reader, snap, layout=layout)
    status = "SUCCESS" if state is not None else "SUCCESS: state already exists"
    if state is None:
        existing = read_state_manifest(table.reader, snap.version)
        advance_last_checkpoint(table.reader, existing)
    return _result(table, snap, status, compacted=False)


def compact(table: TableLike) -> CheckpointResult:
    """Write a compacted state (all live entries, no tombstones).

    A state is immutable, so when the current version already has one, an
    empty version is committed first and the compacted state written for it.
    """
    layout = table.reader.layout()
    if layout.latest in layout.states:
        table.commit_actions([])
        layout = table.reader.layout()
    snap = table.reader.load(layout=layout)
    state = write_state_for(table.reader, snap, layout=layout, force_compaction=True)
    table.reader.invalidate()
    status = "SUCCESS" if state is not None else "SKIPPED: a concurrent writer wrote this state"
    return _result(table, snap, status, compacted=state is not None)


def _result(table: TableLike, snap: Snapshot, status: str, *, compacted: bool) -> CheckpointResult:
    """The reference's CHECKPOINT row: one action per live file, never multi-part."""
    return CheckpointResult(
        table.uri,
        status,
        snap.version,
        snap.num_files,
        snap.num_files,
        snap.protocol.min_reader_version,
        False,
        compacted=compacted,
    )


def _no_state_status(table: TableLike, version: int) -> str:
    """What a table without any checkpoint is, and when it gets its first one."""
    cfg = table.config
    if cfg.checkpoint_enabled:
        interval = cfg.checkpoint_interval
        due = (version // interval + 1) * interval
        when = (
            f"the commit of version {due} writes the first one "
            f"(every {interval} versions, spark.indextables.checkpoint.interval)"
        )
    else:
        when = "automatic checkpoints are off (spark.indextables.checkpoint.enabled=false)"
    return (
        f"no checkpoint yet (normal for a new table): version {version} is read from its "
        f"version files; {when}, or one is written now by CHECKPOINT INDEXTABLES "
        f"(CLI: indextables checkpoint); its format will be {FORMAT_AVRO_STATE}"
    )


def describe_state(table: TableLike) -> DescribeStateResult:
    """Describe the current (highest) state, or the legacy checkpoint / plain log."""
    layout = table.reader.layout()
    if not layout.states:
        pointer = read_last_checkpoint(table.store)
        fmt = pointer.checkpoint_format if pointer is not None else "none"
        snap = table.reader.load(layout=layout)
        return DescribeStateResult(
            table.uri,
            fmt,
            snap.version,
            snap.num_files,
            0,
            0,
            0.0,
            snap.total_bytes,
            False,
            _no_state_status(table, snap.version) if pointer is None else "OK",
        )
    version = layout.states[-1]
    manifest = read_state_manifest(table.reader, version)
    entries = sum(m.num_entries for m in manifest.manifests)
    tombstones = len(manifest.tombstones)
    ratio = tombstones / entries if entries else 0.0
    needs = ratio > TOMBSTONE_THRESHOLD or len(manifest.manifests) > MAX_MANIFESTS
    return DescribeStateResult(
        table.uri,
        FORMAT_AVRO_STATE,
        manifest.state_version,
        manifest.num_files,
        len(manifest.manifests),
        tombstones,
        ratio,
        manifest.total_bytes,
        needs,
        "OK",
    )
