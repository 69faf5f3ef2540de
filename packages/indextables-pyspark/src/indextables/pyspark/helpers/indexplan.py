"""What ``itp.count`` and ``itp.aggregate`` add to the engine's plan: Spark.

The engine plans a count or aggregation (:mod:`indextables.search.aggregate.tableplan`:
which splits, whether the index answers exactly) and runs it. This module gives
it what only Spark has:

- the options of ``itp.search`` (:mod:`.localsearch`): the search options as
  read options, time travel, the search validation, the version pinning;
- the placement (``spark.indextables.search.mode`` / ``localMaxSplits``): small
  plans run in the driver on the engine's threads, larger ones as Spark tasks,
  one per group of splits, under a job description that names the table
  (Spark's progress bar shows it) -- :class:`SparkTasks`, the engine's runner;
- the fallback when the index cannot answer exactly: Spark's own read of the
  same pinned version (:meth:`IndexPlan.spark_frame`), which accepts ``where``
  strings the engine refuses.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from indextables.pyspark.read.datasource import (
    FORMAT,
    IndexTablesDataSource,
    make_reader,
    table_schema,
)
from indextables.pyspark.read.localsearch import parse_placement, pinned_read_options
from indextables.pyspark.read.searchargs import SearchArgs
from indextables.pyspark.sparkjobs import run_tasks
from indextables.search import oplog
from indextables.search.aggregate.tableplan import (
    SplitFn,
    SplitRunner,
    TablePlan,
    plan_table,
    run_group,
)
from indextables.search.options import parse_read
from indextables.search.read.splitreader import SplitEntry
from pyspark.sql.types import StructType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_LOG = logging.getLogger(__name__)
_SPLITS_PER_TASK = 8
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class IndexPlan:
    """One count or aggregation, planned by the engine against a pinned table version.

    Attributes:
        table: the engine's plan (splits, conditions, exactness).
        options: the read options pinned to ``version`` (for the fallback read).
        version: the table version answered.
        schema: the table's Spark schema.
        local: True to run in the driver, False as Spark tasks.
    """

    table: TablePlan
    options: Mapping[str, str]
    version: int
    schema: StructType
    local: bool

    def spark_frame(self, spark: SparkSession, where: str | None) -> DataFrame:
        """The same rows through Spark's normal read (the fallback)."""
        frame = spark.read.format(FORMAT).options(**self.options).load()
        return frame.where(where) if where else frame

    def runner(self, spark: SparkSession, what: str) -> SplitRunner | None:
        """How the splits run: None (the engine's threads) or as Spark tasks."""
        return None if self.local else SparkTasks(spark, what, self.version)


def plan(args: SearchArgs) -> IndexPlan:
    """Plan a count or aggregation of the rows a search with these arguments returns.

    Raises:
        OptionError, QuerySyntaxError, FieldKindError, NotATableError: as ``itp.search``.
    """
    read_options = args.read_options()
    placement = parse_placement(read_options)
    source = IndexTablesDataSource(read_options)
    view = source.planning_view() if args.where else source.view()
    schema = table_schema(view)
    reader = make_reader(read_options, view, schema)  # validates the search options
    pinned = pinned_read_options(read_options, view.version)
    table = plan_table(
        reader.view, pinned, parse_read(read_options), search=reader.search, where=args.where
    )
    # a planning view (a where) knows only the splits its partition filter kept
    considered = len(view.splits) if view.files_loaded else len(table.splits)
    oplog.note_planned(considered=considered, kept=len(table.splits))
    oplog.note_version(view.version)
    local = placement.mode == "local" or (
        placement.mode == "auto" and len(table.splits) <= placement.local_max_splits
    )
    return IndexPlan(table=table, options=pinned, version=view.version, schema=schema, local=local)


@dataclass(frozen=True)
class SparkTasks:
    """The engine's :class:`~indextables.search.aggregate.tableplan.SplitRunner` on Spark.

    Each task runs a group of splits (:func:`~indextables.search.aggregate.tableplan.run_group`)
    in an executor, as a DataFrame job (:func:`~indextables.pyspark.sparkjobs.run_tasks`, so
    over Spark Connect too); the job is described as ``indextables <what> of <uri> v<version>``
    on a classic session and tagged ``indextables-<what>`` over Connect.
    """

    spark: SparkSession
    what: str
    version: int

    def __call__(self, plan: TablePlan, fn: SplitFn[T], /) -> list[T]:
        entries = [s.entry for s in plan.splits]
        if not entries:
            return []
        groups: list[Sequence[SplitEntry]] = [
            tuple(entries[i : i + _SPLITS_PER_TASK])
            for i in range(0, len(entries), _SPLITS_PER_TASK)
        ]
        task = functools.partial(run_group, plan.uri, dict(plan.options), plan.read, fn)
        _LOG.debug(
            "%s of %s: %d splits as %d Spark tasks", self.what, plan.uri, len(entries), len(groups)
        )
        results = run_tasks(
            self.spark,
            groups,
            task,
            description=(
                f"indextables {self.what} of {plan.uri} v{self.version}: {len(entries)} splits"
            ),
            tag=f"indextables-{self.what}",
        )
        oplog.note(splits_read=len(entries))  # read by the executors: no cache figures
        return [r for group in results for r in group]
