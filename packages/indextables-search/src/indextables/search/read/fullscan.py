"""Whether a read is a full scan: every row of every planned split, nothing searched.

Such a read takes the whole-split path in each split (:mod:`.wholesplit`: columnar
sources, no per-hit work) and is worth reading several splits at once
(``read.splitThreads``): the copy's IPC reads and the doc-store kernels run
without the GIL. A read with a query, or with a condition on a data column
(which becomes a Tantivy query), fetches scattered hits, mostly under the GIL:
it stays split by split in the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec

__all__ = ["is_full_scan"]


def is_full_scan(
    search: SearchSpec,
    conditions: Sequence[Condition],
    partition_columns: Iterable[str],
    *,
    highlighted: bool = False,
) -> bool:
    """True when nothing but partition columns narrows the read (and nothing is highlighted)."""
    if not search.is_empty or highlighted:
        return False
    partitions = {c.lower() for c in partition_columns}
    return all(c.column.lower() in partitions and not c.path for c in conditions)
