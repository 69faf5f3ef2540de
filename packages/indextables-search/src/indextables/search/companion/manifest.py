"""``_parquet_manifest.json``: what a companion split records about the Parquet rows it indexes.

The records and their JSON field names are tantivy4java's (``ParquetManifest``,
manifest version 1): per file its path relative to the table root, its first
global row (``row_offset``), rows, byte size and row groups; ``segment_row_ranges``
maps each Tantivy segment to its global rows; ``column_mapping`` the Parquet to
Tantivy types; ``string_hash_fields``, ``string_indexing_modes`` and
``companion_hash_fields`` describe tantivy4java's hashed and stripped string
fields (read and kept; this package writes only strip modes). Per-page
``page_locations`` and a column's ``fast_field_tokenizer`` are accepted and not
kept. The file may be zstd-compressed (detected by its magic bytes), as
tantivy4java writes it when that is smaller; this package writes plain JSON.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from indextables.protocol.pathsafety import path_problem
from indextables.search.errors import CompanionError

__all__ = [
    "MANIFEST_FILE",
    "MANIFEST_VERSION",
    "ColumnChunk",
    "ColumnMapping",
    "ParquetFileEntry",
    "ParquetManifest",
    "RowGroupEntry",
    "SegmentRowRange",
    "manifest_from_bytes",
    "manifest_to_bytes",
]

MANIFEST_FILE = "_parquet_manifest.json"
MANIFEST_VERSION = 1
FAST_FIELD_MODES = ("disabled", "hybrid", "parquet_only")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True, slots=True)
class SegmentRowRange:
    """Global rows ``row_offset .. row_offset + num_rows`` are segment ``segment_ord``'s docs."""

    segment_ord: int
    row_offset: int
    num_rows: int


@dataclass(frozen=True, slots=True)
class ColumnChunk:
    """One column chunk of a row group (byte positions in the Parquet file)."""

    column_idx: int
    column_name: str
    data_page_offset: int
    compressed_size: int
    uncompressed_size: int


@dataclass(frozen=True, slots=True)
class RowGroupEntry:
    """One row group of a Parquet file."""

    row_group_idx: int
    num_rows: int
    row_offset_in_file: int
    columns: tuple[ColumnChunk, ...] = ()


