"""The batches of several splits, read at once and handed back in split order.

A search reads few rows from each of many splits: Tantivy's search, the
doc-store kernels and a companion's page cuts release the GIL, so reading
up to :data:`READ_THREADS` splits at once keeps the machine's cores busy.
The batches still come back split by split, in order. A split read ahead of
its turn holds at most :data:`HELD_BYTES` of batches (or, with a row cap, just
past that many rows); the rest of it is read when its turn comes, so memory
stays bounded however many rows a split matches. The reading threads are the
process's own, made on first use and kept between calls; a read given up
part-way (past its row cap, or its consumer stopped) cancels the splits not
started and waits for the running ones, closing them, before it returns.

Used by the Spark adapter's interactive search and selective read tasks.
:class:`~indextables.search.searchtable.SearchTable` reads its splits one after
the other: on 2 cores, reading two at once measured no faster for an exact
match and slower for a needle (benchmarks/results/pyspark-2026-11-28T1108Z.json).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pyarrow as pa

from indextables.search import oplog
from indextables.search.read.docstore.pool import ProcessPool

__all__ = [
    "HELD_BYTES", "READ_THREADS", "RowCapExceeded", "ahead", "in_order", "ordered_batches",
    "splits_at_once",
]  # fmt: skip

#: Splits read at once (the machine's cores, at most 4).
READ_THREADS = min(4, os.cpu_count() or 1)
#: Batches held per split read ahead of its turn.
HELD_BYTES = 32 << 20


class RowCapExceeded(Exception):
    """The rows read passed the row cap (a control-flow signal, not a user error)."""


def splits_at_once(
    count: int, *, parallel: bool, stop_at: int | None = None, threads: int | None = None
) -> int:
    """How many of ``count`` splits :func:`ordered_batches` reads at once (``threads``: at
    most this many, default :data:`READ_THREADS`)."""
    if not parallel or stop_at is not None or count < 2:
        return 1
    return max(1, min(count, READ_THREADS if threads is None else threads))


def ordered_batches(
    batches: Callable[[int], Iterator[pa.RecordBatch]],
    count: int,
    *,
    parallel: bool,
    row_cap: int | None = None,
    stop_at: int | None = None,
    threads: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Every batch of splits ``0 .. count - 1`` (``batches(i)`` reads split ``i``), in order.

    With ``parallel`` (and two splits or more), up to ``threads`` (default
    :data:`READ_THREADS`) splits are read at once, each holding at most
    :data:`HELD_BYTES` of batches ahead of its turn. A ``stop_at`` read goes
    split by split and stops once that many rows are out (mid-split).

    Raises:
        RowCapExceeded: more than ``row_cap`` rows (at most ``row_cap`` rows
            past it per split in flight are read).
    """
    width = splits_at_once(count, parallel=parallel, stop_at=stop_at, threads=threads)
    if width < 2:
        yield from in_order(map(batches, range(count)), row_cap, stop_at)
        return
    pool = _readers.get() if width <= READ_THREADS else _wide_readers(width).get()
    splits = ahead(pool, batches, count, row_cap, width=width)
    try:
        yield from in_order(splits, row_cap, None)
    finally:
        splits.close()  # cancels the reads not started, waits for the running ones


# The process's split readers, made on first use and kept: an interactive search does not
# start (and wait for) threads of its own on every call.
_readers = ProcessPool(workers=lambda: READ_THREADS, prefix="indextables-splits")
_wide: dict[int, ProcessPool] = {}
_wide_lock = threading.Lock()


def _wide_readers(width: int) -> ProcessPool:
    """The process's pool of ``width`` split readers (more than :data:`READ_THREADS` asked)."""
    with _wide_lock:
        found = _wide.get(width)
        if found is None:
            found = ProcessPool(workers=lambda: width, prefix=f"indextables-splits{width}")
            _wide[width] = found
        return found


def in_order(
    splits: Iterable[Iterable[pa.RecordBatch]], row_cap: int | None, stop_at: int | None
) -> Iterator[pa.RecordBatch]:
    """The batches of ``splits`` in order, raising RowCapExceeded past ``row_cap`` rows."""
    rows = 0
    for split in splits:
        for batch in split:
            rows += batch.num_rows
            if row_cap is not None and rows > row_cap:
                raise RowCapExceeded
            yield batch
            if stop_at is not None and rows >= stop_at:
                return


def ahead(
    pool: ThreadPoolExecutor,
    batches: Callable[[int], Iterator[pa.RecordBatch]],
    count: int,
    row_cap: int | None,
    *,
    width: int | None = None,
) -> Generator[Iterator[pa.RecordBatch], None, None]:
    """Each split's batches in order, read by ``pool`` up to one split per thread ahead
    (``width`` splits in flight at most, default :data:`READ_THREADS`).

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
            while submitted < count and len(window) < (width or READ_THREADS):
                # the running operation goes along (its search seconds)
                window.append(pool.submit(oplog.in_context(head), submitted))
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
        # the reads already running end before the caller goes on, their splits given
        # up at once (a pool shared by calls would otherwise leave them to the collector)
        for future in window:
            if future.cancelled():
                continue
            try:
                _, rest = future.result()
            except Exception:  # the read was given up: its outcome is moot (an interrupt is not)
                continue
            if rest is not None and hasattr(rest, "close"):
                rest.close()
