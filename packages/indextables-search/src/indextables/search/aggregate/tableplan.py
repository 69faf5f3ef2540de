"""Planning a count or aggregation of one table snapshot, and running it split by split.

Shared by ``SearchTable`` and the Spark adapter's ``itp.count``/``itp.aggregate``.
An answer from the index must be exact, not a superset, so the plan records whether every
``where`` conjunct was translated, and each split's partition conditions are
decided (true, false, or undecidable from the log) rather than only pruned.
By default splits run in this process, on the calling thread when the first
split was quick, else on a small shared thread pool (Tantivy releases the
GIL while it searches and aggregates; splits not on local disk are fetched
in the background meanwhile); a caller may pass its own
:class:`SplitRunner` (the Spark adapter runs large plans as Spark tasks).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import pyarrow as pa

from indextables.search import oplog
from indextables.search.options import ReadOptions
from indextables.search.query.conditions import Condition, translate_where
from indextables.search.query.filters import file_matcher
from indextables.search.query.indexexact import partition_holds
from indextables.search.query.partitionprune import partition_predicate
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.plan import (
    partition_types,
    single_value_columns,
    stat_fields,
    view_fields,
)
from indextables.search.read.splitreader import SplitEntry
from indextables.search.schema.mapping import FieldSpec
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.livesplits import LiveSplits
from indextables.search.table.tableaccess import TableView, load_view, open_table_store

__all__ = [
    "PlannedSplit",
    "SplitRunner",
    "TablePlan",
    "plan_table",
    "run_group",
    "run_local",
    "run_splits",
]

# Splits searched at once (the machine's cores, at most 4), as a local search does.
THREADS = min(4, os.cpu_count() or 1)
# A run whose first split took less than this runs its other splits on the calling thread too.
INLINE_SECONDS = 0.002
T = TypeVar("T")
_LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PlannedSplit:
    """A split that may hold matching rows.

    Attributes:
        entry: what reading it needs.
        num_records: its row count from the log (None when the log has none).
        decided: True when every partition condition surely holds on it;
            None when one cannot be decided from its partition values.
    """

    entry: SplitEntry
    num_records: int | None
    decided: bool | None


@dataclass(frozen=True, slots=True)
class TablePlan:
    """One count or aggregation planned against a snapshot.

    Attributes:
        uri: the table URI.
        options: the read options (store credentials).
        read: the parsed read options (cache settings).
        schema: the table's Arrow schema.
        partition_columns: the partition columns.
        fields: the fields of the table's doc mappings, by lowercase name.
        search: the search options.
        conditions: the translated ``where`` conjuncts on data columns.
        exact_where: True when every ``where`` conjunct was translated.
        splits: the splits left after pruning.
    """

    uri: str
    options: Mapping[str, str]
    read: ReadOptions
    schema: pa.Schema
    partition_columns: tuple[str, ...]
    fields: Mapping[str, FieldSpec]
    search: SearchSpec
    conditions: tuple[Condition, ...]
    exact_where: bool
    splits: tuple[PlannedSplit, ...]

    @property
    def decided(self) -> bool:
        """True when the index may answer: every conjunct translated and decided per split."""
        return self.exact_where and all(s.decided is not None for s in self.splits)


def plan_table(
    view: TableView,
    options: Mapping[str, str],
    read: ReadOptions,
    *,
    search: SearchSpec,
    where: str | None,
) -> TablePlan:
    """Plan a count or aggregation of the rows of ``view`` that ``search`` and ``where`` keep.

    ``search`` must be validated already; ``where`` is only translated here
    (its exact evaluation, when the index cannot answer, is the caller's).
    """
    schema = _schema(view)
    translation = translate_where(where, schema) if where else None
    conditions = translation.conditions if translation else ()
    exact = translation is None or translation.complete
    partitions = {c.lower() for c in view.partition_columns}
    on_partitions = tuple(c for c in conditions if c.column.lower() in partitions)
    return TablePlan(
        uri=view.uri,
        options=dict(options),
        read=read,
        schema=schema,
        partition_columns=tuple(view.partition_columns),
        fields=view_fields(view),
        search=search,
        conditions=tuple(c for c in conditions if c.column.lower() not in partitions),
        exact_where=exact,
        splits=_planned_splits(
            _loaded(view, options, on_partitions), schema, conditions, on_partitions
        ),
    )


def _loaded(
    view: TableView, options: Mapping[str, str], on_partitions: Sequence[Condition]
) -> TableView:
    """``view`` with its splits: a planning view's are read now, pruned by partition."""
    if view.files_loaded:
        return view
    partition = partition_predicate(on_partitions, view.partition_columns, partition_types(view))
    return load_view(view.uri, options, version=view.version, partition_filter=partition)


def _schema(view: TableView) -> pa.Schema:
    from indextables.search.schema.schemajson import arrow_schema

    return arrow_schema(view.schema_json)


def _planned_splits(
    view: TableView,
    schema: pa.Schema,
    conditions: Sequence[Condition],
    on_partitions: Sequence[Condition],
) -> tuple[PlannedSplit, ...]:
    types = partition_types(view)
    matcher = file_matcher(
        conditions,
        partition_columns=view.partition_columns,
        fields=stat_fields(view),
        single_columns=single_value_columns(schema),
        partition_types=types,
    )
    live = view.splits
    if isinstance(live, LiveSplits):
        # Column-wise: no entry is built for a pruned split.
        kept = live.kept(matcher.partition_ok, matcher.stats)
        values = live.partition_values
        records = live.num_records
        entries = live.entries(kept)
        verdicts: dict[int, bool | None] = {}
        out = []
        for i, entry in zip(kept, entries, strict=True):
            found = verdicts.get(id(values[i]), _UNSET)
            if found is _UNSET:
                found = verdicts[id(values[i])] = _decide(values[i], on_partitions, types)
            if found is not False:
                out.append(PlannedSplit(entry, records[i], found))
        return tuple(out)
    planned = []
    for split in live:
        if not matcher.may_match(split.partition_values, split.min_values, split.max_values):
            continue
        decided = _decide(split.partition_values, on_partitions, types)
        if decided is not False:
            planned.append(PlannedSplit(split.entry, split.num_records, decided))
    return tuple(planned)


_UNSET: Any = object()


def _decide(
    partition_values: Mapping[str, str | None],
    conditions: Sequence[Condition],
    types: Mapping[str, pa.DataType],
) -> bool | None:
    values = {k.lower(): v for k, v in partition_values.items()}
    found: bool | None = True
    for condition in conditions:
        column = condition.column.lower()
        holds = partition_holds(condition, values.get(column), types.get(column))
        if holds is False:
            return False
        if holds is None:
            found = None
    return found


SplitFn = Callable[[str, SplitEntry], T]


class SplitRunner(Protocol):
    """Runs ``fn(directory, entry)`` over every planned split, results in plan order.

    :func:`run_local` (threads in this process) is the default; the Spark adapter
    passes one that runs groups of splits as Spark tasks (each task calls
    :func:`run_group`). ``fn`` is picklable (a module-level function or a partial
    of one) so that a runner may ship it to other processes.
    """

    def __call__(self, plan: TablePlan, fn: SplitFn[T], /) -> list[T]: ...


def run_splits(plan: TablePlan, fn: SplitFn[T], *, runner: SplitRunner | None = None) -> list[T]:
    """``fn(directory, entry)`` for every planned split, in order, with ``runner``.

    ``runner`` defaults to :func:`run_local`. Exceptions ``fn`` raises fail the call.
    """
    if not plan.splits:
        return []
    return (runner or run_local)(plan, fn)


def run_local(plan: TablePlan, fn: SplitFn[T], /) -> list[T]:
    """``fn(directory, entry)`` for every planned split, in order.

    The first split runs on the calling thread; when it took longer than
    :data:`INLINE_SECONDS` (an aggregation over many rows, a heavy query) the
    others run on the process's shared pool of :data:`THREADS` threads
    (Tantivy releases the GIL), else on this thread too: a warm count spends
    ~20 us in Tantivy per split, less than handing a split to a thread
    costs. Splits not on local disk are fetched in the background meanwhile.
    Exceptions ``fn`` raises fail the call (the splits not started are not read).
    """
    entries = [s.entry for s in plan.splits]
    if not entries:
        return []
    cache = SplitCache(plan.read.cache_directory, plan.read.cache_max_bytes)
    uri, options = plan.uri, plan.options
    op = oplog.current()

    def open_store() -> Any:
        return open_table_store(uri, options)

    with cache.directories(uri, [e.ref for e in entries], open_store) as directory:

        def one(i: int) -> T:
            entry = entries[i]
            call = functools.partial(_apply, fn, entry=entry)
            with oplog.timed("fetch"):
                found = directory(i)
            began = time.perf_counter()
            result = cache.use(uri, entry.ref, open_store, call, directory=found)
            if op is not None:
                op.add(splits_read=1)
                op.split(entry.ref.path, seconds=time.perf_counter() - began)
            return result

        total = len(entries)
        start = time.perf_counter()
        results = [_progress(one(0), 0, total, uri)]
        if total < 2 or THREADS < 2 or time.perf_counter() - start < INLINE_SECONDS:
            results += [_progress(one(i), i, total, uri) for i in range(1, total)]
            return results
        pool = split_pool()
        futures = [pool.submit(oplog.in_context(one), i) for i in range(1, total)]
        try:
            results += [_progress(f.result(), i, total, uri) for i, f in enumerate(futures, 1)]
            return results
        finally:
            for future in futures:
                future.cancel()


def split_pool() -> ThreadPoolExecutor:
    """The process's pool of :data:`THREADS` threads for split work, created on first use.

    Shared by every call (creating a pool per call cost more than a warm count);
    a forked child creates its own (the parent's threads do not exist there).
    """
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="indextables-split")
            _pool_pid = os.getpid()
        return _pool


