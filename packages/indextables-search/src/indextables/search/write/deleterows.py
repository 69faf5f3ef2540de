"""DELETE: remove the rows a condition matches, with Tantivy's own delete bitsets.

Planning (:func:`plan_deletes`) prunes the live splits by partition values and
statistics as a read does, then searches each remaining split with the
engine's own query (``query=``, the index-answerable conjuncts of ``where=``) and
applies ``where`` exactly to the hits' rows: the result is, per split, the
(segment, doc id) of every live document to delete.

Committing (:func:`commit_deletes`) rewrites each such split as a new bundle:
its files as stored, plus a new ``.del`` file per touched segment (existing
deletes kept and OR-ed) and an updated ``meta.json``
(:mod:`~indextables.search.splits.segmentdeletes`). Nothing is re-indexed; the
Arrow copy of the rows is kept as it is (its rows keep their row keys, and
readers reach them only through live documents), so a deleted row's bytes stay
in the split until a rewrite (MERGE SPLITS). A split whose every live document
is deleted is only removed. One version holds every remove and add
(``dataChange=true``), each add with ``numRecords`` reduced, the old statistics
(still a valid superset) and ``deleteOpstamp`` set; the protocol's optimistic
commit retries lost races and raises its ``CommitConflictError`` when a split
read here was removed meanwhile (as MERGE SPLITS). Rows appended by a
concurrent commit are not deleted. Companion splits are refused: their rows
live in the source table's Parquet files.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.protocol.actions import AddAction, RemoveAction
from indextables.search import oplog
from indextables.search.errors import ArgumentError, CompanionError
from indextables.search.options import parse_read
from indextables.search.query.conditions import translate_where
from indextables.search.query.searchoptions import SearchSpec, validate, whole_second_dates
from indextables.search.query.whereeval import WhereFilter, compile_where
from indextables.search.query.wheregrammar import parse_where
from indextables.search.read.plan import plan_splits, view_fields
from indextables.search.read.splitreader import matching_addresses, open_split, split_traits
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.scratchdirs import scratch_directory
from indextables.search.splits.splitcache import SplitCache
from indextables.search.splits.splitfetch import download
from indextables.search.table.livesplits import LiveSplit
from indextables.search.table.tableaccess import (
    TableView,
    load_view,
    open_table_store,
    table_handle,
)
from indextables.search.write.splitwriter import split_path, upload_split

__all__ = [
    "DeletePlan",
    "DeleteResult",
    "SplitDelete",
    "commit_deletes",
    "delete_actions",
    "delete_rows",
    "discard_uncommitted",
    "plan_deletes",
]

_log = logging.getLogger(__name__)
_COMPANION_KEY = "indextables.companion.enabled"


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """What :func:`delete_rows` did (or, with ``dry_run``, would do).

    Attributes:
        rows_deleted: rows the condition matched.
        splits_changed: splits rewritten or removed.
        version: the version committed; None when nothing was committed (nothing
            matched, or a dry run).
    """

    rows_deleted: int
    splits_changed: int
    version: int | None


@dataclass(frozen=True, slots=True)
class SplitDelete:
    """The documents to delete in one split.

    Attributes:
        split: the live split.
        docs: segment id (as ``meta.json`` writes it) -> doc ids to delete.
        alive: the split's live documents before the delete.
    """

    split: LiveSplit
    docs: Mapping[str, tuple[int, ...]]
    alive: int

    @property
    def deleted(self) -> int:
        """How many documents of the split are deleted."""
        return sum(len(d) for d in self.docs.values())


@dataclass(frozen=True, slots=True)
class DeletePlan:
    """What a delete removes, per split, as of the table version it read.

    Attributes:
        uri: the table.
        version: the version planned against.
        partition_columns: the table's partition columns, in order.
        splits: the splits holding matched rows (none when nothing matched).
    """

    uri: str
    version: int
    partition_columns: tuple[str, ...]
    splits: tuple[SplitDelete, ...]

    @property
    def rows(self) -> int:
        """How many rows the plan deletes."""
        return sum(s.deleted for s in self.splits)


def plan_deletes(
    view: TableView,
    *,
    where: str | None = None,
    query: str | None = None,
    options: Mapping[str, str] | None = None,
) -> DeletePlan:
    """The live documents of ``view`` that ``where`` and ``query`` both match.

    ``where`` is a SQL condition with Spark's semantics (as ``SearchTable.search``),
    ``query`` Tantivy query syntax; at least one is needed.

    Raises:
        ArgumentError: neither ``where`` nor ``query``, or one of the wrong type.
        CompanionError: a companion index, or a companion split among the matches.
        QuerySyntaxError, FieldKindError: a condition or query that does not parse.
    """
    for name, value in (("where", where), ("query", query)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ArgumentError(f"{name}={value!r} must be a non-empty string")
    if where is None and query is None:
        raise ArgumentError(
            "a delete needs where= or query= (to delete every row, overwrite the table)"
        )
    opts = dict(options or {})
    if view.configuration.get(_COMPANION_KEY) == "true":
        raise CompanionError(
            f"{view.uri!r} is a companion index: its rows live in the source table; delete "
            "them there and sync the companion"
        )
    schema = arrow_schema(view.schema_json)
    search = SearchSpec(query or None, {}, {})
    if query is not None:
        validate(
            search,
            view_fields(view),
            whole_dates=whole_second_dates(schema),
            partition_columns=view.partition_columns,
        )
    tree = parse_where(where) if where else None
    exact = compile_where(where, schema, tree=tree) if where else None
    conditions = translate_where(where, schema, tree=tree).conditions if where else ()
    entries = plan_splits(view, opts, conditions)
    read_schema = _read_schema(schema, exact)
    by_path = {e.ref.path for e in entries}
    live = {s.path: s for s in view.splits if s.path in by_path}
    read = parse_read(opts)
    cache = SplitCache(read.cache_directory, read.cache_max_bytes)

    def open_store() -> Any:
        return open_table_store(view.uri, opts)

    found: list[SplitDelete] = []
    for entry in entries:

        def matches(directory: str, entry: Any = entry) -> tuple[dict[str, tuple[int, ...]], int]:
            addresses = matching_addresses(
                directory,
                entry,
                read_schema,
                search=search,
                conditions=conditions,
                where=exact,
            )
            segments = split_traits(directory).segments
            docs: dict[str, list[int]] = {}
            for address in addresses:
                docs.setdefault(segments[address.segment_ord], []).append(address.doc)
            alive = open_split(directory)[1].num_docs
            return {k: tuple(v) for k, v in docs.items()}, alive

        docs, alive = cache.use(view.uri, entry.ref, open_store, matches)
        oplog.note(splits_read=1)
        if docs:
            found.append(SplitDelete(live[entry.ref.path], docs, alive))
    return DeletePlan(view.uri, view.version, view.partition_columns, tuple(found))


def _read_schema(schema: pa.Schema, exact: WhereFilter | None) -> pa.Schema:
    """The columns the exact filter reads (one column when it reads none: a batch
    without columns has no rows)."""
    if exact is None:
        return pa.schema([])
    wanted = {c.lower() for c in exact.columns}
    fields = [f for f in schema if f.name.lower() in wanted]
    return pa.schema(fields or [schema.field(0)])


def commit_deletes(plan: DeletePlan, *, options: Mapping[str, str] | None = None) -> int | None:
    """Rewrite the plan's splits with their new delete bitsets and commit them in one
    version (see the module's text); None when the plan deletes nothing.

    Raises:
        CommitConflictError: a split the plan read was removed by another commit, or
            every attempt lost the race for a new version.
    """
    if not plan.splits:
        return None
    opts = dict(options or {})
    store = open_table_store(plan.uri, opts)
    adds: list[AddAction] = []
    try:
        removes = delete_actions(store, plan, adds)
        version = int(table_handle(plan.uri, opts).commit(adds=adds, removes=removes))
    except BaseException:
        discard_uncommitted(store, adds)
        raise
    oplog.note(splits_written=len(adds), bytes_written=sum(a.size for a in adds))
    return version


def delete_actions(store: Any, plan: DeletePlan, adds: list[AddAction]) -> list[RemoveAction]:
    """Upload the plan's rewritten splits, appending their adds to ``adds`` as they are
    uploaded (so a caller can remove them if anything fails); return the removes of
    every split the plan changes. Nothing is committed."""
    for change in plan.splits:
        if change.deleted < change.alive:
            adds.append(_rewritten(store, plan, change))
    return [
        RemoveAction(
            path=c.split.path,
            data_change=True,
            partition_values=dict(c.split.partition_values),
            size=c.split.size,
        )
        for c in plan.splits
    ]


def discard_uncommitted(store: Any, adds: Sequence[AddAction]) -> None:
    """Delete the uploaded, uncommitted splits of ``adds`` (best effort: nothing
    references them, and the error that stopped the commit matters more)."""
    for add in adds:
        try:
            store.delete(add.path)
        except Exception:
            _log.warning("could not remove the uncommitted split %s", add.path)


def _rewritten(store: Any, plan: DeletePlan, change: SplitDelete) -> AddAction:
    """The split with its new delete files, uploaded as a new split; its AddAction."""
    from indextables.search.splits.segmentdeletes import add_deletes

    split = change.split
    work = scratch_directory("write")
    try:
        directory = os.path.join(work, "split")
        os.mkdir(directory)
        download(store, split.entry.ref, directory, as_stored=True)
        done = add_deletes(directory, change.docs)
        values = dict(split.partition_values)
        path = split_path(
            plan.partition_columns, tuple(values.get(c) for c in plan.partition_columns)
        )
        tags = split.entry.split_tags
        return upload_split(
            store,
            directory,
            path,
            partition_values=values,
            data_change=True,
            min_values=split.min_values,
            max_values=split.max_values,
            num_records=done.alive,
            num_merge_ops=split.num_merge_ops,
            doc_mapping_json=split.doc_mapping_json,
            uncompressed_size_bytes=sum(
                os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)
            ),
            split_tags=tags or None,
            delete_opstamp=done.opstamp,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _delete_fields(result: DeleteResult) -> dict[str, Any]:
    """The log line's fields of a delete."""
    return {
        "version": result.version,
        "rows": result.rows_deleted,
        "splits_changed": result.splits_changed,
    }


@oplog.logged(_log, "delete", fields=_delete_fields)
def delete_rows(
    uri: str,
    *,
    where: str | None = None,
    query: str | None = None,
    options: Mapping[str, Any] | None = None,
    dry_run: bool = False,
) -> DeleteResult:
    """Delete the rows of the table at ``uri`` that ``where`` and ``query`` both match.

    Args:
        uri: the table's location.
        where: a SQL condition (Spark's semantics, as ``SearchTable.search``'s).
        query: Tantivy query syntax over the table's fields.
        options: store credentials and read options, as for ``open_table``.
        dry_run: find the rows and splits, commit nothing.

    A delete matching nothing commits nothing (``version`` None). See the module's
    text for how the rows are deleted. Logs one INFO line (``oplog``: the table,
    the version committed, rows deleted, splits changed, splits read, splits and
    bytes written), whose metrics ``last_metrics()`` returns.

    Raises:
        ArgumentError: neither ``where`` nor ``query``, or an argument of the wrong type.
        CompanionError: a companion index or split.
        CommitConflictError: a concurrent commit removed a split the delete read.
        NotATableError: nothing at ``uri`` is a table.
    """
    if not isinstance(uri, str) or not uri:
        raise ArgumentError(f"uri={uri!r} must be a non-empty string")
    if options is not None and not isinstance(options, Mapping):
        raise ArgumentError(f"options={options!r} must be a mapping of option keys to values")
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    view = load_view(uri, opts)
    plan = plan_deletes(view, where=where, query=query, options=opts)
    oplog.note_fields(read_version=plan.version, dry_run=str(dry_run).lower())
    version = None if dry_run else commit_deletes(plan, options=opts)
    return DeleteResult(plan.rows, len(plan.splits), version)
