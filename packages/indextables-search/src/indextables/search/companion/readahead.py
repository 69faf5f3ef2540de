"""A source file's record batches decoded ahead by a thread while the caller indexes them.

pyarrow decodes Parquet pages without the GIL, so a reader thread that keeps
up to ``depth`` batches ready lets the decoding of the next batch overlap the
building and hand-over of the current batch's documents (Python, holding the
GIL) instead of waiting between them. Batches come out in the file's order;
an error of the reader is raised in the caller, at the batch where it
happened. Closing the iterator early (the caller failed) stops the reader and
waits for it, so the file may be closed right after.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import cast

import pyarrow as pa

__all__ = ["DEFAULT_DEPTH", "read_ahead"]

#: Batches decoded ahead of the one being indexed.
DEFAULT_DEPTH = 2
_DONE = object()
_POLL_SECONDS = 0.05


def read_ahead(
    batches: Iterator[pa.RecordBatch], *, depth: int = DEFAULT_DEPTH
) -> Generator[pa.RecordBatch, None, None]:
    """``batches`` in order, each decoded by a reader thread up to ``depth`` batches ahead.

    Exceptions raised while reading are re-raised here, unchanged.
    """
    ready: queue.Queue[object] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def hand_over(item: object) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for batch in batches:
                if not hand_over(batch):
                    return
        except BaseException as error:  # handed to the caller, raised there
            hand_over(error)
            return
        hand_over(_DONE)

    reader = threading.Thread(target=read, name="indextables-companion-read", daemon=True)
    reader.start()
    try:
        while True:
            item = ready.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield cast(pa.RecordBatch, item)
    finally:
        stop.set()
        reader.join()
