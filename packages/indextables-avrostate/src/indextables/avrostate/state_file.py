"""Encoding and decoding the state's root record (``state-v*/_manifest.avro``).

The root is an object container holding exactly one ``StateManifest``
record; the older ``_manifest.json`` form of avro-state-design.md is read too.
"""

from __future__ import annotations

import functools
import io
import json
from typing import Any, Final

import fastavro

from indextables.avrostate import codecs
from indextables.avrostate.codecs import DEFAULT_ZSTD_LEVEL
from indextables.avrostate.container import encode_records, parse_container
from indextables.avrostate.errors import CorruptAvroFileError, UnsupportedStateVersionError
from indextables.avrostate.schemas import STATE_MANIFEST_SCHEMA_V1
from indextables.protocol.errors import UnsafePathError
from indextables.protocol.pathsafety import key_problem
from indextables.protocol.state import ManifestInfo, PartitionBounds, StateManifest

__all__ = ["SUPPORTED_FORMAT_VERSIONS", "decode_state", "decode_state_json", "encode_state"]

SUPPORTED_FORMAT_VERSIONS: Final = frozenset({1})
_ = codecs  # registers the zstandard codec with fastavro


@functools.cache
def _parsed() -> Any:
    return fastavro.parse_schema(STATE_MANIFEST_SCHEMA_V1)


def _bounds_record(bounds: dict[str, PartitionBounds] | Any) -> dict[str, Any] | None:
    if bounds is None:
        return None
    return {k: {"min": b.min, "max": b.max} for k, b in bounds.items()}


def _manifest_record(info: ManifestInfo) -> dict[str, Any]:
    return {
        "path": info.path,
        "numEntries": info.num_entries,
        "minAddedAtVersion": info.min_added_at_version,
        "maxAddedAtVersion": info.max_added_at_version,
        "partitionBounds": _bounds_record(info.partition_bounds),
        "tombstoneCount": info.tombstone_count,
        "liveEntryCount": info.live_entry_count,
    }


def state_to_record(state: StateManifest) -> dict[str, Any]:
    """The Avro record (wire names) of a StateManifest."""
    return {
        "formatVersion": state.format_version,
        "stateVersion": state.state_version,
        "createdAt": state.created_at,
        "numFiles": state.num_files,
        "totalBytes": state.total_bytes,
        "manifests": [_manifest_record(m) for m in state.manifests],
        "tombstones": list(state.tombstones),
        "schemaRegistry": dict(state.schema_registry),
        "protocolVersion": state.protocol_version,
        "metadata": state.metadata,
    }


def encode_state(state: StateManifest, *, level: int = DEFAULT_ZSTD_LEVEL) -> bytes:
    """Encode a state root as a zstandard object container with one record."""
    return encode_records(STATE_MANIFEST_SCHEMA_V1, [state_to_record(state)], level=level)


def _bounds(raw: Any) -> dict[str, PartitionBounds] | None:
    if raw is None:
        return None
    return {k: PartitionBounds(v.get("min"), v.get("max")) for k, v in raw.items()}


def _manifest_info(raw: dict[str, Any]) -> ManifestInfo:
    return ManifestInfo(
        raw["path"],
        int(raw["numEntries"]),
        int(raw.get("minAddedAtVersion", 0)),
        int(raw.get("maxAddedAtVersion", 0)),
        partition_bounds=_bounds(raw.get("partitionBounds")),
        tombstone_count=int(raw.get("tombstoneCount", 0)),
        live_entry_count=int(raw.get("liveEntryCount", -1)),
    )


