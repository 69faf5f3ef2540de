"""The Python API: every admin operation as a function with keyword-only options.

Scripts call these instead of shelling out to ``indextables``; the command
line is a thin layer over them. Each opens the table at ``table`` (a URI:
a path, ``file://``, ``s3://``, ``az://``/``abfss://``, ``memory://``) and
delegates to the engine (:mod:`indextables.protocol`), returning its typed
result.

Example:
    >>> from indextables import admin
    >>> state = admin.describe("/data/events")              # doctest: +SKIP
    >>> state.needs_compaction                              # doctest: +SKIP
    False
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from indextables.admin.observe import CallCounter, ObservedStore
from indextables.admin.progress import ProgressCallback
from indextables.admin.whatif import RecordingStore
from indextables.protocol import Table, TableConfig, open_table
from indextables.protocol.errors import (
    CorruptFileError,
    InvalidPredicateError,
    UnsafePathError,
    UnsupportedProtocolError,
)
from indextables.protocol.history import Changes, HistoryEntry
from indextables.protocol.maintenance import (
    CheckpointResult,
    DescribeStateResult,
    DropPartitionsResult,
    PurgeResult,
    RepairResult,
    TruncateResult,
    ValidateResult,
)
from indextables.protocol.predicates import Predicate, parse_predicate
from indextables.protocol.snapshot import Snapshot
from indextables.protocol.state import FileEntry

if TYPE_CHECKING:
    # Imported where used: a broken avrostate build must not stop `indextables version`.
    from indextables.avrostate import GcReport, StateOptions

__all__ = [
    "CheckpointResult",
    "DescribeStateResult",
    "DropPartitionsPlan",
    "DropPartitionsResult",
    "PurgeResult",
    "RepairResult",
    "TruncateResult",
    "ValidateResult",
    "StorageOptions",
    "TableDescription",
    "TableSchema",
    "ColumnIndexing",
    "changes",
    "checkpoint",
    "compact",
    "describe",
    "describe_table",
    "drop_partitions",
    "files",
    "gc",
    "gc_plan",
    "history",
    "indexing",
    "drop_partitions_plan",
    "purge",
    "purge_plan",
    "repair",
    "schema",
    "snapshot",
    "truncate_time_travel",
    "truncate_time_travel_plan",
    "validate",
]

StorageOptions = Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class TableSchema:
    """A table's columns as of one version.

    Attributes:
        version: the table version the schema was read at.
        partition_columns: partition columns, in order.
        fields: the Spark struct fields (``name``, ``type``, ``nullable``, ``metadata``).
        schema_string: the schema JSON as the log stores it.
    """

    version: int
    partition_columns: tuple[str, ...]
    fields: tuple[Mapping[str, Any], ...]
    schema_string: str


@dataclass(frozen=True, slots=True)
class DropPartitionsPlan:
    """What ``drop_partitions`` would remove: the matching live files."""

    table_path: str
    version: int
    partitions: tuple[Mapping[str, str], ...]
    files: tuple[FileEntry, ...]

    @property
    def total_size_bytes(self) -> int:
        """Bytes of the files that would be removed."""
        return sum(f.size for f in self.files)


def _open(table: str, *, storage_options: StorageOptions = None, check: bool = True) -> Table:
    return open_table(
        table,
        storage_options=storage_options,
        config=engine_config(storage_options),
        check=check,
    )


def engine_config(options: StorageOptions) -> TableConfig:
    """Engine settings from the ``spark.indextables.*`` keys among the options.

    The store ignores those keys; the engine reads them (checkpoint interval,
    commit retries, retention windows), so one ``-S`` flag carries both.

    Raises:
        ConfigError: a value is out of range or not a number (naming the key).
    """
    return TableConfig.from_options({k: str(v) for k, v in (options or {}).items()})


def snapshot(
    table: str,
    *,
    version: int | None = None,
    timestamp: int | datetime | None = None,
    where: str | Predicate | None = None,
    storage_options: StorageOptions = None,
) -> Snapshot:
    """The table as of ``version`` (or ``timestamp``), restricted to ``where`` partitions."""
    return _open(table, storage_options=storage_options).snapshot(
        version, timestamp=timestamp, partition_filter=where
    )


def describe(table: str, *, storage_options: StorageOptions = None) -> DescribeStateResult:
    """The current state (``DESCRIBE INDEXTABLES STATE``)."""
    return _open(table, storage_options=storage_options).describe_state()


@dataclass(frozen=True, slots=True)
class TableDescription:
    """The current state together with the snapshot it describes (protocol, schema, files)."""

    state: DescribeStateResult
    snapshot: Snapshot


def describe_table(table: str, *, storage_options: StorageOptions = None) -> TableDescription:
    """:func:`describe` plus the latest snapshot, read through one table handle."""
    handle = _open(table, storage_options=storage_options)
    return TableDescription(handle.describe_state(), handle.snapshot())


def files(
    table: str,
    *,
    where: str | Predicate | None = None,
    version: int | None = None,
    storage_options: StorageOptions = None,
) -> tuple[FileEntry, ...]:
    """The live files at ``version`` (latest by default) matching ``where``."""
    return tuple(
        snapshot(table, version=version, where=where, storage_options=storage_options).files
    )


def history(table: str, *, storage_options: StorageOptions = None) -> list[HistoryEntry]:
    """One entry per retained version, oldest first."""
    return _open(table, storage_options=storage_options).history()


def changes(
    table: str,
    *,
    since_version: int | None = None,
    since_timestamp: int | datetime | None = None,
    storage_options: StorageOptions = None,
) -> Changes:
    """Files added and removed after a version (or the version current at a time)."""
    if (since_version is None) == (since_timestamp is None):
        raise ValueError("give exactly one of since_version or since_timestamp")
    handle = _open(table, storage_options=storage_options)
    return handle.changes_since(since_version, timestamp=since_timestamp)


def schema(
    table: str, *, version: int | None = None, storage_options: StorageOptions = None
) -> TableSchema:
    """The table's columns and partition columns at ``version`` (latest by default)."""
    snap = snapshot(table, version=version, storage_options=storage_options)
    parsed = json.loads(snap.metadata.schema_string)
    return TableSchema(
        snap.version,
        snap.partition_columns,
        tuple(parsed.get("fields", ())),
        snap.metadata.schema_string,
    )


