"""Planning shared by ``itp.count`` and ``itp.aggregate``: which splits, and where they run.

The options, the ``where`` translation, the search validation, the placement
thresholds (``spark.indextables.search.mode`` / ``localMaxSplits``) and the
version pinning are those of ``itp.search`` (:mod:`.localsearch`). The
difference: an answer from the index must be exact, not a superset, so the
plan also records whether every ``where`` conjunct was translated, and each
split's partition values are decided (true, false, or undecidable) rather
than only pruned.

Small plans run in the driver (splits not on local disk fetched in parallel);
larger ones run as Spark tasks, one per group of splits, under a job
description that names the table (Spark's progress bar shows it).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from indextables.pyspark.datasource import FORMAT, IndexTablesDataSource, make_reader, table_schema
from indextables.pyspark.errors import OptionError
from indextables.pyspark.localsearch import (
    parse_placement,
    pinned_read_options,
    search_read_options,
)
from indextables.pyspark.sparktypes import arrow_schema, arrow_types
from indextables.search.options import ReadOptions, parse_read
from indextables.search.query.conditions import Condition, translate_predicate
from indextables.search.query.filters import may_match_file
from indextables.search.query.indexexact import partition_holds, where_conjuncts
from indextables.search.query.partitionprune import partition_predicate
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.plan import single_value_columns, stat_fields, view_fields
from indextables.search.read.splitreader import SplitEntry
from indextables.search.schema.mapping import FieldSpec, specs_from_doc_mapping
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.livesplits import LiveSplit
from indextables.search.table.tableaccess import load_view, open_table_store
from pyspark.sql.types import DataType, StructType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_LOG = logging.getLogger(__name__)
_SPLITS_PER_TASK = 8
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PlannedSplit:
    """A split that may hold matching rows.

    Attributes:
        entry: what a task needs to read it.
        num_records: its row count from the log (None when the log has none).
        decided: True when every partition condition surely holds on it;
            None when one cannot be decided from the partition values.
    """

    entry: SplitEntry
    num_records: int | None
    decided: bool | None


@dataclass(frozen=True, slots=True)
class IndexPlan:
    """One count or aggregation, planned against a pinned table version.

    Attributes:
        uri: the table URI.
        options: the read options pinned to ``version`` (for a fallback read).
        read: the parsed read options (cache settings).
        version: the table version answered.
        schema: the table's Spark schema.
        partition_columns: the partition columns.
        fields: every field of the table's doc mappings, by lowercase name.
        search: the search options.
        conditions: the translated ``where`` conjuncts on data columns.
        exact_where: True when every ``where`` conjunct was translated.
        splits: the splits left after pruning.
        local: True to run in the driver, False as Spark tasks.
    """

    uri: str
    options: Mapping[str, str]
    read: ReadOptions
    version: int
    schema: StructType
    partition_columns: tuple[str, ...]
    fields: Mapping[str, FieldSpec]
    search: SearchSpec
    conditions: tuple[Condition, ...]
    exact_where: bool
    splits: tuple[PlannedSplit, ...]
    local: bool

    def spark_frame(self, spark: SparkSession, where: str | None) -> DataFrame:
        """The same rows through the normal read path (the fallback)."""
        frame = spark.read.format(FORMAT).options(**self.options).load()
        return frame.where(where) if where else frame


def time_travel(
    options: Mapping[str, Any] | None, version: int | None, timestamp: Any
) -> dict[str, str]:
    """``options`` with ``version``/``timestamp`` as ``versionAsOf``/``timestampAsOf``.

    ``timestamp`` is epoch milliseconds, an ISO-8601 string or a datetime.

    Raises:
        OptionError: both given, or one that contradicts the options.
    """
    out = {str(k): str(v) for k, v in (options or {}).items()}
    if version is not None and timestamp is not None:
        raise OptionError("give version= or timestamp=, not both")
    keys = {k.lower() for k in out}
    if (version is not None or timestamp is not None) and keys & {"versionasof", "timestampasof"}:
        raise OptionError("version=/timestamp= and options versionAsOf/timestampAsOf both given")
    if version is not None:
        out["versionAsOf"] = str(int(version))
    if timestamp is not None:
        out["timestampAsOf"] = (
            timestamp.isoformat() if isinstance(timestamp, datetime) else str(timestamp)
        )
    return out


def plan(
    path: str,
    *,
    where: str | None,
    query: str | None,
    textsearch: Mapping[str, str] | None,
    fieldmatch: Mapping[str, str] | None,
    options: Mapping[str, Any] | None,
    version: int | None,
    timestamp: Any,
) -> IndexPlan:
    """Plan a count or aggregation of the rows a search with these arguments returns.

    Raises:
        OptionError, QuerySyntaxError, FieldKindError, NotATableError: as ``itp.search``.
    """
    traveled = time_travel(options, version, timestamp)
    read_options = search_read_options(path, query, textsearch, fieldmatch, traveled)
    placement = parse_placement(read_options)
    source = IndexTablesDataSource(read_options)
    view = source.planning_view() if where else source.view()
    schema = table_schema(view)
    reader = make_reader(read_options, view, schema)  # validates the search options
    conditions = translate_predicate(where, arrow_schema(schema)) if where else ()
    exact = not where or len(conditions) == where_conjuncts(where)
    types = arrow_types(schema)
    partitions = {c.lower() for c in view.partition_columns}
    on_partitions = tuple(c for c in conditions if c.column.lower() in partitions)
    splits = _planned_splits(reader, view.partition_columns, on_partitions, conditions, types)
    local = placement.mode == "local" or (
        placement.mode == "auto" and len(splits) <= placement.local_max_splits
    )
    return IndexPlan(
        uri=view.uri,
        options=pinned_read_options(read_options, view.version),
        read=parse_read(read_options),
        version=view.version,
        schema=schema,
        partition_columns=view.partition_columns,
        fields=view_fields(reader.view),
        search=reader.search,
        conditions=tuple(c for c in conditions if c.column.lower() not in partitions),
        exact_where=exact,
        splits=splits,
        local=local,
    )


def _planned_splits(
    reader: Any,
    partition_columns: Sequence[str],
    on_partitions: Sequence[Condition],
    conditions: Sequence[Condition],
    types: Mapping[str, pa.DataType],
) -> tuple[PlannedSplit, ...]:
    view = reader.view
    part_types = {c.lower(): types[c.lower()] for c in partition_columns if c.lower() in types}
    if view.files_loaded:
        live: Sequence[LiveSplit] = view.splits
    else:
        live = load_view(
            view.uri,
            reader.options,
            version=view.version,
            partition_filter=partition_predicate(on_partitions, partition_columns, part_types),
        ).splits
    fields = stat_fields(view)
    singles = single_value_columns(arrow_schema(reader.schema))
    out: list[PlannedSplit] = []
    for split in live:
        decided = _decide(split, on_partitions, part_types)
        if decided is False:
            continue
        if not may_match_file(
            conditions,
            partition_values=split.partition_values,
            min_values=split.min_values,
            max_values=split.max_values,
            fields=fields,
            single_columns=singles,
            partition_types=part_types,
        ):
            continue
        out.append(PlannedSplit(split.entry, split.num_records, decided))
    return tuple(out)


def _decide(
    split: LiveSplit, conditions: Sequence[Condition], types: Mapping[str, DataType]
) -> bool | None:
    values = {k.lower(): v for k, v in split.partition_values.items()}
    found: bool | None = True
    for condition in conditions:
        column = condition.column.lower()
        holds = partition_holds(condition, values.get(column), types.get(column))
        if holds is False:
            return False
        if holds is None:
            found = None
    return found


def split_fields(entry: SplitEntry) -> dict[str, FieldSpec]:
    """The fields of one split's doc mapping, by lowercase name."""
    return specs_from_doc_mapping(entry.doc_mapping_json) if entry.doc_mapping_json else {}


