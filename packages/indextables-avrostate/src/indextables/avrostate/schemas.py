"""The Avro schemas of the V4 state, as versioned constants.

``FILE_ENTRY_SCHEMA_V1`` and ``STATE_MANIFEST_SCHEMA_V1`` are field for field
the schemas indextables_spark v0.5.4 writes (names, types, defaults, docs,
``field-id`` attributes), checked against the golden tables' headers.
``FILE_ENTRY_NATIVE_FIELDS`` are the optional fields tantivy4java's native
writer adds; ``FILE_ENTRY_SCHEMA_V2`` is V1 plus those, used only when an
entry carries one of them, so ordinary manifests stay byte-identical in
schema to the reference's.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "FILE_ENTRY_NATIVE_FIELDS",
    "FILE_ENTRY_SCHEMA_V1",
    "FILE_ENTRY_SCHEMA_V2",
    "NAMESPACE",
    "STATE_MANIFEST_SCHEMA_V1",
    "file_entry_schema",
]

NAMESPACE: Final = "io.indextables.state"

_STRING_MAP: Final = {"type": "map", "values": "string"}
_STRING_ARRAY: Final = {"type": "array", "items": "string"}


def _required(name: str, type_: Any, doc: str, field_id: int) -> dict[str, Any]:
    return {"name": name, "type": type_, "doc": doc, "field-id": field_id}


def _optional(name: str, type_: Any, doc: str, field_id: int) -> dict[str, Any]:
    return {
        "name": name,
        "type": ["null", type_],
        "doc": doc,
        "default": None,
        "field-id": field_id,
    }


_V1_FIELDS: Final = (
    _required("path", "string", "Relative path to the split file", 100),
    _required("partitionValues", _STRING_MAP, "Partition column values as string map", 101),
    _required("size", "long", "File size in bytes", 102),
    _required("modificationTime", "long", "File modification time (epoch milliseconds)", 103),
    _required("dataChange", "boolean", "Whether this file represents a data change", 104),
    _optional("stats", "string", "JSON-encoded statistics", 110),
    _optional("minValues", _STRING_MAP, "Minimum values per column for data skipping", 111),
    _optional("maxValues", _STRING_MAP, "Maximum values per column for data skipping", 112),
    _optional("numRecords", "long", "Number of records in the file", 113),
    _optional("footerStartOffset", "long", "Byte offset where footer/metadata begins", 120),
    _optional("footerEndOffset", "long", "Byte offset where footer/metadata ends", 121),
    {
        "name": "hasFooterOffsets",
        "type": "boolean",
        "doc": "Whether footer offsets are populated",
        "default": False,
        "field-id": 124,
    },
    _optional("splitTags", _STRING_ARRAY, "Tags associated with this split", 132),
    _optional("numMergeOps", "int", "Number of merge operations this split has been through", 134),
    _optional("docMappingRef", "string", "Reference to doc mapping in schema registry", 135),
    _optional("uncompressedSizeBytes", "long", "Uncompressed size of the split data", 136),
    _required("addedAtVersion", "long", "Transaction version when this file was added", 140),
    _required(
        "addedAtTimestamp", "long", "Timestamp when this file was added (epoch milliseconds)", 141
    ),
    _optional(
        "companionSourceFiles",
        _STRING_ARRAY,
        "Relative parquet file paths indexed into this companion split",
        150,
    ),
    _optional(
        "companionDeltaVersion", "long", "Delta version this companion split was built from", 151
    ),
    _optional(
        "companionFastFieldMode",
        "string",
        "Fast field mode: DISABLED, HYBRID, or PARQUET_ONLY",
        152,
    ),
)

FILE_ENTRY_NATIVE_FIELDS: Final = (
    _optional("deleteOpstamp", "long", "Tantivy delete opstamp of the split", 123),
    _optional("docMappingJson", "string", "Inline doc mapping JSON (no registry ref)", 133),
    _optional("timeRangeStart", "long", "Earliest timestamp in the split", 137),
    _optional("timeRangeEnd", "long", "Latest timestamp in the split", 138),
)

_FILE_ENTRY_DOC: Final = "A file entry representing a split in the table state"

FILE_ENTRY_SCHEMA_V1: Final[dict[str, Any]] = {
    "type": "record",
    "name": "FileEntry",
    "namespace": NAMESPACE,
    "doc": _FILE_ENTRY_DOC,
    "fields": list(_V1_FIELDS),
}

FILE_ENTRY_SCHEMA_V2: Final[dict[str, Any]] = {
    "type": "record",
    "name": "FileEntry",
    "namespace": NAMESPACE,
    "doc": _FILE_ENTRY_DOC,
    "fields": [*_V1_FIELDS, *FILE_ENTRY_NATIVE_FIELDS],
}

_PARTITION_BOUNDS_ITEM: Final = {
    "type": "record",
    "name": "PartitionBoundsItem",
    "fields": [
        {"name": "min", "type": ["null", "string"], "default": None},
        {"name": "max", "type": ["null", "string"], "default": None},
    ],
}

_MANIFEST_INFO_ITEM: Final = {
    "type": "record",
    "name": "ManifestInfoItem",
    "fields": [
        {"name": "path", "type": "string"},
        {"name": "numEntries", "type": "long"},
        {"name": "minAddedAtVersion", "type": "long"},
        {"name": "maxAddedAtVersion", "type": "long"},
        {
            "name": "partitionBounds",
            "type": ["null", {"type": "map", "values": _PARTITION_BOUNDS_ITEM}],
            "default": None,
        },
        {"name": "tombstoneCount", "type": "long", "default": 0},
        {"name": "liveEntryCount", "type": "long", "default": -1},
    ],
}

STATE_MANIFEST_SCHEMA_V1: Final[dict[str, Any]] = {
    "type": "record",
    "name": "StateManifest",
    "namespace": NAMESPACE,
    "doc": "The state manifest that describes the complete table state",
    "fields": [
        {"name": "formatVersion", "type": "int", "doc": "Version of the state file format"},
        {
            "name": "stateVersion",
            "type": "long",
            "doc": "Transaction version this state represents",
        },
        {
            "name": "createdAt",
            "type": "long",
            "doc": "Timestamp when this state was created (epoch milliseconds)",
        },
        {
            "name": "numFiles",
            "type": "long",
            "doc": "Total number of live files (after applying tombstones)",
        },
        {"name": "totalBytes", "type": "long", "doc": "Total size of all live files in bytes"},
        {
            "name": "manifests",
            "type": {"type": "array", "items": _MANIFEST_INFO_ITEM},
            "doc": "List of manifest files containing file entries",
        },
        {
            "name": "tombstones",
            "type": _STRING_ARRAY,
            "doc": "List of paths that have been removed (applied during read)",
            "default": [],
        },
        {
            "name": "schemaRegistry",
            "type": _STRING_MAP,
            "doc": "Schema registry for doc mapping deduplication",
            "default": {},
        },
        {
            "name": "protocolVersion",
            "type": "int",
            "doc": "Protocol version (4 for Avro state format)",
            "default": 4,
        },
        {
            "name": "metadata",
            "type": ["null", "string"],
            "doc": "JSON-encoded MetadataAction for fast getMetadata()",
            "default": None,
        },
    ],
}


def file_entry_schema(*, native_fields: bool) -> dict[str, Any]:
    """Return the FileEntry schema to write.

    Args:
        native_fields: include the native writer's optional fields (V2).
    """
    return FILE_ENTRY_SCHEMA_V2 if native_fields else FILE_ENTRY_SCHEMA_V1
