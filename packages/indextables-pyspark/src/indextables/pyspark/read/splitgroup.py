"""The rows of a group of splits, in split order, with several splits read at once.

Shared by the interactive search (``itp.search`` in the driver) and the read
tasks of a selective ``spark.read``; the ordering and read-ahead are the
engine's (:mod:`indextables.search.read.splitorder`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import pyarrow as pa

from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.companion.pagethreads import beside_splits
from indextables.search.companion.sync import companion_root
from indextables.search.options import ReadOptions
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.anysplit import read_any_split
from indextables.search.read.bulkrows import search_session
from indextables.search.read.splitorder import ordered_batches, splits_at_once
from indextables.search.read.splitreader import SplitEntry
from indextables.search.splits.splitcache import SplitCache
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
    read = reader.read_options
    cache = SplitCache(read.cache_dir, read.cache_max_bytes)
    uri = reader.view.uri
    refs = [e.ref for e in entries]
    schema = arrow_schema(reader.schema)
    root = companion_root(reader.view.configuration, reader.options)
    companion_threads = beside_splits(
        read.companion_threads, splits_at_once(len(entries), parallel=parallel, stop_at=stop_at)
    )
    # One view of the doc-store block cache for the whole group: its misses are
    # remembered together at the end, only when they all fit in the cache.
    with search_session() as session, cache.directories(uri, refs, open_store) as directory:

        def batches(i: int) -> Iterator[pa.RecordBatch]:
            return cache.batches(
                uri,
                refs[i],
                open_store,
                functools.partial(
                    read_any_split,
                    entry=entries[i],
                    schema=schema,
                    search=reader.search,
                    conditions=conditions,
                    companion_root=root,
                    companion_options=reader.options,
                    docstore_threads=reader.read_options.docstore_threads,
                    companion_threads=companion_threads,
                    cache_session=session,
                ),
                directory=directory(i),
            )

        yield from ordered_batches(
            batches, len(entries), parallel=parallel, row_cap=row_cap, stop_at=stop_at
        )
