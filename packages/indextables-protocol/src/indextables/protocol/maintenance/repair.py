"""REPAIR: write a fresh log for the live split files, checked against storage.

The live files come from the source log when it can be read; otherwise every
``.split`` under the table root is taken (partition values from its
``col=value/`` folders). Each split is checked to exist, its size taken from
storage and its footer offsets from its bundle footer. The target gets
version 0 (protocol and metadata) and version 1 (the adds). Paths stay
relative to the source table root: the repaired log replaces the source's
``_transaction_log/``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from indextables.protocol.actions import AddAction, FileFormat, MetadataAction, ProtocolAction
from indextables.protocol.discovery import open_store
from indextables.protocol.errors import (
    CorruptFileError,
    ObjectNotFoundError,
    ProtocolError,
    TableExistsError,
)
from indextables.protocol.logreplay import LOG_DIR, list_log, read_version, version_key
from indextables.protocol.maintenance.results import RepairResult
from indextables.protocol.splitbundle import read_split_footer
from indextables.protocol.state import FileEntry
from indextables.protocol.store import ObjectStore
from indextables.protocol.versionfile import encode_version_file

if TYPE_CHECKING:
    from indextables.protocol.tablelike import TableLike

__all__ = ["repair"]


def _partition_values(key: str) -> dict[str, str]:
    folders = key.split("/")[:-1]
    return dict(part.split("=", 1) for part in folders if "=" in part)


def _candidates(table: TableLike) -> tuple[int, ProtocolAction, MetadataAction, list[FileEntry]]:
    snap = table.snapshot()
    return snap.version, snap.protocol, snap.metadata, list(snap.files)


def _listed_splits(table: TableLike) -> list[FileEntry]:
    return [
        FileEntry(
            info.key, _partition_values(info.key), info.size, info.last_modified_ms, True, 0, 0
        )
        for info in table.store.list("")
        if info.key.endswith(".split") and not info.key.startswith(LOG_DIR)
    ]


def _salvaged_metadata(table: TableLike) -> MetadataAction | None:
    """The newest metadata action any readable version file still holds."""
    try:
        versions = sorted(list_log(table.store).versions, reverse=True)
    except ProtocolError:
        return None
    for version in versions:
        try:
            actions = read_version(table.store, version)
        except ProtocolError:
            continue  # damaged: look further back
        found = [a for a in actions if isinstance(a, MetadataAction)]
        if found:
            return found[-1]
    return None


# Tantivy field types of a split's meta.json -> Spark types of the table schema.
_SPARK_TYPES = {
    "i64": "long",
    "u64": "long",
    "f64": "double",
    "bool": "boolean",
    "date": "timestamp",
    "text": "string",
    "json_object": "string",
    "ip_addr": "string",
    "bytes": "binary",
}


def _metadata_from_splits(table: TableLike, entries: list[FileEntry]) -> MetadataAction | None:
    """Metadata rebuilt from the index schema in a split's footer (the log is lost).

    Column types follow the split's field types; partition columns (from the
    ``col=value/`` folders) become strings.
    """
    for entry in entries:
        try:
            info = table.store.head(entry.path)
            footer = read_split_footer(table.store, entry.path, footer_end_offset=info.size)
            start, end = footer.files["meta.json"]
            meta = json.loads(table.store.get_range(entry.path, start, end))
            fields = [
                {
                    "name": field["name"],
                    "type": _SPARK_TYPES[field["type"]],
                    "nullable": True,
                    "metadata": {},
                }
                for field in meta["schema"]
                if not field["name"].startswith("_")
            ]
        except (ProtocolError, KeyError, TypeError, ValueError, RecursionError):
            continue
        partitions = tuple(entry.partition_values)
        fields += [
            {"name": c, "type": "string", "nullable": True, "metadata": {}} for c in partitions
        ]
        schema = json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))
        return MetadataAction(
            str(uuid.uuid4()),
            FileFormat(),
            schema,
            partitions,
            {},
            created_time=int(time.time() * 1000),
        )
    return None


def _checked(store: ObjectStore, entry: FileEntry) -> AddAction | None:
    """The add for ``entry`` if its split exists and its footer parses."""
    try:
        info = store.head(entry.path)
        footer = read_split_footer(store, entry.path, footer_end_offset=info.size)
    except (ObjectNotFoundError, CorruptFileError):
        return None
    add = AddAction.from_file_entry(entry)
    return replace(
        add,
        size=info.size,
        data_change=True,
        footer_start_offset=footer.footer_start_offset,
        footer_end_offset=footer.footer_end_offset,
        has_footer_offsets=True,
    )


def repair(
    table: TableLike,
    target_uri: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    target_store: ObjectStore | None = None,
    metadata: MetadataAction | None = None,
) -> RepairResult:
    """Rebuild the log of ``table`` at ``target_uri``.

    Raises:
        TableExistsError: the target already holds a log.
        ProtocolError: the source log is unreadable and no metadata was given or
            recovered (from the newest readable version file holding one, else from
            the index schema in a split's footer).
    """
    target = target_store or open_store(target_uri, storage_options)
    if any(True for _ in target.list(LOG_DIR)):
        raise TableExistsError(f"{target_uri}: target already holds a transaction log")
    try:
        version, protocol, meta, entries = _candidates(table)
    except ProtocolError as unreadable:
        entries = _listed_splits(table)
        found = metadata or _salvaged_metadata(table) or _metadata_from_splits(table, entries)
        if found is None:
            raise ProtocolError(
                f"{table.uri}: the log cannot be read ({unreadable}) and no metadata could be "
                "recovered from its version files or split footers: give the metadata"
            ) from unreadable
        version, protocol, meta = -1, ProtocolAction(4, 4), found
    adds = [add for entry in entries if (add := _checked(table.store, entry)) is not None]
    target.put_if_absent(version_key(0), encode_version_file([protocol, metadata or meta]))
    target.put_if_absent(version_key(1), encode_version_file(adds))
    missing = len(entries) - len(adds)
    return RepairResult(
        table.uri,
        target_uri,
        version,
        len(entries),
        len(adds),
        missing,
        "SUCCESS" if not missing else f"SUCCESS: {missing} missing splits left out",
    )
