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

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from indextables.protocol.actions import AddAction, MetadataAction, ProtocolAction
from indextables.protocol.discovery import open_store
from indextables.protocol.errors import (
    CorruptFileError,
    ObjectNotFoundError,
    ProtocolError,
    TableExistsError,
)
from indextables.protocol.logreplay import LOG_DIR, version_key
from indextables.protocol.maintenance.results import RepairResult
from indextables.protocol.splitbundle import read_split_footer
from indextables.protocol.state import FileEntry
from indextables.protocol.store import ObjectStore
from indextables.protocol.versionfile import encode_version_file

if TYPE_CHECKING:
    from indextables.protocol.table import Table

__all__ = ["repair"]


def _partition_values(key: str) -> dict[str, str]:
    folders = key.split("/")[:-1]
    return dict(part.split("=", 1) for part in folders if "=" in part)


def _candidates(table: Table) -> tuple[int, ProtocolAction, MetadataAction, list[FileEntry]]:
    snap = table.snapshot()
    return snap.version, snap.protocol, snap.metadata, list(snap.files)


def _listed_splits(table: Table) -> list[FileEntry]:
    return [
        FileEntry(
            info.key, _partition_values(info.key), info.size, info.last_modified_ms, True, 0, 0
        )
        for info in table.store.list("")
        if info.key.endswith(".split") and not info.key.startswith(LOG_DIR)
    ]


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
    table: Table,
    target_uri: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    target_store: ObjectStore | None = None,
    metadata: MetadataAction | None = None,
) -> RepairResult:
    """Rebuild the log of ``table`` at ``target_uri``.

    Raises:
        TableExistsError: the target already holds a log.
        ProtocolError: the source log is unreadable and no ``metadata`` was given.
    """
    target = target_store or open_store(target_uri, storage_options)
    if any(True for _ in target.list(LOG_DIR)):
        raise TableExistsError(f"{target_uri}: target already holds a transaction log")
    try:
        version, protocol, meta, entries = _candidates(table)
    except ProtocolError:
        if metadata is None:
            raise
        version, protocol, meta, entries = -1, ProtocolAction(4, 4), metadata, _listed_splits(table)
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
