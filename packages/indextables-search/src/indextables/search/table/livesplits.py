"""The live splits of a table view: columns for planning, entries only for what is kept.

A snapshot's files are the engine's lazy sequence (avro states build a
``FileEntry`` only when it is read). :class:`LiveSplits` keeps them that
way: planning reads paths, sizes, partition values and record counts as
columns, prunes by partition values and by min/max statistics without
building entries (column-wise on avro states), and builds a
:class:`LiveSplit` only for the splits that survive.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from indextables.protocol.predicates import Predicate
from indextables.protocol.state import FileEntry
from indextables.protocol.stateformat import StatsPrunable
from indextables.protocol.statsfilter import bounds_of
from indextables.search.read.splitreader import SplitEntry
from indextables.search.splits.splitcache import SplitRef

__all__ = [
    "LiveSplit",
    "LiveSplits",
    "prune_entries",
    "prune_splits",
    "select_splits",
    "split_doc_mappings",
    "split_paths",
]

PartitionValues = Mapping[str, str | None]
PartitionCheck = Callable[[PartitionValues], bool]


class LiveSplit:
    """One live split: planning reads its statistics, tasks get its :attr:`entry`."""

    __slots__ = ("_file", "doc_mapping_json", "max_values", "min_values", "partition_values")

    def __init__(
        self, file: FileEntry, doc_mapping_json: str | None, partition_columns: Sequence[str] = ()
    ) -> None:
        self._file = file
        self.doc_mapping_json = doc_mapping_json
        # What pruning reads for every split: plain slots, not properties.
        self.partition_values: PartitionValues = _complete(file.partition_values, partition_columns)
        self.min_values: Mapping[str, str] | None = file.min_values
        self.max_values: Mapping[str, str] | None = file.max_values

    def __repr__(self) -> str:
        return f"LiveSplit({self._file.path!r})"

    @property
    def path(self) -> str:
        """The split's path relative to the table root."""
        return self._file.path

    @property
    def size(self) -> int:
        """The split's size in bytes."""
        return self._file.size

    @property
    def modification_time(self) -> int:
        """When the split was written (epoch ms, the add's ``modificationTime``)."""
        return self._file.modification_time

    @property
    def num_records(self) -> int | None:
        """Rows in the split."""
        return self._file.num_records

    @property
    def num_merge_ops(self) -> int:
        """How many merges produced the split."""
        return self._file.num_merge_ops or 0

    @property
    def delete_opstamp(self) -> int | None:
        """The add's ``deleteOpstamp``: set when the split carries deleted documents."""
        return self._file.delete_opstamp

    @property
    def entry(self) -> SplitEntry:
        """What a read task needs: where the split is and how to read it."""
        return _split_entry(self._file, dict(self.partition_values), self.doc_mapping_json)


def _split_entry(
    file: FileEntry, partition_values: dict[str, str | None], doc_mapping_json: str | None
) -> SplitEntry:
    has_footer = bool(file.has_footer_offsets) or file.footer_start_offset is not None
    ref = SplitRef(
        path=file.path,
        size=file.size,
        footer_start_offset=file.footer_start_offset if has_footer else None,
        footer_end_offset=file.footer_end_offset if has_footer else None,
    )
    return SplitEntry(ref, partition_values, doc_mapping_json, tuple(file.split_tags or ()))


def _complete(values: Mapping[str, str | None], columns: Sequence[str]) -> PartitionValues:
    """Every partition column's value: a state's entry leaves null values out."""
    if all(c in values for c in columns):
        return values
    return {**dict.fromkeys(columns), **values}


