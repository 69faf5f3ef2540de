"""PURGE DELETES: rewrite the splits that hold deleted documents, dropping them.

A delete (:mod:`.deleterows`) leaves a deleted row's bytes in its split: the
segments' postings, doc store and fast fields, and the Arrow copy, only hidden by
the ``.del`` bitsets. A merge by segments would copy them as they are, so a source
with deleted documents is never merged that way (:mod:`.segmentmerge` refuses
it): its live rows are read and indexed again into a new split, whose
statistics the writer computes from those rows alone. MERGE SPLITS does that for
the groups it packs; with PURGE DELETES, every other split carrying deletes (its
add's ``deleteOpstamp`` is set) is a group of its own, rewritten the same way.
``min_deleted_fraction`` keeps only the splits whose deleted documents are at
least that share of all their documents (read from each split's ``meta.json``).

What stays: the old splits until PURGE INDEXTABLE removes them (after its
retention), and the old log versions, whose adds still carry the statistics
(min/max) the deleted rows contributed, until CHECKPOINT and log retention
truncate them (docs/format.md, "Deletes").
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping, Sequence

from indextables.search.errors import ArgumentError
from indextables.search.options import parse_read
from indextables.search.splits.splitcache import SplitCache
from indextables.search.table.livesplits import LiveSplit
from indextables.search.table.tableaccess import open_table_store

__all__ = ["check_fraction", "deleted_fraction", "purge_splits"]


def check_fraction(value: object) -> float | None:
    """``min_deleted_fraction`` as given (None, or a number in (0, 1]).

    Raises:
        ArgumentError: anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ArgumentError(
            f"min_deleted_fraction={value!r} must be a number above 0 and at most 1"
        )
    return float(value)


def purge_splits(
    uri: str,
    options: Mapping[str, str],
    splits: Sequence[LiveSplit],
    *,
    held: Collection[str],
    where: str | None = None,
    skipped: frozenset[str] = frozenset(),
    min_deleted_fraction: float | None = None,
) -> list[LiveSplit]:
    """The splits with deleted documents (above ``min_deleted_fraction`` if given) whose
    paths ``held`` (the splits other merge groups take) does not name: each is rewritten
    alone."""
    fraction = check_fraction(min_deleted_fraction)
    predicate = None
    if where:
        from indextables.protocol.predicates import parse_predicate

        predicate = parse_predicate(where)
    found = [
        s
        for s in splits
        if s.delete_opstamp is not None
        and s.path not in held
        and s.path not in skipped
        and (predicate is None or predicate.matches(s.partition_values))
    ]
    if fraction is not None:
        found = [s for s in found if deleted_fraction(uri, options, s) >= fraction]
    return found


def deleted_fraction(uri: str, options: Mapping[str, str], split: LiveSplit) -> float:
    """The share of the split's documents that are deleted (from its ``meta.json``)."""
    read = parse_read(options)
    cache = SplitCache(read.cache_directory, read.cache_max_bytes)

    def counts(directory: str) -> float:
        with open(os.path.join(directory, "meta.json"), encoding="utf-8") as handle:
            segments = json.load(handle)["segments"]
        total = sum(int(s["max_doc"]) for s in segments)
        gone = sum(int((s.get("deletes") or {}).get("num_deleted_docs", 0)) for s in segments)
        return gone / total if total else 0.0

    return cache.use(uri, split.entry.ref, lambda: open_table_store(uri, options), counts)