# Doc mapping keys shown in their own columns; any other key of a field's mapping
# (record, fieldnorms, expand_dots, ...) is kept in ``options``.
_INDEXING_KEYS = ("name", "type", "tokenizer", "indexed", "fast", "stored")


@dataclass(frozen=True, slots=True)
class ColumnIndexing:
    """How one column is indexed in the live splits (one per distinct setting).

    Attributes:
        name: the column.
        spark_type: its Spark type (a name, or a nested type as JSON).
        partition: a partition column (kept in paths and the log, not in splits).
        index_type: the splits' field type (``text``, ``i64``, ``f64``, ``datetime``,
            ``json``, ...), ``None`` when no live split holds the column.
        tokenizer: the text tokenizer (``default``, ``raw``, ...), if any.
        indexed, fast, stored: the field's flags (``None`` when not given).
        options: the field mapping's other keys.
        splits: live splits whose doc mapping has this setting.
    """

    name: str
    spark_type: Any
    partition: bool
    index_type: str | None
    tokenizer: str | None
    indexed: bool | None
    fast: bool | None
    stored: bool | None
    options: Mapping[str, Any]
    splits: int


def indexing(
    table: str, *, version: int | None = None, storage_options: StorageOptions = None
) -> tuple[int, tuple[ColumnIndexing, ...]]:
    """How each column is indexed at ``version`` (latest by default), from the live
    splits' doc mappings, in schema order.

    A column whose splits disagree (the mapping changed between writes) has one
    entry per distinct setting, the most common first.

    Raises:
        CorruptFileError: a split's doc mapping is not a JSON list of field mappings.
    """
    snap = snapshot(table, version=version, storage_options=storage_options)
    parsed = json.loads(snap.metadata.schema_string)
    spark_fields = [f for f in parsed.get("fields", ()) if isinstance(f, Mapping)]
    mappings: dict[str, int] = {}
    for entry in snap.files:
        if entry.doc_mapping_json is not None:
            mappings[entry.doc_mapping_json] = mappings.get(entry.doc_mapping_json, 0) + 1
    # column -> (settings as sorted JSON -> split count), in first-seen order
    seen: dict[str, dict[str, int]] = {}
    for text, count in mappings.items():
        try:
            fields = json.loads(text)
        except ValueError as exc:
            raise CorruptFileError(
                _mapping_source(table), f"doc mapping is not JSON: {exc}"
            ) from exc
        if not isinstance(fields, list):
            raise CorruptFileError(_mapping_source(table), "doc mapping is not a list of fields")
        for field in fields:
            if isinstance(field, Mapping) and isinstance(field.get("name"), str):
                settings = json.dumps(field, sort_keys=True)
                per_column = seen.setdefault(field["name"], {})
                per_column[settings] = per_column.get(settings, 0) + count
    partitions = set(snap.partition_columns)
    columns: list[ColumnIndexing] = []
    for spark_field in spark_fields:
        name = str(spark_field.get("name"))
        found = sorted(seen.get(name, {}).items(), key=lambda item: -item[1])
        if not found:
            columns.append(
                ColumnIndexing(
                    name,
                    spark_field.get("type"),
                    name in partitions,
                    None,
                    None,
                    None,
                    None,
                    None,
                    {},
                    0,
                )
            )
        for settings, count in found:
            field = json.loads(settings)
            columns.append(
                ColumnIndexing(
                    name,
                    spark_field.get("type"),
                    name in partitions,
                    field.get("type"),
                    field.get("tokenizer"),
                    field.get("indexed"),
                    field.get("fast"),
                    field.get("stored"),
                    {k: v for k, v in field.items() if k not in _INDEXING_KEYS},
                    count,
                )
            )
    return snap.version, tuple(columns)


