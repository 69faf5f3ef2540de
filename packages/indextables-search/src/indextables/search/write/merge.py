"""MERGE SPLITS: bin-pack small splits of one partition into bigger ones.

Planning (driver side) groups live splits by partition values and doc mapping
and packs them, smallest first, into groups of at most ``target_size`` bytes;
only groups of two or more splits are merged. Each group is one task (a Spark
task through ``indextables.pyspark.writing.mergetasks``, or a step in this process):
it fetches the group's splits and bundles their segments, unchanged, as one
new split (:mod:`.segmentmerge`: no row is re-indexed), its statistics
combined from the sources' (:mod:`.mergestats`). A group that cannot be
merged that way (a source without an Arrow copy of its rows, such as a split
the reference wrote) has its rows read and re-indexed into one new split
instead (writer heap: ``merge.heapSize``, else ``indexWriter.heapSize``).
The driver then commits
every merged add (``dataChange=false``) with the removes of its sources in
one version, or one version per ``merge.batchSize`` groups when that is set.
A group whose task fails is recorded as a ``mergeskip`` with a cooldown
instead of failing the job.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.protocol.actions import AddAction, RemoveAction
from indextables.search import oplog
from indextables.search.errors import CompanionError
from indextables.search.options import (
    DEFAULT_DOCSTORE_BLOCK_SIZE,
    DEFAULT_FEED,
    PREFIX,
    lower_keys,
    parse_heap_size,
    parse_int,
    parse_read,
    parse_write,
)
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, read_split
from indextables.search.schema.mapping import FieldSpec, specs_from_doc_mapping
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
from indextables.search.write.mergestats import merged_bounds, merged_tags
from indextables.search.write.purgedeletes import purge_splits
from indextables.search.write.segmentmerge import SegmentMergeRefused, merge_segments
from indextables.search.write.splitwriter import (
    SplitWriter,
    split_path,
    to_reference_form,
    upload_split,
)

DEFAULT_TARGET_SIZE = 1 << 30
SKIP_COOLDOWN_HOURS = 24.0
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MergeGroup:
    """Splits of one partition (and one doc mapping) to merge into one."""

    splits: tuple[LiveSplit, ...]

    @property
    def size(self) -> int:
        """Total bytes of the group's splits."""
        return sum(s.size for s in self.splits)


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    """What one merge task did: a merged add, or the reason it failed."""

    group: MergeGroup
    add: AddAction | None
    error: str | None = None


def plan_groups(
    splits: Sequence[LiveSplit],
    *,
    target_size: int,
    where: str | None = None,
    skipped: frozenset[str] = frozenset(),
    max_groups: int | None = None,
    max_sources: int | None = None,
) -> list[MergeGroup]:
    """Bin-pack splits per (partition values, doc mapping), smallest first.

    Groups come oldest first (by the oldest split's modification time), so
    ``max_groups`` (MAX DEST SPLITS) keeps the oldest groups; ``max_sources``
    (MAX SOURCE SPLITS PER MERGE) caps the splits of one group.
    """
    predicate = _predicate(where)
    buckets: dict[str, list[LiveSplit]] = {}
    for split in splits:
        values = split.partition_values
        if split.path in skipped or (predicate and not predicate.matches(values)):
            continue
        key = json.dumps([sorted(values.items()), split.doc_mapping_json])
        buckets.setdefault(key, []).append(split)
    groups = [g for key in sorted(buckets) for g in _pack(buckets[key], target_size, max_sources)]
    groups.sort(key=lambda g: min((s.modification_time, s.path) for s in g.splits))
    return groups[:max_groups] if max_groups is not None else groups


def _pack(
    splits: list[LiveSplit], target_size: int, max_sources: int | None = None
) -> Iterator[MergeGroup]:
    current: list[LiveSplit] = []
    for split in sorted(splits, key=lambda s: (s.size, s.path)):
        full = max_sources is not None and len(current) >= max_sources
        if current and (full or sum(s.size for s in current) + split.size > target_size):
            if len(current) > 1:
                yield MergeGroup(tuple(current))
            current = []
        current.append(split)
    if len(current) > 1:
        yield MergeGroup(tuple(current))


def _predicate(where: str | None) -> Any:
    if not where:
        return None
    from indextables.protocol.predicates import parse_predicate

    return parse_predicate(where)


def merge_group(
    uri: str,
    options: Mapping[str, str],
    schema_json: str,
    partition_columns: Sequence[str],
    group: MergeGroup,
) -> MergeOutcome:
    """Merge the group's splits into one split (runs in a task); see the module's text."""
    try:
        return MergeOutcome(group, _merge(uri, options, schema_json, partition_columns, group))
    except Exception as error:
        return MergeOutcome(group, None, f"{type(error).__name__}: {error}")


