"""The live files of a snapshot: a base (a state's lazy entries) with an overlay.

A snapshot is its base state's entries, less the paths the version files
after it removed or re-added, plus the entries those version files added.
:class:`LiveFiles` keeps exactly that shape instead of copying every entry
into a dict: the base stays whatever sequence the state format returned
(avrostate's columnar :class:`FileEntries` builds an entry only when it is
read), and planners read the columns they need without building entries.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, overload

from indextables.protocol.state import FileEntry
from indextables.protocol.stateformat import StatsPrunable
from indextables.protocol.statsfilter import entry_may_match

if TYPE_CHECKING:
    from indextables.protocol.predicates import Predicate

__all__ = ["LiveFiles"]


class LiveFiles(Sequence[FileEntry]):
    """A sequence of live :class:`FileEntry` built on access, with column access.

    Args:
        base: the base entries (any sequence; a columnar one is read by column).
        keep: the indices of ``base`` still live, ascending; ``None`` keeps all.
        added: entries the version files after the base added, in commit order.

    Order: the kept base entries in base order, then the added entries.
    Equality: equal to any sequence holding equal entries in the same order.
    """

    __slots__ = ("_added", "_base", "_keep")

    def __init__(
        self,
        base: Sequence[FileEntry] = (),
        *,
        keep: Sequence[int] | None = None,
        added: Sequence[FileEntry] = (),
    ) -> None:
        self._base = base
        self._keep = keep
        self._added = tuple(added)

    @classmethod
    def overlay(
        cls,
        base: Sequence[FileEntry],
        *,
        dropped: set[str] | frozenset[str],
        added: Sequence[FileEntry],
    ) -> LiveFiles:
        """``base`` without the entries whose path is in ``dropped``, then ``added``."""
        if not dropped:
            return cls(base, added=added)
        paths = _column(base, "paths", "path")
        keep = [i for i, path in enumerate(paths) if path not in dropped]
        return cls(base, keep=None if len(keep) == len(paths) else keep, added=added)

    # -- the sequence -------------------------------------------------------

    def _base_len(self) -> int:
        return len(self._base) if self._keep is None else len(self._keep)

    def __len__(self) -> int:
        return self._base_len() + len(self._added)

    @overload
    def __getitem__(self, index: int) -> FileEntry: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[FileEntry]: ...

    def __getitem__(self, index: int | slice) -> FileEntry | Sequence[FileEntry]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"file index {index} out of range")
        in_base = self._base_len()
        if index >= in_base:
            return self._added[index - in_base]
        return self._base[index if self._keep is None else self._keep[index]]

    def __iter__(self) -> Iterator[FileEntry]:
        if self._keep is None:
            yield from self._base  # a columnar base builds its entries block by block
        elif len(self._keep) * 2 >= len(self._base):
            keep = set(self._keep)
            yield from (entry for i, entry in enumerate(self._base) if i in keep)
        else:
            yield from (self._base[i] for i in self._keep)
        yield from self._added

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LiveFiles({len(self)} files, {len(self._added)} added after the base)"

    # -- columns, without building entries ----------------------------------

    @property
    def paths(self) -> Sequence[str]:
        """Every live file's path."""
        return self._column("paths", "path")

    @property
    def sizes(self) -> Sequence[int | None]:
        """Every live file's size in bytes."""
        return self._column("sizes", "size")

    @property
    def partition_values(self) -> Sequence[Mapping[str, str]]:
        """Every live file's partition values."""
        return self._column("partition_values", "partition_values")

    @property
    def num_records(self) -> Sequence[int | None]:
        """Every live file's record count."""
        return self._column("num_records", "num_records")

    # -- building only some entries ----------------------------------------

    def select(self, indices: Sequence[int]) -> list[FileEntry]:
        """The entries at ``indices`` (ascending), the base's built a block at a time."""
        in_base = self._base_len()
        split = bisect.bisect_left(indices, in_base)
        wanted = indices[:split]
        if self._keep is not None:
            wanted = [self._keep[i] for i in wanted]
        select = getattr(self._base, "select", None)
        if select is not None:
            base: list[FileEntry] = select(wanted)
        else:
            base = [self._base[i] for i in wanted]
        return base + [self._added[i - in_base] for i in indices[split:]]

    def stats_may_match(self, predicate: Predicate) -> list[int]:
        """Indices (ascending) of the live files whose statistics may satisfy ``predicate``.

        The base's column-wise evaluation when it has one (no entry built),
        else :func:`~indextables.protocol.statsfilter.entry_may_match` per entry.
        """
        if isinstance(self._base, StatsPrunable):
            found = self._base.stats_may_match(predicate)
            if self._keep is not None:
                position = {index: i for i, index in enumerate(self._keep)}
                found = [position[i] for i in found if i in position]
        else:
            found = [i for i, e in enumerate(self._iter_base()) if entry_may_match(predicate, e)]
        in_base = self._base_len()
        return found + [
            in_base + i for i, e in enumerate(self._added) if entry_may_match(predicate, e)
        ]

    def _iter_base(self) -> Iterator[FileEntry]:
        if self._keep is None:
            return iter(self._base)
        return (self._base[i] for i in self._keep)

    def _column(self, column: str, attribute: str) -> Sequence[Any]:
        """The column (the base's own object when nothing was dropped or added: read-only)."""
        base = _column(self._base, column, attribute)
        if self._keep is not None:
            base = [base[i] for i in self._keep]
        if not self._added:
            return base
        return list(chain(base, (getattr(entry, attribute) for entry in self._added)))


def _column(entries: Sequence[FileEntry], column: str, attribute: str) -> Sequence[Any]:
    """The base's own column when it has one, else read from its entries."""
    found = getattr(entries, column, None)
    if found is not None and not callable(found):
        return found  # type: ignore[no-any-return]
    return [getattr(entry, attribute) for entry in entries]