def _mapping_source(table: str) -> str:
    """The table as named in an error about its doc mappings."""
    return f"{table} (doc mapping of a live split)"


def checkpoint(table: str, *, storage_options: StorageOptions = None) -> CheckpointResult:
    """Write a state at the current version (``CHECKPOINT INDEXTABLES``)."""
    return _open(table, storage_options=storage_options).checkpoint()


def compact(
    table: str, *, storage_options: StorageOptions = None, progress: ProgressCallback | None = None
) -> CheckpointResult:
    """Write a compacted state: every live entry, sorted, no tombstones (``COMPACT``).

    ``progress(phase, done, total)`` hears of each manifest written.
    """
    counter = _counter(progress, "manifests written", "put", keys=_is_manifest)
    return _open_observed(table, storage_options, counter).compact()


def purge(
    table: str,
    *,
    older_than: timedelta | None = None,
    log_retention: timedelta | None = None,
    dry_run: bool = False,
    storage_options: StorageOptions = None,
    progress: ProgressCallback | None = None,
) -> PurgeResult:
    """Delete orphaned splits, old version files, old states (``PURGE INDEXTABLE``).

    Args:
        table: the table URI.
        older_than: orphaned splits younger than this are kept (default 7 days,
            at least 24 hours).
        log_retention: covered version files younger than this are kept
            (default 30 days).
        dry_run: report what would be deleted; delete nothing.
        storage_options: options of the store.
        progress: ``progress(phase, done, total)``, told of each object deleted.
    """
    counter = _counter(progress, "objects deleted", "delete")
    return _open_observed(table, storage_options, counter).purge(
        older_than=_hours(older_than),
        log_retention=_hours(log_retention),
        dry_run=dry_run,
    )