@dataclass(frozen=True, slots=True)
class ParquetFileEntry:
    """One indexed Parquet file: its rows are global rows ``row_offset .. + num_rows``."""

    relative_path: str
    file_size_bytes: int
    row_offset: int
    num_rows: int
    has_offset_index: bool = False
    row_groups: tuple[RowGroupEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class ColumnMapping:
    """How one Parquet column is held in the index."""

    tantivy_field_name: str
    parquet_column_name: str
    physical_ordinal: int
    parquet_type: str
    tantivy_type: str
    field_id: int | None = None


@dataclass(frozen=True, slots=True)
class ParquetManifest:
    """The manifest of one companion split (tantivy4java's ``ParquetManifest``)."""

    fast_field_mode: str
    segment_row_ranges: tuple[SegmentRowRange, ...]
    parquet_files: tuple[ParquetFileEntry, ...]
    column_mapping: tuple[ColumnMapping, ...]
    total_rows: int
    table_root: str = ""
    version: int = MANIFEST_VERSION
    metadata: Mapping[str, str] = field(default_factory=dict)
    string_hash_fields: Mapping[str, str] = field(default_factory=dict)
    string_indexing_modes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    companion_hash_fields: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def validate(self) -> None:
        """Check the counts add up (as tantivy4java's ``validate``) and every source file
        path stays inside the source table (relative, no scheme, no ``..``, no NUL).

        Raises:
            CompanionError: naming the first inconsistency.
        """
        if self.version != MANIFEST_VERSION:
            raise CompanionError(
                f"{MANIFEST_FILE}: version {self.version} is not the supported {MANIFEST_VERSION}"
            )
        if self.fast_field_mode not in FAST_FIELD_MODES:
            raise CompanionError(f"{MANIFEST_FILE}: fast_field_mode {self.fast_field_mode!r}")
        if sum(f.num_rows for f in self.parquet_files) != self.total_rows:
            raise CompanionError(f"{MANIFEST_FILE}: the files' rows do not sum to total_rows")
        # No ranges: a split missing rows deleted by a Delta deletion vector, whose
        # hits map through the row key only (see .deletions).
        ranges = self.segment_row_ranges
        if ranges and sum(s.num_rows for s in ranges) != self.total_rows:
            raise CompanionError(f"{MANIFEST_FILE}: the segments' rows do not sum to total_rows")
        expected = 0
        for entry in self.parquet_files:
            problem = path_problem(entry.relative_path)
            if problem is None and "\x00" in entry.relative_path:
                problem = "holds a NUL byte"
            if problem is not None:
                # Read as base + "/" + path: a path out of the source root would read files
                # beside it.
                raise CompanionError(
                    f"{MANIFEST_FILE}: unsafe source file path {entry.relative_path!r}: {problem}"
                )
            if entry.row_offset != expected:
                raise CompanionError(
                    f"{MANIFEST_FILE}: {entry.relative_path!r} starts at row {entry.row_offset}, "
                    f"not {expected}"
                )
            expected += entry.num_rows

    def locate(self, global_rows: Sequence[int]) -> list[tuple[int, int]]:
        """``(file index, row in file)`` of each global row (a binary search on row offsets)."""
        starts = [f.row_offset for f in self.parquet_files]
        found = []
        for row in global_rows:
            index = bisect.bisect_right(starts, row) - 1
            if index < 0 or row >= starts[index] + self.parquet_files[index].num_rows:
                raise CompanionError(f"{MANIFEST_FILE}: row {row} is in no file")
            found.append((index, row - starts[index]))
        return found

    def file_numbers(self) -> dict[int, int]:
        """``__pq_file_hash`` value -> index of its file in ``parquet_files``."""
        from indextables.search.companion.pathhash import path_hash

        return {path_hash(f.relative_path): n for n, f in enumerate(self.parquet_files)}

    def segment_offset(self, segment_ord: int) -> int:
        """The first global row of segment ``segment_ord``."""
        for entry in self.segment_row_ranges:
            if entry.segment_ord == segment_ord:
                return entry.row_offset
        raise CompanionError(f"{MANIFEST_FILE}: no segment_row_ranges entry for {segment_ord}")


def manifest_to_bytes(manifest: ParquetManifest) -> bytes:
    """The manifest as tantivy4java's JSON (field names and order of its serde structs)."""
    data = {
        "version": manifest.version,
        "table_root": manifest.table_root,
        "fast_field_mode": manifest.fast_field_mode,
        "segment_row_ranges": [
            {"segment_ord": s.segment_ord, "row_offset": s.row_offset, "num_rows": s.num_rows}
            for s in manifest.segment_row_ranges
        ],
        "parquet_files": [_file_json(f) for f in manifest.parquet_files],
        "column_mapping": [
            {
                "tantivy_field_name": c.tantivy_field_name,
                "parquet_column_name": c.parquet_column_name,
                "physical_ordinal": c.physical_ordinal,
                "parquet_type": c.parquet_type,
                "tantivy_type": c.tantivy_type,
                "field_id": c.field_id,
            }
            for c in manifest.column_mapping
        ],
        "total_rows": manifest.total_rows,
        "storage_config": None,
        "metadata": dict(manifest.metadata),
        "string_hash_fields": dict(manifest.string_hash_fields),
        "string_indexing_modes": {k: dict(v) for k, v in manifest.string_indexing_modes.items()},
        "companion_hash_fields": {k: dict(v) for k, v in manifest.companion_hash_fields.items()},
    }
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _file_json(entry: ParquetFileEntry) -> dict[str, Any]:
    return {
        "relative_path": entry.relative_path,
        "file_size_bytes": entry.file_size_bytes,
        "row_offset": entry.row_offset,
        "num_rows": entry.num_rows,
        "has_offset_index": entry.has_offset_index,
        "row_groups": [
            {
                "row_group_idx": g.row_group_idx,
                "num_rows": g.num_rows,
                "row_offset_in_file": g.row_offset_in_file,
                "columns": [
                    {
                        "column_idx": c.column_idx,
                        "column_name": c.column_name,
                        "data_page_offset": c.data_page_offset,
                        "compressed_size": c.compressed_size,
                        "uncompressed_size": c.uncompressed_size,
                    }
                    for c in g.columns
                ],
            }
            for g in entry.row_groups
        ],
    }


def manifest_from_bytes(data: bytes) -> ParquetManifest:
    """Parse a manifest (plain or zstd-compressed JSON) and validate it.

    Raises:
        CompanionError: not a manifest of a supported version, or inconsistent.
    """
    if data[:4] == _ZSTD_MAGIC:
        import zstandard

        try:
            data = zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 30)
        except zstandard.ZstdError as exc:
            raise CompanionError(f"{MANIFEST_FILE} is damaged: {exc}") from None
    try:
        raw = json.loads(data.decode("utf-8"))
        manifest = ParquetManifest(
            version=int(raw["version"]),
            table_root=str(raw.get("table_root") or ""),
            fast_field_mode=str(raw["fast_field_mode"]),
            segment_row_ranges=tuple(
                SegmentRowRange(int(s["segment_ord"]), int(s["row_offset"]), int(s["num_rows"]))
                for s in raw["segment_row_ranges"]
            ),
            parquet_files=tuple(_file_entry(f) for f in raw["parquet_files"]),
            column_mapping=tuple(
                ColumnMapping(
                    tantivy_field_name=str(c["tantivy_field_name"]),
                    parquet_column_name=str(c["parquet_column_name"]),
                    physical_ordinal=int(c["physical_ordinal"]),
                    parquet_type=str(c["parquet_type"]),
                    tantivy_type=str(c["tantivy_type"]),
                    field_id=None if c.get("field_id") is None else int(c["field_id"]),
                )
                for c in raw.get("column_mapping") or ()
            ),
            total_rows=int(raw["total_rows"]),
            metadata={str(k): str(v) for k, v in (raw.get("metadata") or {}).items()},
            string_hash_fields={
                str(k): str(v) for k, v in (raw.get("string_hash_fields") or {}).items()
            },
            string_indexing_modes=_nested(raw.get("string_indexing_modes")),
            companion_hash_fields=_nested(raw.get("companion_hash_fields")),
        )
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise CompanionError(f"{MANIFEST_FILE} is not a valid manifest: {exc!r}") from None
    manifest.validate()
    return manifest


