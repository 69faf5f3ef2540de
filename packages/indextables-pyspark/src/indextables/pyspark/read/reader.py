"""The batch reader: planning (snapshot, pruning, task grouping) and task execution.

Two platform constraints shape this module (see docs/pyspark.md):

- A reader class that defines ``pushFilters`` makes every read fail while
  ``spark.sql.python.filterPushdown.enabled`` is false. The method is
  therefore attached through a descriptor whose bound object reports the
  base class's function to Spark's check, so both settings work.
- Spark 4.3.0 may run a planned read again for another query. Every pushed
  filter is handed back to Spark, and :mod:`indextables.pyspark.read.planguard`
  tells a task whether its plan is being reused; a reused plan's first task
  re-reads the whole current snapshot and the others return nothing.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from indextables.pyspark.read.planguard import is_reused, new_token
from indextables.pyspark.read.sparkfilters import translate_all
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.pyspark.read.splitgroup import group_batches
from indextables.search.options import ReadOptions
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec, validate, whole_second_dates
from indextables.search.read.plan import (
    partition_types,
    plan_splits,
    view_doc_mappings,
    view_fields,
)
from indextables.search.read.splitreader import SplitEntry
from indextables.search.schema.mapping import (
    FieldKind,
)
from indextables.search.table.tableaccess import TableView, load_view, open_table_store
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReadTask(InputPartition):
    """One read task: a group of splits and how to read them.

    Attributes:
        splits: the splits this task reads.
        token: the planned read's token (see planguard).
        planned_at: when the read was planned (epoch seconds).
        index: the task's number in the plan.
        selective: the read is a search (few rows per split): its splits are
            searched several at once.
    """

    splits: tuple[SplitEntry, ...]
    token: str
    planned_at: float
    index: int = 0
    selective: bool = False


class _BoundPush:
    """``reader.pushFilters`` as Spark sees it (see the module docstring)."""

    def __init__(self, reader: IndexTablesReader) -> None:
        self._reader = reader
        # Spark compares this to DataSourceReader.pushFilters to decide whether
        # pushdown is "implemented"; with pushdown disabled that must look false.
        self.__func__ = DataSourceReader.pushFilters

    def __call__(self, filters: list[Filter]) -> Iterable[Filter]:
        return self._reader.push_filters(filters)


class _PushFilters:
    def __get__(self, reader: Any, owner: type | None = None) -> Any:
        if reader is None:
            return DataSourceReader.pushFilters
        _note_pushdown_setting(reader, sys._getframe(1))
        return _BoundPush(reader)


PUSHDOWN_OFF = (
    "indextables: spark.sql.python.filterPushdown.enabled is false, so this read gets no "
    "filters: every split is downloaded and read, and Spark filters the rows afterwards "
    "(no partition, statistics or index pruning). itp.register(spark) turns it on."
)


def _note_pushdown_setting(reader: Any, frame: Any) -> None:
    """Remember a plan made with pushdown off, for the warning in ``partitions()``.

    PySpark's planning worker reads the setting into its local ``enable_pushdown``
    just before it looks up ``reader.pushFilters``; a data source sees no session
    settings otherwise. Anywhere else the local is absent and nothing is noted.
    """
    if frame.f_locals.get("enable_pushdown") is False:
        reader.__dict__["_pushdown_off"] = True


class IndexTablesReader(DataSourceReader):
    """Reads one snapshot of an IndexTables table."""

    pushFilters = _PushFilters()

    def __init__(
        self,
        view: TableView,
        schema: StructType,
        *,
        options: Mapping[str, str],
        read_options: ReadOptions,
        search: SearchSpec,
    ) -> None:
        self.view = view
        self.schema = schema
        self.options = dict(options)
        self.read_options = read_options
        self.search = search
        self.conditions: tuple[Condition, ...] = ()
        if not search.is_empty:
            validate(
                search,
                view_fields(view),
                whole_dates=whole_second_dates(arrow_schema(schema)),
                partition_columns=view.partition_columns,
            )

    def __getstate__(self) -> dict[str, Any]:
        # Spark pickles the reader into every task; the split list travels in the
        # tasks' partitions instead, so large tables do not ship it N times.
        state = dict(self.__dict__)
        # The doc mappings stay: planning after unpickling still knows the fields.
        state["view"] = dataclasses.replace(
            self.view,
            splits=(),
            files_loaded=False,
            doc_mappings=tuple(sorted(view_doc_mappings(self.view))),
        )
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @property
    def _partition_types(self) -> dict[str, pa.DataType]:
        """Types of the partition columns, by lowercase name."""
        return partition_types(self.view)

    def push_filters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Keep translatable filters for pruning and Tantivy queries; hand all back to Spark."""
        self.conditions = translate_all(filters)
        yield from filters

    def partitions(self) -> Sequence[ReadTask]:
        """Group the splits that may match the pushed filters into tasks.

        Splits are pruned by partition values and statistics before any is
        built: only the kept ones become task entries. A plan made with filter
        pushdown off logs one warning saying what that costs.
        """
        if self.__dict__.pop("_pushdown_off", False):
            _LOG.warning(PUSHDOWN_OFF)
        kept = plan_splits(self.view, self.options, self.conditions)
        kinds = {k: s.kind for k, s in view_fields(self.view).items()}
        # Pruned splits need no task: a reused plan re-reads the whole snapshot (see read()).
        token, now = new_token(), time.time()
        read = self.read_options
        selective = not self.search.is_empty or self._has_index_query(kinds)
        size = read.selective_splits_per_task if selective else read.splits_per_task
        groups = list(_groups(kept, size)) or [[]]
        return [ReadTask(tuple(g), token, now, i, selective) for i, g in enumerate(groups)]

    def _has_index_query(self, kinds: Mapping[str, FieldKind]) -> bool:
        """True when a pushed filter names an indexed column (it narrows the Tantivy search)."""
        return any(c.column.lower() in kinds for c in self.conditions)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Yield the rows of one task's splits as Arrow batches."""
        assert isinstance(partition, ReadTask)
        splits, conditions = partition.splits, self.conditions
        store = open_table_store(self.view.uri, self.options)
        if is_reused(partition.token, store):
            # A stale plan run again by another query (PySpark 4.3.0): its filters and
            # split list may not be this query's. Task 0 reads the current snapshot in
            # full (Spark re-applies this query's filters); the other tasks read nothing.
            if partition.index != 0:
                return
            splits, conditions = self._current_splits(), ()
        if not splits:
            return
        # A selective task's splits are searched several at once (few rows each);
        # a full read streams them one by one.
        yield from group_batches(
            self,
            splits,
            conditions=conditions,
            open_store=lambda: store,
            parallel=partition.selective and conditions == self.conditions,
        )

    def _current_splits(self) -> tuple[SplitEntry, ...]:
        read = self.read_options
        view = load_view(
            self.view.uri, self.options, version=read.version_as_of, timestamp=read.timestamp_as_of
        )
        return tuple(s.entry for s in view.splits)


def _groups(items: list[SplitEntry], size: int) -> Iterator[list[SplitEntry]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