def _open_observed(
    table: str, storage_options: StorageOptions, counter: CallCounter | None, *, check: bool = True
) -> Table:
    """Open ``table`` on a store that reports to ``counter`` (the plain store without one)."""
    handle = _open(table, storage_options=storage_options, check=check)
    if counter is None:
        return handle
    return handle.with_store(ObservedStore(handle.store, counter))


def _open_checking_splits(
    table: str,
    storage_options: StorageOptions,
    progress: ProgressCallback | None,
    *,
    check: bool = True,
) -> Table:
    """Open ``table`` for a pass that heads every live split, counting them to ``progress``."""
    counter = _counter(progress, "splits checked", "head", keys=_is_split)
    handle = _open_observed(table, storage_options, counter, check=check)
    if counter is not None:
        # The snapshot is cached on the handle: the pass reads it again for free.
        # A log too damaged to load is validate's finding to report, not a failure here.
        with contextlib.suppress(CorruptFileError, UnsafePathError, UnsupportedProtocolError):
            counter.total = handle.snapshot().num_files
    return handle


def _counter(
    progress: ProgressCallback | None,
    phase: str,
    method: str,
    *,
    keys: Callable[[str], bool] = lambda key: True,
) -> CallCounter | None:
    return None if progress is None else CallCounter(progress, phase, method, keys=keys)


def _is_split(key: str) -> bool:
    return key.endswith(".split")


def _is_manifest(key: str) -> bool:
    from indextables.avrostate.layout import MANIFESTS_DIR

    return key.startswith(MANIFESTS_DIR)


def _simulation(handle: Table) -> tuple[Table, RecordingStore]:
    overlay = RecordingStore(handle.store)
    return handle.with_store(overlay), overlay


def purge_plan(
    table: str,
    *,
    older_than: timedelta | None = None,
    log_retention: timedelta | None = None,
    storage_options: StorageOptions = None,
) -> tuple[str, ...]:
    """Every key :func:`purge` with these options would delete now, sorted; deletes nothing.

    The engine's purge runs for real against a :class:`RecordingStore`
    overlay of the table's store, so the list follows the engine's own rules
    (states, manifests, version files, orphaned splits and their ``.crc``).
    """
    simulated, overlay = _simulation(_open(table, storage_options=storage_options))
    simulated.purge(older_than=_hours(older_than), log_retention=_hours(log_retention))
    return overlay.deleted_keys


def truncate_time_travel_plan(
    table: str, *, storage_options: StorageOptions = None
) -> tuple[str, ...]:
    """Every key :func:`truncate_time_travel` would delete now, sorted; deletes nothing."""
    simulated, overlay = _simulation(_open(table, storage_options=storage_options))
    simulated.truncate_time_travel()
    return overlay.deleted_keys


def truncate_time_travel(
    table: str,
    *,
    dry_run: bool = False,
    storage_options: StorageOptions = None,
    progress: ProgressCallback | None = None,
) -> TruncateResult:
    """Delete every version older than the current one (``TRUNCATE ... TIME TRAVEL``)."""
    counter = _counter(progress, "objects deleted", "delete")
    handle = _open_observed(table, storage_options, counter)
    return handle.truncate_time_travel(dry_run=dry_run)


def drop_partitions_plan(
    table: str, *, where: str | Predicate, storage_options: StorageOptions = None
) -> DropPartitionsPlan:
    """The live files ``drop_partitions`` would remove; changes nothing.

    Raises:
        InvalidPredicateError: the table is unpartitioned, or ``where`` names a
            column that is not a partition column.
    """
    predicate = parse_predicate(where) if isinstance(where, str) else where
    snap = snapshot(table, where=predicate, storage_options=storage_options)
    if not snap.partition_columns:
        raise InvalidPredicateError(f"{table}: the table has no partition columns")
    if not predicate.columns():
        raise InvalidPredicateError(f"{table}: the predicate names no partition column")
    partitions = {tuple(sorted(f.partition_values.items())): None for f in snap.files}
    return DropPartitionsPlan(
        table, snap.version, tuple(dict(p) for p in partitions), tuple(snap.files)
    )


