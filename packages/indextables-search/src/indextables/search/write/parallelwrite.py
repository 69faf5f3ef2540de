"""Index one write's rows with several writers at once, every core busy.

tantivy-py's ``add_document`` hands each document to the writer's own
indexing thread without holding the GIL, and Tantivy's indexing is most of a
write's CPU time; so ``workers`` threads, each with its own
:class:`~indextables.search.write.splitwriter.SplitWriter` (its own Tantivy
writer and indexing thread), index disjoint slices of the rows into separate
splits in one process. Each thread takes the next ``batch_size`` slice of the
shared stream when it is ready for more, so a slow thread takes fewer rows.
Threads start one by one, another once every running one has had
:data:`MIN_ROWS_PER_WRITER` rows, so a small write still adds one split.

All or nothing: when any thread fails, the others stop taking rows, every
split already uploaded by any of them is deleted (best effort) and the first
error is raised; the caller commits nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa

from indextables.protocol.actions import AddAction
from indextables.protocol.store import ObjectStore
from indextables.search.errors import ArgumentError
from indextables.search.write.splitwriter import SplitWriter

__all__ = ["MIN_ROWS_PER_WRITER", "check_workers", "default_workers", "write_parallel"]

#: Another writer starts once the rows taken exceed this many per running writer:
#: a write of fewer rows stays one split (each split costs a file, a log entry
#: and an open per read), a bigger one spreads over the cores.
MIN_ROWS_PER_WRITER = 50_000


def default_workers() -> int:
    """The cores this process may run on (``os.sched_getaffinity``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: object) -> int:
    """``workers`` as a positive int (None: :func:`default_workers`).

    Raises:
        ArgumentError: not a positive integer.
    """
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ArgumentError(f"workers={workers!r} must be a positive integer or None")
    return workers


def _sliced(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for offset in range(0, batch.num_rows, size):
            yield batch.slice(offset, size)


class _Run:
    """One parallel write: the shared stream of slices and the writer threads it starts."""

    def __init__(
        self,
        batches: Iterable[pa.RecordBatch],
        make_writer: Callable[[], SplitWriter],
        workers: int,
        min_rows: int,
    ) -> None:
        self.make_writer = make_writer
        self.workers = workers
        self.min_rows = min_rows
        self.lock = threading.Lock()
        self.failed = threading.Event()
        self.writers: list[SplitWriter] = []
        self.threads: list[threading.Thread] = []
        self.results: dict[int, list[AddAction]] = {}
        self.errors: list[BaseException] = []
        self.taken = 0
        self.slices: Iterator[pa.RecordBatch] = iter(())
        with self.lock:  # the first thread waits for the stream below
            self._start()
            self.slices = _sliced(batches, self.writers[0].batch_size)

    def _start(self) -> None:
        # Called with the lock held.
        number = len(self.writers)
        self.writers.append(self.make_writer())
        thread = threading.Thread(
            target=self._work, args=(number,), name=f"indextables-write-{number}", daemon=True
        )
        self.threads.append(thread)
        thread.start()

    def _next(self) -> pa.RecordBatch | None:
        with self.lock:
            if self.failed.is_set():
                return None
            piece = next(self.slices, None)
            if piece is None:
                return None
            self.taken += piece.num_rows
            # Another writer once every running one has had ``min_rows`` rows to index.
            if len(self.threads) < self.workers and self.taken > len(self.threads) * self.min_rows:
                self._start()
            return piece

    def _stream(self) -> Iterator[pa.RecordBatch]:
        while (piece := self._next()) is not None:
            yield piece

    def _work(self, number: int) -> None:
        writer = self.writers[number]
        try:
            writer.write(self._stream())
            if not self.failed.is_set():
                self.results[number] = writer.finish()
        except BaseException as error:  # any error fails the whole write
            self.errors.append(error)
            self.failed.set()
        finally:
            writer.abort()

    def wait(self) -> list[AddAction]:
        """Every writer's AddActions, once all are done; on a failure, delete and raise."""
        done = 0
        while done < len(self.threads):  # running threads may start more
            self.threads[done].join()
            done += 1
        if self.errors or self.failed.is_set():
            uploaded = {a.path: a for w in self.writers for a in w.finished}
            uploaded.update({a.path: a for r in self.results.values() for a in r})
            _delete(self.writers[0].store, uploaded.values())
            raise self.errors[0]
        return [a for k in sorted(self.results) for a in self.results[k]]


def write_parallel(
    batches: Iterable[pa.RecordBatch],
    make_writer: Callable[[], SplitWriter],
    *,
    workers: int,
    min_rows: int | None = None,
) -> list[AddAction]:
    """Index ``batches`` with up to ``workers`` split writers; the AddActions of every split.

    ``make_writer`` gives a fresh writer per thread (all writing to one store).
    With ``workers=1`` the rows are indexed in the calling thread, as one
    Spark write task does. Writers start one by one: another once the rows
    taken so far exceed ``min_rows`` (default :data:`MIN_ROWS_PER_WRITER`) per
    running writer, so a small write stays one split.

    Raises:
        Exception: the first error of any writer, after every uploaded split is deleted.
    """
    if workers == 1:
        writer = make_writer()
        try:
            writer.write(batches)
            return writer.finish()
        except BaseException:
            _delete(writer.store, writer.finished)
            raise
        finally:
            writer.abort()
    rows = MIN_ROWS_PER_WRITER if min_rows is None else min_rows
    return _Run(batches, make_writer, workers, rows).wait()


def _delete(store: ObjectStore, adds: Iterable[AddAction]) -> None:
    """Remove uploaded splits of a failed write (best effort: PURGE removes what stays)."""
    paths = [a.path for a in adds]
    if not paths:
        return
    with contextlib.suppress(Exception):  # a failing store leaves orphans, nothing committed
        store.delete_many(paths)
