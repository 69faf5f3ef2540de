"""Index one write's rows with several writers at once, every core busy.

tantivy-py's ``add_document`` hands each document to the writer's own
indexing thread without holding the GIL, and Tantivy's indexing is most of a
write's CPU time; so ``workers`` threads, each with its own
:class:`~indextables.search.write.splitwriter.SplitWriter` (its own Tantivy
writer and indexing thread), index disjoint slices of the rows into separate
splits in one process. Each thread takes the next ``batch_size`` slice of the
shared stream when it is ready for more, so a slow thread takes fewer rows; a
thread that gets no rows writes no split, so a write of one slice still adds
one split.

All or nothing: when any thread fails, the others stop taking rows, every
split already uploaded by any of them is deleted (best effort) and the first
error is raised; the caller commits nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa

from indextables.protocol.actions import AddAction
from indextables.protocol.store import ObjectStore
from indextables.search.errors import ArgumentError
from indextables.search.write.splitwriter import SplitWriter

__all__ = ["check_workers", "default_workers", "write_parallel"]


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


class _Slices:
    """The shared stream: ``batch_size`` slices of the batches, one at a time under a lock."""

    def __init__(self, batches: Iterable[pa.RecordBatch], batch_size: int) -> None:
        self._slices = _sliced(batches, batch_size)
        self._lock = threading.Lock()
        self.failed = threading.Event()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while not self.failed.is_set():
            with self._lock:
                piece = next(self._slices, None)
            if piece is None:
                return
            yield piece


def _sliced(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for offset in range(0, batch.num_rows, size):
            yield batch.slice(offset, size)


def write_parallel(
    batches: Iterable[pa.RecordBatch],
    make_writer: Callable[[], SplitWriter],
    *,
    workers: int,
) -> list[AddAction]:
    """Index ``batches`` with ``workers`` split writers; the AddActions of every split.

    ``make_writer`` gives a fresh writer per thread (all writing to one store).
    With ``workers=1`` the rows are indexed in the calling thread, as one
    Spark write task does.

    Raises:
        Exception: the first error of any thread, after every uploaded split is deleted.
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
    writers = [make_writer() for _ in range(workers)]
    source = _Slices(batches, writers[0].batch_size)
    results: list[list[AddAction]] = [[] for _ in writers]
    errors: list[BaseException] = []

    def run(k: int) -> None:
        writer = writers[k]
        try:
            writer.write(source)
            if not source.failed.is_set():
                results[k] = writer.finish()
        except BaseException as error:  # any error fails the whole write
            errors.append(error)
            source.failed.set()
        finally:
            writer.abort()

    threads = [
        threading.Thread(target=run, args=(k,), name=f"indextables-write-{k}", daemon=True)
        for k in range(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors or source.failed.is_set():
        uploaded = {a.path: a for w in writers for a in w.finished}
        uploaded.update({a.path: a for r in results for a in r})
        _delete(writers[0].store, uploaded.values())
        raise errors[0]
    return [a for r in results for a in r]


def _delete(store: ObjectStore, adds: Iterable[AddAction]) -> None:
    """Remove uploaded splits of a failed write (best effort: PURGE removes what stays)."""
    paths = [a.path for a in adds]
    if not paths:
        return
    try:
        store.delete_many(paths)
    except Exception:  # a failing store leaves orphans, never a half-committed write
        pass
