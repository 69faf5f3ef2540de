"""Finding and reading states: the current version, its root, its live entries.

The current state is the highest version whose root record exists
(``_last_checkpoint`` is only a hint, never trusted: a purge can leave an
older state written later). Manifests whose partition bounds cannot match
the filter are not fetched; the others are fetched and decoded in parallel
(zstandard decompression and store I/O release the GIL).
"""

from __future__ import annotations

import concurrent.futures
import itertools
from collections.abc import Callable, Container, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from indextables.avrostate.container import Container as AvroContainer
from indextables.avrostate.container import parse_container
from indextables.avrostate.entries import FileEntries
from indextables.avrostate.errors import MissingManifestError, StateNotFoundError
from indextables.avrostate.layout import (
    STATE_PREFIX,
    manifest_key,
    parse_state_key,
    state_json_key,
    state_key,
)
from indextables.avrostate.manifest_reader import (
    EntriesBuilder,
    PartitionCache,
    read_manifest_entries,
)
from indextables.avrostate.state_file import decode_state, decode_state_json
from indextables.protocol.errors import ObjectNotFoundError
from indextables.protocol.reread import read_decoded
from indextables.protocol.state import ManifestInfo, StateManifest
from indextables.protocol.stateformat import LoadedState
from indextables.protocol.store import ObjectStore

if TYPE_CHECKING:
    from indextables.protocol.predicates import Predicate

__all__ = [
    "DEFAULT_PARALLELISM",
    "load_state_manifest",
    "read_entries",
    "read_manifests",
    "read_state",
    "select_manifests",
    "state_versions",
]

DEFAULT_PARALLELISM: Final = 8


def state_versions(store: ObjectStore) -> list[int]:
    """Versions of every complete state (its root record exists), ascending."""
    found = set()
    for info in store.list(STATE_PREFIX):
        parsed = parse_state_key(info.key)
        if parsed is not None:
            found.add(parsed[0])
    return sorted(found)


def load_state_manifest(store: ObjectStore, version: int) -> StateManifest:
    """Read the root record of state ``version`` (Avro form, else the older JSON form).

    A root is written once and never changes: one whose bytes do not decode is
    read again (:func:`~indextables.protocol.reread.read_decoded`).

    Raises:
        StateNotFoundError: neither form exists.
        CorruptAvroFileError: the root does not decode, the same on two reads.
    """
    key = state_key(version)
    try:
        return read_decoded(store, key, lambda data: decode_state(data, path=key))
    except ObjectNotFoundError:
        pass
    json_key = state_json_key(version)
    try:
        return read_decoded(store, json_key, lambda data: decode_state_json(data, path=json_key))
    except ObjectNotFoundError:
        raise StateNotFoundError(f"no state for version {version}: {key} does not exist") from None


def select_manifests(
    state: StateManifest, partition_filter: Predicate | None
) -> list[ManifestInfo]:
    """The manifests whose partition bounds can hold an entry matching the filter."""
    if partition_filter is None:
        return list(state.manifests)
    return [m for m in state.manifests if partition_filter.may_match(m.partition_bounds)]


def _fetch(store: ObjectStore, key: str) -> bytes:
    try:
        return store.get(key)
    except ObjectNotFoundError as exc:
        raise MissingManifestError(key, "manifest listed in the state does not exist") from exc


def read_manifests(
    store: ObjectStore,
    state: StateManifest,
    manifests: Sequence[ManifestInfo],
    *,
    pv_filter: Callable[[Mapping[str, str]], bool] | None = None,
    tombstones: Container[str] | None = None,
    parallelism: int = DEFAULT_PARALLELISM,
) -> list[FileEntries]:
    """Fetch and decode manifests in parallel; one FileEntries per manifest, in order."""
    cache: PartitionCache = {}

    def load(info: ManifestInfo) -> FileEntries:
        key = manifest_key(info.path, state.state_version)
        return read_manifest_entries(
            _fetch(store, key), path=key, pv_filter=pv_filter, tombstones=tombstones, pv_cache=cache
        )

    if parallelism <= 1 or len(manifests) <= 1:
        return [load(m) for m in manifests]
    workers = min(parallelism, len(manifests))
    with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="avrostate") as pool:
        return list(pool.map(load, manifests))