SplitFn = Callable[[str, SplitEntry], T]


def run_splits(spark: SparkSession, index_plan: IndexPlan, fn: SplitFn[T], *, what: str) -> list[T]:
    """``fn(directory, entry)`` for every planned split, in the driver or as Spark tasks.

    ``fn`` must be picklable (a module-level function or a partial of one) for
    distributed plans; exceptions it raises fail the call.
    """
    entries = [s.entry for s in index_plan.splits]
    if not entries:
        return []
    if index_plan.local:
        return list(_run_local(index_plan, entries, fn, what))
    return _run_tasks(spark, index_plan, entries, fn, what)


def _run_local(
    index_plan: IndexPlan, entries: Sequence[SplitEntry], fn: SplitFn[T], what: str
) -> Iterator[T]:
    cache = SplitCache(index_plan.read.cache_dir, index_plan.read.cache_max_bytes)
    refs = [e.ref for e in entries]
    uri, options = index_plan.uri, index_plan.options
    with cache.directories(uri, refs, lambda: open_table_store(uri, options)) as directory:
        for i, entry in enumerate(entries):
            yield cache.use(
                uri,
                entry.ref,
                lambda: open_table_store(uri, options),
                functools.partial(_apply, fn, entry=entry),
                directory=directory(i),
            )
            if len(entries) >= 10 and (i + 1) % max(1, len(entries) // 10) == 0:
                _LOG.info("indextables %s of %s: %d/%d splits", what, uri, i + 1, len(entries))


def _run_tasks(
    spark: SparkSession,
    index_plan: IndexPlan,
    entries: Sequence[SplitEntry],
    fn: SplitFn[T],
    what: str,
) -> list[T]:
    groups = [
        tuple(entries[i : i + _SPLITS_PER_TASK]) for i in range(0, len(entries), _SPLITS_PER_TASK)
    ]
    task = functools.partial(_task, index_plan.uri, dict(index_plan.options), index_plan.read, fn)
    context = spark.sparkContext
    description = context.getLocalProperty("spark.job.description")
    context.setJobDescription(
        f"indextables {what} of {index_plan.uri} v{index_plan.version}: {len(entries)} splits"
    )
    try:
        results: list[list[T]] = context.parallelize(groups, len(groups)).map(task).collect()
    finally:
        context.setLocalProperty("spark.job.description", description)  # type: ignore[arg-type]
    return [r for group in results for r in group]


def _task(
    uri: str,
    options: Mapping[str, str],
    read: ReadOptions,
    fn: SplitFn[T],
    entries: Sequence[SplitEntry],
) -> list[T]:
    store = open_table_store(uri, options)
    cache = SplitCache(read.cache_dir, read.cache_max_bytes)
    return [
        cache.use(uri, entry.ref, lambda: store, functools.partial(_apply, fn, entry=entry))
        for entry in entries
    ]


def _apply(fn: SplitFn[T], directory: str, *, entry: SplitEntry) -> T:
    return fn(directory, entry)
