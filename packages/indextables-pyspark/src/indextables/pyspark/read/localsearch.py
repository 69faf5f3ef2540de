"""Interactive search: a selective read run in the driver, handed to Spark as a DataFrame.

Every action on a Python data source pays PySpark's planning round trips to
Python workers and its task scheduling, ~300-400 ms here however few rows
match (docs/performance.md). A search that touches a few splits and returns a
few rows is faster done where the user already is: the driver loads the
snapshot, prunes it, searches the splits with the same split cache and split
reader the read tasks use, and returns a DataFrame over the matching rows (a
local relation, which Spark evaluates without Python workers).

When the plan is large (more splits than ``localMaxSplits``) or the result is
(more rows than ``localMaxRows``), the search falls back to the distributed
read with the same options and filters, so the result does not depend on
the path taken. A ``where`` condition is always evaluated by Spark on the
result as well: translated conditions only narrow the search. Either way the
rows are those of the table version current at the call (the distributed
read is pinned to it with ``versionAsOf``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indextables.pyspark.errors import OptionError
from indextables.pyspark.read.arrowframe import arrow_dataframe
from indextables.pyspark.read.datasource import (
    FORMAT,
    IndexTablesDataSource,
    make_reader,
    table_schema,
)
from indextables.pyspark.read.searchargs import SearchArgs
from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.pyspark.read.splitgroup import group_batches
from indextables.search import oplog
from indextables.search.options import PREFIX, lower_keys, parse_int, parse_read
from indextables.search.query.conditions import translate_predicate
from indextables.search.read.splitorder import RowCapExceeded
from indextables.search.table.tableaccess import TableView, load_head, open_table_store

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_LOG = logging.getLogger(__name__)
MODE = PREFIX + "search.mode"
LOCAL_MAX_SPLITS = PREFIX + "search.localmaxsplits"
LOCAL_MAX_ROWS = PREFIX + "search.localmaxrows"
MODES = ("auto", "local", "distributed")


@dataclass(frozen=True, slots=True)
class SearchPlacement:
    """Where a search runs (options ``spark.indextables.search.*``, case-insensitive).

    Attributes:
        mode: ``auto`` (driver when small, else distributed), ``local`` (always
            the driver) or ``distributed`` (always Spark tasks).
        local_max_splits: in ``auto``, the most splits searched in the driver.
        local_max_rows: in ``auto``, the most result rows collected in the driver.
    """

    mode: str = "auto"
    local_max_splits: int = 32
    local_max_rows: int = 100_000


def parse_placement(options: Mapping[str, str]) -> SearchPlacement:
    """Parse the search placement options.

    Raises:
        OptionError: an unknown mode or a limit that is not a positive integer.
    """
    opts = lower_keys(options)
    mode = opts.get(MODE, "auto").strip().lower()
    if mode not in MODES:
        raise OptionError(f"option {MODE}={opts[MODE]!r} must be one of {', '.join(MODES)}")
    defaults = SearchPlacement()
    splits = opts.get(LOCAL_MAX_SPLITS)
    rows = opts.get(LOCAL_MAX_ROWS)
    return SearchPlacement(
        mode=mode,
        local_max_splits=(
            parse_int(LOCAL_MAX_SPLITS, splits, minimum=1)
            if splits is not None
            else defaults.local_max_splits
        ),
        local_max_rows=(
            parse_int(LOCAL_MAX_ROWS, rows, minimum=1)
            if rows is not None
            else defaults.local_max_rows
        ),
    )


@oplog.logged(_LOG, "search", uri="args.path")
def search(spark: SparkSession, args: SearchArgs, *, limit: int | None = None) -> DataFrame:
    """The rows of the table at ``args.path`` matching a search, as a DataFrame.

    Args:
        spark: the session the DataFrame belongs to.
        args: the search (``options`` may hold ``versionAsOf``, store credentials,
            ``spark.indextables.search.mode`` / ``localMaxSplits`` / ``localMaxRows``).
        limit: at most this many rows.

    Returns:
        A DataFrame with the table's schema.

    Raises:
        OptionError: bad options or a ``limit`` below zero.
        QuerySyntaxError: a query Tantivy cannot parse.
        FieldKindError: textsearch/fieldmatch on the wrong kind of column.
        NotATableError: nothing at ``path`` is a table.
    """
    if limit is not None and limit < 0:
        raise OptionError(f"limit={limit} must be >= 0")
    where = args.where
    read_options = args.read_options()
    placement = parse_placement(read_options)
    frame = None
    if placement.mode == "distributed":
        read = parse_read(read_options)
        version = load_head(
            args.path, read_options, version=read.version_as_of, timestamp=read.timestamp_as_of
        ).version
    else:
        source = IndexTablesDataSource(read_options)
        # With a where clause the engine can prune by partition and statistics before
        # building entries (large tables); without one every split is searched anyway.
        view = source.planning_view() if where else source.view()
        version = view.version
        frame = _local(spark, read_options, view, where, limit, placement)
    if frame is None:
        # Pinned to the version searched: both paths answer as of the call.
        frame = (
            spark.read.format(FORMAT).options(**pinned_read_options(read_options, version)).load()
        )
    oplog.note_version(version)
    if where:
        frame = frame.where(where)
    return frame if limit is None else frame.limit(limit)


def pinned_read_options(read_options: dict[str, str], version: int) -> dict[str, str]:
    """``read_options`` reading ``version`` unless they already time-travel."""
    keys = {k.lower() for k in read_options}
    if keys & {"versionasof", "timestampasof"}:
        return read_options
    return {**read_options, "versionAsOf": str(version)}


def _local(
    spark: SparkSession,
    read_options: dict[str, str],
    view: TableView,
    where: str | None,
    limit: int | None,
    placement: SearchPlacement,
) -> DataFrame | None:
    """The search of ``view`` run in this process, or None when it should run distributed."""
    schema = table_schema(view)
    reader = make_reader(read_options, view, schema)
    if where:
        reader.conditions = translate_predicate(where, arrow_schema(schema))
    entries = [entry for task in reader.partitions() for entry in task.splits]
    auto = placement.mode == "auto"
    if auto and len(entries) > placement.local_max_splits:
        return None
    # Without a where clause every row read is a result row, so reading may stop at limit.
    row_cap = placement.local_max_rows if auto else None
    stop_at = limit if limit is not None and not where else None
    try:
        batches = list(
            group_batches(
                reader,
                entries,
                conditions=reader.conditions,
                open_store=lambda: open_table_store(reader.view.uri, reader.options),
                row_cap=row_cap,
                stop_at=stop_at,
            )
        )
    except RowCapExceeded:
        return None
    return arrow_dataframe(spark, batches, schema)
