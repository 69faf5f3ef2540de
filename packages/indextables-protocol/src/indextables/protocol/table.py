"""``Table``: open, create, read, commit, time travel and maintain a table.

Example:
    >>> table = create_table("memory://docs", schema=SCHEMA)  # doctest: +SKIP
    >>> version = table.commit(adds=[add])                    # doctest: +SKIP
    >>> table.snapshot().num_files                            # doctest: +SKIP
    1
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from indextables.protocol.actions import (
    Action,
    AddAction,
    FileFormat,
    MetadataAction,
    RemoveAction,
    SkipAction,
)
from indextables.protocol.commit import run_commit
from indextables.protocol.config import TableConfig
from indextables.protocol.discovery import load_state_format, open_store
from indextables.protocol.errors import (
    CommitConflictError,
    InvalidPredicateError,
    ObjectExistsError,
    ProtocolError,
    TableExistsError,
    VersionNotFoundError,
)
from indextables.protocol.history import (
    Changes,
    HistoryEntry,
    changes_between,
    commit_times,
    history_of,
)
from indextables.protocol.logreplay import version_key
from indextables.protocol.maintenance.checkpointing import checkpoint as _checkpoint
from indextables.protocol.maintenance.checkpointing import compact as _compact
from indextables.protocol.maintenance.checkpointing import describe_state as _describe_state
from indextables.protocol.maintenance.partitions import drop_partitions as _drop_partitions
from indextables.protocol.maintenance.purge import purge as _purge
from indextables.protocol.maintenance.purge import truncate_time_travel as _truncate_time_travel
from indextables.protocol.maintenance.repair import repair as _repair
from indextables.protocol.maintenance.results import (
    CheckpointResult,
    DescribeStateResult,
    DropPartitionsResult,
    PurgeResult,
    RepairResult,
    TruncateResult,
    ValidateResult,
)
from indextables.protocol.maintenance.validate import validate as _validate
from indextables.protocol.metrics import emit
from indextables.protocol.predicates import MatchNothing, Predicate, parse_predicate
from indextables.protocol.protocolcheck import new_table_protocol
from indextables.protocol.schemadedup import configuration_with_registry, deduplicate_adds
from indextables.protocol.skips import SkipTracker
from indextables.protocol.snapshot import Snapshot, SnapshotReader
from indextables.protocol.state import FileEntry
from indextables.protocol.stateformat import StateFormat
from indextables.protocol.statewrite import write_state_for
from indextables.protocol.store import ObjectStore
from indextables.protocol.versionfile import encode_version_file

__all__ = ["Table", "create_table", "open_table"]

_LOG = logging.getLogger(__name__)

Mode = Literal["append", "overwrite"]
FilterLike = Predicate | str | None


def _now_ms() -> int:
    return int(time.time() * 1000)


def _predicate(value: FilterLike) -> Predicate | None:
    return parse_predicate(value) if isinstance(value, str) else value


def _resolve(
    uri: str,
    storage_options: Mapping[str, Any] | None,
    store: ObjectStore | None,
    state_format: StateFormat | None,
) -> tuple[ObjectStore, StateFormat]:
    return store or open_store(uri, storage_options), state_format or load_state_format()


def open_table(
    uri: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    config: TableConfig | None = None,
    store: ObjectStore | None = None,
    state_format: StateFormat | None = None,
    check: bool = True,
) -> Table:
    """Open the table at ``uri``.

    The store and state format come from installed packages (entry points);
    ``store``/``state_format`` override them. With ``check`` (the default)
    the log is read here, so a missing table or an unreadable protocol fails
    now. Without it nothing is read until the first call that needs the log,
    which raises the same errors. Callers that take a snapshot right away save
    a listing of the log and a read of the state (a round trip each on object
    stores).

    Raises:
        PluginNotFoundError: a needed package is not installed (named in the message).
        TableNotFoundError: no transaction log at ``uri`` (only with ``check``).
    """
    resolved_store, fmt = _resolve(uri, storage_options, store, state_format)
    table = Table(resolved_store, fmt, uri=uri, config=config)
    if check:
        # Fail early (no table, unreadable protocol) without reading the file list.
        table.reader.load(partition_filter=MatchNothing())
    return table


def create_table(
    uri: str,
    *,
    schema: str | Mapping[str, Any],
    partition_columns: Sequence[str] = (),
    configuration: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    config: TableConfig | None = None,
    store: ObjectStore | None = None,
    state_format: StateFormat | None = None,
) -> Table:
    """Create a table: version 0 with the protocol and metadata, put-if-absent.

    Args:
        uri: the table root.
        schema: the Spark schema JSON (text or the parsed object).
        partition_columns: partition column names, in order.
        configuration: table properties (``metaData.configuration``).

    Raises:
        TableExistsError: a log already exists there.
    """
    resolved_store, fmt = _resolve(uri, storage_options, store, state_format)
    table = Table(resolved_store, fmt, uri=uri, config=config)
    if table.reader.layout().latest >= 0:
        raise TableExistsError(f"{uri}: a table already exists here")
    schema_text = schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))
    metadata = MetadataAction(
        str(uuid.uuid4()),
        FileFormat(),
        schema_text,
        tuple(partition_columns),
        dict(configuration or {}),
        created_time=_now_ms(),
    )
    data = encode_version_file([new_table_protocol(), metadata], compress=table.config.compress)
    try:
        resolved_store.put_if_absent(version_key(0), data)
    except ObjectExistsError:
        raise TableExistsError(f"{uri}: another writer created the table first") from None
    return table


def _as_add(item: AddAction | FileEntry) -> AddAction:
    return item if isinstance(item, AddAction) else AddAction.from_file_entry(item)


def _path_of(item: str | RemoveAction | FileEntry) -> str:
    return item if isinstance(item, str) else item.path


def _rearranged(item: str | RemoveAction | FileEntry) -> bool:
    """Whether a remove given to ``commit`` says it changes no data (a remove action with
    ``dataChange=false``: a MERGE SPLITS or purge rewrite); paths and file entries are
    plain removals."""
    return isinstance(item, RemoveAction) and not item.data_change


@dataclass(frozen=True, slots=True)
class _CommitPlan:
    adds: tuple[AddAction, ...]
    removes: tuple[str, ...]
    registry: Mapping[str, str]
    metadata: MetadataAction | None
    schema: tuple[str, str] | None = None  # (the schema read, the schema to commit)
    rearranged: frozenset[str] = frozenset()  # removes committed with dataChange=false


class Table:
    """A handle on one table: reads snapshots, commits, runs maintenance.

    Handles are cheap and hold no lock; any number of them, in any number of
    processes, may commit to the same table concurrently.
    """

    def __init__(
        self,
        store: ObjectStore,
        state_format: StateFormat,
        *,
        uri: str | None = None,
        config: TableConfig | None = None,
    ) -> None:
        self.store = store
        self.state_format = state_format
        self.uri = uri or store.uri
        self.config = config or TableConfig()
        self.reader = SnapshotReader(store, state_format, ttl_seconds=self.config.cache_ttl_seconds)
        self.skips = SkipTracker(self)

    def with_store(self, store: ObjectStore) -> Table:
        """This table read and written through ``store`` (an observing or recording
        wrapper of the same objects), with the same state format, URI and settings."""
        return Table(store, self.state_format, uri=self.uri, config=self.config)

    def __repr__(self) -> str:
        return f"Table({self.uri!r})"

    # ---------------------------------------------------------------- reading

    @property
    def version(self) -> int:
        """The current table version."""
        return self.reader.layout().latest

    def snapshot(
        self,
        version: int | None = None,
        *,
        timestamp: int | float | datetime | None = None,
        partition_filter: FilterLike = None,
        stats_filter: Predicate | None = None,
    ) -> Snapshot:
        """The table as of ``version``, or of ``timestamp``, else the latest version.

        Args:
            version: a table version.
            timestamp: epoch milliseconds or a datetime: the newest version
                committed at or before it.
            partition_filter: a predicate or SQL-like string on partition
                columns; ``files`` then holds only matching entries.
            stats_filter: a predicate on the files' min/max statistics;
                ``files`` then lacks the entries whose statistics prove that no
                row matches (see :mod:`indextables.protocol.statsfilter`;
                :class:`~indextables.protocol.predicates.NumberCompare` compares
                numeric columns). Avro states evaluate it before building entries.

        Raises:
            VersionNotFoundError: the version or timestamp is not reachable.
            InvalidPredicateError: the filter names a non-partition column.
        """
        if stats_filter is not None and not isinstance(stats_filter, Predicate):
            raise InvalidPredicateError(
                f"stats_filter={stats_filter!r} must be a predicate object "
                "(indextables.protocol.predicates, e.g. NumberCompare), not "
                f"{type(stats_filter).__name__}; strings are taken by partition_filter only"
            )
        if timestamp is not None:
            if version is not None:
                raise ValueError("give a version or a timestamp, not both")
            version = self.version_at(timestamp)
        flt = _predicate(partition_filter)
        snap = self.reader.load(version, partition_filter=flt, stats_filter=stats_filter)
        if flt is not None:
            unknown = flt.columns() - set(snap.partition_columns)
            if unknown:
                raise InvalidPredicateError(
                    f"{self.uri}: {sorted(unknown)} are not partition columns "
                    f"{list(snap.partition_columns)}"
                )
        return snap

    def metadata_snapshot(
        self, version: int | None = None, *, timestamp: int | float | datetime | None = None
    ) -> Snapshot:
        """The snapshot of ``version`` (or ``timestamp``, else the latest) without its files.

        ``files`` is empty; version, protocol, metadata and schema registry are
        those of :meth:`snapshot`. No manifest of the state is read, so this is
        cheap on tables of many files (a schema lookup, a protocol check).

        Raises:
            VersionNotFoundError: the version or timestamp is not reachable.
        """
        if timestamp is not None:
            if version is not None:
                raise ValueError("give a version or a timestamp, not both")
            version = self.version_at(timestamp)
        return self.reader.load(version, partition_filter=MatchNothing())

    def history(self) -> list[HistoryEntry]:
        """One entry per retained version, oldest first."""
        return history_of(self.reader)

    def version_at(self, timestamp: int | float | datetime) -> int:
        """The newest version committed at or before ``timestamp``.

        Raises:
            VersionNotFoundError: every retained version is newer.
        """
        millis = (
            int(timestamp.timestamp() * 1000) if isinstance(timestamp, datetime) else int(timestamp)
        )
        times = commit_times(self.reader)
        candidates = [version for version, stamp in times.items() if stamp <= millis]
        if not candidates:
            raise VersionNotFoundError(f"{self.uri}: no retained version at or before {millis}")
        return max(candidates)

    def changes_since(
        self, version: int | None = None, *, timestamp: int | float | datetime | None = None
    ) -> Changes:
        """Files added and removed after ``version`` (or after ``timestamp``) up to now."""
        if timestamp is not None:
            version = self.version_at(timestamp)
        return changes_between(self.reader, -1 if version is None else version)

    def invalidate_cache(self) -> None:
        """Forget cached snapshots and states."""
        self.reader.invalidate()

    # ---------------------------------------------------------------- writing

    def commit(
        self,
        adds: Iterable[AddAction | FileEntry] = (),
        removes: Iterable[str | RemoveAction | FileEntry] = (),
        *,
        mode: Mode = "append",
        metadata: MetadataAction | None = None,
        read_version: int | None = None,
        schema_string: str | None = None,
    ) -> int:
        """Commit adds and removes as one new version and return it.

        ``mode="overwrite"`` also removes every file live in the snapshot the
        writer read (``read_version``, else the latest at call time). Every
        removed file must still be live when the commit lands: if a concurrent
        commit removed one, this raises rather than dropping data silently.

        Each remove is written with ``dataChange=true`` unless it is given as a
        :class:`RemoveAction` with ``data_change=False`` (a MERGE SPLITS or purge
        rewrite, whose adds carry ``dataChange=false`` too, as Delta's OPTIMIZE).

        ``schema_string`` (schema evolution: the writer added columns) commits a
        ``metaData`` action with that schema in the same version, the rest of the
        metadata as it is when the commit lands. The schema must still be the one
        of ``read_version`` (or equal ``schema_string`` already): a concurrent
        schema change is a conflict, never overwritten.

        Raises:
            CommitConflictError: lost every race, or a removed file is gone.
            UnsupportedProtocolError: the table needs a newer writer.
        """
        plan = self._plan(adds, removes, mode=mode, metadata=metadata, read_version=read_version)
        if schema_string is not None:
            if metadata is not None:
                raise ValueError("give metadata or schema_string, not both")
            read = self.reader.load(read_version, partition_filter=MatchNothing())
            plan = replace(plan, schema=(read.metadata.schema_string, schema_string))
        outcome = run_commit(
            self.reader,
            lambda snap: self._actions(snap, plan),
            policy=self.config.retry,
            compress=self.config.compress,
        )
        self.reader.invalidate()
        self._after_commit(outcome.version, outcome.actions)
        return outcome.version

    def commit_actions(self, actions: Sequence[Action]) -> int:
        """Commit prepared actions as they are (no conflict checks beyond the race)."""
        outcome = run_commit(
            self.reader,
            lambda snap: actions,
            policy=self.config.retry,
            compress=self.config.compress,
        )
        self.reader.invalidate()
        self._after_commit(outcome.version, outcome.actions)
        return outcome.version

    def _plan(
        self,
        adds: Iterable[AddAction | FileEntry],
        removes: Iterable[str | RemoveAction | FileEntry],
        *,
        mode: Mode,
        metadata: MetadataAction | None,
        read_version: int | None,
    ) -> _CommitPlan:
        if mode not in ("append", "overwrite"):
            raise ValueError(f"mode must be 'append' or 'overwrite', not {mode!r}")
        given = list(removes)
        paths = [_path_of(r) for r in given]
        rearranged = {_path_of(r) for r in given if _rearranged(r)}
        rearranged -= {_path_of(r) for r in given if not _rearranged(r)}
        if mode == "overwrite":
            replaced = [f.path for f in self.reader.load(read_version).files]
            paths += replaced
            rearranged -= set(replaced)
        new_adds, registry = deduplicate_adds([_as_add(a) for a in adds], {})
        return _CommitPlan(
            tuple(new_adds),
            tuple(dict.fromkeys(paths)),
            registry,
            metadata,
            rearranged=frozenset(rearranged),
        )

    def _actions(self, snap: Snapshot, plan: _CommitPlan) -> list[Action]:
        live = {f.path: f for f in snap.files}
        gone = [p for p in plan.removes if p not in live]
        if gone:
            raise CommitConflictError(
                f"{self.uri}: cannot remove {gone[:5]}: not live at version {snap.version} "
                "(a concurrent commit removed them)",
                version=snap.version + 1,
            )
        removing = set(plan.removes)
        duplicates = [a.path for a in plan.adds if a.path in live and a.path not in removing]
        if duplicates:
            raise CommitConflictError(
                f"{self.uri}: cannot add {duplicates[:5]}: already live at version {snap.version}",
                version=snap.version + 1,
            )
        actions: list[Action] = []
        metadata = plan.metadata
        if plan.schema is not None:
            metadata = self._schema_metadata(snap, *plan.schema)
        missing = {r: j for r, j in plan.registry.items() if r not in snap.schema_registry}
        if missing:
            base = metadata or snap.metadata
            metadata = replace(
                base, configuration=configuration_with_registry(base.configuration, missing)
            )
        if metadata is not None:
            actions.append(metadata)
        now = _now_ms()
        for path in plan.removes:
            entry = live[path]
            actions.append(
                RemoveAction(
                    path,
                    path not in plan.rearranged,
                    deletion_timestamp=now,
                    extended_file_metadata=True,
                    partition_values=dict(entry.partition_values),
                    size=entry.size,
                )
            )
        actions.extend(plan.adds)
        return actions

    def _schema_metadata(self, snap: Snapshot, read: str, wanted: str) -> MetadataAction | None:
        """``snap``'s metadata with schema ``wanted`` (None when it has it already)."""
        current = snap.metadata.schema_string
        if current == wanted:
            return None
        if current != read:
            raise CommitConflictError(
                f"{self.uri}: the table's schema changed at version {snap.version} while "
                "this write added columns to the schema it read; write again",
                version=snap.version + 1,
            )
        return replace(snap.metadata, schema_string=wanted)

    def _after_commit(self, version: int, actions: Sequence[Action]) -> None:
        """Write a state when due; a failure here never undoes the commit."""
        if not self.config.checkpoint_enabled:
            return
        adds = [a for a in actions if isinstance(a, AddAction)]
        removed = any(isinstance(a, RemoveAction) for a in actions)
        merge = removed and bool(adds) and not any(a.data_change for a in adds)
        due = version % self.config.checkpoint_interval == 0
        if not (due or (merge and self.config.compaction_after_merge)):
            return
        try:
            self._write_state(version, force_compaction=merge)
        except (ProtocolError, OSError) as error:
            # The commit is durable; the next checkpoint will cover this version. Say so:
            # a table whose states keep failing reads ever more version files.
            emit("indextables.state.write.failures", 1, table=self.uri)
            _LOG.warning(
                "%s: version %d is committed but its state was not written (%s: %s); "
                "the next checkpoint will cover it",
                self.uri,
                version,
                type(error).__name__,
                error,
            )

    def _write_state(self, version: int, *, force_compaction: bool = False) -> Any:
        layout = self.reader.layout()
        snap = self.reader.load(version, layout=layout)
        return write_state_for(self.reader, snap, layout=layout, force_compaction=force_compaction)

    # ---------------------------------------------------------------- skips

    def record_skip(
        self,
        path: str,
        *,
        reason: str,
        operation: str = "merge",
        cooldown_hours: float | None = None,
    ) -> int:
        """Record that ``operation`` skipped ``path``; see :class:`SkipTracker`."""
        return self.skips.record(
            path, reason=reason, operation=operation, cooldown_hours=cooldown_hours
        )

    def skipped_files(self) -> list[SkipAction]:
        """Every skip action in the retained version files, oldest first."""
        return self.skips.all()

    # ---------------------------------------------------------------- maintenance

    def checkpoint(self) -> CheckpointResult:
        """Write a state at the current version (CHECKPOINT INDEXTABLES)."""
        return _checkpoint(self)

    def compact(self) -> CheckpointResult:
        """Rewrite the state without tombstones (COMPACT INDEXTABLES)."""
        return _compact(self)

    def describe_state(self) -> DescribeStateResult:
        """Describe the current state (DESCRIBE INDEXTABLES STATE)."""
        return _describe_state(self)

    def purge(
        self,
        *,
        older_than: float | timedelta | None = None,
        log_retention: float | timedelta | None = None,
        dry_run: bool = False,
    ) -> PurgeResult:
        """Delete orphaned splits, old version files, old states, unreferenced manifests."""
        return _purge(self, older_than=older_than, log_retention=log_retention, dry_run=dry_run)

    def truncate_time_travel(self, *, dry_run: bool = False) -> TruncateResult:
        """Checkpoint, then delete every older version file, checkpoint and state."""
        return _truncate_time_travel(self, dry_run=dry_run)

    def drop_partitions(self, partition_filter: Predicate | str) -> DropPartitionsResult:
        """Remove every live file whose partition values match the filter."""
        return _drop_partitions(self, _predicate(partition_filter))

    def repair(
        self,
        target_uri: str,
        *,
        storage_options: Mapping[str, Any] | None = None,
        target_store: ObjectStore | None = None,
    ) -> RepairResult:
        """Write a fresh log at ``target_uri`` for the live split files."""
        return _repair(self, target_uri, storage_options=storage_options, target_store=target_store)

    def validate(self) -> ValidateResult:
        """Check every invariant of the current snapshot; see ValidateResult."""
        return _validate(self)
