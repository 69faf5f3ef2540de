"""Writing states: incremental by default, compacted when a trigger fires.

An incremental state reuses every manifest of its base, adds one manifest
with the new entries and appends the removed paths to the tombstones, so it
writes O(delta) bytes; it reads the base's entries only when there are
removes (to count live files and bytes exactly). A compaction (see
:mod:`.compaction`) rewrites all live entries and drops every tombstone.
Triggers (DECISIONS.md): forced (also after a merge), tombstones / live files
> 10 %, more than 20 manifests, and any add whose path a tombstone or remove
names (an incremental state would hide or resurrect entries).

The root record is created with put-if-absent, the commit point: losing the
race raises the protocol's ``ObjectExistsError``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from indextables.avrostate.compaction import compact_entries
from indextables.avrostate.entries import FileEntries
from indextables.avrostate.errors import DuplicateAddError
from indextables.avrostate.layout import LOG_DIR, state_key
from indextables.avrostate.manifest_writer import encode_manifest, manifest_info, new_manifest_path
from indextables.avrostate.options import StateOptions
from indextables.avrostate.state_file import encode_state
from indextables.avrostate.state_reader import read_manifests
from indextables.protocol.state import FileEntry, ManifestInfo, StateManifest
from indextables.protocol.store import ObjectStore

__all__ = ["CompactionReason", "compaction_reason", "write_state"]


class CompactionReason(Enum):
    """Why a state write compacts instead of writing incrementally."""

    FORCED = "forced"
    NO_BASE = "no-base"
    TOMBSTONE_RATIO = "tombstone-ratio"
    TOO_MANY_MANIFESTS = "too-many-manifests"
    READDED_PATH = "re-added-path"


@dataclass(frozen=True, slots=True)
class _Removed:
    """Live base entries a commit removes: per-manifest counts and their bytes."""

    per_manifest: dict[int, int]
    paths: tuple[str, ...]
    total_bytes: int


def _find_removed(parts: Sequence[FileEntries], removes: frozenset[str]) -> _Removed:
    per_manifest: dict[int, int] = {}
    paths: list[str] = []
    total = 0
    for index, part in enumerate(parts):
        for i, path in enumerate(part.paths):
            if path in removes:
                per_manifest[index] = per_manifest.get(index, 0) + 1
                paths.append(path)
                total += part.sizes[i] or 0
    return _Removed(per_manifest, tuple(dict.fromkeys(paths)), total)


def compaction_reason(
    base: StateManifest | None,
    adds: Sequence[FileEntry],
    removes: frozenset[str],
    *,
    force: bool,
    new_tombstones: int,
    num_files: int,
    options: StateOptions,
) -> CompactionReason | None:
    """The first compaction trigger that fires for this write, or ``None``."""
    if force:
        return CompactionReason.FORCED
    if base is None:
        return CompactionReason.NO_BASE
    hidden = removes | frozenset(base.tombstones)
    if any(a.path in hidden for a in adds):
        return CompactionReason.READDED_PATH
    if len(base.manifests) + (1 if adds else 0) > options.max_manifests:
        return CompactionReason.TOO_MANY_MANIFESTS
    if len(base.tombstones) + new_tombstones > options.tombstone_ratio * max(num_files, 1):
        return CompactionReason.TOMBSTONE_RATIO
    return None


def _updated_infos(base: StateManifest, removed: _Removed) -> list[ManifestInfo]:
    infos = list(base.manifests)
    for index, count in removed.per_manifest.items():
        info = infos[index]
        live = info.live_entry_count
        infos[index] = replace(
            info,
            tombstone_count=info.tombstone_count + count,
            live_entry_count=live - count if live >= 0 else live,
        )
    return infos


def _new_manifest(
    store: ObjectStore, adds: Sequence[FileEntry], options: StateOptions
) -> ManifestInfo:
    path = new_manifest_path()
    data = encode_manifest(
        adds, codec=options.codec, level=options.compression_level, block_bytes=options.block_bytes
    )
    store.put(f"{LOG_DIR}/{path}", data)
    return manifest_info(path, adds)


def _commit(store: ObjectStore, state: StateManifest, options: StateOptions) -> StateManifest:
    store.put_if_absent(
        state_key(state.state_version), encode_state(state, level=options.compression_level)
    )
    return state


def _refuse_duplicate_adds(adds: Sequence[FileEntry]) -> None:
    seen: set[str] = set()
    for add in adds:
        if add.path in seen:
            raise DuplicateAddError(f"path {add.path!r} is added twice in one state write")
        seen.add(add.path)


def write_state(
    store: ObjectStore,
    *,
    version: int,
    base: StateManifest | None,
    adds: Sequence[FileEntry],
    removes: Sequence[str],
    schema_registry: Mapping[str, str],
    metadata: str | None,
    force_compaction: bool = False,
    options: StateOptions | None = None,
    now_ms: int | None = None,
) -> StateManifest:
    """Write state ``version`` as ``base`` plus adds and removes; see the module docstring.

    Removes are paths of live base entries (others are ignored); an add
    replaces a removed entry of the same path. An add of a path that is live
    in ``base`` and not removed is the caller's to refuse (the engine checks
    its snapshot first): checking here would read every base manifest and
    make incremental writes O(table) instead of O(delta).

    Raises:
        ObjectExistsError: state ``version`` already exists (another writer won).
        DuplicateAddError: the same path is added twice.
    """
    _refuse_duplicate_adds(adds)
    opts = options or StateOptions()
    created = int(time.time() * 1000) if now_ms is None else now_ms
    drop = frozenset(removes)
    registry = {**(base.schema_registry if base else {}), **schema_registry}
    parts: list[FileEntries] = []
    removed = _Removed({}, (), 0)
    if base is not None and drop:
        tombstones = frozenset(base.tombstones) or None
        parts = read_manifests(
            store, base, base.manifests, tombstones=tombstones, parallelism=opts.parallelism
        )
        removed = _find_removed(parts, drop)
    num_files = (base.num_files if base else 0) + len(adds) - len(removed.paths)
    reason = compaction_reason(
        base,
        adds,
        drop,
        force=force_compaction,
        new_tombstones=len(removed.paths),
        num_files=num_files,
        options=opts,
    )
    if reason is not None:
        if base is not None and not parts:
            tombstones = frozenset(base.tombstones) or None
            parts = read_manifests(
                store, base, base.manifests, tombstones=tombstones, parallelism=opts.parallelism
            )
        result = compact_entries(store, parts, adds, drop, options=opts)
        state = StateManifest(
            1,
            version,
            created,
            result.num_files,
            result.total_bytes,
            result.manifests,
            tombstones=(),
            schema_registry=registry,
            metadata=metadata,
        )
        return _commit(store, state, opts)
    assert base is not None  # NO_BASE would have fired
    infos = _updated_infos(base, removed)
    if adds:
        infos.append(_new_manifest(store, adds, opts))
    state = StateManifest(
        1,
        version,
        created,
        num_files,
        base.total_bytes + sum(a.size for a in adds) - removed.total_bytes,
        tuple(infos),
        tombstones=(*base.tombstones, *removed.paths),
        schema_registry=registry,
        metadata=metadata,
    )
    return _commit(store, state, opts)