class LiveSplits(Sequence[LiveSplit]):
    """The live splits of a snapshot, a :class:`LiveSplit` built per split on access.

    Args:
        files: the snapshot's files (entries carry their restored doc mapping).
        registry: the snapshot's schema registry (doc mapping hash -> JSON).
        partition_columns: the table's partition columns, in order.

    The column properties read the files' columns when they have them
    (nothing is built); treat them as read-only.
    """

    __slots__ = ("_columns", "_files", "_registry")

    def __init__(
        self,
        files: Sequence[FileEntry],
        registry: Mapping[str, str],
        partition_columns: Sequence[str],
    ) -> None:
        self._files = files
        self._registry = registry
        self._columns = tuple(partition_columns)

    def _live(self, file: FileEntry) -> LiveSplit:
        return LiveSplit(file, file.doc_mapping_json, self._columns)

    def __len__(self) -> int:
        return len(self._files)

    @overload
    def __getitem__(self, index: int) -> LiveSplit: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[LiveSplit]: ...

    def __getitem__(self, index: int | slice) -> LiveSplit | Sequence[LiveSplit]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._live(self._files[index])

    def __iter__(self) -> Iterator[LiveSplit]:
        return map(self._live, self._files)

    def __repr__(self) -> str:
        return f"LiveSplits({len(self)} splits)"

    @property
    def paths(self) -> Sequence[str]:
        """Every split's path."""
        return _column(self._files, "paths", "path")

    @property
    def sizes(self) -> Sequence[int | None]:
        """Every split's size in bytes."""
        return _column(self._files, "sizes", "size")

    @property
    def num_records(self) -> Sequence[int | None]:
        """Every split's record count."""
        return _column(self._files, "num_records", "num_records")

    @property
    def partition_values(self) -> Sequence[PartitionValues]:
        """Every split's partition values, every partition column present.

        Equal maps the files share stay one object, so a caller can decide
        once per distinct map.
        """
        done: dict[int, tuple[Any, PartitionValues]] = {}
        out: list[PartitionValues] = []
        for values in _column(self._files, "partition_values", "partition_values"):
            found = done.get(id(values))
            if found is None:
                # The source map is kept alive next to its id, so the id stays its own.
                found = done[id(values)] = (values, _complete(values, self._columns))
            out.append(found[1])
        return out

    def doc_mappings(self) -> set[str]:
        """The doc mappings the splits are read with.

        The schema registry's when it has any (what a planning view reads,
        without building entries); otherwise each split's own mapping.
        """
        if self._registry:
            return set(self._registry.values())
        return {f.doc_mapping_json for f in self._files if f.doc_mapping_json}

    def select(self, indices: Sequence[int]) -> list[LiveSplit]:
        """The splits at ``indices`` (ascending), their entries built together."""
        select = getattr(self._files, "select", None)
        files = select(indices) if select is not None else [self._files[i] for i in indices]
        return [self._live(f) for f in files]

    def entries(self, indices: Sequence[int]) -> list[SplitEntry]:
        """The task entries of the splits at ``indices`` (ascending).

        Builds the files' entries together, but no :class:`LiveSplit`; splits
        of one partition share one copy of its values.
        """
        select = getattr(self._files, "select", None)
        files = select(indices) if select is not None else [self._files[i] for i in indices]
        copies: dict[int, tuple[Any, dict[str, str | None]]] = {}
        out: list[SplitEntry] = []
        for file in files:
            values = file.partition_values
            found = copies.get(id(values))
            if found is None:
                # The source map is kept next to its id, so the id stays its own.
                found = copies[id(values)] = (values, dict(_complete(values, self._columns)))
            out.append(_split_entry(file, found[1], file.doc_mapping_json))
        return out

    def kept(self, partition_ok: PartitionCheck | None, stats: Predicate | None) -> list[int]:
        """Indices of the splits whose partition values and statistics may match.

        ``partition_ok`` (None: every split passes) is asked once per
        distinct partition map; ``stats`` is evaluated column-wise when the
        files can (no entry is built).
        """
        files = self._files
        if partition_ok is None:
            kept: Sequence[int] = range(len(files))
        else:
            raw = _column(files, "partition_values", "partition_values")
            ids = list(map(id, raw))
            # Equal maps are mostly one shared object: one verdict per object.
            distinct = dict(zip(ids, raw, strict=True))
            verdicts = {
                key: partition_ok(_complete(values, self._columns))
                for key, values in distinct.items()
            }
            kept = list(itertools.compress(range(len(ids)), map(verdicts.__getitem__, ids)))
        if stats is None or not kept:
            return list(kept)
        if isinstance(files, StatsPrunable):
            matching = files.stats_may_match(stats)
            if len(kept) == len(files):
                return matching
            inside = set(kept)
            return [i for i in matching if i in inside]
        columns = stats.columns()
        return [
            i
            for i in kept
            if stats.may_match(bounds_of(files[i].min_values, files[i].max_values, columns))
        ]


def _column(files: Sequence[FileEntry], column: str, attribute: str) -> Sequence[Any]:
    found = getattr(files, column, None)
    if found is not None and not callable(found):
        return found  # type: ignore[no-any-return]
    return [getattr(f, attribute) for f in files]


def split_paths(splits: Sequence[LiveSplit]) -> Sequence[str]:
    """Every split's path (a column when ``splits`` is a :class:`LiveSplits`)."""
    if isinstance(splits, LiveSplits):
        return splits.paths
    return [s.path for s in splits]


def select_splits(splits: Sequence[LiveSplit], indices: Sequence[int]) -> list[LiveSplit]:
    """The splits at ``indices`` (ascending), built together when ``splits`` is lazy."""
    if isinstance(splits, LiveSplits):
        return splits.select(indices)
    return [splits[i] for i in indices]


def prune_entries(
    splits: Sequence[LiveSplit],
    *,
    partition_ok: PartitionCheck | None,
    stats: Predicate | None,
) -> list[SplitEntry]:
    """The task entries of the splits :func:`prune_splits` keeps (no LiveSplit built)."""
    if isinstance(splits, LiveSplits):
        return splits.entries(splits.kept(partition_ok, stats))
    return [s.entry for s in prune_splits(splits, partition_ok=partition_ok, stats=stats)]


def prune_splits(
    splits: Sequence[LiveSplit],
    *,
    partition_ok: PartitionCheck | None,
    stats: Predicate | None,
) -> list[LiveSplit]:
    """The splits that may match: partition values by ``partition_ok`` (None: all
    pass), min/max statistics by ``stats`` (None: all pass).

    Only the kept splits are built when ``splits`` is a :class:`LiveSplits`.
    """
    if isinstance(splits, LiveSplits):
        return splits.select(splits.kept(partition_ok, stats))
    columns = stats.columns() if stats is not None else ()
    return [
        s
        for s in splits
        if (partition_ok is None or partition_ok(s.partition_values))
        and (stats is None or stats.may_match(bounds_of(s.min_values, s.max_values, columns)))
    ]


def split_doc_mappings(splits: Sequence[LiveSplit]) -> set[str]:
    """The doc mappings of ``splits`` (see :meth:`LiveSplits.doc_mappings`)."""
    if isinstance(splits, LiveSplits):
        return splits.doc_mappings()
    return {s.doc_mapping_json for s in splits if s.doc_mapping_json}
