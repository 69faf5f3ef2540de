"""Executor side of a write: Arrow batches -> one Tantivy index per partition value -> splits.

Each :class:`PartitionIndex` owns a temporary index directory and one Tantivy
writer (heap bounded by ``indexWriter.heapSize``); rows go in ``batchSize`` at
a time. With ``max_split_bytes`` (optimized write, balanced mode) a split is
closed and uploaded once the Arrow size of its rows reaches it.
:meth:`SplitWriter.finish` commits every index, rewrites its term
dictionaries to the reference's SSTable form, bundles it into a split laid out
as the reference's (DECISIONS.md footer layout), uploads it as
``<partition dirs>/part-<uuid>.split`` and returns the AddActions.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import tantivy

from indextables.protocol.actions import AddAction
from indextables.protocol.splitbundle import write_split_bundle
from indextables.protocol.store import ObjectStore
from indextables.search.options import (
    DEFAULT_ARROW_COPY,
    DEFAULT_DOCSTORE_BLOCK_SIZE,
    DEFAULT_FEED,
)
from indextables.search.query.tantivyquery import fully_indexed_tag
from indextables.search.query.tokenskept import tokens_kept_tag
from indextables.search.read.convert import documents
from indextables.search.read.rowcopy import copy_metadata, in_copy
from indextables.search.schema.mapping import (
    FieldSpec,
    create_index,
    doc_mapping_json,
    tantivy_schema,
)
from indextables.search.schema.partitionvalues import partition_codes
from indextables.search.scratchdirs import remove_directory, scratch_directory
from indextables.search.splits.splitcache import write_checksums
from indextables.search.splits.splitdir import files_of_kind, replace_by_rename
from indextables.search.splits.termdict import dictionary_kind, to_sstable
from indextables.search.write.jsonfeed import json_lines
from indextables.search.write.segfeed import SegmentFeed
from indextables.search.write.stats import StatsCollector

PartitionKey = tuple[str | None, ...]

# A columnar copy of some of the split's columns (Arrow IPC, zstd) bundled beside the
# Tantivy files: the columns the doc store cannot give back exactly, and those the
# ``indexWriter.arrowCopy`` mode adds (see rowcopy.in_copy). No file when no column is
# copied. Tantivy and other readers ignore the extra file.
ROWS_FILE = "indextables-rows.arrow"
# At most this many partition indexes (each with its own writer heap) open per task.
MAX_OPEN_INDEXES = 8


@dataclass(slots=True)
class PartitionIndex:
    """A Tantivy index being built for one partition value in one task.

    Its rows go through a tantivy-py writer, or with the ``segments`` feed through a
    :class:`~.segfeed.SegmentFeed` (segments written from the kept batches); the
    tantivy-py writer is then opened only when the segment writer refuses the split's
    schema or a value (those rows go through it instead, see :mod:`.segfeed`).
    """

    directory: str
    index: tantivy.Index
    _writer: tantivy.IndexWriter | None
    stats: StatsCollector
    rows: pa.ipc.RecordBatchFileWriter | None = None
    batches: int = 0
    arrow_bytes: int = 0
    writer_open: bool = True
    heap_size: int = 0
    segments: SegmentFeed | None = None

    @classmethod
    def create(
        cls,
        specs: tuple[FieldSpec, ...],
        schema: tantivy.Schema,
        *,
        heap_size: int,
        hidden_fast: Sequence[str] | None = None,
        docstore_block_size: int = DEFAULT_DOCSTORE_BLOCK_SIZE,
        feed: str = DEFAULT_FEED,
    ) -> PartitionIndex:
        """Open a fresh index in a new temporary directory.

        Its documents carry the row key field, or with ``hidden_fast`` these u64
        fast fields instead (a companion split's row coordinates). With
        ``feed="segments"`` (row key only) the schema is checked against the
        segment writer here, before any row: the segment feed when it takes the
        schema, else a tantivy-py writer as the ``json`` feed.
        """
        directory = scratch_directory("write")
        block = docstore_block_size
        if hidden_fast is None:
            index = create_index(specs, directory, row_key=True, docstore_block_size=block)
        else:
            index = create_index(
                specs, directory, hidden_fast=hidden_fast, docstore_block_size=block
            )
        segments = None
        if feed == "segments" and hidden_fast is None:
            segments = SegmentFeed.open(directory, heap_size=heap_size)
        if segments is not None:
            return cls(
                directory, index, None, StatsCollector(specs), writer_open=False,
                heap_size=heap_size, segments=segments,
            )  # fmt: skip
        # One thread: two were slower on small machines and tasks already run in parallel.
        writer = index.writer(heap_size, 1)
        return cls(directory, index, writer, StatsCollector(specs), heap_size=heap_size)

    @property
    def writer(self) -> tantivy.IndexWriter:
        """The tantivy-py writer (opened now when the segment feed did without one)."""
        if self._writer is None:
            self._writer = self._open_writer()
        return self._writer

    def _open_writer(self) -> tantivy.IndexWriter:
        # The segments written so far are listed first: the writer keeps them.
        if self.segments is not None:
            self.segments.list_written()
        writer = self.index.writer(self.heap_size, 1)
        self.writer_open = True
        return writer

    def add(
        self,
        batch: pa.RecordBatch,
        specs: Sequence[FieldSpec],
        schema: tantivy.Schema,
        *,
        arrow_copy: str = DEFAULT_ARROW_COPY,
        feed: str = DEFAULT_FEED,
    ) -> None:
        """Index the rows of one batch and fold them into the statistics.

        With ``feed="json"`` the rows go in as JSON lines when JSON carries every
        column of the batch exactly (:mod:`.jsonfeed`; a row holding a float it
        cannot carry as a typed document in its place), else as typed documents.
        With ``feed="segments"`` the segment feed keeps the batch (an index opened
        without it takes the rows as ``json``); batches it refuses go in as ``json``.
        """
        number = self.batches
        if feed == "segments" and self.segments is not None:
            refused = self.segments.add(batch, specs, batch_number=number)
            if refused is not None:
                self._leave_segments(refused, specs, schema)
        else:
            self._index(batch, specs, schema, number, "json" if feed == "segments" else feed)
        self.stats.add(batch)
        self._copy(batch, specs, arrow_copy)
        self.batches += 1
        self.arrow_bytes += batch.nbytes

    def _leave_segments(
        self,
        refused: Sequence[tuple[int, pa.RecordBatch]],
        specs: Sequence[FieldSpec],
        schema: tantivy.Schema,
    ) -> None:
        """Index the batches the segment feed refused, and the split's later rows,
        through tantivy-py (the segments already written stay)."""
        if self._writer is None:
            self._writer = self._open_writer()  # lists the written segments first
        self.segments = None
        for number, batch in refused:
            self._index(batch, specs, schema, number, "json")

    def _index(
        self,
        batch: pa.RecordBatch,
        specs: Sequence[FieldSpec],
        schema: tantivy.Schema,
        number: int,
        feed: str,
    ) -> None:
        """One batch's rows (batch ``number`` of the split) through tantivy-py."""
        writer = self.writer
        lines = json_lines(batch, specs, batch_number=number) if feed == "json" else None
        if lines is not None and lines.lines is not None:
            add_json, add = writer.add_json, writer.add_document
            for row, line in enumerate(lines.lines):
                if line is not None:
                    add_json(line)
                else:  # a float JSON cannot carry: this row as a typed document
                    one = batch.slice(row, 1)
                    add(next(documents(one, specs, schema, batch_number=number, first_row=row)))
        else:
            add = writer.add_document
            for doc in documents(batch, specs, schema, batch_number=number):
                add(doc)

    def _copy(self, batch: pa.RecordBatch, specs: Sequence[FieldSpec], mode: str) -> None:
        # Index-only columns are not stored anywhere, the Arrow copy included.
        names = [s.name for s in specs if in_copy(s, batch.schema.field(s.name).type, mode=mode)]
        if not names:
            return
        data = batch.select(names)
        if self.rows is None:
            path = os.path.join(self.directory, ROWS_FILE)
            options = pa.ipc.IpcWriteOptions(compression="zstd")
            copy_schema = data.schema.with_metadata(copy_metadata())
            self.rows = pa.ipc.new_file(path, copy_schema, options=options)
        self.rows.write_batch(data)

    def commit(self) -> None:
        """Make every added document durable in the index directory."""
        if self.segments is not None:
            refused = self.segments.finish()
            if refused:
                self._leave_segments(refused, self.stats.specs, self.index.schema)
            self.segments = None
        if self._writer is not None and self.writer_open:
            self._writer.commit()
            self.writer_open = False
            self._writer.wait_merging_threads()
        if self.rows is not None:
            self.rows.close()
            self.rows = None

    def discard(self) -> None:
        """Stop the Tantivy writer and remove the temporary index directory.

        A writer never committed still has an indexing thread that may flush a
        segment into the directory: it is rolled back and joined first, so no
        file appears once the directory is gone.
        """
        self.segments = None  # its kept batches go with it
        if self._writer is not None and self.writer_open:
            self.writer_open = False
            with contextlib.suppress(Exception):  # already failed: nothing to keep
                self._writer.rollback()
            with contextlib.suppress(Exception):
                self._writer.wait_merging_threads()
        if self.rows is not None:
            with contextlib.suppress(Exception):
                self.rows.close()
            self.rows = None
        remove_directory(self.directory)


@dataclass(slots=True)
class SplitWriter:
    """Routes rows by partition value and turns each partition's index into a split."""

    store: ObjectStore
    specs: tuple[FieldSpec, ...]
    partition_columns: tuple[str, ...]
    heap_size: int
    batch_size: int
    max_open: int = MAX_OPEN_INDEXES
    max_split_bytes: int | None = None
    arrow_copy: str = DEFAULT_ARROW_COPY
    docstore_block_size: int = DEFAULT_DOCSTORE_BLOCK_SIZE
    feed: str = DEFAULT_FEED
    schema: tantivy.Schema = field(init=False)
    indexes: dict[PartitionKey, PartitionIndex] = field(default_factory=dict)
    finished: list[AddAction] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.schema = tantivy_schema(self.specs, row_key=True)

    def write(self, batches: Iterable[pa.RecordBatch]) -> None:
        """Index every batch, ``batch_size`` rows at a time."""
        for batch in batches:
            for offset in range(0, batch.num_rows, self.batch_size):
                self._route(batch.slice(offset, self.batch_size))

    def _route(self, batch: pa.RecordBatch) -> None:
        if not self.partition_columns:
            self._add((), batch)
            return
        table = pa.Table.from_batches([batch])
        # Route by exact values (codes), record canonical strings: see partitionvalues.
        coded = [partition_codes(table.column(c)) for c in self.partition_columns]
        names = [f"c{i}" for i in range(len(coded))]
        codes = pa.table(dict(zip(names, (c for c, _ in coded), strict=True)))
        keys = codes.group_by(names, use_threads=False).aggregate([])
        for key in keys.to_pylist():
            mask = _mask(codes, key)
            part = table.filter(mask).combine_chunks().to_batches()
            values = tuple(strings[key[n]] for n, (_, strings) in zip(names, coded, strict=True))
            for piece in part:
                self._add(values, piece)

    def _add(self, key: PartitionKey, batch: pa.RecordBatch) -> None:
        part = self._index_for(key)
        part.add(batch, self.specs, self.schema, arrow_copy=self.arrow_copy, feed=self.feed)
        if self.max_split_bytes is not None and part.arrow_bytes >= self.max_split_bytes:
            # A rolled split (optimized write, balanced): later rows start another split.
            self._ship(key)

    def _ship(self, key: PartitionKey) -> None:
        part = self.indexes.pop(key)
        try:
            self.finished.append(self._upload(key, part))
        finally:
            part.discard()

    def _index_for(self, key: PartitionKey) -> PartitionIndex:
        if key not in self.indexes and len(self.indexes) >= self.max_open:
            # Bounded memory: ship the least recently opened partition's split now;
            # later rows of that value start another split.
            self._ship(next(iter(self.indexes)))
        if key not in self.indexes:
            self.indexes[key] = PartitionIndex.create(
                self.specs,
                self.schema,
                heap_size=self.heap_size,
                docstore_block_size=self.docstore_block_size,
                feed=self.feed,
            )
        return self.indexes[key]

    def finish(self) -> list[AddAction]:
        """Commit, bundle and upload every partition's split; return their AddActions."""
        try:
            for key in list(self.indexes):
                self._ship(key)  # each upload lands in ``finished`` at once
            return list(self.finished)
        finally:
            self.abort()

    def abort(self) -> None:
        """Drop every temporary index directory."""
        for part in self.indexes.values():
            part.discard()
        self.indexes.clear()

    def _upload(self, key: PartitionKey, part: PartitionIndex) -> AddAction:
        part.commit()
        to_reference_form(part.directory)
        if os.path.exists(os.path.join(part.directory, ROWS_FILE)):
            write_checksums(part.directory, [ROWS_FILE])
        path = split_path(self.partition_columns, key)
        return upload_split(
            self.store,
            part.directory,
            path,
            partition_values=dict(zip(self.partition_columns, key, strict=True)),
            data_change=True,
            min_values=part.stats.min_values(),
            max_values=part.stats.max_values(),
            num_records=part.stats.num_records,
            num_merge_ops=0,
            doc_mapping_json=doc_mapping_json(self.specs),
            uncompressed_size_bytes=_directory_size(part.directory),
            # Which exact string columns are fully in the term dictionary (prefix pushdown).
            split_tags=_split_tags(part.stats),
        )


def upload_split(
    store: ObjectStore,
    directory: str,
    path: str,
    *,
    partition_values: dict[str, str | None],
    **fields: Any,
) -> AddAction:
    """Bundle the index directory as a split, put it at ``path``; return its AddAction.

    ``fields`` are the AddAction's other fields (statistics, counts, doc
    mapping, tags...); the size, time and footer offsets are filled in here.
    """
    buffer = io.BytesIO()
    footer = write_split_bundle(directory, buffer)
    data = buffer.getvalue()
    store.put(path, data)
    return AddAction(
        path=path,
        partition_values=partition_values,
        size=len(data),
        modification_time=int(time.time() * 1000),
        footer_start_offset=footer.footer_start_offset,
        footer_end_offset=footer.footer_end_offset,
        has_footer_offsets=True,
        **fields,
    )


def to_reference_form(directory: str) -> None:
    """Rewrite every ``.term`` file of an index directory to the SSTable form, in place.

    tantivy-py writes FST term dictionaries; the reference reads only SSTable
    ones, so every split this package writes carries SSTables (readers here
    rewrite them back when a split is fetched, see :mod:`.splitcache`). Each
    file is replaced by a rename: the open index may still map the old one.
    """
    for path in files_of_kind(directory, ".term"):
        with open(path, "rb") as handle:
            data = handle.read()
        if dictionary_kind(data) == "sstable":
            continue
        replace_by_rename(path, to_sstable(data))


def _split_tags(stats: StatsCollector) -> tuple[str, ...] | None:
    """The split's tags: which exact string columns are fully in the term dictionary, and
    which text columns lost no token to their analyzer's length limit."""
    columns = stats.fully_indexed()
    kept = stats.tokens_kept()
    tags: tuple[str, ...] = (fully_indexed_tag(columns),) if columns else ()
    tags += (tokens_kept_tag(kept),) if kept else ()
    return tags or None


def _mask(codes: pa.Table, key: dict[str, int]) -> pa.ChunkedArray:
    import pyarrow.compute as pc

    mask = None
    for column, code in key.items():
        term = pc.equal(codes.column(column), code)
        mask = term if mask is None else pc.and_(mask, term)
    return mask


def split_path(partition_columns: Sequence[str], values: PartitionKey) -> str:
    """``<col>=<value>/.../part-<uuid>.split`` relative to the table root."""
    dirs = [
        f"{quote(c, safe='')}={_dir_value(v)}"
        for c, v in zip(partition_columns, values, strict=True)
    ]
    return "/".join([*dirs, f"part-{uuid.uuid4()}.split"])


def _dir_value(value: str | None) -> str:
    if not value:
        return "__HIVE_DEFAULT_PARTITION__"  # null, and the empty string (read back as null)
    return quote(value, safe=" -_.:")


def _directory_size(directory: str) -> int:
    return sum(
        os.path.getsize(os.path.join(directory, name))
        for name in os.listdir(directory)
        if os.path.isfile(os.path.join(directory, name))
    )
