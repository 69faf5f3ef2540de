"""A companion split's segments written by the segment writer, without tantivy-py.

:class:`SegmentIndex` takes what :class:`~.segments.CappedIndex` takes (the rows of
the split in order, in pieces that end where a planned segment ends), but keeps each
piece's Arrow columns, in the forms :func:`..write.segfeed.segment_columns` gives the
segment writer, with the two hidden u64 columns of tantivy4java's layout
(``__pq_file_hash``: the file's path hash for every row, ``__pq_row_in_file``: the
rows' numbers in their file; both fast, neither stored nor indexed, as
:func:`.build.companion_schema` declares them) and no row key. Once a planned
segment's ``segment_docs`` documents are kept, or the kept columns reach the writer
heap setting in Arrow bytes (:func:`..write.segfeed.segment_bytes`, as the segments
feed of ordinary writes and as tantivy-py flushes its heap), they are written as one
segment (:func:`..write.segwriter.segment.write_segment`); :meth:`SegmentIndex.finish`
writes the last one and lists every segment, in document order, in ``meta.json``
(:mod:`..write.segwriter.metajson`). So each segment holds one run of the split's
documents, at most as many as the tantivy-py build's index of the same plan holds,
and a build's memory follows its heap setting, not the planned segment's size.

What the segment writer refuses raises :class:`~..write.segwriter.errors.SegmentWriteError`:
the schema when the index is opened (:meth:`SegmentIndex.open` returns None, nothing
written), a value when its piece is converted or its segment built (the caller builds
the split again through tantivy-py).
"""

from __future__ import annotations

import shutil
from typing import Literal

import numpy as np
import pyarrow as pa
import tantivy

from indextables.search.schema.mapping import ROW_KEY_FIELD, FieldSpec, create_index
from indextables.search.scratchdirs import scratch_directory
from indextables.search.write.segfeed import segment_bytes, segment_columns
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.metajson import SegmentEntry, list_segments, read_meta
from indextables.search.write.segwriter.segment import (
    SegmentField,
    segment_fields,
    segment_files,
    write_segment,
)
from indextables.search.write.stats import StatsCollector

__all__ = ["SegmentIndex"]


class SegmentIndex:
    """One companion split's documents, written as segments of ``segment_docs`` each.

    Attributes (after :meth:`finish`): ``directory`` (the index holding every
    segment, in document order), ``segment_sizes`` (their documents, in that order)
    and ``stats`` (over every row the caller folds in).
    """

    def __init__(
        self,
        specs: tuple[FieldSpec, ...],
        directory: str,
        fields: tuple[SegmentField, ...],
        *,
        hidden_fast: tuple[str, str],
        segment_docs: int,
        heap_size: int,
        block_size: int,
        compressor: Literal["lz4", "none"],
    ) -> None:
        self._specs = specs
        self.directory = directory
        self._fields = fields
        self._file_field, self._row_field = hidden_fast
        self._segment_docs = segment_docs
        self._held_limit = segment_bytes(heap_size)
        self._block_size = block_size
        self._compressor = compressor
        self.stats = StatsCollector(specs)
        self._held: list[dict[str, pa.Array]] = []
        self._held_docs = 0
        self._held_bytes = 0
        self._written: list[SegmentEntry] = []
        self.segment_sizes: list[int] = []
        self._index: tantivy.Index | None = None

    @classmethod
    def open(
        cls,
        specs: tuple[FieldSpec, ...],
        *,
        hidden_fast: tuple[str, str],
        segment_docs: int,
        heap_size: int,
    ) -> SegmentIndex | None:
        """A fresh index for the split, or None when the segment writer refuses its schema.

        The schema is checked whole (every field known to the writer, a one-document
        segment without values built in memory); nothing is written then.
        """
        directory = scratch_directory("companion")
        try:
            create_index(specs, directory, hidden_fast=hidden_fast)
            meta = read_meta(directory)
            settings = meta.get("index_settings") or {}
            compressor = str(settings.get("docstore_compression", "lz4"))
            if compressor not in ("lz4", "none"):
                raise SegmentWriteError(f"doc store compressor {compressor!r} not written")
            block_size = int(settings.get("docstore_blocksize", 16384))
            fields = segment_fields(meta["schema"])
            segment_files(fields, {}, 1, block_size=block_size, compressor=compressor)  # type: ignore[arg-type]
        except SegmentWriteError:
            shutil.rmtree(directory, ignore_errors=True)
            return None
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return cls(
            specs, directory, fields, hidden_fast=hidden_fast, segment_docs=segment_docs,
            heap_size=heap_size, block_size=block_size, compressor=compressor,  # type: ignore[arg-type]
        )  # fmt: skip

    @property
    def index(self) -> tantivy.Index:
        """The finished index, opened (see :meth:`finish`)."""
        if self._index is None:
            raise RuntimeError("the index is not finished")
        return self._index

    def room(self) -> int:
        """Documents that may be added before the current segment is full (at least one)."""
        return self._segment_docs - self._held_docs

    def add_rows(self, chunk: pa.RecordBatch, *, file_hash: int, first_row: int) -> None:
        """Keep ``chunk``'s rows (at most :meth:`room`): rows ``first_row ..`` of the file
        whose path hashes to ``file_hash``; a full segment (its documents, or its Arrow
        bytes at the heap setting) is written.

        Raises:
            SegmentWriteError: a value the segment writer cannot take.
        """
        count = chunk.num_rows
        if not 0 < count <= self.room():
            raise ValueError(f"{count} documents do not fit the {self.room()} left")
        columns = segment_columns(chunk, self._specs, batch_number=0)
        del columns[ROW_KEY_FIELD]
        columns[self._file_field] = pa.array(np.full(count, file_hash, dtype=np.uint64))
        columns[self._row_field] = pa.array(
            np.arange(first_row, first_row + count, dtype=np.uint64)
        )
        self._held.append(columns)
        self._held_docs += count
        self._held_bytes += sum(column.nbytes for column in columns.values())
        if self._held_docs >= self._segment_docs or self._held_bytes >= self._held_limit:
            self._flush()

    def _flush(self) -> None:
        if not self._held_docs:
            return
        segment_id = write_segment(
            self.directory, self._fields, self._columns(), self._held_docs,
            block_size=self._block_size, compressor=self._compressor,
        )  # fmt: skip
        self._written.append(SegmentEntry(segment_id, self._held_docs))
        self.segment_sizes.append(self._held_docs)
        self._held, self._held_docs, self._held_bytes = [], 0, 0

    def _columns(self) -> dict[str, pa.ChunkedArray]:
        """Every field's values over the kept pieces (nulls where a piece has none)."""
        types: dict[str, pa.DataType] = {}
        for held in self._held:
            for name, column in held.items():
                types.setdefault(name, column.type)
        lengths = [len(held[self._row_field]) for held in self._held]
        return {
            name: pa.chunked_array(
                [
                    held.get(name, pa.nulls(length, data_type))
                    for held, length in zip(self._held, lengths, strict=True)
                ],
                data_type,
            )
            for name, data_type in types.items()
        }

    def finish(self) -> None:
        """Write the last segment and list every segment in ``meta.json``."""
        self._flush()
        list_segments(self.directory, self._written)
        self._index = tantivy.Index.open(self.directory)

    def discard(self) -> None:
        """Remove the index directory."""
        self._held, self._held_docs, self._held_bytes = [], 0, 0
        shutil.rmtree(self.directory, ignore_errors=True)
