"""Guard against PySpark 4.3.0 reusing a planned read for a different query.

Spark 4.3.0 caches the planned read (pushed filters and partitions) per
relation: after ``df.where("id = 2").collect()``, ``df.count()`` runs the
cached read again, with the filter of the first query, although its own plan
has no filter. Every planned read therefore carries a random token; the
first SQL execution that runs it claims the token (a marker file on the
executor's host) and may use the pushed filters and pruning. Any other
execution sees a claim by another execution id and does not trust the plan.

On a reuse the first task re-reads the table's current snapshot (or the
pinned time-travel version) in full and the other tasks return nothing, so
a reused DataFrame or temporary view also sees commits made after its first
action. Claims are marker files on the executor's host: all executors on one
host (local, local-cluster) agree; on a multi-host cluster a host that never
ran the first execution cannot see its claim (documented limitation).
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid

_MARKER_DIR = os.path.join(tempfile.gettempdir(), "indextables-plan-claims")
_MARKER_TTL = 24 * 3600.0


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


def is_reused(token: str) -> bool:
    """True when another SQL execution already ran this planned read (a stale, reused plan)."""
    execution = current_execution_id()
    if execution is None:
        return False
    os.makedirs(_MARKER_DIR, exist_ok=True)
    marker = os.path.join(_MARKER_DIR, token)
    owner = _read(marker)
    if owner is None:
        owner = _claim(marker, execution)
    return owner != execution


def _read(marker: str) -> str | None:
    try:
        with open(marker, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _claim(marker: str, execution: str) -> str | None:
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
    _sweep(os.path.dirname(marker))
    return _read(marker)


def _sweep(marker_dir: str) -> None:
    """Drop markers older than a day (they only matter while a DataFrame lives)."""
    cutoff = time.time() - _MARKER_TTL
    try:
        names = os.listdir(marker_dir)
    except OSError:
        return
    if len(names) < 1000:
        return
    for name in names:
        path = os.path.join(marker_dir, name)
        try:
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            continue
