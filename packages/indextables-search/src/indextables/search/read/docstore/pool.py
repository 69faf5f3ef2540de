"""The doc-store decoder's worker threads: one small pool per process.

The Cython kernels decompress and locate documents without the GIL, so a
large decode split into chunks runs on several cores. The pool is created on
first use and keyed by process id (a forked worker makes its own; the parent's
threads do not exist there).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Final

__all__ = ["MAX_WORKERS", "executor", "workers"]

#: Threads decoding one batch, the caller's included.
MAX_WORKERS: Final = 4

_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}


def workers() -> int:
    """How many chunks a large decode is split into (1: no threads).

    One when the machine is busy (1-minute load average at or above the cores
    usable here): measured at load 32 on 2 cores, chunks on threads were no
    faster (5.2 vs 5.1 us a scattered row) and only add hand-overs.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0] >= cores
    except (AttributeError, OSError):  # no load average on this platform
        busy = False
    return 1 if busy else max(1, min(MAX_WORKERS, cores))


def executor() -> ThreadPoolExecutor:
    """This process's pool (``workers() - 1`` threads: the caller decodes one chunk)."""
    pid = os.getpid()
    with _lock:
        found = _pools.get(pid)
        if found is None:
            _pools.clear()  # a forked child's copy of its parent's pool has no threads
            found = ThreadPoolExecutor(
                max_workers=max(1, workers() - 1), thread_name_prefix="indextables-docstore"
            )
            _pools[pid] = found
        return found
