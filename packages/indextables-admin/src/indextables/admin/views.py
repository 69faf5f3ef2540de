"""Turn the engine's typed results into the JSON documents the command line prints.

Keys are the reference SQL output column names where the reference has a
command (the engine's result fields carry those names already) and the wire
field names (camelCase, as in the transaction log) for file entries and the
protocol. docs/admin.md documents every document.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from indextables.admin.api import (
    ColumnIndexing,
    DropPartitionsPlan,
    TableDescription,
    TableSchema,
)
from indextables.admin.output import JsonObject, JsonValue
from indextables.protocol.actions import ProtocolAction
from indextables.protocol.history import Changes, HistoryEntry
from indextables.protocol.maintenance import ValidateResult
from indextables.protocol.state import FileEntry

if TYPE_CHECKING:
    from indextables.avrostate import GcReport

__all__ = [
    "changes_document",
    "describe_document",
    "drop_plan_document",
    "file_entry_to_wire",
    "files_document",
    "gc_document",
    "history_document",
    "protocol_to_wire",
    "record",
    "schema_document",
    "to_json",
    "validate_document",
    "wire_name",
]

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


def file_entry_to_wire(entry: FileEntry) -> JsonObject:
    """A live file as its wire record: camelCase keys, every field (``null`` when absent).

    Keeping absent fields as ``null`` gives every file the same keys, so
    scripts never need to test for a key.
    """
    return {wire_name(f.name): to_json(getattr(entry, f.name)) for f in dataclasses.fields(entry)}


def protocol_to_wire(protocol: ProtocolAction) -> JsonObject:
    """The ``protocol`` action's fields under their wire names."""
    return {
        "minReaderVersion": protocol.min_reader_version,
        "minWriterVersion": protocol.min_writer_version,
        "readerFeatures": to_json(protocol.reader_features),
        "writerFeatures": to_json(protocol.writer_features),
    }


def record(result: Any) -> JsonObject:
    """A result dataclass as a JSON object (its fields are the reference's columns)."""
    converted = to_json(result)
    if not isinstance(converted, Mapping):
        return {"result": converted}
    return converted


def describe_document(description: TableDescription) -> JsonObject:
    """``describe``: DESCRIBE INDEXTABLES STATE's columns, then the latest snapshot's facts.

    The reference columns (``version``, ``num_files``, ...) describe the newest
    state; ``table_*`` describe the table, which may have versions after it.
    """
    snap = description.snapshot
    counts = [f.num_records for f in snap.files]
    return {
        **record(description.state),
        "table_version": snap.version,
        "table_num_files": snap.num_files,
        "table_total_bytes": snap.total_bytes,
        "num_records": None if None in counts else sum(c or 0 for c in counts),
        "protocol": protocol_to_wire(snap.protocol),
        "table_id": snap.metadata.id,
        "partition_columns": list(snap.partition_columns),
        "schema": _fields_document(json.loads(snap.metadata.schema_string).get("fields", ())),
    }


def files_document(
    table: str, files: Sequence[FileEntry], *, version: int | None, where: str | None
) -> JsonObject:
    """``files``: the live files as wire records, sorted by path."""
    ordered = sorted(files, key=lambda f: f.path)
    return {
        "table_path": table,
        "version": version,
        "where": where,
        "num_files": len(ordered),
        "total_bytes": sum(f.size for f in ordered),
        "files": [file_entry_to_wire(f) for f in ordered],
    }


def history_document(
    table: str, entries: Sequence[HistoryEntry], *, limit: int | None
) -> JsonObject:
    """``history``: retained versions, newest first (``time`` is ``timestamp`` in ISO 8601)."""
    newest_first = sorted(entries, key=lambda e: e.version, reverse=True)
    shown = newest_first if limit is None else newest_first[:limit]
    return {
        "table_path": table,
        "versions": [{**record(e), "time": _iso_utc(e.timestamp)} for e in shown],
    }


def changes_document(table: str, changes: Changes) -> JsonObject:
    """``changes``: added files (wire records) and removed paths."""
    return {
        "table_path": table,
        "start_version": changes.start_version,
        "end_version": changes.end_version,
        "num_adds": len(changes.adds),
        "num_removes": len(changes.removes),
        "adds": [file_entry_to_wire(f) for f in changes.adds],
        "removes": [{"path": p} for p in changes.removes],
    }


def schema_document(table: str, schema: TableSchema) -> JsonObject:
    """``schema``: columns, types, nullability and the partition columns."""
    return {
        "table_path": table,
        "version": schema.version,
        "partition_columns": list(schema.partition_columns),
        "fields": _fields_document(schema.fields),
    }


def indexing_document(table: str, version: int, columns: Sequence[ColumnIndexing]) -> JsonObject:
    """``indexing``: one row per column (per distinct setting) of the splits' doc mappings."""
    return {
        "table_path": table,
        "version": version,
        "columns": [
            {
                "name": c.name,
                "spark_type": to_json(c.spark_type),
                "partition": c.partition,
                "index_type": c.index_type,
                "tokenizer": c.tokenizer,
                "indexed": c.indexed,
                "fast": c.fast,
                "stored": c.stored,
                "options": to_json(dict(c.options)),
                "splits": c.splits,
            }
            for c in columns
        ],
    }


def drop_plan_document(plan: DropPartitionsPlan, *, where: str) -> JsonObject:
    """``drop-partitions --dry-run``: DROP PARTITIONS' columns plus the files it would remove."""
    count = len(plan.partitions)
    return {
        "table_path": plan.table_path,
        "status": "DRY_RUN" if plan.files else "NO_ACTION",
        "partitions_dropped": count,
        "splits_removed": len(plan.files),
        "total_size_bytes": plan.total_size_bytes,
        "message": f"Would drop {count} partitions ({len(plan.files)} splits) matching {where}",
        "version": plan.version,
        "partitions": [dict(p) for p in plan.partitions],
        "files": [file_entry_to_wire(f) for f in plan.files],
    }


def validate_document(result: ValidateResult) -> JsonObject:
    """``validate``: the result's fields, ``ok``, and each problem as a row."""
    return {
        "table_path": result.table_path,
        "version": result.version,
        "files_checked": result.files_checked,
        "ok": result.ok,
        "problems": [{"problem": p} for p in result.problems],
    }


def gc_document(table: str, report: GcReport, *, dry_run: bool) -> JsonObject:
    """``gc``: the states and manifests deleted (or that would be), and the states kept."""
    return {
        "table_path": table,
        "status": "DRY_RUN" if dry_run else "SUCCESS",
        "dry_run": dry_run,
        "states_deleted": len(report.deleted_states),
        "manifests_deleted": len(report.deleted_manifests),
        "deleted_states": list(report.deleted_states),
        "deleted_manifests": [{"path": p} for p in report.deleted_manifests],
        "kept_states": list(report.kept_states),
    }


def _iso_utc(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def _fields_document(fields: Sequence[Mapping[str, Any]]) -> list[JsonValue]:
    return [
        {
            "name": f.get("name"),
            "type": to_json(f.get("type")),
            "nullable": f.get("nullable"),
            "metadata": to_json(f.get("metadata", {})),
        }
        for f in fields
    ]
