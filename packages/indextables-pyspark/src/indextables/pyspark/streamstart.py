"""Starting a streaming query again when its source's Python worker started too slowly.

A Python streaming source (this package's ``readStream``) gets a Python worker of its
own on the driver when the query starts. Spark 4.3.0 launches it as a new interpreter
and waits a fixed 10 s for it to connect back (``PythonWorkerFactory.createSimpleWorker``;
no setting changes that wait, nor the 10 s of the handshake that follows); the worker
imports PySpark, pyarrow and pandas first, about 1 CPU-second, which a machine at a
load of 15 or more per core stretches past 10 s. The query then fails with
``Python worker failed to connect back`` before reading anything. :func:`run_stream`
starts such a query again, at most ``attempts`` times in all; a query with a
checkpoint resumes exactly where it was (nothing was committed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

from indextables.pyspark.errors import ArgumentError

__all__ = ["WORKER_CONNECT_FAILURE", "run_stream", "worker_start_failed"]

#: Spark's message when a new Python worker did not connect back in time.
WORKER_CONNECT_FAILURE: Final = "Python worker failed to connect back"


def worker_start_failed(error: BaseException) -> bool:
    """True when ``error`` (or an error it wraps) is Spark giving up on a Python worker's start."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if WORKER_CONNECT_FAILURE in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def run_stream(
    start: Callable[[], Any],
    *,
    until: Literal["end", "available"] = "end",
    attempts: int = 3,
) -> Any:
    """The query ``start()`` returns, once it ended (``until="end"``: a ``once`` or
    ``availableNow`` trigger) or processed the data available (``"available"``).

    A query that failed because its source's Python worker did not connect back in
    time is started again by calling ``start()`` anew, at most ``attempts`` times in
    all; any other failure is raised at once.

    Raises:
        ArgumentError: ``attempts`` below 1 or an unknown ``until``.
    """
    if attempts < 1:
        raise ArgumentError(f"attempts={attempts!r} must be at least 1")
    if until not in ("end", "available"):
        raise ArgumentError(f"until={until!r} must be 'end' or 'available'")
    for attempt in range(1, attempts + 1):
        query = start()
        try:
            if until == "end":
                query.awaitTermination()
            else:
                query.processAllAvailable()
        except Exception as error:
            if attempt == attempts or not worker_start_failed(error):
                raise
            _stop(query)
            continue
        return query
    raise AssertionError("unreachable")  # pragma: no cover


def _stop(query: Any) -> None:
    try:
        query.stop()
    except Exception:  # already stopped by its failure
        return
