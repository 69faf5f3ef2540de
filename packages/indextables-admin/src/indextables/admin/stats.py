"""``--stats``: what a command's operation measured, written to stderr after it.

Text form, one line::

    stats: count of /data/logs v12 in 0.084 s: splits 40 considered, 37 pruned,
    3 read; 120 rows; 81,920 bytes fetched; cache 2 hits, 1 misses; plan 0.004 s,
    fetch 0.031 s, search 0.002 s, decode 0.012 s

JSON form (``--output json``), one object on its own line, its keys those of
:class:`~indextables.search.metrics.OperationMetrics`::

    {"stats": {"operation": "count", "uri": "/data/logs", "version": 12, ...}}

Both go to stderr, so the command's own output on stdout stays as it was. The
figures are the ones the command's INFO log line carries
(:mod:`indextables.search.oplog`); every text value is redacted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from indextables.search.metrics import OperationMetrics

__all__ = ["stats_text", "write_stats"]


def stats_text(metrics: OperationMetrics) -> str:
    """The one-line text form of ``metrics``."""
    from indextables.search.metrics import PHASES  # the engine loads only when used

    version = "" if metrics.version is None else f" v{metrics.version}"
    parts = [
        f"splits {metrics.splits_considered:,} considered, {metrics.splits_pruned:,} pruned, "
        f"{metrics.splits_read:,} read",
        f"{metrics.rows:,} rows",
        f"{metrics.bytes_fetched:,} bytes fetched",
        f"cache {metrics.cache_hits:,} hits, {metrics.cache_misses:,} misses",
    ]
    if metrics.splits_written or metrics.bytes_written:
        parts.append(f"{metrics.splits_written:,} splits written ({metrics.bytes_written:,} bytes)")
    parts.append(
        ", ".join(f"{phase} {getattr(metrics, f'{phase}_seconds'):.3f} s" for phase in PHASES)
    )
    head = f"stats: {metrics.operation} of {metrics.uri}{version} in {metrics.seconds:.3f} s"
    if metrics.outcome != "ok":
        head += f" ({metrics.outcome})"
    return f"{head}: {'; '.join(parts)}"


def write_stats(
    stream: TextIO, metrics: OperationMetrics, *, as_json: bool, scrub: Callable[[str], str]
) -> None:
    """Write ``metrics`` to ``stream`` as text or as one JSON line, scrubbed by ``scrub``."""
    if as_json:
        found: dict[str, Any] = metrics.as_dict()
        found = {k: scrub(v) if isinstance(v, str) else v for k, v in found.items()}
        found["details"] = {
            k: scrub(v) if isinstance(v, str) else v for k, v in found["details"].items()
        }
        stream.write(json.dumps({"stats": found}, sort_keys=True) + "\n")
    else:
        stream.write(scrub(stats_text(metrics)) + "\n")
    stream.flush()