def _nested(raw: Any) -> dict[str, dict[str, str]]:
    """A map of JSON objects of strings (``string_indexing_modes``, ``companion_hash_fields``)."""
    return {str(k): {str(a): str(b) for a, b in v.items()} for k, v in (raw or {}).items()}


def _file_entry(raw: Mapping[str, Any]) -> ParquetFileEntry:
    return ParquetFileEntry(
        relative_path=str(raw["relative_path"]),
        file_size_bytes=int(raw["file_size_bytes"]),
        row_offset=int(raw["row_offset"]),
        num_rows=int(raw["num_rows"]),
        has_offset_index=bool(raw.get("has_offset_index", False)),
        row_groups=tuple(
            RowGroupEntry(
                row_group_idx=int(g["row_group_idx"]),
                num_rows=int(g["num_rows"]),
                row_offset_in_file=int(g["row_offset_in_file"]),
                columns=tuple(
                    ColumnChunk(
                        column_idx=int(c["column_idx"]),
                        column_name=str(c["column_name"]),
                        data_page_offset=int(c["data_page_offset"]),
                        compressed_size=int(c["compressed_size"]),
                        uncompressed_size=int(c["uncompressed_size"]),
                    )
                    for c in g.get("columns") or ()
                ),
            )
            for g in raw.get("row_groups") or ()
        ),
    )
