"""The rows of a group of splits, in split order, with several splits read at once.

Shared by the interactive search (``itp.search`` in the driver) and the read
tasks of a selective ``spark.read``. Tantivy's searches and the doc-store
kernels release the GIL, so up to :data:`READ_THREADS` splits are searched
at once while their batches come back in split order. A split read ahead
holds at most :data:`HELD_BYTES` of batches (or, with a row cap, just past
that many rows); the rest of it is read when its turn comes, so memory stays
bounded however many rows a split matches.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

import pyarrow as pa

from indextables.pyspark.read.sparktypes import arrow_schema
from indextables.search.companion.sync import companion_root
from indextables.search.options import ReadOptions
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.anysplit import read_any_split
from indextables.search.read.bulkrows import search_session
from indextables.search.read.splitreader import SplitEntry
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.tableaccess import TableView
from pyspark.sql.types import StructType

# Splits searched at once (the machine's cores, at most 4).
READ_THREADS = min(4, os.cpu_count() or 1)
# Batches held per split read ahead of its turn.
HELD_BYTES = 32 << 20


class SplitSearch(Protocol):
    """What a group read needs of the reader (``IndexTablesReader``)."""

    view: TableView
    schema: StructType
    options: dict[str, str]
    read_options: ReadOptions
    search: SearchSpec


class TooLarge(Exception):
    """The rows read passed the row cap."""


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
    to :data:`READ_THREADS` splits are searched at once. A ``stop_at`` read
    (a limit without a where clause) goes split by split and stops mid-split.

    Raises:
        TooLarge: more than ``row_cap`` rows (at most ``row_cap`` rows past
            it per split in flight are read).
    """
    read = reader.read_options
    cache = SplitCache(read.cache_dir, read.cache_max_bytes)
    uri = reader.view.uri
    refs = [e.ref for e in entries]
    schema = arrow_schema(reader.schema)
    root = companion_root(reader.view.configuration, reader.options)
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
                    companion_threads=reader.read_options.companion_threads,
                    cache_session=session,
                ),
                directory=directory(i),
            )

        if not parallel or stop_at is not None or len(entries) < 2 or READ_THREADS < 2:
            yield from in_order(map(batches, range(len(entries))), row_cap, stop_at)
            return
        with ThreadPoolExecutor(max_workers=READ_THREADS) as searching:
            splits = ahead(searching, batches, len(entries), row_cap)
            try:
                yield from in_order(splits, row_cap, None)
            finally:
                splits.close()  # cancels the reads not started yet


def in_order(
    splits: Iterable[Iterable[pa.RecordBatch]], row_cap: int | None, stop_at: int | None
) -> Iterator[pa.RecordBatch]:
    """The batches of ``splits`` in order, raising TooLarge past ``row_cap`` rows."""
    rows = 0
    for split in splits:
        for batch in split:
            rows += batch.num_rows
            if row_cap is not None and rows > row_cap:
                raise TooLarge
            yield batch
            if stop_at is not None and rows >= stop_at:
                return


def ahead(
    pool: ThreadPoolExecutor,
    batches: Callable[[int], Iterator[pa.RecordBatch]],
    count: int,
    row_cap: int | None,
) -> Generator[Iterator[pa.RecordBatch], None, None]:
    """Each split's batches in order, read by ``pool`` up to one split per thread ahead.

    A split's read ahead stops past :data:`HELD_BYTES` or ``row_cap`` rows (one
    split alone passing the cap makes the whole read pass it); the rest of the
    split is read on the consuming thread when its turn comes.
    """

    def head(i: int) -> tuple[list[pa.RecordBatch], Iterator[pa.RecordBatch] | None]:
        split = batches(i)
        held: list[pa.RecordBatch] = []
        rows = size = 0
        for batch in split:
            held.append(batch)
            rows += batch.num_rows
            size += batch.nbytes
            if size > HELD_BYTES or (row_cap is not None and rows > row_cap):
                return held, split
        return held, None

    window: deque[Future[tuple[list[pa.RecordBatch], Iterator[pa.RecordBatch] | None]]] = deque()
    submitted = 0
    try:
        while window or submitted < count:
            while submitted < count and len(window) < READ_THREADS:
                window.append(pool.submit(head, submitted))
                submitted += 1
            held, rest = window.popleft().result()
            try:
                yield itertools.chain(held, rest or ())
            finally:
                if rest is not None and hasattr(rest, "close"):
                    rest.close()  # a split given up half-way releases its lease now
    finally:
        for future in window:
            future.cancel()
