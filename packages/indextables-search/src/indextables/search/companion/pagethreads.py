"""Cutting a companion read's hit pages on two threads: a small pool per process.

Decompressing a page (pyarrow's codecs), cutting it down to its hits (the
``_kernels`` Cython kernel) and pyarrow decoding the small file of cut pages
all run without the GIL, so the pages of one file's hits are split into
contiguous batches of about equal bytes, one per worker: the caller cuts the
first batch, the pool's one thread the other. Results come back in the order
of the units whatever thread cut them; when units raise, every batch is first
waited for (no thread is left working on the caller's buffers) and the first
failing unit's exception is raised, the same one the caller alone would raise.

Whether threads are used follows the read option
``spark.indextables.read.companionThreads`` (``auto`` | ``on`` | ``off``), the
pattern of ``read.docStoreThreads``: ``auto`` uses them unless other work keeps
the machine's cores busy (:func:`~indextables.search.read.docstore.pool.others_load`).
The pool is created on first use and keyed by process id (a forked worker makes its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Final, TypeVar

from indextables.search.errors import CompanionError
from indextables.search.read.docstore.pool import (
    THREAD_SETTINGS,
    DecoderThreads,
    ProcessPool,
    thread_count,
)

__all__ = [
    "MAX_PAGE_THREADS",
    "PAGE_THREAD_SETTINGS",
    "PageThreads",
    "beside_splits",
    "page_workers",
    "run_ordered",
]

#: Whether a companion read cuts its pages on threads (see :func:`page_workers`): the
#: settings of the doc-store decoder's threads, under the same rule.
PageThreads = DecoderThreads
PAGE_THREAD_SETTINGS: Final = THREAD_SETTINGS

#: Threads cutting one file's pages, the caller's included.
MAX_PAGE_THREADS: Final = 2

_Unit = TypeVar("_Unit")
_Result = TypeVar("_Result")


def beside_splits(threads: PageThreads, splits: int) -> PageThreads:
    """The setting for a companion split read while ``splits`` splits are read at once:
    ``auto`` is ``off`` when that is two or more (their threads keep the cores busy,
    and the page threads' batches then wait on the GIL: on the 20M companion, two
    splits at once, needle 240 ms with page threads against 217 without, exact match
    956 against 831, medians of alternating rounds); ``on`` and ``off`` stand."""
    return "off" if threads == "auto" and splits >= 2 else threads


def page_workers(threads: PageThreads = "auto") -> int:
    """How many batches a file's pages are cut in (1: no threads).

    ``off``: 1; ``on``: the usable cores, at most :data:`MAX_PAGE_THREADS`;
    ``auto``: the same unless the load of other work is at or above the cores.

    Raises:
        CompanionError: ``threads`` is none of ``auto``, ``on`` and ``off``.
    """
    if threads not in PAGE_THREAD_SETTINGS:
        raise CompanionError(f"companion threads: expected one of auto, on, off, not {threads!r}")
    return thread_count(threads, MAX_PAGE_THREADS)


# One thread: the caller cuts the other batch.
_pages = ProcessPool(workers=lambda: MAX_PAGE_THREADS - 1, prefix="indextables-companion")


def batches(weights: Sequence[int], count: int) -> list[range]:
    """Split ``len(weights)`` units into at most ``count`` contiguous ranges of
    about equal total weight (none empty)."""
    total = sum(weights)
    if count <= 1 or len(weights) <= 1 or total <= 0:
        return [range(len(weights))] if weights else []
    found: list[range] = []
    start = 0
    running = 0
    for index, weight in enumerate(weights):
        cut = total * (len(found) + 1) / count
        # end the batch before this unit when that lands closer to the even cut
        if index > start and len(found) < count - 1 and running + weight - cut > cut - running:
            found.append(range(start, index))
            start = index
            cut = total * (len(found) + 1) / count
        running += weight
        if running >= cut and len(found) < count - 1 and index + 1 < len(weights):
            found.append(range(start, index + 1))
            start = index + 1
    found.append(range(start, len(weights)))
    return found


def run_ordered(
    units: Sequence[_Unit],
    work: Callable[[_Unit], _Result],
    *,
    weights: Sequence[int] | None = None,
    workers: int = 1,
) -> list[_Result]:
    """``[work(u) for u in units]``, the units cut in ``workers`` batches, the caller
    running the first, the pool the others; the first failing unit's exception raised."""
    ranges = batches(list(weights) if weights is not None else [1] * len(units), workers)
    if len(ranges) <= 1:
        return [work(unit) for unit in units]

    def run(span: range) -> list[_Result]:
        return [work(units[index]) for index in span]

    pool = _pages.get()
    futures: list[Future[list[_Result]]] = [pool.submit(run, span) for span in ranges[1:]]
    results: list[list[_Result]] = []
    failure: BaseException | None = None
    try:
        results.append(run(ranges[0]))
    except BaseException as exc:
        failure = exc
    for future in futures:
        try:
            outcome = future.result()
        except BaseException as exc:
            failure = failure or exc
        else:
            if failure is None:
                results.append(outcome)
    if failure is not None:
        raise failure
    return [item for part in results for item in part]
