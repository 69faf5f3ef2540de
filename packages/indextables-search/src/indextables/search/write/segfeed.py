"""The ``segments`` feed: a split's rows written as whole Tantivy segments, without tantivy-py.

With ``indexWriter.feed=segments`` a :class:`~.splitwriter.PartitionIndex` hands its
batches to a :class:`SegmentFeed` instead of a tantivy-py writer. The feed keeps each
batch's columns in the forms the segment writer (:mod:`.segwriter.segment`) takes,
converted as :func:`..read.convert.documents` converts them for tantivy-py:

* dates and timestamps: epoch microseconds clamped into Tantivy's span
  (``convert.clamp_micros``: 1677-09-21 .. 2262-04-11), as UTC timestamps; a
  timezone-naive timestamp's wall clock is taken as UTC, a date as its midnight;
* integers as ``int64``, floats as ``float64`` (``-0.0``, NaN and infinities kept),
  strings and binary as themselves (other string and binary layouts cast to them);
* all-null columns (and ``null``-typed ones) give no values, as documents leave them out;
* every row's row key (``convert.row_key`` of the batch's number and the row) as the
  ``u64`` fast field :data:`..schema.mapping.ROW_KEY_FIELD`.

Once the Arrow size of the kept batches reaches the writer heap setting
(:func:`segment_bytes`), they are written as one segment and the next batches start
another; :meth:`SegmentFeed.finish` writes the last one and lists every segment in the
index's ``meta.json`` (:mod:`.segwriter.metajson`), where tantivy-py opens them.

What the segment writer refuses (:class:`.segwriter.errors.SegmentWriteError`: JSON
fields other than lists of integers, floats or bools, analyzers it lacks, a fast
field's tokenizer, an integer past ``i64``, an address that does not parse...) is
found before
anything is written: the schema when the feed opens (:meth:`SegmentFeed.open` returns
None, the whole split goes through tantivy-py), a batch's values when they are
converted or their segment is built in memory (the batches not yet written are handed
back for tantivy-py, the segments already written stay and are listed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow as pa

from indextables.search.read.convert import clamped_instants, row_key
from indextables.search.schema.mapping import ROW_KEY_FIELD, FieldKind, FieldSpec
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.jsonfields import json_items
from indextables.search.write.segwriter.metajson import (
    SegmentEntry,
    list_segments,
    read_meta,
)
from indextables.search.write.segwriter.segment import (
    SegmentField,
    segment_fields,
    segment_files,
    write_segment,
)

__all__ = ["SegmentFeed", "segment_bytes", "segment_columns"]


def segment_bytes(heap_size: int) -> int:
    """The Arrow bytes of kept batches at which a segment is written: the heap setting."""
    return heap_size


def _date_column(column: pa.Array, name: str) -> pa.Array:
    t = column.type
    if not (pa.types.is_timestamp(t) or pa.types.is_date32(t)):
        raise SegmentWriteError(f"column {name!r}: {t} values are not dates or timestamps")
    return clamped_instants(column)


def _column(column: pa.Array, spec: FieldSpec) -> pa.Array:
    """One column in the form the segment writer takes for its field."""
    kind, t, name = spec.kind, column.type, spec.name
    try:
        if kind is FieldKind.DATE:
            return _date_column(column, name)
        if kind is FieldKind.I64 and pa.types.is_integer(t):
            return column if t == pa.int64() else column.cast(pa.int64())
        if kind is FieldKind.F64 and pa.types.is_floating(t):
            return column if t == pa.float64() else column.cast(pa.float64())
        if kind is FieldKind.BOOL and pa.types.is_boolean(t):
            return column
        if kind is FieldKind.JSON and pa.types.is_list(t) and json_items(t.value_type):
            return column  # as the segment writer's JSON fields take it (segwriter.jsonfields)
        if kind in (FieldKind.STRING, FieldKind.TEXT, FieldKind.IP) and (
            pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)
        ):
            return column if pa.types.is_string(t) else column.cast(pa.string())
        if kind is FieldKind.BYTES and (
            pa.types.is_binary(t)
            or pa.types.is_large_binary(t)
            or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t)
        ):
            return column if pa.types.is_binary(t) else column.cast(pa.binary())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise SegmentWriteError(f"column {name!r}: {error}") from None
    raise SegmentWriteError(f"column {name!r}: {kind.value} values of Arrow type {t} not written")


def segment_columns(
    batch: pa.RecordBatch,
    specs: Sequence[FieldSpec],
    *,
    batch_number: int,
    first_row: int = 0,
) -> dict[str, pa.Array]:
    """The columns of ``batch`` as the segment writer takes them, with the row keys.

    A column without any value is left out (the segment writer gives its field no
    value in these rows). Row ``r`` gets ``row_key(batch_number, first_row + r)``.

    Raises:
        SegmentWriteError: a column the segment writer cannot take, naming it.
    """
    out: dict[str, pa.Array] = {}
    for spec in specs:
        column = batch.column(spec.name)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if column.null_count == len(column) or pa.types.is_null(column.type):
            continue
        out[spec.name] = _column(column, spec)
    first = row_key(batch_number, first_row)
    rows = batch.num_rows
    out[ROW_KEY_FIELD] = pa.array(np.arange(first, first + rows, dtype=np.uint64))
    return out


@dataclass(slots=True)
class _Held:
    """One batch kept for the next segment: its number, its rows, its converted columns."""

    number: int
    batch: pa.RecordBatch
    columns: dict[str, pa.Array]


@dataclass(slots=True)
class SegmentFeed:
    """The segments of one index directory being written from kept batches.

    Attributes:
        directory: the index directory (its ``meta.json`` made by ``create_index``).
        fields: the index's fields as the segment writer takes them.
        limit: the Arrow bytes of kept batches at which a segment is written.
        block_size: the doc store's block size (the index's ``docstore_blocksize``).
        compressor: the doc store's compressor (the index's ``docstore_compression``).
        written: the segments written so far (not yet listed in ``meta.json``).
    """

    directory: str
    fields: tuple[SegmentField, ...]
    limit: int
    block_size: int
    compressor: Literal["lz4", "none"]
    held: list[_Held] = field(default_factory=list)
    held_bytes: int = 0
    written: list[SegmentEntry] = field(default_factory=list)

    @classmethod
    def open(cls, directory: str, *, heap_size: int) -> SegmentFeed | None:
        """The feed of a fresh index, or None when the segment writer refuses its schema.

        The schema is checked whole: every field is known to the writer and a
        one-document segment without values is built in memory (fast field options
        included), nothing written.
        """
        meta = read_meta(directory)
        settings = meta.get("index_settings") or {}
        compressor = str(settings.get("docstore_compression", "lz4"))
        if compressor not in ("lz4", "none"):
            return None
        block_size = int(settings.get("docstore_blocksize", 16384))
        try:
            fields = segment_fields(meta["schema"])
            segment_files(fields, {}, 1, block_size=block_size, compressor=compressor)  # type: ignore[arg-type]
        except SegmentWriteError:
            return None
        limit = segment_bytes(heap_size)
        return cls(directory, fields, limit, block_size, compressor)  # type: ignore[arg-type]

    def add(
        self, batch: pa.RecordBatch, specs: Sequence[FieldSpec], *, batch_number: int
    ) -> list[tuple[int, pa.RecordBatch]] | None:
        """Keep one batch (numbered ``batch_number`` in the split), writing a segment
        once the kept batches reach :attr:`limit`.

        Returns None, or, when the segment writer refuses a value, every kept batch
        not yet written (with its number, this one included) for tantivy-py: nothing
        of them was written, and the feed keeps no batch after that.
        """
        try:
            columns = segment_columns(batch, specs, batch_number=batch_number)
        except SegmentWriteError:
            return self._refused([(batch_number, batch)])
        if batch.num_rows == 0:
            return None
        extra = sum(
            c.nbytes
            for name, c in columns.items()
            if name == ROW_KEY_FIELD or not _shares(c, batch.column(name))
        )
        self.held.append(_Held(batch_number, batch, columns))
        self.held_bytes += batch.nbytes + extra
        if self.held_bytes >= self.limit:
            return self._flush()
        return None

    def finish(self) -> list[tuple[int, pa.RecordBatch]] | None:
        """Write the kept batches as a last segment and list every segment in ``meta.json``.

        Returns None, or the kept batches for tantivy-py as :meth:`add` does (the
        segments already written are listed all the same).
        """
        refused = self._flush()
        self.list_written()
        return refused

    def list_written(self) -> None:
        """List the segments written so far in the index's ``meta.json`` (once)."""
        if self.written:
            list_segments(self.directory, self.written)
            self.written = []

    def _refused(self, extra: list[tuple[int, pa.RecordBatch]]) -> list[tuple[int, pa.RecordBatch]]:
        out = [(h.number, h.batch) for h in self.held] + extra
        self.held, self.held_bytes = [], 0
        return out

    def _flush(self) -> list[tuple[int, pa.RecordBatch]] | None:
        if not self.held:
            return None
        rows = sum(h.batch.num_rows for h in self.held)
        columns = self._columns()
        try:
            # Built whole in memory first: a refused value leaves no file behind.
            segment_id = write_segment(
                self.directory,
                self.fields,
                columns,
                rows,
                block_size=self.block_size,
                compressor=self.compressor,
            )
        except SegmentWriteError:
            return self._refused([])
        self.written.append(SegmentEntry(segment_id, rows))
        self.held, self.held_bytes = [], 0
        return None

    def _columns(self) -> dict[str, pa.ChunkedArray]:
        """Every field's values over the kept batches (nulls where a batch has none)."""
        types: dict[str, pa.DataType] = {}
        for held in self.held:
            for name, column in held.columns.items():
                types.setdefault(name, column.type)
        out: dict[str, pa.ChunkedArray] = {}
        for name, data_type in types.items():
            chunks = [h.columns.get(name, pa.nulls(h.batch.num_rows, data_type)) for h in self.held]
            out[name] = pa.chunked_array(chunks, data_type)
        return out


def _shares(column: pa.Array, original: pa.Array) -> bool:
    """Whether a converted column is the batch's own data (no further bytes held)."""
    ours = [b.address if b is not None else None for b in column.buffers()]
    theirs = [b.address if b is not None else None for b in original.buffers()]
    return ours == theirs
