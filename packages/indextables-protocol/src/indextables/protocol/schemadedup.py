"""Schema deduplication: doc mappings stored once, referenced by a hash.

The hash of a doc mapping JSON (DECISIONS.md): parse it; sort object keys
recursively; sort every array whose elements are all objects with a ``name``
key by that name; serialize compactly with non-ASCII kept; SHA-256; URL-safe
base64 without padding; the first 16 characters.

JSON-log tables keep the registry in ``metaData.configuration`` under
``docMappingSchema.<hash>``; states keep it in ``schemaRegistry[<hash>]``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Final, TypeVar

from indextables.protocol.actions import AddAction
from indextables.protocol.errors import CorruptFileError
from indextables.protocol.state import FileEntry, with_doc_mapping_json

__all__ = [
    "SCHEMA_KEY_PREFIX",
    "canonical_doc_mapping",
    "configuration_with_registry",
    "deduplicate_adds",
    "doc_mapping_hash",
    "registry_from_configuration",
    "resolve_doc_mapping",
]

SCHEMA_KEY_PREFIX: Final = "docMappingSchema."
HASH_LENGTH: Final = 16

_Record = TypeVar("_Record", AddAction, FileEntry)


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        if items and all(isinstance(v, dict) and "name" in v for v in items):
            items.sort(key=lambda v: str(v["name"]))
        return items
    return value


def canonical_doc_mapping(json_text: str) -> str:
    """Return the canonical serialization of a doc mapping JSON.

    Raises:
        ValueError: ``json_text`` is not JSON, or is nested too deeply to decode.
    """
    try:
        canonical = _canonical(json.loads(json_text))
        return json.dumps(canonical, separators=(",", ":"), ensure_ascii=False)
    except RecursionError:
        raise ValueError("the doc mapping JSON is nested too deeply to decode") from None


def doc_mapping_hash(json_text: str) -> str:
    """Return the 16-character reference of a doc mapping JSON."""
    digest = hashlib.sha256(canonical_doc_mapping(json_text).encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")[:HASH_LENGTH]


def registry_from_configuration(configuration: Mapping[str, str]) -> dict[str, str]:
    """Return ``{hash: doc mapping JSON}`` from a ``metaData.configuration`` map."""
    return {
        key[len(SCHEMA_KEY_PREFIX) :]: value
        for key, value in configuration.items()
        if key.startswith(SCHEMA_KEY_PREFIX)
    }


def configuration_with_registry(
    configuration: Mapping[str, str], registry: Mapping[str, str]
) -> dict[str, str]:
    """Return ``configuration`` with every registry entry stored under its key."""
    merged = dict(configuration)
    for ref, doc_mapping in registry.items():
        merged[SCHEMA_KEY_PREFIX + ref] = doc_mapping
    return merged


def deduplicate_adds(
    adds: Iterable[AddAction], registry: Mapping[str, str]
) -> tuple[list[AddAction], dict[str, str]]:
    """Replace inline doc mappings by references.

    Returns:
        The rewritten adds, and the registry entries that ``registry`` lacked.
    """
    new_entries: dict[str, str] = {}
    out = []
    for add in adds:
        if add.doc_mapping_json is None:
            out.append(add)
            continue
        ref = doc_mapping_hash(add.doc_mapping_json)
        if ref not in registry:
            new_entries.setdefault(ref, add.doc_mapping_json)
        out.append(replace(add, doc_mapping_json=None, doc_mapping_ref=ref))
    return out, new_entries


def resolve_doc_mapping(
    record: _Record, registry: Mapping[str, str], *, path: str = "<log>"
) -> _Record:
    """Return ``record`` with ``doc_mapping_json`` restored from its reference.

    Records that already carry the JSON, or carry no reference, come back
    unchanged.

    Raises:
        CorruptFileError: the reference is not in the registry.
    """
    if record.doc_mapping_json is not None or record.doc_mapping_ref is None:
        return record
    doc_mapping = registry.get(record.doc_mapping_ref)
    if doc_mapping is None:
        raise CorruptFileError(
            path, f"{record.path}: docMappingRef {record.doc_mapping_ref!r} not in schema registry"
        )
    if isinstance(record, FileEntry):
        return with_doc_mapping_json(record, doc_mapping)
    return replace(record, doc_mapping_json=doc_mapping)
