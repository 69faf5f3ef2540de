"""Tunables of the Avro state format, with the reference implementation's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from indextables.avrostate.codecs import DEFAULT_ZSTD_LEVEL, Codec

__all__ = ["StateOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StateOptions:
    """How states are read, written, compacted and collected.

    Attributes:
        codec: manifest block codec.
        compression_level: zstandard/deflate level.
        block_bytes: uncompressed bytes per Avro block (approximate).
        entries_per_manifest: entries per manifest when compacting.
        parallelism: manifests fetched and decoded at once.
        tombstone_ratio: compact when tombstones / live files exceeds it.
        max_manifests: compact when a state would reference more manifests.
        retention_versions: old states kept besides the current one.
        retention_hours: old states younger than this are kept.
        gc_safety_hours: unreferenced manifests younger than this are kept
            (a writer may be about to commit a state that references them).
    """

    codec: Codec = "zstandard"
    compression_level: int = DEFAULT_ZSTD_LEVEL
    block_bytes: int = 64 * 1024
    entries_per_manifest: int = 50_000
    parallelism: int = 8
    tombstone_ratio: float = 0.10
    max_manifests: int = 20
    retention_versions: int = 2
    retention_hours: float = 168.0
    gc_safety_hours: float = 1.0