_pool: ThreadPoolExecutor | None = None
_pool_pid = -1
_pool_lock = threading.Lock()


def _progress(result: T, i: int, total: int, uri: str) -> T:
    """``result``, every tenth of a long run (10 splits or more) logged at DEBUG (the
    operation's one INFO line follows at its end: :mod:`indextables.search.oplog`)."""
    if total >= 10 and (i + 1) % max(1, total // 10) == 0:
        _LOG.debug("indextables: %d/%d splits of %s", i + 1, total, uri)
    return result


def run_group(
    uri: str,
    options: Mapping[str, str],
    read: ReadOptions,
    fn: SplitFn[T],
    entries: Sequence[SplitEntry],
) -> list[T]:
    """``fn(directory, entry)`` for each of ``entries`` one after the other (a remote task).

    Everything it takes is picklable, so a runner can call it in another
    process: the store is opened there and the splits cached in that
    process's cache directory.
    """
    store = open_table_store(uri, options)
    cache = SplitCache(read.cache_directory, read.cache_max_bytes)
    return [
        cache.use(uri, entry.ref, lambda: store, functools.partial(_apply, fn, entry=entry))
        for entry in entries
    ]


def _apply(fn: SplitFn[T], directory: str, *, entry: SplitEntry) -> T:
    return fn(directory, entry)
