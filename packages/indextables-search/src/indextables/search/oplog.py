"""One INFO log line per operation, with its counters and its phases' seconds.

Every operation of the engine and of the packages above it (a search, a count,
a write, a merge, a maintenance command, a companion build) runs inside
:func:`operation` (or, for a streamed read, :func:`start` and :func:`tracked`).
Code deep in the read path adds to the operation that is running without
being handed it (:func:`note`, :func:`timed`: a context variable, copied to the
threads that read splits). When the operation ends, one INFO record goes to the
logger the caller names (its module's ``logging.getLogger(__name__)``)::

    search uri=s3://bucket/logs version=12 outcome=ok splits_considered=40
    splits_pruned=37 splits_read=3 rows=120 bytes_fetched=81920 cache_hits=2
    cache_misses=1 seconds=0.084 plan=0.004 fetch=0.031 search=0.002 decode=0.012

(one line; counters that are zero for every operation of that kind are still
shown, so a line always has the same fields). Per-split detail goes to DEBUG.
The table URI is redacted (:func:`indextables.storage.redaction.redact_uri`) and
the whole line passes :func:`~indextables.storage.redaction.redact_text`, so no
credential or signed query parameter reaches a log. The record carries the
:class:`~indextables.search.metrics.OperationMetrics` as ``record.indextables``
for handlers that want the fields.

An operation started while another is running (``itp.count`` over an engine
count) logs no line of its own: its counters add to the outer one, whose line
is the one INFO line of the call. The library installs no handler and logs
nothing at import.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, ParamSpec, TypeVar

from indextables.search.metrics import COUNTERS, PHASES, OperationMetrics
from indextables.storage.redaction import redact_text, redact_uri

__all__ = [
    "Operation",
    "current",
    "in_context",
    "last_metrics",
    "logged",
    "line",
    "note",
    "note_fields",
    "note_planned",
    "note_seconds",
    "note_version",
    "operation",
    "record",
    "split_read",
    "start",
    "timed",
    "tracked",
]

T = TypeVar("T")
P = ParamSpec("P")

_CURRENT: contextvars.ContextVar[Operation | None] = contextvars.ContextVar(
    "indextables_operation", default=None
)
# The metrics of the last outermost operation finished on each thread.
_LAST = threading.local()
# Seconds of whole split reads (search and decode together): decode is this minus search.
_READ = "read"


def _safe_uri(uri: str) -> str:
    return redact_text(redact_uri(uri))


class Operation:
    """The counters and phase seconds of one running operation (thread-safe)."""

    def __init__(
        self,
        logger: logging.Logger,
        name: str,
        *,
        uri: str,
        version: int | None = None,
        parent: Operation | None = None,
    ) -> None:
        self.logger = logger
        self.name = name
        self.uri = _safe_uri(uri)
        self.version = version
        self.parent = parent
        self._started = time.perf_counter()
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(COUNTERS, 0)
        self._seconds = dict.fromkeys((*PHASES, _READ), 0.0)
        self._details: dict[str, str | int | float] = {}
        self._metrics: OperationMetrics | None = None

    def add(self, **counts: int) -> None:
        """Add to counters of :data:`~indextables.search.metrics.COUNTERS`."""
        with self._lock:
            for name, value in counts.items():
                self._counts[name] += int(value)

    def planned(self, *, considered: int, kept: int) -> None:
        """The splits a plan looked at and kept (a second plan of the same operation,
        such as a count read from the rows after all, replaces the first's figures)."""
        with self._lock:
            self._counts["splits_considered"] = considered
            self._counts["splits_pruned"] = considered - kept

    def add_seconds(self, phase: str, seconds: float) -> None:
        """Add ``seconds`` to a phase of :data:`~indextables.search.metrics.PHASES`."""
        with self._lock:
            self._seconds[phase] += seconds

    def set(self, **details: str | int | float | None) -> None:
        """Further fields of the log line (``source="index"``, ``partitions=3``...);
        None values are left out."""
        with self._lock:
            self._details.update({k: v for k, v in details.items() if v is not None})

    def set_version(self, version: int | None) -> None:
        """The table version, once known (a write learns it at commit)."""
        if version is not None:
            self.version = version

    @contextlib.contextmanager
    def phase(self, phase: str) -> Iterator[None]:
        """Time the block into ``phase``."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add_seconds(phase, time.perf_counter() - began)

    @contextlib.contextmanager
    def active(self) -> Iterator[Operation]:
        """Make this the running operation for the block (:func:`note` adds to it)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def split(self, path: str, **fields: object) -> None:
        """One DEBUG line of per-split detail."""
        if self.logger.isEnabledFor(logging.DEBUG):
            text = " ".join(f"{k}={_text(v)}" for k, v in fields.items())
            self.logger.debug(
                "%s", redact_text(f"{self.name} split {path} of {self.uri}: {text}".rstrip())
            )

    @property
    def metrics(self) -> OperationMetrics:
        """The measurements so far (the final ones after :meth:`finish`)."""
        if self._metrics is not None:
            return self._metrics
        return self._snapshot("ok")

    def _snapshot(self, outcome: str) -> OperationMetrics:
        with self._lock:
            counts = dict(self._counts)
            seconds = dict(self._seconds)
            details = tuple(self._details.items())
        decode = seconds["decode"] + max(0.0, seconds[_READ] - seconds["search"])
        return OperationMetrics(
            operation=self.name,
            uri=self.uri,
            version=self.version,
            outcome=outcome,
            seconds=time.perf_counter() - self._started,
            plan_seconds=seconds["plan"],
            fetch_seconds=seconds["fetch"],
            search_seconds=seconds["search"],
            decode_seconds=decode,
            details=details,
            **counts,
        )

    def finish(self, error: BaseException | None = None) -> OperationMetrics:
        """End the operation: its one INFO line (or, nested, its counters to the outer one).

        A second call returns the first call's metrics and logs nothing.
        """
        if self._metrics is not None:
            return self._metrics
        failed = error is not None and not isinstance(error, GeneratorExit)
        outcome = f"error:{type(error).__name__}" if failed else "ok"
        metrics = self._metrics = self._snapshot(outcome)
        if self.parent is not None and self.parent._metrics is None:
            planned = ("splits_considered", "splits_pruned")
            if metrics.splits_considered:
                self.parent.planned(
                    considered=metrics.splits_considered,
                    kept=metrics.splits_considered - metrics.splits_pruned,
                )
            self.parent.add(
                **{name: getattr(metrics, name) for name in COUNTERS if name not in planned}
            )
            if self.parent.version is None:
                self.parent.set_version(metrics.version)
            with self.parent._lock:
                for key, value in metrics.details:
                    self.parent._details.setdefault(key, value)
            self.parent.add_seconds("plan", metrics.plan_seconds)
            self.parent.add_seconds("fetch", metrics.fetch_seconds)
            self.parent.add_seconds("search", metrics.search_seconds)
            self.parent.add_seconds("decode", metrics.decode_seconds)
            self.logger.debug("%s", line(metrics))
            return metrics
        self.logger.info("%s", line(metrics), extra={"indextables": metrics})
        _LAST.metrics = metrics
        return metrics


def line(metrics: OperationMetrics) -> str:
    """The log line of ``metrics`` (redacted)."""
    fields: list[tuple[str, object]] = [
        ("uri", metrics.uri),
        ("version", metrics.version),
        ("outcome", metrics.outcome),
    ]
    fields += [(name, getattr(metrics, name)) for name in COUNTERS]
    fields.append(("seconds", metrics.seconds))
    fields += [(phase, getattr(metrics, f"{phase}_seconds")) for phase in PHASES]
    fields += list(metrics.details)
    text = " ".join(f"{name}={_text(value)}" for name, value in fields)
    return redact_text(f"{metrics.operation} {text}")


def _text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    text = str(value)
    return repr(text) if not text or any(c.isspace() for c in text) else text


def last_metrics() -> OperationMetrics | None:
    """The metrics of the last operation (not nested in another) finished on this thread:
    a ``write_table``, a search, a count, a command (None before the first)."""
    found: OperationMetrics | None = getattr(_LAST, "metrics", None)
    return found


def logged(
    logger: logging.Logger,
    name: str,
    *,
    uri: str = "uri",
    fields: Callable[[Any], Mapping[str, object]] | None = None,
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Run each call of the decorated function as one :func:`operation`, the table
    being its argument named ``uri`` (``"args.path"``: that attribute of the argument
    ``args``). The function adds its counters with
    :func:`note`; ``fields(result)`` may name more from what it returns (counters
    of :data:`~indextables.search.metrics.COUNTERS`, ``version``, other fields)."""

    def wrap(fn: Callable[P, T]) -> Callable[P, T]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> T:
            target = _argument(signature, uri, args, kwargs)
            with operation(logger, name, uri="-" if target is None else str(target)) as op:
                result = fn(*args, **kwargs)
                if fields is not None:
                    record(op, fields(result))
                return result

        return call

    return wrap


def _argument(
    signature: inspect.Signature, name: str, args: Any, kwargs: Mapping[str, Any]
) -> object:
    head, *attributes = name.split(".")
    try:
        found: object = signature.bind_partial(*args, **kwargs).arguments.get(head)
    except TypeError:
        return None
    for attribute in attributes:
        found = getattr(found, attribute, None)
    return found


def record(op: Operation, found: Mapping[str, object]) -> None:
    """Counters, the version and other fields of ``found`` into ``op``."""
    for key, value in found.items():
        if key == "version":
            op.set_version(value if isinstance(value, int) else None)
        elif key in COUNTERS and isinstance(value, int):
            op.add(**{key: value})
        elif isinstance(value, str | int | float):
            op.set(**{key: value})


def note_fields(**fields: str | int | float | None) -> None:
    """Further fields of the running operation's line (nothing when none is running)."""
    op = _CURRENT.get()
    if op is not None:
        op.set(**fields)


def note_version(version: int | None) -> None:
    """The running operation's table version, once known (a write's, at its commit)."""
    op = _CURRENT.get()
    if op is not None:
        op.set_version(version)


def current() -> Operation | None:
    """The running operation of this context, if any."""
    return _CURRENT.get()


def start(logger: logging.Logger, name: str, *, uri: str, version: int | None = None) -> Operation:
    """A new operation (nested in the running one, if any), not yet made current."""
    return Operation(logger, name, uri=uri, version=version, parent=_CURRENT.get())


@contextlib.contextmanager
def operation(
    logger: logging.Logger,
    name: str,
    *,
    uri: str,
    version: int | None = None,
    done: Callable[[OperationMetrics], None] | None = None,
) -> Iterator[Operation]:
    """Run the block as one operation: it is current inside, and logs its line at the end.

    An exception leaves the block unchanged; the line then says
    ``outcome=error:<type>``. ``done(metrics)`` is called once it finished.
    """
    op = start(logger, name, uri=uri, version=version)
    token = _CURRENT.set(op)
    try:
        yield op
    except BaseException as error:
        op.finish(error)
        raise
    else:
        op.finish()
    finally:
        _CURRENT.reset(token)
        if done is not None and op._metrics is not None:
            done(op._metrics)


def tracked(
    op: Operation,
    items: Iterator[T],
    *,
    rows: Callable[[T], int] | None = None,
    done: Callable[[OperationMetrics], None] | None = None,
) -> Generator[T, None, None]:
    """``items`` with each step run as part of ``op``, which finishes when they end.

    A consumer that stops early (closes the generator) ends the operation
    ``ok``; one that never starts it logs nothing. ``rows(item)`` counts the
    rows handed out; ``done(metrics)`` is called once the operation finished.
    """
    failure: BaseException | None = None
    try:
        while True:
            token = _CURRENT.set(op)
            try:
                item = next(items)
            except StopIteration:
                break
            finally:
                _CURRENT.reset(token)
            if rows is not None:
                op.add(rows=rows(item))
            yield item
    except BaseException as error:
        failure = error
        raise
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()
        metrics = op.finish(failure)
        if done is not None:
            done(metrics)


def note(**counts: int) -> None:
    """Add to the running operation's counters (nothing when none is running)."""
    op = _CURRENT.get()
    if op is not None:
        op.add(**counts)


def note_planned(*, considered: int, kept: int) -> None:
    """The running operation's plan looked at ``considered`` splits and kept ``kept``."""
    op = _CURRENT.get()
    if op is not None:
        op.planned(considered=considered, kept=kept)


def note_seconds(phase: str, seconds: float) -> None:
    """Add seconds to a phase of the running operation (nothing when none is running)."""
    op = _CURRENT.get()
    if op is not None:
        op.add_seconds(phase, seconds)


@contextlib.contextmanager
def timed(phase: str) -> Iterator[None]:
    """Time the block into ``phase`` of the running operation."""
    began = time.perf_counter()
    try:
        yield
    finally:
        note_seconds(phase, time.perf_counter() - began)


def split_read(op: Operation | None, path: str, batches: Iterable[Any]) -> Iterator[Any]:
    """A split's batches, counted into ``op`` (one split read, its seconds, a DEBUG line)."""
    if op is None:
        yield from batches
        return
    began = time.perf_counter()
    found = 0
    try:
        for batch in batches:
            found += batch.num_rows
            yield batch
    finally:
        took = time.perf_counter() - began
        op.add(splits_read=1)
        op.add_seconds(_READ, took)
        op.split(path, rows=found, seconds=took)


def in_context(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` bound to a copy of this context, for one submission to a thread pool
    (the running operation goes along; a context runs on one thread at a time, so
    copy once per submission)."""
    context = contextvars.copy_context()

    def call(*args: Any, **kwargs: Any) -> T:
        return context.run(fn, *args, **kwargs)

    return call