def _merge(
    uri: str,
    options: Mapping[str, str],
    schema_json: str,
    partition_columns: Sequence[str],
    group: MergeGroup,
) -> AddAction:
    first = group.splits[0].entry
    specs = tuple(specs_from_doc_mapping(first.doc_mapping_json or "[]").values())
    store = open_table_store(uri, options)
    merged = _merge_segments(store, specs, partition_columns, group)
    if merged is not None:
        return merged
    return _reindex(uri, options, schema_json, partition_columns, group, specs, store)


def _merge_segments(
    store: Any, specs: tuple[FieldSpec, ...], partition_columns: Sequence[str], group: MergeGroup
) -> AddAction | None:
    """The group merged segment by segment and uploaded; None when it cannot be merged so."""
    work = scratch_directory("merge")
    try:
        sources = []
        for number, split in enumerate(group.splits):
            directory = os.path.join(work, f"source-{number}")
            os.mkdir(directory)
            download(store, split.entry.ref, directory, as_stored=True)
            sources.append(directory)
        target = os.path.join(work, "merged")
        os.mkdir(target)
        try:
            num_records = merge_segments(sources, target)
        except SegmentMergeRefused as refused:
            _log.info("merge group of %s re-indexes its rows: %s", group.splits[0].path, refused)
            return None
        to_reference_form(target)  # sources written before splits carried SSTables
        values = dict(group.splits[0].partition_values)
        path = split_path(partition_columns, tuple(values.get(c) for c in partition_columns))
        low, high = merged_bounds(
            specs, [s.min_values for s in group.splits], [s.max_values for s in group.splits]
        )
        return upload_split(
            store,
            target,
            path,
            partition_values=values,
            data_change=False,
            min_values=low,
            max_values=high,
            num_records=num_records,
            num_merge_ops=max(s.num_merge_ops for s in group.splits) + 1,
            doc_mapping_json=group.splits[0].doc_mapping_json,
            uncompressed_size_bytes=sum(
                os.path.getsize(os.path.join(target, n)) for n in os.listdir(target)
            ),
            split_tags=merged_tags(specs, [s.entry.split_tags for s in group.splits]),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _reindex(
    uri: str,
    options: Mapping[str, str],
    schema_json: str,
    partition_columns: Sequence[str],
    group: MergeGroup,
    specs: tuple[FieldSpec, ...],
    store: Any,
) -> AddAction:
    """The group's rows read and written as one new split (re-indexed)."""
    schema = arrow_schema(schema_json)
    read = parse_read(options)
    cache = SplitCache(read.cache_directory, read.cache_max_bytes)
    settings = merge_settings(options)
    writer = SplitWriter(
        store,
        specs,
        tuple(partition_columns),
        heap_size=settings.heap_size,
        batch_size=settings.batch_size,
        docstore_block_size=settings.docstore_block_size,
        feed=settings.feed,
    )
    writer.write(_rows(store, uri, cache, group.splits, schema))
    (add,) = writer.finish()
    merges = max(s.num_merge_ops for s in group.splits)
    return dataclasses.replace(add, data_change=False, num_merge_ops=merges + 1)


MERGE_HEAP_KEY = PREFIX + "merge.heapsize"
MERGE_BATCH_KEY = PREFIX + "merge.batchsize"


@dataclass(frozen=True, slots=True)
class MergeSettings:
    """How a merge writes and schedules its groups.

    Attributes:
        heap_size: the merged split's Tantivy writer heap: ``merge.heapSize``,
            else ``indexWriter.heapSize``, else the writer's default.
        batch_size: rows handed to Tantivy per step (``indexWriter.batchSize``).
        groups_per_job: ``merge.batchSize``: merge groups per Spark job, each
            job committed on its own (None = every group in one job and commit).
        docstore_block_size: the doc-store block size of a re-indexed merged
            split (``indexWriter.docStoreBlockSize``, else the writer's default;
            a merge by segments keeps each source's blocks as they are).
        feed: how a re-indexed merge's rows go into Tantivy (``indexWriter.feed``).
    """

    heap_size: int
    batch_size: int
    groups_per_job: int | None
    docstore_block_size: int = DEFAULT_DOCSTORE_BLOCK_SIZE
    feed: str = DEFAULT_FEED


def merge_settings(options: Mapping[str, str]) -> MergeSettings:
    """The merge's writer and scheduling settings from ``options``.

    Raises:
        OptionError: a bad size or count (checked on the driver, before any task).
    """
    opts = lower_keys(options)
    write = parse_write(opts)
    heap = write.heap_size
    if MERGE_HEAP_KEY in opts:
        heap = parse_heap_size(MERGE_HEAP_KEY, opts[MERGE_HEAP_KEY])
    groups = (
        parse_int(MERGE_BATCH_KEY, opts[MERGE_BATCH_KEY], minimum=1)
        if MERGE_BATCH_KEY in opts
        else None
    )
    return MergeSettings(heap, write.batch_size, groups, write.docstore_block_size, feed=write.feed)


def _rows(
    store: Any, uri: str, cache: SplitCache, splits: Sequence[LiveSplit], schema: pa.Schema
) -> Iterator[Any]:
    for split in splits:
        entry: SplitEntry = split.entry
        yield from cache.batches(
            uri,
            entry.ref,
            lambda: store,
            functools.partial(
                read_split, entry=entry, schema=schema, search=SearchSpec(), conditions=()
            ),
        )


#: Runs merge groups somewhere (this process, Spark tasks): ``run(uri, options, view, groups)``.
Runner = Callable[[str, Mapping[str, str], TableView, Sequence[MergeGroup]], list[MergeOutcome]]


def _merge_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    """The log line's fields of a MERGE SPLITS result row."""
    return {
        "splits_read": result.get("merged_files", 0),
        "splits_written": result.get("new_files", 0),
        "bytes_written": result.get("new_size", 0),
        "status": result.get("status"),
        "merge_groups": result.get("merge_groups"),
    }


@oplog.logged(_log, "merge splits", fields=_merge_fields)
def merge_table(
    uri: str,
    *,
    run: Runner | None = None,
    options: Mapping[str, str] | None = None,
    target_size: int = DEFAULT_TARGET_SIZE,
    where: str | None = None,
    max_groups: int | None = None,
    max_sources: int | None = None,
    purge_deletes: bool = False,
    min_deleted_fraction: float | None = None,
) -> dict[str, Any]:
    """Run MERGE SPLITS on the table at ``uri``; return the result row.

    ``run`` merges each batch of groups (default: :func:`run_in_process`; the Spark
    adapter runs them as tasks). ``purge_deletes`` (PURGE DELETES) also rewrites,
    each on its own, every split holding deleted documents that no group takes
    (with ``min_deleted_fraction``, only those whose deleted share of documents
    is at least that): see :mod:`.purgedeletes`.

    Raises:
        CompanionError: the table is a companion index.
    """
    runner = run or run_in_process
    opts = dict(options or {})
    settings = merge_settings(opts)
    table = table_handle(uri, opts)
    view = load_view(uri, opts)
    if view.configuration.get("indextables.companion.enabled") == "true":
        raise CompanionError(
            f"MERGE SPLITS does not merge the splits of companion index {uri!r}; run BUILD "
            "INDEXTABLES COMPANION at a new location with a larger TARGET INPUT SIZE instead"
        )
    skipped = frozenset(s.path for s in table.skipped_files())
    groups = plan_groups(
        view.splits,
        target_size=target_size,
        where=where,
        skipped=skipped,
        max_groups=max_groups,
        max_sources=max_sources,
    )
    if purge_deletes:
        held = {s.path for g in groups for s in g.splits}
        alone = purge_splits(
            uri,
            opts,
            view.splits,
            held=held,
            where=where,
            skipped=skipped,
            min_deleted_fraction=min_deleted_fraction,
        )
        groups += [MergeGroup((s,)) for s in alone]
    result: dict[str, Any] = {"table_path": uri, "merge_groups": len(groups)}
    if not groups:
        return {**result, "status": "NO_ACTION", "merged_files": 0, "new_files": 0}
    step = settings.groups_per_job or len(groups)
    outcomes: list[MergeOutcome] = []
    done: list[MergeOutcome] = []
    for start in range(0, len(groups), step):
        batch = runner(uri, opts, view, groups[start : start + step])
        outcomes.extend(batch)
        done.extend(commit_outcomes(table, batch))
    return {
        **result,
        "status": "SUCCESS" if len(done) == len(outcomes) else "PARTIAL",
        "merged_files": sum(len(o.group.splits) for o in done),
        "new_files": len(done),
        "skipped_groups": len(outcomes) - len(done),
        "original_size": sum(o.group.size for o in done),
        "new_size": sum(o.add.size for o in done if o.add is not None),
    }


def run_in_process(
    uri: str, options: Mapping[str, str], view: TableView, groups: Sequence[MergeGroup]
) -> list[MergeOutcome]:
    """Merge ``groups`` one after the other in this process."""
    args = (uri, options, view.schema_json, view.partition_columns)
    return [merge_group(*args, group) for group in groups]


def commit_outcomes(table: Any, outcomes: Sequence[MergeOutcome]) -> list[MergeOutcome]:
    """Record failed groups as merge skips; commit the merged adds with their removes.

    Returns:
        The outcomes that produced a merged split.
    """
    done = [o for o in outcomes if o.add is not None]
    for failed in (o for o in outcomes if o.add is None):
        for split in failed.group.splits:
            table.record_skip(
                split.path,
                reason=failed.error or "merge failed",
                operation="merge",
                cooldown_hours=SKIP_COOLDOWN_HOURS,
            )
    if done:
        removes = [
            RemoveAction(
                path=s.path,
                data_change=False,
                partition_values=dict(s.partition_values),
                size=s.size,
            )
            for o in done
            for s in o.group.splits
        ]
        table.commit(adds=[o.add for o in done if o.add is not None], removes=removes)
    return done
