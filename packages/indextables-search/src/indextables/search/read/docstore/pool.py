"""The doc-store decoder's worker threads: one small pool per process.

The Cython kernels decompress and locate documents without the GIL, so a
large decode split into chunks runs on several cores. The pool is created on
first use and keyed by process id (a forked worker makes its own; the parent's
threads do not exist there).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, Literal

from indextables.search.read.docstore.errors import DocStoreError

__all__ = [
    "MAX_WORKERS",
    "THREAD_SETTINGS",
    "DecoderThreads",
    "ProcessPool",
    "executor",
    "others_load",
    "thread_count",
    "workers",
]

#: Whether a large decode may run in chunks on threads (see :func:`workers`).
DecoderThreads = Literal["auto", "on", "off"]
THREAD_SETTINGS: Final[tuple[DecoderThreads, ...]] = ("auto", "on", "off")

#: Threads decoding one batch, the caller's included.
MAX_WORKERS: Final = 4

_lock = threading.Lock()


def workers(threads: DecoderThreads = "auto") -> int:
    """How many chunks a large decode is split into (1: no threads).

    ``threads`` (the read option ``spark.indextables.read.docStoreThreads``):
    ``off`` never splits; ``on`` splits over the usable cores (at most
    :data:`MAX_WORKERS`) whatever the load; ``auto`` (the default) does so
    unless the machine is busy with other work: the 1-minute load average,
    less this process's own recent CPU use (:func:`others_load`), at or above
    the cores usable here. Measured at load 32 on 2 cores, chunks on threads
    were no faster (5.2 vs 5.1 us a scattered row) and only add hand-overs; the
    process's own share is left out because a read on two threads of an idle
    2-core machine lifts the load average to ~2 by itself, which turned the
    threads off for the next read.

    Raises:
        DocStoreError: ``threads`` is none of ``auto``, ``on`` and ``off``.
    """
    if threads not in THREAD_SETTINGS:
        raise DocStoreError(f"threads: expected one of auto, on, off, not {threads!r}")
    return thread_count(threads, MAX_WORKERS)


def thread_count(threads: DecoderThreads, limit: int) -> int:
    """Workers a valid ``auto``/``on``/``off`` setting allows, at most ``limit`` (see
    :func:`workers`; the companion's page cutting follows the same rule)."""
    if threads == "off":
        return 1
    count = _cores()
    if threads == "auto":
        try:
            if others_load() >= count:
                return 1
        except (AttributeError, OSError):  # no load average on this platform
            pass
    return max(1, min(limit, count))


# (monotonic time, process CPU time) samples of this process, oldest first: the span
# over which its own CPU use is averaged (about the load average's minute).
_samples: list[tuple[float, float]] = []
_sampled_by = [os.getpid()]
_SPAN = 60.0


def others_load() -> float:
    """The 1-minute load average less this process's own average CPU use (in cores)
    over about the last minute: the load of other work.

    Raises:
        OSError, AttributeError: no load average on this platform.
    """
    load = os.getloadavg()[0]
    now, cpu = time.monotonic(), time.process_time()
    with _lock:
        if _sampled_by[0] != os.getpid():  # a forked child: its CPU time starts afresh
            _samples.clear()
            _sampled_by[0] = os.getpid()
        if not _samples or now - _samples[-1][0] >= 1.0:
            _samples.append((now, cpu))  # at most one a second: ~60 kept
        while len(_samples) > 2 and now - _samples[1][0] >= _SPAN:
            del _samples[0]  # keep one sample at least a minute old, when there is one
        then, cpu_then = _samples[0]
    if now - then < 1.0:
        return load  # too short a span to tell this process's share
    return max(0.0, load - max(0.0, cpu - cpu_then) / (now - then))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


class ProcessPool:
    """A thread pool made on first use, one per process: a forked child's copy of its
    parent's pool has no threads, so a child makes its own."""

    def __init__(self, *, workers: Callable[[], int], prefix: str) -> None:
        self._workers = workers
        self._prefix = prefix
        self._lock = threading.Lock()
        self._pools: dict[int, ThreadPoolExecutor] = {}

    def get(self) -> ThreadPoolExecutor:
        """This process's pool."""
        pid = os.getpid()
        with self._lock:
            found = self._pools.get(pid)
            if found is None:
                self._pools.clear()
                found = ThreadPoolExecutor(
                    max_workers=self._workers(), thread_name_prefix=self._prefix
                )
                self._pools[pid] = found
            return found


# One thread fewer than the chunks: the caller decodes one.
_decoders = ProcessPool(
    workers=lambda: max(1, min(MAX_WORKERS, _cores()) - 1), prefix="indextables-docstore"
)


def executor() -> ThreadPoolExecutor:
    """This process's decoder pool (one thread fewer than the chunks: the caller decodes one)."""
    return _decoders.get()
