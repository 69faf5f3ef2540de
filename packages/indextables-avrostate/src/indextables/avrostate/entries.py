"""Lazy, columnar access to the live FileEntry records of a state.

:class:`FileEntries` is the ``files`` sequence of a loaded state. Reading a
state decodes only the planning columns (path, size, partition values, record
count, footer offsets); a :class:`~indextables.protocol.state.FileEntry` is
built from its record's bytes the first time it is indexed. Planners that
only need the columns use the column properties and never build entries.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, overload

from indextables.avrostate import impl
from indextables.avrostate._decode_common import (
    SLOT_MAX_VALUES,
    SLOT_MIN_VALUES,
    Columns,
    DecodeError,
    Plan,
)
from indextables.avrostate.errors import CorruptAvroFileError
from indextables.protocol.predicates import compare_values
from indextables.protocol.state import FileEntry

if TYPE_CHECKING:
    from indextables.protocol.predicates import Predicate

# Writers truncate string statistics to 32 characters: such a max bounds nothing.
STATS_TRUNCATION: Final = 32

__all__ = ["BlockRef", "FileEntries", "build_file_entry"]

_NEW: Final = object.__new__
# Member descriptors set slots without the frozen dataclass's __setattr__:
# building an entry this way takes about half the time of FileEntry(...).
_SETTERS: Final[tuple[Callable[[Any, Any], None], ...]] = tuple(
    getattr(FileEntry, f.name).__set__ for f in dataclasses.fields(FileEntry)
)


def build_file_entry(values: Sequence[Any]) -> FileEntry:
    """Build a FileEntry from its slot values in dataclass field order, fast."""
    entry: FileEntry = _NEW(FileEntry)
    for setter, value in zip(_SETTERS, values, strict=True):
        setter(entry, value)
    return entry


@dataclasses.dataclass(frozen=True, slots=True)
class BlockRef:
    """A decompressed block the entries point into, with the plan that decodes it."""

    data: bytes
    plan: Plan
    path: str


_DOC_MAPPING_JSON = FileEntry.__dict__["doc_mapping_json"]


class FileEntries(Sequence[FileEntry]):
    """The live entries of a state: planning columns now, full entries on access.

    ``blocks[k]`` holds the entries from ``block_starts[k]`` up to the next
    block's start. The column properties return the internal lists: treat
    them as read-only.
    """

    __slots__ = (
        "_block_starts",
        "_blocks",
        "_built",
        "_cols",
        "_doc_mappings",
        "_spans",
        "_with_nulls",
    )

    def __init__(self, columns: Columns, block_starts: list[int], blocks: list[BlockRef]) -> None:
        self._cols = columns
        self._block_starts = block_starts
        self._blocks = blocks
        self._built: list[FileEntry | None] | None = None
        # column -> per block, its entries' statistic spans (see stat_codes)
        self._spans: dict[str, list[bytes]] = {}
        self._with_nulls: dict[str, Sequence[int | None]] = {}
        self._doc_mappings: Mapping[str, str] | None = None

    @classmethod
    def empty(cls) -> FileEntries:
        """A sequence with no entries."""
        return cls(Columns(), [], [])

    def __len__(self) -> int:
        return len(self._cols.paths)

    @overload
    def __getitem__(self, index: int) -> FileEntry: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[FileEntry]: ...

    def __getitem__(self, index: int | slice) -> FileEntry | Sequence[FileEntry]:
        if isinstance(index, slice):
            return [self._entry(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"entry index {index} out of range")
        return self._entry(index)

    def __iter__(self) -> Iterator[FileEntry]:
        built = self._built_list()
        for block_id, lo, hi in self._runs():
            if any(entry is None for entry in built[lo:hi]):
                decoded = self._decode_range(block_id, lo, hi)
                for i, entry in enumerate(decoded, lo):
                    if built[i] is None:
                        built[i] = entry
            yield from built[lo:hi]  # type: ignore[misc]

    def _built_list(self) -> list[FileEntry | None]:
        if self._built is None:
            self._built = [None] * len(self)
        return self._built

    def _entry(self, i: int) -> FileEntry:
        built = self._built_list()
        entry = built[i]
        if entry is None:
            block_id = bisect.bisect_right(self._block_starts, i) - 1
            entry = built[i] = self._decode_range(block_id, i, i + 1)[0]
        return entry

    def resolve_doc_mappings(self, registry: Mapping[str, str]) -> FileEntries:
        """Give entries built from now on their ``doc_mapping_json`` from ``registry``.

        An entry that carries only a ``docMappingRef`` found in ``registry``
        comes out with both; others are unchanged. Returns ``self``.
        """
        self._doc_mappings = registry or None
        return self

    def _decode_range(self, block_id: int, lo: int, hi: int) -> list[FileEntry]:
        """Build the entries ``[lo, hi)``, all in block ``block_id``, in one decoder call."""
        cols = self._cols
        return self._decode(
            block_id, cols.starts[lo:hi], cols.paths[lo:hi], cols.partition_values[lo:hi]
        )

    def _decode_at(self, block_id: int, indices: list[int]) -> list[FileEntry]:
        """Build the entries at ``indices``, all in block ``block_id``, in one decoder call."""
        cols = self._cols
        return self._decode(
            block_id,
            [cols.starts[i] for i in indices],
            [cols.paths[i] for i in indices],
            [cols.partition_values[i] for i in indices],
        )

    def _decode(
        self,
        block_id: int,
        starts: Sequence[int],
        paths: Sequence[str],
        partition_values: Sequence[Mapping[str, str]],
    ) -> list[FileEntry]:
        block = self._blocks[block_id]
        try:
            entries: list[FileEntry] = impl.decoder().decode_entries(
                block.data, starts, paths, partition_values, block.plan, FileEntry
            )
        except DecodeError as exc:
            raise CorruptAvroFileError(block.path, f"record does not decode: {exc}") from exc
        registry = self._doc_mappings
        if registry is not None:
            for entry in entries:
                ref = entry.doc_mapping_ref
                if ref is not None and entry.doc_mapping_json is None:
                    found = registry.get(ref)
                    if found is not None:
                        # The entry is new and not yet shared: set the slot in place
                        # (a copy per entry was most of a large snapshot's cost).
                        _DOC_MAPPING_JSON.__set__(entry, found)
        return entries

    @property
    def paths(self) -> Sequence[str]:
        """Every entry's path."""
        return self._cols.paths

    @property
    def sizes(self) -> Sequence[int | None]:
        """Every entry's size in bytes."""
        return self._nullable("sizes")

    @property
    def partition_values(self) -> Sequence[Mapping[str, str]]:
        """Every entry's partition values (equal maps are one shared object)."""
        return self._cols.partition_values

    @property
    def added_at_versions(self) -> Sequence[int]:
        """Every entry's ``addedAtVersion``."""
        return self._cols.added_at_versions

    def plans(self) -> list[Plan]:
        """The decoding plans of the blocks the entries live in."""
        return [block.plan for block in self._blocks]

    @property
    def num_records(self) -> Sequence[int | None]:
        """Every entry's record count."""
        return self._nullable("num_records")

    @property
    def footer_start_offsets(self) -> Sequence[int | None]:
        """Every entry's footer start offset."""
        return self._nullable("footer_starts")

    @property
    def footer_end_offsets(self) -> Sequence[int | None]:
        """Every entry's footer end offset."""
        return self._nullable("footer_ends")

    def _nullable(self, name: str) -> Sequence[int | None]:
        found = self._with_nulls.get(name)
        if found is None:
            found = self._with_nulls[name] = self._cols.with_nulls(name)
        return found

    def column_stats(self, column: str) -> tuple[list[str | None], list[str | None]]:
        """Return every entry's ``minValues[column]`` and ``maxValues[column]``.

        Decodes only that key of the two maps, without building entries.
        """
        mins: list[str | None] = []
        maxs: list[str | None] = []
        for block_id, lo, hi in self._runs():
            block = self._blocks[block_id]
            starts = self._cols.starts[lo:hi]
            try:
                mins += impl.decoder().map_column(
                    block.data, starts, block.plan, SLOT_MIN_VALUES, column
                )
                maxs += impl.decoder().map_column(
                    block.data, starts, block.plan, SLOT_MAX_VALUES, column
                )
            except DecodeError as exc:
                raise CorruptAvroFileError(block.path, f"record does not decode: {exc}") from exc
        return mins, maxs

    def stats_may_match(self, predicate: Predicate) -> list[int]:
        """Indices of the entries whose min/max statistics may satisfy ``predicate``.

        Equals ``[i for i in range(len(self)) if predicate.may_match(bounds_i)]``
        with ``bounds_i`` built from entry i's ``minValues``/``maxValues``, but
        compares statistics straight from the record bytes, a column at a time,
        without building entries. A max of 32 or more characters never prunes:
        the writer truncates long strings, so it is not an upper bound.
        """
        return list(itertools.compress(range(len(self)), stats_verdicts(self, predicate)))

    def select(self, indices: Sequence[int]) -> list[FileEntry]:
        """The entries at ``indices`` (ascending), built a block at a time.

        Cheaper than indexing one by one when many are kept: one decoder call
        per block (``stats_may_match`` answers such index lists).
        """
        built = self._built_list()
        out: list[FileEntry] = []
        bounds = [*self._block_starts, len(self)]
        start = 0
        for block_id in range(len(self._blocks)):
            end = bisect.bisect_left(indices, bounds[block_id + 1], start)
            wanted = [i for i in indices[start:end] if built[i] is None]
            if wanted:
                for i, entry in zip(wanted, self._decode_at(block_id, wanted), strict=True):
                    built[i] = entry
            out += [built[i] for i in indices[start:end]]  # type: ignore[misc]
            start = end
        return out

    def clear_caches(self) -> None:
        """Forget built entries and located statistics (they are rebuilt on demand).

        Frees their memory; the planning columns and block bytes stay.
        """
        self._built = None
        self._spans.clear()
        self._with_nulls.clear()

    def stat_codes(self, column: str, literals: list[str], *, plain: bool = False) -> list[bytes]:
        """Order each entry's min and max statistic of ``column`` against each literal.

        Per literal, one byte per entry: ``4 * min code + max code``, a code
        being 0 (below the literal), 1 (equal), 2 (above) or 3 (no usable
        statistic: absent, or a max truncated by the writer). Orders are
        numeric-aware like ``compare_values``, or plain string order with
        ``plain``. Where each entry's statistics of ``column`` lie in its
        record is found once and kept, so later predicates on the column only
        compare.
        """
        order = None if plain else compare_values
        parts: list[list[bytes]] = [[] for _ in literals]
        for block, spans in zip(self._blocks, self._stat_spans(column), strict=True):
            try:
                codes = impl.decoder().stat_codes(
                    block.data, spans, literals, order, STATS_TRUNCATION
                )
            except DecodeError as exc:
                raise CorruptAvroFileError(block.path, f"record does not decode: {exc}") from exc
            for part, more in zip(parts, codes, strict=True):
                part.append(more)
        return [b"".join(part) for part in parts]

    def _stat_spans(self, column: str) -> list[bytes]:
        """Per block, where its entries' min and max of ``column`` lie (computed once)."""
        found = self._spans.get(column)
        if found is None:
            found = []
            for block_id, lo, hi in self._runs():
                block = self._blocks[block_id]
                try:
                    found.append(
                        impl.decoder().stat_spans(
                            block.data, self._cols.starts[lo:hi], block.plan, column
                        )
                    )
                except DecodeError as exc:
                    raise CorruptAvroFileError(
                        block.path, f"record does not decode: {exc}"
                    ) from exc
            self._spans[column] = found
        return found

    def _runs(self) -> Iterator[tuple[int, int, int]]:
        """Yield ``(block id, first entry, end entry)`` for each run of one block."""
        bounds = [*self._block_starts, len(self)]
        for block_id in range(len(self._blocks)):
            yield block_id, bounds[block_id], bounds[block_id + 1]

    def block_runs(self) -> Iterator[tuple[BlockRef, int, int]]:
        """Yield ``(block, first entry, end entry)`` per block, for raw-copy compaction."""
        for block_id, lo, hi in self._runs():
            yield self._blocks[block_id], lo, hi

    @property
    def record_starts(self) -> Sequence[int]:
        """Each entry's record offset inside its block."""
        return self._cols.starts

    @property
    def record_ends(self) -> Sequence[int]:
        """Each entry's record end offset inside its block."""
        return self._cols.ends


def stats_verdicts(files: FileEntries, predicate: Predicate) -> bytes:
    """Per entry, 1 if its min/max statistics may satisfy ``predicate``, else 0 (see
    :meth:`FileEntries.stats_may_match`); ``And``/``Or``/``Not``, comparisons,
    ``In`` and ``StartsWith`` are evaluated column-wise, other nodes per entry."""
    from indextables.avrostate import stats_skipping

    return stats_skipping.verdicts(files, predicate)
