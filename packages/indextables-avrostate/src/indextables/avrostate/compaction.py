"""Compaction: rewrite every live entry, sorted by partition values, into fresh manifests.

Records are copied as raw bytes when their manifest was written with our
schema (the usual case), so a compaction costs decompression, a sort and
recompression, not a decode and re-encode of every field. Entries from
manifests with another writer schema are decoded and re-encoded. Tombstoned
and removed entries are dropped from every manifest, so nothing is ever
resurrected, and the result has no tombstones.
"""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from indextables.avrostate._decode_common import Plan, compile_plan
from indextables.avrostate.container import encode_container
from indextables.avrostate.entries import FileEntries
from indextables.avrostate.layout import LOG_DIR
from indextables.avrostate.manifest_reader import read_manifest_entries
from indextables.avrostate.manifest_writer import (
    encode_manifest,
    new_manifest_path,
    partition_bounds,
)
from indextables.avrostate.options import StateOptions
from indextables.avrostate.schemas import FILE_ENTRY_SCHEMA_V1, FILE_ENTRY_SCHEMA_V2
from indextables.protocol.state import FileEntry, ManifestInfo
from indextables.protocol.store import ObjectStore

__all__ = ["CompactionResult", "compact_entries", "partition_sort_key"]

# A V1 record followed by four null-branch bytes is a V2 record (the native
# fields are four trailing ["null", T] unions).
_V1_TO_V2_SUFFIX: Final = b"\x00\x00\x00\x00"


@functools.cache
def _plans() -> tuple[Plan, Plan]:
    return (
        compile_plan(FILE_ENTRY_SCHEMA_V1, path="<v1>"),
        compile_plan(FILE_ENTRY_SCHEMA_V2, path="<v2>"),
    )


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What a compaction wrote: the manifests and the totals of the new state."""

    manifests: tuple[ManifestInfo, ...]
    num_files: int
    total_bytes: int


# (sort key, raw record bytes, partition values, size, addedAtVersion, is V2)
_Record = tuple[tuple[Any, ...], bytes, Mapping[str, str], int, int, bool]


def _value_key(value: str | None) -> tuple[Any, ...]:
    if value is None or value == "":
        return (0,)
    for parse in (int, float):
        try:
            return (1, parse(value), value)
        except ValueError:
            continue
    return (2, value)


def partition_sort_key(values: Mapping[str, str]) -> tuple[Any, ...]:
    """Order partition maps column by column, numbers numerically (as bounds compare)."""
    return tuple((column, _value_key(values[column])) for column in sorted(values))


def _reencode(part: FileEntries) -> FileEntries:
    """Re-encode entries of a foreign writer schema with ours, so raw copy applies."""
    entries = list(part)
    return read_manifest_entries(encode_manifest(entries), path="<re-encoded>")


def _records(part: FileEntries, drop: frozenset[str]) -> list[_Record]:
    v1, v2 = _plans()
    keys: dict[int, tuple[Any, ...]] = {}
    paths, pvs, sizes = part.paths, part.partition_values, part.sizes
    versions, starts, ends = part.added_at_versions, part.record_starts, part.record_ends
    out: list[_Record] = []
    for block, lo, hi in part.block_runs():
        native = block.plan != v1  # compared once per block: plans are deep tuples
        if native and block.plan != v2:
            raise ValueError("record spans of a foreign schema must be re-encoded first")
        data = block.data
        for i in range(lo, hi):
            path = paths[i]
            if path in drop:
                continue
            values = pvs[i]
            key = keys.get(id(values))
            if key is None:
                key = keys[id(values)] = partition_sort_key(values)
            out.append(
                ((key, path), data[starts[i] : ends[i]], values, sizes[i] or 0, versions[i], native)
            )
    return out


def _normalized(part: FileEntries) -> FileEntries:
    v1, v2 = _plans()
    if all(plan in (v1, v2) for plan in part.plans()):
        return part
    return _reencode(part)


def _blocks(raws: Sequence[bytes], block_bytes: int) -> list[tuple[int, bytes]]:
    out: list[tuple[int, bytes]] = []
    current: list[bytes] = []
    size = 0
    for raw in raws:
        current.append(raw)
        size += len(raw)
        if size >= block_bytes:
            out.append((len(current), b"".join(current)))
            current, size = [], 0
    if current:
        out.append((len(current), b"".join(current)))
    return out


def _write_chunk(
    store: ObjectStore, chunk: Sequence[_Record], native: bool, options: StateOptions
) -> ManifestInfo:
    raws = [r[1] + _V1_TO_V2_SUFFIX if native and not r[5] else r[1] for r in chunk]
    schema = FILE_ENTRY_SCHEMA_V2 if native else FILE_ENTRY_SCHEMA_V1
    data = encode_container(
        schema,
        _blocks(raws, options.block_bytes),
        codec=options.codec,
        level=options.compression_level,
    )
    path = new_manifest_path()
    store.put(f"{LOG_DIR}/{path}", data)
    versions = [r[4] for r in chunk]
    return ManifestInfo(
        path,
        len(chunk),
        min(versions),
        max(versions),
        partition_bounds=partition_bounds(r[2] for r in chunk),
        tombstone_count=0,
        live_entry_count=len(chunk),
    )


def compact_entries(
    store: ObjectStore,
    parts: Sequence[FileEntries],
    adds: Sequence[FileEntry],
    drop: frozenset[str],
    *,
    options: StateOptions,
) -> CompactionResult:
    """Write ``parts`` (minus ``drop``) plus ``adds`` as sorted manifests of at most
    ``options.entries_per_manifest`` entries each.

    Args:
        store: where to write (keys under ``_transaction_log/manifests/``).
        parts: the base state's live entries (tombstones already applied).
        adds: new entries; an add replaces a base entry of the same path.
        drop: paths removed by this commit.
        options: codec, level, block size, manifest size.
    """
    sources = [_normalized(p) for p in parts]
    if adds:
        sources.append(read_manifest_entries(encode_manifest(adds), path="<adds>"))
    replaced = drop | {a.path for a in adds}
    records = [r for part in sources[: len(parts)] for r in _records(part, replaced)]
    if adds:
        records += _records(sources[-1], frozenset())
    # Rank the few distinct partition keys once: sorting on (rank, path) avoids
    # comparing nested key tuples a million times.
    ranks = {key: rank for rank, key in enumerate(sorted({r[0][0] for r in records}))}
    records.sort(key=lambda r: (ranks[r[0][0]], r[0][1]))
    native = any(r[5] for r in records)
    step = max(1, options.entries_per_manifest)
    chunks = [records[i : i + step] for i in range(0, len(records), step)]
    with concurrent.futures.ThreadPoolExecutor(
        max(1, min(len(chunks), options.parallelism))
    ) as pool:
        infos = list(pool.map(lambda c: _write_chunk(store, c, native, options), chunks))
    return CompactionResult(tuple(infos), len(records), sum(r[3] for r in records))
