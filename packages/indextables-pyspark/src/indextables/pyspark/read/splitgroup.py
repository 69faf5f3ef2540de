"""The rows of a group of splits, in split order, with several splits read at once.

Shared by the interactive search (``itp.search`` in the driver) and the read
tasks of a selective ``spark.read``; the reading, ordering and read-ahead are the
engine's (:mod:`indextables.search.read.splitbatches`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import pyarrow as pa

from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.companion.sync import companion_root
from indextables.search.options import ReadOptions
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitbatches import split_batches
from indextables.search.read.splitreader import SplitEntry
from indextables.search.table.tableaccess import TableView
from pyspark.sql.types import StructType


class SplitSearch(Protocol):
    """What a group read needs of the reader (``IndexTablesReader``)."""

    view: TableView
    schema: StructType
    options: dict[str, str]
    read_options: ReadOptions
    search: SearchSpec


def group_batches(
    reader: SplitSearch,
    entries: Sequence[SplitEntry],
    *,
    conditions: tuple[Condition, ...],
    open_store: Callable[[], Any],
    parallel: bool = True,
    row_cap: int | None = None,
    stop_at: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Every matching batch of ``entries``, in order.

    Splits not on disk are fetched in the background. With ``parallel``, up
    to ``splitorder.READ_THREADS`` splits are searched at once. A ``stop_at`` read
    (a limit without a where clause) goes split by split and stops mid-split.

    Raises:
        RowCapExceeded: more than ``row_cap`` rows (at most ``row_cap`` rows past
            it per split in flight are read).
    """
    return split_batches(
        reader.view.uri,
        entries,
        open_store=open_store,
        read=reader.read_options,
        schema=arrow_schema(reader.schema),
        search=reader.search,
        conditions=conditions,
        companion_root=companion_root(reader.view.configuration, reader.options),
        options=reader.options,
        parallel=parallel,
        row_cap=row_cap,
        stop_at=stop_at,
    )
