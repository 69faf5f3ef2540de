"""Writing manifest files of FileEntry records, and the ManifestInfo describing them.

Records are encoded by fastavro with the schemas of :mod:`.schemas`; blocks
are compressed with zstandard (level 3) by default. :func:`partition_bounds`
computes the per-column bounds the state records for pruning.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from indextables.avrostate import codecs
from indextables.avrostate.codecs import DEFAULT_ZSTD_LEVEL, Codec
from indextables.avrostate.container import encode_records
from indextables.avrostate.schemas import file_entry_schema
from indextables.protocol.predicates import compare_values
from indextables.protocol.state import FileEntry, ManifestInfo, PartitionBounds

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "encode_manifest",
    "file_entry_to_record",
    "manifest_info",
    "new_manifest_path",
    "partition_bounds",
]

DEFAULT_BLOCK_BYTES: Final = 64 * 1024
_ = codecs  # importing codecs registers the zstandard/snappy block codecs with fastavro


def new_manifest_path() -> str:
    """A fresh manifest key relative to ``_transaction_log`` (random 16-hex id)."""
    return f"manifests/manifest-{secrets.token_hex(8)}.avro"


def _optional_list(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)


def file_entry_to_record(entry: FileEntry) -> dict[str, Any]:
    """The Avro record (wire names) of a FileEntry."""
    return {
        "path": entry.path,
        "partitionValues": entry.partition_values,
        "size": entry.size,
        "modificationTime": entry.modification_time,
        "dataChange": entry.data_change,
        "stats": entry.stats,
        "minValues": entry.min_values,
        "maxValues": entry.max_values,
        "numRecords": entry.num_records,
        "footerStartOffset": entry.footer_start_offset,
        "footerEndOffset": entry.footer_end_offset,
        "hasFooterOffsets": entry.has_footer_offsets,
        "splitTags": _optional_list(entry.split_tags),
        "numMergeOps": entry.num_merge_ops,
        "docMappingRef": entry.doc_mapping_ref,
        "uncompressedSizeBytes": entry.uncompressed_size_bytes,
        "addedAtVersion": entry.added_at_version,
        "addedAtTimestamp": entry.added_at_timestamp,
        "companionSourceFiles": _optional_list(entry.companion_source_files),
        "companionDeltaVersion": entry.companion_delta_version,
        "companionFastFieldMode": entry.companion_fast_field_mode,
        "deleteOpstamp": entry.delete_opstamp,
        "docMappingJson": entry.doc_mapping_json,
        "timeRangeStart": entry.time_range_start,
        "timeRangeEnd": entry.time_range_end,
    }


def needs_native_fields(entries: Iterable[FileEntry]) -> bool:
    """Whether any entry carries a field only the V2 (native) schema has."""
    return any(
        e.delete_opstamp is not None
        or e.doc_mapping_json is not None
        or e.time_range_start is not None
        or e.time_range_end is not None
        for e in entries
    )


def encode_manifest(
    entries: Sequence[FileEntry],
    *,
    codec: Codec = "zstandard",
    level: int | None = DEFAULT_ZSTD_LEVEL,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> bytes:
    """Encode entries as a manifest container.

    Args:
        entries: the records, in the order to store them.
        codec: block codec (``zstandard``, ``snappy``, ``deflate`` or ``null``).
        level: compression level (zstandard/deflate).
        block_bytes: uncompressed bytes per block (approximate).
    """
    return encode_records(
        file_entry_schema(native_fields=needs_native_fields(entries)),
        (file_entry_to_record(e) for e in entries),
        codec=codec,
        level=level,
        block_bytes=block_bytes,
    )


def _extend_bounds(lows: dict[str, str], highs: dict[str, str], values: Mapping[str, str]) -> None:
    for column, value in values.items():
        if value is None or value == "":
            continue
        low = lows.get(column)
        if low is None or compare_values(value, low) < 0:
            lows[column] = value
        high = highs.get(column)
        if high is None or compare_values(value, high) > 0:
            highs[column] = value


def partition_bounds(
    partition_values: Iterable[Mapping[str, str]], columns: Iterable[str] = ()
) -> dict[str, PartitionBounds] | None:
    """Per-column min/max over present, non-empty values (numeric-aware).

    Columns seen in any entry, plus ``columns``, get bounds; a column without
    values gets ``PartitionBounds(None, None)``. Returns ``None`` when there is
    no partition column at all (unpartitioned tables).
    """
    lows: dict[str, str] = {}
    highs: dict[str, str] = {}
    names: dict[str, None] = dict.fromkeys(columns)
    for values in {id(v): v for v in partition_values}.values():
        names.update(dict.fromkeys(values))
        _extend_bounds(lows, highs, values)
    if not names:
        return None
    return {name: PartitionBounds(lows.get(name), highs.get(name)) for name in sorted(names)}


def manifest_info(path: str, entries: Sequence[FileEntry]) -> ManifestInfo:
    """Describe a freshly written manifest for the state's manifest list."""
    versions = [e.added_at_version for e in entries] or [0]
    return ManifestInfo(
        path,
        len(entries),
        min(versions),
        max(versions),
        partition_bounds=partition_bounds(e.partition_values for e in entries),
        tombstone_count=0,
        live_entry_count=len(entries),
    )
