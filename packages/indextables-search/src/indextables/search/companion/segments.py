"""A companion split's index, built so that no segment holds more than 2**21 documents.

Tantivy writes a posting list shorter than a block (128 documents) as VInts of
the documents' numbers within their segment, the first one whole: a term found
in one document (a unique number in a message, a unique ``id``) costs 3 bytes
while the document's number is below 2**21 and 4 above it. Left alone, Tantivy's
merge policy (``LogMergePolicy``: eight segments of a size make one) builds
segments of 2.3M-4.2M documents from a big group of files, so half of such a
split's unique terms took 4 bytes (measured: +0.42 byte a row on the 20M-row
benchmark's small layout). The format and the reference's reading are untouched:
a split holds several segments either way.

:class:`CappedIndex` therefore fills one Tantivy index (one
:class:`~indextables.search.write.splitwriter.PartitionIndex`, one writer) with at
most :data:`SEGMENT_DOCS` documents, then starts another; whatever Tantivy merges
inside one stays within its documents. :func:`plan` sizes them from the rows the
split will hold (its files' footers): equal indexes, each committed eight times, so
that each index's flushes are eight segments that Tantivy's policy merges into one.
:meth:`CappedIndex.finish` moves every index's segments, in order, into one
directory (:func:`~indextables.search.write.segmentmerge.merge_segments`: files are
moved, nothing is re-indexed).
"""

from __future__ import annotations

import shutil
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.read import convert
from indextables.search.schema.mapping import FieldSpec
from indextables.search.scratchdirs import scratch_directory
from indextables.search.write.segmentmerge import merge_segments
from indextables.search.write.splitwriter import PartitionIndex
from indextables.search.write.stats import StatsCollector

__all__ = ["MERGE_FAN_IN", "SEGMENT_DOCS", "CappedIndex", "plan"]

#: Documents of one index at most: their numbers (0 .. 2**21 - 1) fit three VInt bytes.
SEGMENT_DOCS = 1 << 21
#: Segments of one size that Tantivy's ``LogMergePolicy`` joins into one.
MERGE_FAN_IN = 8


def plan(rows: int) -> tuple[int, int]:
    """(documents per index, documents per commit) for a split expected to hold ``rows``.

    Up to :data:`SEGMENT_DOCS` rows: one index, committed once, its segments flushed and
    merged as any write's (every document number fits three bytes already). More: the
    fewest indexes of at most :data:`SEGMENT_DOCS` documents, of equal size, each
    committed :data:`MERGE_FAN_IN` times so that Tantivy merges it into one segment
    (a 10M-row split: five segments of 2M documents).
    """
    if rows <= SEGMENT_DOCS:
        return SEGMENT_DOCS, SEGMENT_DOCS
    indexes = -(-rows // SEGMENT_DOCS)
    per_commit = min(-(-rows // (indexes * MERGE_FAN_IN)), SEGMENT_DOCS // MERGE_FAN_IN)
    return per_commit * MERGE_FAN_IN, per_commit


class CappedIndex:
    """One split's documents, in indexes of at most ``segment_docs`` documents each.

    Attributes (after :meth:`finish`): ``directory`` (the committed index holding
    every segment, in document order), ``index`` (it, opened) and ``stats`` (over
    every row added, as a single index's).
    """

    def __init__(
        self,
        specs: tuple[FieldSpec, ...],
        schema: Any,
        *,
        heap_size: int,
        hidden_fast: Sequence[str],
        segment_docs: int,
        commit_docs: int,
    ) -> None:
        if not 0 < commit_docs <= segment_docs or segment_docs % commit_docs:
            raise ValueError("commit_docs must divide segment_docs")
        self._specs = specs
        self._schema = schema
        self._heap_size = heap_size
        self._hidden_fast = tuple(hidden_fast)
        self._segment_docs = segment_docs
        self._commit_docs = commit_docs
        self.stats = StatsCollector(specs)
        self._done: list[PartitionIndex] = []
        self._merging: list[PartitionIndex] = []  # committed, Tantivy maybe still merging
        self._current: PartitionIndex | None = None
        self._docs = 0  # in the current index
        self._merged: str | None = None
        self.directory = ""
        self._index: tantivy.Index | None = None

    @property
    def index(self) -> tantivy.Index:
        """The finished index (see :meth:`finish`)."""
        if self._index is None:
            raise RuntimeError("the index is not finished")
        return self._index

    def room(self) -> int:
        """Documents that may be added before the next commit (always at least one)."""
        return self._commit_docs - self._docs % self._commit_docs

    def add_rows(self, chunk: pa.RecordBatch, *, file_hash: int, first_row: int) -> None:
        """Add ``chunk``'s rows (at most :meth:`room`) as documents: rows ``first_row ..``
        of the file whose path hashes to ``file_hash``, in the two hidden fields."""
        take = chunk.num_rows
        file_field, row_field = self._hidden_fast
        coordinates = (
            (file_field, [file_hash] * take),
            (row_field, range(first_row, first_row + take)),
        )
        # Each document in one pass with its hidden coordinates.
        self.add(convert.documents(chunk, self._specs, self._schema, unsigned=coordinates), take)

    def add(self, documents: Iterable[Any], count: int) -> None:
        """Add ``count`` documents (at most :meth:`room`), committing where one is due."""
        if not 0 < count <= self.room():
            raise ValueError(f"{count} documents do not fit the {self.room()} left")
        part = self._open()
        deque(map(part.writer.add_document, documents), 0)  # no Python loop per document
        self._docs += count
        if self._docs >= self._segment_docs:
            self._close()
        elif self._docs % self._commit_docs == 0:
            part.writer.commit()

    def _open(self) -> PartitionIndex:
        if self._current is None:
            self._current = PartitionIndex.create(
                self._specs, self._schema, heap_size=self._heap_size,
                hidden_fast=self._hidden_fast,
            )  # fmt: skip
        return self._current

    def _close(self) -> None:
        """Commit the current index. Its merge runs in Tantivy's threads while the next
        index fills; the one before it is waited for now (it had a whole index's filling
        to finish), so at most one index merges in the background and no idle writer
        piles up."""
        part, self._current = self._current, None
        self._docs = 0
        if part is not None:
            self._done.append(part)
            part.writer.commit()
            self._settle()
            self._merging.append(part)

    def _settle(self) -> None:
        """Wait for every committed index's merges (this consumes its writer)."""
        while self._merging:
            self._merging.pop(0).writer.wait_merging_threads()

    def finish(self) -> None:
        """Commit the last index and gather every segment into :attr:`directory`."""
        self._close()
        if not self._done:
            self._open()
            self._close()
        self._settle()
        if len(self._done) == 1:
            self.directory, self._index = self._done[0].directory, self._done[0].index
            return
        self._merged = scratch_directory("companion")
        merge_segments([part.directory for part in self._done], self._merged)
        self.directory, self._index = self._merged, tantivy.Index.open(self._merged)

    @property
    def indexes(self) -> int:
        """Tantivy indexes started so far (each holds at most ``segment_docs`` documents)."""
        return len(self._done) + (self._current is not None)

    def discard(self) -> None:
        """Remove every temporary directory (once no merge runs in them)."""
        if self._current is not None:
            self._done.append(self._current)
            self._current = None
        try:
            self._settle()
        except Exception:  # cleaning up after a failure: the directories go all the same
            self._merging.clear()
        for part in self._done:
            part.discard()
        if self._merged is not None:
            shutil.rmtree(self._merged, ignore_errors=True)
