"""Companion splits of a sync's groups built side by side in worker processes.

Each group (files of one partition value, up to TARGET INPUT SIZE) becomes one
split, independent of the others: a worker process indexes it, uploads the
split and hands back its AddAction; the caller commits them in group order, in
batches as before (an interrupted sync still resumes). Document building is
Python, so threads would share one interpreter: each group is built by a fresh
interpreter (``python -m indextables.search.companion.worker``, the job pickled
on its stdin), never a fork of a process running Arrow's, Tantivy's or
delta-rs's threads, and never a re-import of the caller's ``__main__`` (as
multiprocessing's spawn does: a script without a main guard would run again).
At most ``spark.indextables.companion.buildParallelism`` run at a time
(default: the usable cores), up to :data:`LOCAL_BUILDS` of them in threads of
this process (the caller only waits and commits) and the others in worker
processes, of which at most :data:`LOCAL_BIG_BUILDS` of :data:`WORKER_MIN_BYTES` of
source or more: two big builds sharing one interpreter convoy on its GIL, so the
second big one goes to a worker. One group, or a parallelism of 1, builds in
this process. Each build holds its own Tantivy writer heap (WRITER HEAP SIZE).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

from indextables.protocol.actions import AddAction
from indextables.protocol.store import ObjectStore
from indextables.search.companion.build import CompanionGroup, build_split
from indextables.search.companion.stringmodes import StripMode
from indextables.search.errors import CompanionError
from indextables.search.options import parse_int
from indextables.search.schema.mapping import FieldSpec
from indextables.search.table.tableaccess import open_table_store

__all__ = ["PARALLELISM_OPTION", "SplitJob", "build_parallelism", "build_splits"]

PARALLELISM_OPTION = "spark.indextables.companion.buildParallelism"
#: Builds run by threads of the calling process at once (the others by worker
#: processes): a small group is built without a worker's start-up (~0.8 CPU-second).
LOCAL_BUILDS = 2
#: Of those, the builds of :data:`WORKER_MIN_BYTES` or more of source. About half of a
#: build's CPU is Python holding the GIL; two big builds as threads of one interpreter
#: took 31-36 CPU-seconds for 2M rows where one thread and one worker took 23-26 and
#: ``write_table`` 24-29 (docs/performance.md), so a second big build goes to a worker.
LOCAL_BIG_BUILDS = 1
#: Source bytes from which a group pays for a worker's start-up: the GIL it no longer
#: shares saves ~0.36 CPU-second per MB of the benchmark's log rows, the start-up costs
#: ~0.8, so the break-even is ~2.2 MB; half the spreading's smallest run.
WORKER_MIN_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class SplitJob:
    """What every group's split shares: where it goes and how it is indexed."""

    index_uri: str
    options: Mapping[str, str]
    root: str
    specs: tuple[FieldSpec, ...]
    data_schema: pa.Schema
    partition_columns: tuple[str, ...]
    fast_field_mode: str
    source_version: int | None
    heap_size: int
    batch_size: int
    string_modes: Mapping[str, StripMode]


def build_parallelism(options: Mapping[str, str]) -> int:
    """The most worker processes a sync builds splits in (the option, else the usable cores).

    Raises:
        OptionError: the option is not an integer >= 1.
    """
    for key, value in options.items():
        if key.lower() == PARALLELISM_OPTION.lower():
            return parse_int(PARALLELISM_OPTION, str(value), minimum=1)
    return _usable_cores()


def build_splits(
    job: SplitJob, groups: Sequence[CompanionGroup], *, workers: int
) -> Generator[AddAction, None, None]:
    """Each group's split, built (``workers`` at a time) and uploaded; AddActions in order.

    Groups are handed out as workers free up, ahead of the caller's commits;
    closing the iterator early (a failure) stops the pool once the running
    groups are done (their uploads are orphan files, as after a kill).

    Raises:
        CompanionSourceError: a file cannot be read or does not fit the schema.
        CompanionError: a worker process died (out of memory, killed).
    """
    count = min(workers, len(groups))
    if count <= 1:
        store = open_table_store(job.index_uri, job.options)
        for group in groups:
            yield _build(job, group, store)
        return
    local = threading.BoundedSemaphore(LOCAL_BUILDS) if LOCAL_BUILDS else None
    local_big = threading.BoundedSemaphore(LOCAL_BIG_BUILDS) if LOCAL_BIG_BUILDS else None

    def run(group: CompanionGroup) -> AddAction:
        big = group.input_bytes >= WORKER_MIN_BYTES
        slots = _take([local, local_big] if big else [local])
        if slots is None:
            return _in_worker(job, group)
        try:
            return _build(job, group, open_table_store(job.index_uri, job.options))
        finally:
            for slot in slots:
                slot.release()

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(run, group) for group in groups]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def _take(
    slots: Sequence[threading.BoundedSemaphore | None],
) -> list[threading.BoundedSemaphore] | None:
    """Every one of ``slots`` taken without waiting (None: one is busy or absent; none held)."""
    taken: list[threading.BoundedSemaphore] = []
    for slot in slots:
        if slot is None or not slot.acquire(blocking=False):
            for held in taken:
                held.release()
            return None
        taken.append(slot)
    return taken


def _in_worker(job: SplitJob, group: CompanionGroup) -> AddAction:
    """One group's split built by a worker process; its AddAction (or its error, raised)."""
    payload = pickle.dumps((job, group, os.getpid()))
    done = subprocess.run(
        [sys.executable, "-m", "indextables.search.companion.worker"],
        input=payload,
        capture_output=True,
        check=False,
    )
    value: object = None
    try:
        if done.returncode == 0:
            _, value = pickle.loads(done.stdout)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError):
        value = None
    if isinstance(value, AddAction):
        return value
    if isinstance(value, BaseException):
        raise value
    tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
    raise CompanionError(
        f"a companion build worker process failed (exit status {done.returncode}; out of "
        f"memory? lower {PARALLELISM_OPTION} or WRITER HEAP SIZE): " + " / ".join(tail)
    )


def build_group(job: SplitJob, group: CompanionGroup) -> AddAction:
    """A worker's task: one group's split, built and uploaded."""
    return _build(job, group, open_table_store(job.index_uri, job.options))


def _build(job: SplitJob, group: CompanionGroup, store: ObjectStore) -> AddAction:
    return build_split(
        group=group,
        root=job.root,
        store=store,
        specs=job.specs,
        data_schema=job.data_schema,
        partition_columns=job.partition_columns,
        fast_field_mode=job.fast_field_mode,
        source_version=job.source_version,
        heap_size=job.heap_size,
        batch_size=job.batch_size,
        string_modes=job.string_modes,
        options=job.options,
    )


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