def drop_partitions(
    table: str, *, where: str | Predicate, storage_options: StorageOptions = None
) -> DropPartitionsResult:
    """Commit the removal of every live file of the matching partitions.

    The split files stay in storage until ``purge`` deletes them.
    """
    predicate = parse_predicate(where) if isinstance(where, str) else where
    return _open(table, storage_options=storage_options).drop_partitions(predicate)


def repair(
    source: str,
    *,
    destination: str,
    storage_options: StorageOptions = None,
    destination_options: StorageOptions = None,
    progress: ProgressCallback | None = None,
) -> RepairResult:
    """Write a clean log for ``source`` at ``destination`` (``REPAIR INDEXFILES ...``).

    Only splits that exist (and whose footer parses) are kept; the source is
    never modified. ``destination_options`` default to ``storage_options``.
    ``progress(phase, done, total)`` hears of each split checked.
    """
    # Opened unchecked: repair is for logs too damaged to load.
    handle = _open_checking_splits(source, storage_options, progress, check=False)
    target_options = storage_options if destination_options is None else destination_options
    return handle.repair(destination, storage_options=target_options)


def validate(
    table: str, *, storage_options: StorageOptions = None, progress: ProgressCallback | None = None
) -> ValidateResult:
    """Check every invariant of the current snapshot; ``result.problems`` lists failures.

    ``progress(phase, done, total)`` hears of each split checked in storage.
    """
    # Opened unchecked: a log too damaged to load is a finding, not a failure to open.
    handle = _open_checking_splits(table, storage_options, progress, check=False)
    return handle.validate()


def gc(
    table: str,
    *,
    retention: timedelta = timedelta(days=7),
    keep_versions: int = 2,
    min_manifest_age: timedelta = timedelta(hours=1),
    dry_run: bool = False,
    storage_options: StorageOptions = None,
    progress: ProgressCallback | None = None,
) -> GcReport:
    """Delete expired old states and manifests no kept state references.

    Args:
        table: the table URI.
        retention: old states younger than this are kept.
        keep_versions: old states always kept besides the current one.
        min_manifest_age: unreferenced manifests younger than this are kept
            (a writer may be about to commit a state that uses them).
        dry_run: report what would be deleted; delete nothing.
        storage_options: options of the store.
    """
    from indextables.avrostate import collect_garbage

    options = _state_options(retention, keep_versions, min_manifest_age)
    counter = _counter(progress, "objects deleted", "delete")
    handle = _open_observed(table, storage_options, counter)
    _check_gc_writable(handle)
    return collect_garbage(handle.store, options=options, dry_run=dry_run)


def _check_gc_writable(handle: Table) -> None:
    """GC deletes log objects: like purge and compact, only under a writer protocol we support."""
    from indextables.protocol import check_writable

    check_writable(handle.metadata_snapshot().protocol, path=handle.uri)


def gc_plan(
    table: str,
    *,
    retention: timedelta = timedelta(days=7),
    keep_versions: int = 2,
    min_manifest_age: timedelta = timedelta(hours=1),
    storage_options: StorageOptions = None,
) -> tuple[str, ...]:
    """Every key :func:`gc` with these options would delete now, sorted; deletes nothing."""
    from indextables.avrostate import collect_garbage

    options = _state_options(retention, keep_versions, min_manifest_age)
    handle = _open(table, storage_options=storage_options)
    _check_gc_writable(handle)
    overlay = RecordingStore(handle.store)
    collect_garbage(overlay, options=options)
    return overlay.deleted_keys


def _state_options(
    retention: timedelta, keep_versions: int, min_manifest_age: timedelta
) -> StateOptions:
    from indextables.avrostate import StateOptions

    return StateOptions(
        retention_versions=keep_versions,
        retention_hours=retention.total_seconds() / 3600,
        gc_safety_hours=min_manifest_age.total_seconds() / 3600,
    )


def _hours(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds() / 3600
