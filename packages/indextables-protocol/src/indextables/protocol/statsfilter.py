"""Pruning files by their min/max statistics (a snapshot's ``stats_filter``).

A stats filter is a :class:`~indextables.protocol.predicates.Predicate`
evaluated with :meth:`~indextables.protocol.predicates.Predicate.may_match`
against one file's statistics: for each column it reads, the bounds are
``minValues[column]`` and ``maxValues[column]``, except that a max of
:data:`STATS_TRUNCATION` characters or more counts as absent (writers
truncate long strings, so such a max bounds nothing). A file is dropped only
when the predicate proves that none of its rows can match.

State formats may evaluate it without building entries (see
:class:`~indextables.protocol.stateformat.StatsPrunable`); :func:`keep_by_stats`
uses that capability when the loaded files offer it and checks entry by entry
otherwise, with the same semantics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from indextables.protocol.predicates import Predicate
from indextables.protocol.state import FileEntry, PartitionBounds
from indextables.protocol.stateformat import StatsPrunable

__all__ = [
    "STATS_TRUNCATION",
    "bounds_of",
    "entry_may_match",
    "keep_by_stats",
    "stats_bounds",
    "usable_max",
]

STATS_TRUNCATION: Final = 32


def _stat(values: Mapping[str, str] | None, column: str) -> str | None:
    return None if not values else values.get(column)


def usable_max(high: str | None) -> str | None:
    """A recorded max as an upper bound: None when absent or possibly truncated."""
    return None if high is None or len(high) >= STATS_TRUNCATION else high


def stats_bounds(entry: FileEntry, columns: Iterable[str]) -> dict[str, PartitionBounds]:
    """The bounds a stats filter sees for ``entry`` on ``columns`` (see :func:`bounds_of`)."""
    return bounds_of(entry.min_values, entry.max_values, columns)


def bounds_of(
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    columns: Iterable[str],
) -> dict[str, PartitionBounds]:
    """The bounds a stats filter sees on ``columns`` for one file's min/max statistics.

    A max that may have been truncated is absent (:func:`usable_max`).
    """
    return {
        column: PartitionBounds(_stat(min_values, column), usable_max(_stat(max_values, column)))
        for column in columns
    }


def entry_may_match(predicate: Predicate, entry: FileEntry) -> bool:
    """Whether ``entry``'s statistics may satisfy ``predicate`` (the per-entry check)."""
    return predicate.may_match(stats_bounds(entry, predicate.columns()))


def keep_by_stats(files: Sequence[FileEntry], predicate: Predicate) -> list[FileEntry]:
    """The entries of ``files`` whose statistics may satisfy ``predicate``, in order.

    Uses the files' own column-wise evaluation when they offer one (only the
    kept entries are then built), else :func:`entry_may_match` per entry.
    """
    if not isinstance(files, StatsPrunable):
        return [entry for entry in files if entry_may_match(predicate, entry)]
    indices = files.stats_may_match(predicate)
    select = getattr(files, "select", None)
    if select is not None:
        selected: list[FileEntry] = select(indices)
        return selected
    return [files[i] for i in indices]