def state_from_record(raw: dict[str, Any], *, path: str) -> StateManifest:
    """Build a StateManifest from its decoded record (Avro or JSON form).

    Raises:
        UnsupportedStateVersionError: ``formatVersion`` is not one we read.
        CorruptAvroFileError: a required field is missing or mistyped.
        UnsafePathError: a manifest path would leave ``_transaction_log``.
    """
    try:
        version = int(raw["formatVersion"])
        if version not in SUPPORTED_FORMAT_VERSIONS:
            raise UnsupportedStateVersionError(path, version)
        state = StateManifest(
            version,
            int(raw["stateVersion"]),
            int(raw["createdAt"]),
            int(raw["numFiles"]),
            int(raw["totalBytes"]),
            tuple(_manifest_info(m) for m in raw["manifests"]),
            tombstones=tuple(raw.get("tombstones") or ()),
            schema_registry=dict(raw.get("schemaRegistry") or {}),
            protocol_version=int(raw.get("protocolVersion", 4)),
            metadata=raw.get("metadata"),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, UnsupportedStateVersionError):
            raise
        raise CorruptAvroFileError(path, f"invalid state record: {exc!r}") from exc
    _check_manifest_paths(state, path)
    return state


def _check_manifest_paths(state: StateManifest, path: str) -> None:
    """Every manifest path stays inside ``_transaction_log`` and is a key stores accept.

    Raises:
        CorruptAvroFileError: a path is not a string.
        UnsafePathError: a path is absolute, names a scheme, climbs out with
            ``..``, or has an empty or ``.`` segment or a NUL byte.
    """
    for info in state.manifests:
        if not isinstance(info.path, str):
            raise CorruptAvroFileError(path, f"manifest path {info.path!r} is not a string")
        problem = key_problem(info.path)
        if problem is not None:
            raise UnsafePathError(f"{path}: manifest path {info.path!r} {problem}")


def _schema_summary(schema: object, limit: int = 8) -> str:
    """A writer schema in a few words: ``record 'Name' with fields a, b``."""
    if isinstance(schema, dict) and schema.get("type") == "record":
        fields = [str(f.get("name")) for f in schema.get("fields") or () if isinstance(f, dict)]
        shown = ", ".join(fields[:limit]) + (", ..." if len(fields) > limit else "")
        return f"record {schema.get('name')!r} with fields {shown or '(none)'}"
    kind = schema.get("type") if isinstance(schema, dict) else schema
    return f"a {str(kind)[:40]!r} schema"


def decode_state(data: bytes, *, path: str) -> StateManifest:
    """Decode a ``_manifest.avro`` state root.

    Raises:
        CorruptAvroFileError: framing, codec or record problems, or not exactly one record.
        UnsupportedStateVersionError: an unsupported ``formatVersion``.
    """
    container = parse_container(data, path=path)
    blocks = list(container.decompressed())
    if sum(count for count, _ in blocks) != 1:
        raise CorruptAvroFileError(path, "a state holds exactly one StateManifest record")
    raw_block = next(raw for count, raw in blocks if count)
    try:
        writer = fastavro.parse_schema(container.schema)
        record = fastavro.schemaless_reader(io.BytesIO(raw_block), writer, _parsed())
    except Exception as exc:  # fastavro raises many types on bad bytes/schemas
        if type(exc).__name__ == "SchemaResolutionError":
            # fastavro's message is both parsed schemas in full: say what was found.
            raise CorruptAvroFileError(
                path,
                "not a state: written with a foreign schema "
                f"({_schema_summary(container.schema)}), not io.indextables.state.StateManifest",
            ) from exc
        raise CorruptAvroFileError(path, f"StateManifest does not decode: {exc!r}") from exc
    if not isinstance(record, dict):
        raise CorruptAvroFileError(path, "StateManifest is not a record")
    return state_from_record(record, path=path)


def decode_state_json(data: bytes, *, path: str) -> StateManifest:
    """Decode the older ``_manifest.json`` form of a state root."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptAvroFileError(path, f"state JSON does not parse: {exc}") from exc
    if not isinstance(raw, dict):
        raise CorruptAvroFileError(path, "state JSON is not an object")
    return state_from_record(raw, path=path)
