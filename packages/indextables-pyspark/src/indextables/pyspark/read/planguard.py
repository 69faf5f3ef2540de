"""Guard against PySpark 4.3.0 reusing a planned read for a different query.

Spark 4.3.0 caches the planned read (pushed filters and partitions) per
relation: after ``df.where("id = 2").collect()``, ``df.count()`` runs the
cached read again, with the filter of the first query, although its own plan
has no filter. Every planned read therefore carries a random token; the
first SQL execution that runs it claims the token and may use the pushed
filters and pruning. Any other execution sees a claim by another execution
id and does not trust the plan.

The claim is a small object ``_indextables_plans/<token>`` written with
put-if-absent into the table's own object store, so every executor host of
a cluster sees the same first claim (the store's conditional write decides
the race). The prefix holds no ``.split`` file and lies outside the
transaction log, so no reader, PURGE or REPAIR takes a claim for table data.
Claims only matter while a DataFrame lives: one read in 16 sweeps claims
older than a day, and ``PURGE INDEXTABLE`` removes them too. A store that
refuses the write (read-only credentials) falls back to a marker file on the
executor's host, which all executors of one host share; one such claim in 16
also deletes the host's markers older than a day.

On a reuse the first task re-reads the table's current snapshot (or the
pinned time-travel version) in full and the other tasks return nothing, so
a reused DataFrame or temporary view also sees commits made after its first
action.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import uuid

from indextables.protocol.errors import ObjectExistsError, ObjectStoreError
from indextables.protocol.store import ObjectStore

CLAIM_PREFIX = "_indextables_plans/"
CLAIM_TTL_HOURS = 24.0
_MARKER_DIR = os.path.join(tempfile.gettempdir(), "indextables-plan-claims")
_SWEEP_ONE_IN = 16
_LOG = logging.getLogger(__name__)
# Owners never change once claimed: cache them per worker process.
_OWNERS: dict[str, str] = {}


def new_token() -> str:
    """A fresh token for one planned read."""
    return uuid.uuid4().hex


def current_execution_id() -> str | None:
    """The SQL execution id of the running task (None outside a SQL execution)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return None
    return context.getLocalProperty("spark.sql.execution.id")


def is_reused(token: str, store: ObjectStore) -> bool:
    """True when another SQL execution already ran this planned read (a stale, reused plan).

    Args:
        token: the planned read's token.
        store: the table's object store (the claim is written there).
    """
    execution = current_execution_id()
    if execution is None:
        return False
    owner = _OWNERS.get(token)
    if owner is None:
        owner = claim(store, token, execution)
        if len(_OWNERS) > 10_000:
            _OWNERS.clear()
        _OWNERS[token] = owner
    return owner != execution


def claim(store: ObjectStore, token: str, execution: str) -> str:
    """Claim ``token`` for ``execution`` unless already claimed; return the owning execution."""
    key = CLAIM_PREFIX + token
    try:
        store.put_if_absent(key, execution.encode())
    except ObjectExistsError:
        return store.get(key).decode()
    except ObjectStoreError as error:
        _LOG.debug("plan claim %s not writable in the table store (%s): host marker", key, error)
        return _claim_on_host(token, execution)
    if _sweeps(token):
        sweep_claims(store)
    return execution


def _sweeps(token: str) -> bool:
    """True for one token in :data:`_SWEEP_ONE_IN` (tokens are random hex)."""
    return int(token[:2], 16) < 256 // _SWEEP_ONE_IN


def sweep_claims(
    store: ObjectStore, *, older_than_hours: float = CLAIM_TTL_HOURS, now: float | None = None
) -> int:
    """Delete plan claims older than ``older_than_hours``; return how many were deleted."""
    cutoff_ms = int(((now if now is not None else time.time()) - older_than_hours * 3600) * 1000)
    try:
        old = [i.key for i in store.list(CLAIM_PREFIX) if i.last_modified_ms < cutoff_ms]
        store.delete_many(old)
    except ObjectStoreError as error:
        _LOG.debug("cannot sweep plan claims: %s", error)
        return 0
    return len(old)


def _claim_on_host(token: str, execution: str) -> str:
    os.makedirs(_MARKER_DIR, exist_ok=True)
    marker = os.path.join(_MARKER_DIR, token)
    # Write then link: the marker appears complete or not at all (first link wins).
    staging = f"{marker}.{uuid.uuid4().hex}.tmp"
    with open(staging, "w", encoding="utf-8") as handle:
        handle.write(execution)
    try:
        os.link(staging, marker)
    except FileExistsError:
        pass
    finally:
        os.unlink(staging)
    with open(marker, encoding="utf-8") as handle:
        owner = handle.read()
    if _sweeps(token):
        sweep_host_markers()
    return owner


def sweep_host_markers(
    *, older_than_hours: float = CLAIM_TTL_HOURS, now: float | None = None
) -> int:
    """Delete this host's plan markers older than ``older_than_hours``; return how many."""
    cutoff = (now if now is not None else time.time()) - older_than_hours * 3600
    deleted = 0
    try:
        entries = list(os.scandir(_MARKER_DIR))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                deleted += 1
        except FileNotFoundError:
            continue  # another process swept it first
    return deleted