def _prepare(
    store: ObjectStore, key: str, *, decompress: bool
) -> tuple[AvroContainer, list[tuple[int, bytes]] | None]:
    """Fetch and frame a manifest; decompress it too when every block will be kept."""
    container = parse_container(_fetch(store, key), path=key)
    return container, list(container.decompressed()) if decompress else None


_Blocks = list[tuple[int, bytes]]
# A lone manifest of at most this many blocks (~64 KiB raw each) is decompressed
# by the reading thread: starting worker threads takes longer (~1 ms).
_INLINE_BLOCKS: Final = 16


def _frame(store: ObjectStore, key: str) -> AvroContainer:
    return parse_container(_fetch(store, key), path=key)


def _decompress_run(container: AvroContainer, first: int, end: int) -> _Blocks:
    return list(container.decompressed(first, end))


def _runs(num_blocks: int, parallelism: int) -> list[tuple[int, int]]:
    """Split a manifest's blocks into one run per worker (at least 4 blocks a run)."""
    size = max(4, -(-num_blocks // parallelism))
    return [(first, min(first + size, num_blocks)) for first in range(0, num_blocks, size)]


def read_entries(
    store: ObjectStore,
    state: StateManifest,
    manifests: Sequence[ManifestInfo],
    *,
    pv_filter: Callable[[Mapping[str, str]], bool] | None = None,
    tombstones: Container[str] | None = None,
    parallelism: int = DEFAULT_PARALLELISM,
) -> FileEntries:
    """Read manifests into one lazy sequence, in manifest order.

    Worker threads fetch and (without a filter) decompress, which release the
    GIL; this thread scans. Each manifest's blocks are decompressed in runs,
    one per worker, queued as soon as it is framed; this thread scans a
    manifest once all its runs are done. It does not overlap scanning with
    decompression on purpose: a worker needs the GIL between blocks, which a
    scanning thread holds for up to the 5 ms switch interval, so the workers
    would starve. With a filter, blocks are decompressed one at a time here so
    those without a match are dropped at once and peak memory stays near what
    the read returns.
    """
    builder = EntriesBuilder(pv_filter=pv_filter, tombstones=tombstones)
    keys = [manifest_key(m.path, state.state_version) for m in manifests]
    framed: list[AvroContainer] = []
    if len(keys) == 1 and pv_filter is None and parallelism > 1:
        framed.append(_frame(store, keys[0]))
        if len(framed[0].blocks) <= _INLINE_BLOCKS:  # a small table: threads would cost more
            builder.add(framed[0])
            return builder.build()
    elif parallelism <= 1 or (len(keys) <= 1 and pv_filter is not None):
        for key in keys:
            builder.add(*_prepare(store, key, decompress=False))
        return builder.build()
    with concurrent.futures.ThreadPoolExecutor(parallelism, thread_name_prefix="avrostate") as pool:
        if pv_filter is not None:
            futures = [pool.submit(_prepare, store, key, decompress=False) for key in keys]
            for future in futures:
                builder.add(*future.result())
            return builder.build()
        framings = [pool.submit(_frame, store, key) for key in keys[len(framed) :]]
        queued = []
        for container in itertools.chain(framed, (framing.result() for framing in framings)):
            runs = _runs(len(container.blocks), parallelism)
            queued.append((container, [pool.submit(_decompress_run, container, *r) for r in runs]))
        for container, decompressing in queued:
            builder.add(container, [block for run in decompressing for block in run.result()])
    return builder.build()


def read_state(
    store: ObjectStore,
    version: int,
    *,
    partition_filter: Predicate | None = None,
    parallelism: int = DEFAULT_PARALLELISM,
) -> LoadedState:
    """Read state ``version``: its root and its live entries (tombstones applied).

    With a ``partition_filter``, manifests whose bounds cannot match are not
    read and entries whose partition values do not match are dropped while
    decoding. Entries keep what the manifest holds (often only a
    ``doc_mapping_ref``); ``files.resolve_doc_mappings(state.schema_registry)``
    restores their JSON as they are built.
    """
    state = load_state_manifest(store, version)
    chosen = select_manifests(state, partition_filter)
    files = read_entries(
        store,
        state,
        chosen,
        pv_filter=None if partition_filter is None else partition_filter.matches,
        tombstones=frozenset(state.tombstones) if state.tombstones else None,
        parallelism=parallelism,
    )
    return LoadedState(state, files, len(chosen), len(state.manifests))
