"""The Python API: every admin operation as a function with keyword-only options.

Scripts call these instead of shelling out to ``indextables``; the command
line is a thin layer over them. Each opens the table at ``table`` (a URI) and
delegates to the engine in indextables.protocol.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from indextables.admin.errors import EngineUnavailableError
from indextables.admin.progress import ProgressCallback

StorageOptions = Mapping[str, str] | None


def _engine(name: str) -> Any:
    module = importlib.import_module("indextables.protocol")
    found = getattr(module, name, None)
    if found is None:
        raise EngineUnavailableError(f"indextables.protocol has no {name}() yet")
    return found


def _open(table: str, storage_options: StorageOptions) -> Any:
    return _engine("open_table")(table, storage_options=dict(storage_options or {}))


def describe(table: str, *, storage_options: StorageOptions = None) -> Any:
    """Describe the table's state (``DESCRIBE INDEXTABLES STATE``)."""
    return _open(table, storage_options).describe_state()


def checkpoint(table: str, *, storage_options: StorageOptions = None) -> Any:
    """Write a state at the current version (``CHECKPOINT INDEXTABLES``)."""
    return _open(table, storage_options).checkpoint()


def compact(
    table: str, *, storage_options: StorageOptions = None, progress: ProgressCallback | None = None
) -> Any:
    """Rewrite the state compacted (``COMPACT INDEXTABLES``)."""
    return _open(table, storage_options).compact()


def purge(
    table: str,
    *,
    older_than: timedelta = timedelta(days=7),
    log_retention: timedelta = timedelta(days=30),
    dry_run: bool = False,
    storage_options: StorageOptions = None,
    progress: ProgressCallback | None = None,
) -> Any:
    """Delete orphaned splits, old versions and states (``PURGE INDEXTABLE``)."""
    return _open(table, storage_options).purge(
        older_than=older_than, log_retention=log_retention, dry_run=dry_run
    )


def truncate_time_travel(
    table: str, *, dry_run: bool = False, storage_options: StorageOptions = None
) -> Any:
    """Delete history older than the current version (``TRUNCATE INDEXTABLES TIME TRAVEL``)."""
    return _open(table, storage_options).truncate_time_travel(dry_run=dry_run)


def drop_partitions(
    table: str, *, where: str, dry_run: bool = False, storage_options: StorageOptions = None
) -> Any:
    """Remove the matching partitions (``DROP INDEXTABLES PARTITIONS``)."""
    return _open(table, storage_options).drop_partitions(where, dry_run=dry_run)


def repair(
    source: str,
    *,
    destination: str,
    storage_options: StorageOptions = None,
    progress: ProgressCallback | None = None,
) -> Any:
    """Write a clean log for ``source`` at ``destination`` (``REPAIR INDEXFILES ...``)."""
    return _engine("repair")(source, destination, storage_options=dict(storage_options or {}))


def validate(
    table: str, *, storage_options: StorageOptions = None, progress: ProgressCallback | None = None
) -> Any:
    """Check the table's invariants."""
    return _open(table, storage_options).validate()


def gc(table: str, *, dry_run: bool = False, storage_options: StorageOptions = None) -> Any:
    """Delete unreferenced manifests and expired states."""
    return _open(table, storage_options).gc(dry_run=dry_run)


def describe_view(table: str, **kwargs: Any) -> Any:
    """Placeholder until the engine lands."""
    return describe(table, **kwargs)


files_view = history_view = changes_view = schema_view = describe_view
