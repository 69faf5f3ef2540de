"""Streaming sync: keep a companion index in sync by polling its source.

The reference's ``BUILD INDEXTABLES COMPANION ... WITH STREAMING POLL INTERVAL n
SECONDS`` as a loop: each cycle first reads the source's change signature
(:func:`~indextables.search.companion.sources.source_signature`: the Delta
commit number, the Parquet directory's listing, the Iceberg metadata file);
when it equals the one of the last sync the cycle ends there, without listing
the source's files or opening the index. Otherwise it runs
:func:`~indextables.search.build_companion` (an incremental sync). Between
cycles it waits ``poll_seconds`` on ``stop``, so setting ``stop`` from another
thread ends the loop at once.
"""

from __future__ import annotations

import inspect
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from indextables.search.companion.api import build_companion
from indextables.search.companion.sources import source_signature
from indextables.search.companion.sync import CompanionResult
from indextables.search.errors import ArgumentError

__all__ = ["StreamingSummary", "SyncCycle", "sync_companion_forever"]

_BUILD_ARGS = frozenset(inspect.signature(build_companion).parameters) - {
    "source",
    "location",
    "source_format",
    "dry_run",
}


@dataclass(frozen=True, slots=True)
class SyncCycle:
    """One cycle of a streaming sync.

    Attributes:
        number: 1 for the first cycle.
        signature: the source's change signature the cycle saw.
        result: the sync's result row; None when the cycle was skipped (the source
            was unchanged since the last sync).
    """

    number: int
    signature: str
    result: CompanionResult | None


@dataclass(frozen=True, slots=True)
class StreamingSummary:
    """What a streaming sync did before it stopped.

    Attributes:
        cycles: cycles run.
        syncs: cycles that ran a sync (the others were skipped).
        last: the last sync's result row (None if none ran).
    """

    cycles: int
    syncs: int
    last: CompanionResult | None


def sync_companion_forever(
    source: str,
    location: str,
    *,
    source_format: str,
    poll_seconds: float,
    max_cycles: int | None = None,
    stop: threading.Event | None = None,
    on_cycle: Callable[[SyncCycle], None] | None = None,
    **build_args: Any,
) -> StreamingSummary:
    """Sync the companion index at ``location`` now, then again whenever the source changes.

    Args:
        source, location, source_format: as :func:`~indextables.search.build_companion`.
        poll_seconds: the wait between cycles (> 0).
        max_cycles: stop after this many cycles (None: until ``stop`` is set).
        stop: an event another thread sets to end the loop (the wait ends at once;
            a sync under way finishes first).
        on_cycle: called after each cycle with its :class:`SyncCycle`.
        build_args: the other keyword options of ``build_companion`` (indexing_modes,
            target_input_size, where, options, ...), used by every sync.

    Returns:
        How many cycles ran and synced, and the last sync's result.

    Raises:
        ArgumentError: a bad poll interval, cycle count or option.
        CompanionError, CompanionSourceError: a sync failed (the loop ends; what
            earlier cycles committed stays).
    """
    if (
        isinstance(poll_seconds, bool)
        or not isinstance(poll_seconds, int | float)
        or not math.isfinite(poll_seconds)
        or poll_seconds <= 0
    ):
        raise ArgumentError(f"poll_seconds={poll_seconds!r} must be a positive number of seconds")
    if max_cycles is not None and (
        isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1
    ):
        raise ArgumentError(f"max_cycles={max_cycles!r} must be a positive int or None")
    if stop is not None and not isinstance(stop, threading.Event):
        raise ArgumentError(f"stop={stop!r} must be a threading.Event")
    unknown = sorted(set(build_args) - _BUILD_ARGS)
    if unknown:
        raise ArgumentError(
            f"{', '.join(unknown)}: not options of build_companion "
            f"(options: {', '.join(sorted(_BUILD_ARGS))})"
        )
    event = stop if stop is not None else threading.Event()
    version = build_args.get("from_version")
    synced: str | None = None
    cycles = syncs = 0
    last: CompanionResult | None = None
    while not event.is_set():
        cycles += 1
        signature = source_signature(
            source, source_format.lower(), version=version, options=build_args.get("options")
        )
        result = None
        if signature != synced:
            result = build_companion(source, location, source_format=source_format, **build_args)
            synced, last = signature, result
            syncs += 1
        if on_cycle is not None:
            on_cycle(SyncCycle(cycles, signature, result))
        if max_cycles is not None and cycles >= max_cycles:
            break
        event.wait(poll_seconds)
    return StreamingSummary(cycles=cycles, syncs=syncs, last=last)
