"""Reading several splits at once while handing their batches over in split order.

A search or scan of a table reads its splits one after the other in the
caller's order, but each split's work (fetching it, Tantivy's search, reading
stored rows or the Arrow copy) mostly runs outside the GIL. :func:`in_order`
runs up to ``threads`` split readers ahead of the consumer, each on its own
thread, and yields their items in the readers' order.

Memory stays bounded: each reader hands over through a queue of at most
``depth`` items, so a reader ahead of the consumer waits once it has that many
ready (a full scan keeps at most ``threads * depth`` batches in flight).
When the consumer stops early (a ``limit`` reached, a reader closed), every
reader still running is told to stop and is waited for before the generator
ends, so no thread outlives the read and no split stays leased. An exception
in a reader is raised to the consumer when its turn comes, with the items
the reader produced before it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Final, Generic, TypeVar

__all__ = ["in_order"]

T = TypeVar("T")

# How long a blocked reader waits before checking whether it was told to stop.
_POLL_SECONDS: Final = 0.05


class _Done:
    """End of one reader's items (with its failure, if any)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class _Reader(Generic[T]):
    """One reader running on its own thread, handing items over through a bounded queue."""

    def __init__(self, source: Callable[[], Iterator[T]], depth: int, stop: threading.Event):
        self._source = source
        self._stop = stop
        self.items: queue.Queue[T | _Done] = queue.Queue(maxsize=depth)
        self.thread = threading.Thread(target=self._run, daemon=True, name="indextables-read")

    def _run(self) -> None:
        error: BaseException | None = None
        try:
            iterator = self._source()
            try:
                for item in iterator:
                    if not self._put(item):
                        return
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()
        except BaseException as failure:  # handed to the consumer, which raises it
            error = failure
        self._put(_Done(error))

    def _put(self, item: T | _Done) -> bool:
        while not self._stop.is_set():
            try:
                self.items.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False


def in_order(
    sources: Sequence[Callable[[], Iterator[T]]], *, threads: int, depth: int = 2
) -> Generator[T, None, None]:
    """The items of ``source()`` for each source in turn, up to ``threads`` sources read at once.

    With ``threads < 2`` or a single source, the sources run one after the
    other on the caller's thread (no thread is started).
    """
    if threads < 2 or len(sources) < 2:
        for source in sources:
            yield from source()
        return
    stop = threading.Event()
    started: list[_Reader[T]] = []

    def start_next() -> None:
        if len(started) < len(sources):
            reader = _Reader(sources[len(started)], depth, stop)
            started.append(reader)
            reader.thread.start()

    try:
        for _ in range(threads):
            start_next()
        for index in range(len(sources)):
            reader = started[index]
            while True:
                item = reader.items.get()
                if isinstance(item, _Done):
                    break
                yield item
            reader.thread.join()
            start_next()
            if item.error is not None:
                raise item.error
    finally:
        stop.set()
        for reader in started:
            reader.thread.join()
