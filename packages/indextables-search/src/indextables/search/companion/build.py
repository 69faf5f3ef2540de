"""One group of source Parquet files -> one companion split (indexed, nothing stored).

The split has tantivy4java's companion layout (docs/companion.md, "Format"):
documents follow the files' concatenated row order; no field is stored (the
doc store holds empty documents, tantivy4java's stub store, written compactly by
:mod:`.stubstore`) and no Arrow copy
is bundled: values are read back from the Parquet files (see :mod:`.read`).
Each document carries tantivy4java's two hidden u64 fast fields,
``__pq_file_hash`` (:func:`.pathhash.path_hash` of its file's relative path)
and ``__pq_row_in_file``, and the split embeds ``_parquet_manifest.json``
(:mod:`.manifest`) with ``segment_row_ranges`` mapping segments to global rows.
Files without rows are named by the AddAction but left out of the manifest
(tantivy4java refuses a manifest entry of zero rows).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import tantivy

from indextables.protocol.actions import AddAction
from indextables.protocol.store import ObjectStore
from indextables.search.companion.decimals import index_values
from indextables.search.companion.manifest import (
    MANIFEST_FILE,
    ColumnChunk,
    ColumnMapping,
    ParquetFileEntry,
    ParquetManifest,
    RowGroupEntry,
    SegmentRowRange,
    manifest_to_bytes,
)
from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD, path_hash
from indextables.search.companion.readahead import read_ahead
from indextables.search.companion.segmentbuild import SegmentIndex
from indextables.search.companion.segments import CappedIndex, plan
from indextables.search.companion.sourceio import source_filesystem
from indextables.search.companion.sources import SourceFile
from indextables.search.companion.stringmodes import StripMode, strip_column
from indextables.search.companion.stubstore import write_stub_stores
from indextables.search.errors import CompanionSourceError
from indextables.search.options import DEFAULT_FEED, FEED_KEY, lower_keys, parse_write
from indextables.search.schema.mapping import (
    FieldKind,
    FieldSpec,
    doc_mapping_json,
    tantivy_schema,
)
from indextables.search.splits.splitcache import write_checksums
from indextables.search.write.arrowinput import conform_batch
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.splitwriter import (
    PartitionIndex,
    _directory_size,
    _split_tags,
    split_path,
    to_reference_form,
    upload_split,
)

__all__ = ["IDENTITY_TAG", "CompanionGroup", "build_split", "companion_schema", "identity_tag"]

# Split tag: a digest of the split's source files and their identities (size, Delta
# deletion vector); split tags survive checkpoints and Avro states, AddAction tags do not.
IDENTITY_TAG = "indextables.companion.identity="
_TANTIVY_TYPES = {
    FieldKind.I64: "I64",
    FieldKind.F64: "F64",
    FieldKind.BOOL: "Bool",
    FieldKind.DATE: "DateTime",
    FieldKind.STRING: "Str",
    FieldKind.TEXT: "Str",
    FieldKind.JSON: "Json",
    FieldKind.IP: "IpAddr",
    FieldKind.BYTES: "Bytes",
}


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A split's files indexed: their manifest entries (files with rows), their rows, and
    the first file's Parquet column types (:func:`_physical_types`)."""

    entries: tuple[ParquetFileEntry, ...]
    rows: int
    physical: dict[str, tuple[int, str]]


@dataclass(frozen=True, slots=True)
class CompanionGroup:
    """Files of one partition value indexed into one split.

    Attributes:
        partition_values: the partition values every file shares.
        files: the files, in document order.
    """

    partition_values: tuple[tuple[str, str | None], ...]
    files: tuple[SourceFile, ...]

    @property
    def input_bytes(self) -> int:
        """The files' total size."""
        return sum(f.size for f in self.files)


def build_split(
    *,
    group: CompanionGroup,
    root: str,
    store: ObjectStore,
    specs: tuple[FieldSpec, ...],
    data_schema: pa.Schema,
    partition_columns: tuple[str, ...],
    fast_field_mode: str,
    source_version: int | None,
    heap_size: int,
    batch_size: int,
    string_modes: Mapping[str, StripMode] | None = None,
    options: Mapping[str, str] | None = None,
) -> AddAction:
    """Index ``group``'s files into one split, upload it and return its AddAction.

    ``data_schema`` is the non-partition columns in Spark's Arrow types; a
    column a file lacks (added to the table later) is indexed as null.
    ``string_modes`` (column -> strip mode): those columns are indexed with
    their pattern's matches removed (:mod:`.stringmodes`). ``options``: the index
    table's options, whose storage options reach a source on object storage.

    Raises:
        CompanionSourceError: a file that cannot be read or does not fit the schema.
    """
    filesystem, base = source_filesystem(root, options)
    modes = {c.lower(): m for c, m in (string_modes or {}).items()}
    schema = companion_schema(specs)
    # Every footer first: the rows to come size the split's indexes (.segments).
    footers = [_footer(filesystem, f"{base}/{source.path}", source) for source in group.files]
    rows = sum(footer.num_rows for footer in footers)
    segment_docs, commit_docs = plan(rows)
    # Only the indexed columns are read, conformed and indexed: a column the layout
    # leaves out (EXCLUDE COLUMNS, INCLUDE COLUMNS) is never decoded.
    indexed = {s.name for s in specs}
    read_schema = pa.schema([f for f in data_schema if f.name in indexed])

    def index_files(part: CappedIndex | SegmentIndex) -> _Indexed:
        entries = []
        offset = 0
        physical: dict[str, tuple[int, str]] | None = None
        for source, footer in zip(group.files, footers, strict=True):
            entry, file_schema = _index_file(
                part, filesystem, f"{base}/{source.path}", source, footer, offset,
                read_schema, batch_size, modes,
            )  # fmt: skip
            if physical is None:  # the first file's, from the footer already read
                physical = _physical_types(file_schema)
            if entry.num_rows:
                entries.append(entry)
            offset += entry.num_rows
        part.finish()
        return _Indexed(tuple(entries), offset, physical or {})

    def tantivy_index() -> CappedIndex:
        return CappedIndex(
            specs, schema, heap_size=heap_size, hidden_fast=(FILE_HASH_FIELD, ROW_IN_FILE_FIELD),
            segment_docs=segment_docs, commit_docs=commit_docs,
        )  # fmt: skip

    # The segment writer unless the options ask for tantivy-py (indexWriter.feed) or the
    # writer refuses the schema (checked before any row); a split without rows is an
    # empty tantivy-py index.
    part: CappedIndex | SegmentIndex | None = None
    if rows and _feed(options or {}) == "segments":
        part = SegmentIndex.open(
            specs,
            hidden_fast=(FILE_HASH_FIELD, ROW_IN_FILE_FIELD),
            segment_docs=segment_docs,
            heap_size=heap_size,
        )
    try:
        if part is None:
            part = tantivy_index()
            done = index_files(part)
        else:
            try:
                done = index_files(part)
            except SegmentWriteError:  # a value it refuses: the split through tantivy-py
                part.discard()
                part = tantivy_index()
                done = index_files(part)
        entries, offset, physical = done.entries, done.rows, done.physical
        manifest = ParquetManifest(
            fast_field_mode=fast_field_mode,
            # A split missing deleted rows maps hits through its hidden fields only: no
            # segment is a run of the files' rows (a reader by segment ranges fails).
            segment_row_ranges=(
                ()
                if any(f.deleted is not None for f in group.files)
                else _written_ranges(part.segment_sizes)
                if isinstance(part, SegmentIndex)
                else _segment_ranges(part, entries)
            ),
            parquet_files=tuple(entries),
            column_mapping=_column_mapping(specs, data_schema, physical),
            total_rows=offset,
            table_root="",
            string_indexing_modes={
                s.name: modes[s.name.lower()].manifest_json()
                for s in specs
                if s.name.lower() in modes
            },
        )
        with open(os.path.join(part.directory, MANIFEST_FILE), "wb") as handle:
            handle.write(manifest_to_bytes(manifest))
        write_stub_stores(part.directory)
        to_reference_form(part.directory)
        write_checksums(part.directory, [MANIFEST_FILE])
        values = dict(group.partition_values)
        path = split_path(partition_columns, tuple(values[c] for c in partition_columns))
        return upload_split(
            store,
            part.directory,
            path,
            partition_values=values,
            data_change=True,
            min_values=part.stats.min_values(),
            max_values=part.stats.max_values(),
            num_records=part.stats.num_records,
            num_merge_ops=0,
            doc_mapping_json=doc_mapping_json(specs),
            uncompressed_size_bytes=_directory_size(part.directory),
            split_tags=(*(_split_tags(part.stats) or ()), identity_tag(group.files)),
            companion_source_files=tuple(f.path for f in group.files),
            companion_delta_version=source_version,
            companion_fast_field_mode=fast_field_mode.upper(),
        )
    finally:
        if part is not None:
            part.discard()


def _feed(options: Mapping[str, str]) -> str:
    """The ``indexWriter.feed`` option (validated; the other write options are not read)."""
    value = lower_keys(options).get(FEED_KEY)
    return DEFAULT_FEED if value is None else parse_write({FEED_KEY: value}).feed


def companion_schema(specs: Sequence[FieldSpec]) -> Any:
    """The Tantivy schema of a companion split: the indexed fields, then tantivy4java's
    two hidden u64 fast fields (neither indexed nor stored)."""
    hidden = (FILE_HASH_FIELD, ROW_IN_FILE_FIELD)
    clash = sorted(s.name for s in specs if s.name.lower() in hidden)
    if clash:
        raise CompanionSourceError(
            f"column {clash[0]!r} has the name of a companion split's hidden field; "
            "leave it out with EXCLUDE COLUMNS"
        )
    return tantivy_schema(specs, hidden_fast=hidden)


def identity_tag(files: Sequence[SourceFile]) -> str:
    """The split tag naming ``files`` and their identities (order-independent)."""
    lines = sorted(f"{f.path}\t{f.identity}" for f in files)
    return IDENTITY_TAG + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _index_file(
    part: CappedIndex | SegmentIndex,
    filesystem: object,
    location: str,
    source: SourceFile,
    footer: pq.FileMetaData,
    offset: int,
    data_schema: pa.Schema,
    batch_size: int,
    modes: Mapping[str, StripMode],
) -> tuple[ParquetFileEntry, pq.ParquetSchema]:
    """Index one file's rows (``footer``: its metadata, read already); its manifest entry
    and its Parquet schema."""
    try:
        parquet = pq.ParquetFile(location, filesystem=filesystem, metadata=footer)
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(f"source file {source.path!r} cannot be read: {exc}") from None
    with parquet:
        metadata = parquet.metadata
        present = set(parquet.schema_arrow.names)
        wanted = [f.name for f in data_schema if f.name in present]
        file_hash = path_hash(source.path)
        row = 0
        batches = read_ahead(parquet.iter_batches(batch_size=batch_size, columns=wanted))
        with closing(batches):
            for batch in _read(batches, source.path):
                row = _index_batch(
                    part, _with_all_columns(batch, data_schema, source.path), source, row,
                    file_hash, modes,
                )  # fmt: skip
        entry = ParquetFileEntry(
            relative_path=source.path,
            file_size_bytes=source.size,
            row_offset=offset,
            num_rows=row,
            has_offset_index=_has_offset_index(metadata),
            row_groups=_row_groups(metadata),
        )
        return entry, metadata.schema


def _footer(filesystem: Any, location: str, source: SourceFile) -> pq.FileMetaData:
    """The Parquet footer of ``source`` (at ``location``), or CompanionSourceError naming it."""
    try:
        return pq.read_metadata(location, filesystem=filesystem)
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(f"source file {source.path!r} cannot be read: {exc}") from None


def _read(batches: Iterator[pa.RecordBatch], path: str) -> Iterator[pa.RecordBatch]:
    """``batches``, a read or decoding failure raised as CompanionSourceError naming ``path``."""
    try:
        yield from batches
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(f"source file {path!r} cannot be read: {exc}") from None


def _index_batch(
    part: CappedIndex | SegmentIndex,
    batch: pa.RecordBatch,
    source: SourceFile,
    row: int,
    file_hash: int,
    modes: Mapping[str, StripMode],
) -> int:
    """Index one batch of a file whose first row is ``row``; the next batch's first row."""
    # Rows a Delta deletion vector deletes are never indexed (see .deletions).
    runs = (
        [(0, batch.num_rows)]
        if source.deleted is None
        else source.deleted.live_runs(row, batch.num_rows)
    )
    for start, length in runs:
        piece = batch if length == batch.num_rows else batch.slice(start, length)
        indexed = index_values(_stripped(piece, modes) if modes else piece)
        done = 0
        while done < length:  # in pieces that end where the index commits (.segments)
            take = min(length - done, part.room())
            chunk = indexed if take == length else indexed.slice(done, take)
            # The rows with their hidden coordinates (file hash, row in the file).
            part.add_rows(chunk, file_hash=file_hash, first_row=row + start + done)
            done += take
        part.stats.add(piece)
    return row + int(batch.num_rows)


def _stripped(batch: pa.RecordBatch, modes: Mapping[str, StripMode]) -> pa.RecordBatch:
    """``batch`` with the strip-mode columns' matches removed (what the index holds)."""
    arrays = [
        strip_column(batch.column(i), modes[f.name.lower()]) if f.name.lower() in modes
        else batch.column(i)
        for i, f in enumerate(batch.schema)
    ]  # fmt: skip
    return pa.RecordBatch.from_arrays(arrays, schema=batch.schema)


def _with_all_columns(batch: pa.RecordBatch, schema: pa.Schema, path: str) -> pa.RecordBatch:
    arrays = []
    for field in schema:
        index = batch.schema.get_field_index(field.name)
        arrays.append(pa.nulls(batch.num_rows, field.type) if index < 0 else batch.column(index))
    fields = [
        pa.field(
            f.name, batch.schema.field(f.name).type if f.name in batch.schema.names else f.type
        )
        for f in schema
    ]
    try:
        return conform_batch(pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields)), schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise CompanionSourceError(
            f"source file {path!r} does not fit the table's schema: {exc}"
        ) from None


def _has_offset_index(metadata: pq.FileMetaData) -> bool:
    if metadata.num_row_groups == 0 or metadata.num_columns == 0:
        return False
    return bool(metadata.row_group(0).column(0).has_offset_index)


def _row_groups(metadata: pq.FileMetaData) -> tuple[RowGroupEntry, ...]:
    groups = []
    offset = 0
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        columns = tuple(
            ColumnChunk(
                column_idx=c,
                column_name=group.column(c).path_in_schema,
                data_page_offset=int(group.column(c).data_page_offset),
                compressed_size=int(group.column(c).total_compressed_size),
                uncompressed_size=int(group.column(c).total_uncompressed_size),
            )
            for c in range(group.num_columns)
        )
        groups.append(RowGroupEntry(index, group.num_rows, offset, columns))
        offset += group.num_rows
    return tuple(groups)


#: Documents whose hidden coordinates are read back at a time: memory stays bounded
#: (a segment read whole held ~117 bytes of Python objects per document: ~270 MB for the
#: 2.3M-document segments of a 20M-row companion's splits).
READBACK_CHUNK = 1 << 16


def _segment_ranges(
    part: CappedIndex | PartitionIndex, entries: Sequence[ParquetFileEntry]
) -> tuple[SegmentRowRange, ...]:
    """Each segment's global rows, read back from the documents' hidden coordinates.

    tantivy4java numbers a segment's documents from its ``row_offset`` (its
    readers before ``__pq_file_hash`` existed map hits that way). When every
    segment holds one run of rows the ranges say exactly that; otherwise (a
    segment merge reordered documents) they are the segments' sizes in order,
    as tantivy4java writes them, and only the hidden fields map hits.
    """
    sizes = _segment_sizes(part.directory)
    if not sizes or not entries:
        return ()
    part.index.reload()
    searcher = part.index.searcher()
    hashes = pa.array([path_hash(e.relative_path) for e in entries], pa.uint64())
    offsets = pa.array([e.row_offset for e in entries], pa.int64())
    exact: list[SegmentRowRange] = []
    for ordinal, size in enumerate(sizes):
        if size == 0:
            continue
        first = _one_run(searcher, ordinal, size, hashes, offsets)
        if first is None:
            break
        exact.append(SegmentRowRange(ordinal, first, size))
    else:
        return tuple(exact)
    ranges = []
    offset = 0
    for ordinal, size in enumerate(sizes):
        if size:
            ranges.append(SegmentRowRange(ordinal, offset, size))
            offset += size
    return tuple(ranges)


def _one_run(
    searcher: tantivy.Searcher, ordinal: int, size: int, hashes: pa.Array, offsets: pa.Array
) -> int | None:
    """A segment's first global row when its documents are one run of rows, else None.

    Column-wise, :data:`READBACK_CHUNK` documents at a time: their two fast fields
    are read in order (``meta.json`` lists the segments in the searcher's order) and
    checked in Arrow, with no Python object per document but its address; each
    chunk must also start where the run's previous chunk left off.
    """
    address = tantivy.DocAddress
    first: int | None = None
    for start in range(0, size, READBACK_CHUNK):
        docs = [address(ordinal, doc) for doc in range(start, min(size, start + READBACK_CHUNK))]
        files = pa.array(searcher.fast_field_values(FILE_HASH_FIELD, docs), pa.uint64())
        rows = pa.array(searcher.fast_field_values(ROW_IN_FILE_FIELD, docs), pa.uint64())
        found = pc.index_in(files, value_set=hashes)
        if found.null_count:
            raise CompanionSourceError("a companion document names a file the split does not")
        global_rows = pc.add(pc.take(offsets, found), rows.cast(pa.int64()))
        head = global_rows[0].as_py()
        if first is None:
            first = head
        elif head != first + start:
            return None
        if len(docs) > 1 and not pc.all(pc.equal(pc.pairwise_diff(global_rows), 1)).as_py():
            return None
    return first


def _written_ranges(sizes: Sequence[int]) -> tuple[SegmentRowRange, ...]:
    """The ranges of segments written in document order, each one run of global rows."""
    ranges = []
    offset = 0
    for ordinal, size in enumerate(sizes):
        ranges.append(SegmentRowRange(ordinal, offset, size))
        offset += size
    return tuple(ranges)


def _segment_sizes(directory: str) -> list[int]:
    """The documents of each segment of the committed index, in ``meta.json``'s order."""
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as handle:
        meta = json.load(handle)
    return [int(s["max_doc"]) for s in meta.get("segments", ())]


def _physical_types(schema: pq.ParquetSchema) -> dict[str, tuple[int, str]]:
    """Top-level column -> (its leaf ordinal, its Parquet physical type) in one file."""
    found: dict[str, tuple[int, str]] = {}
    for ordinal in range(len(schema)):
        column = schema.column(ordinal)
        top = column.path.split(".")[0]
        if top not in found:
            nested = column.path != top
            found[top] = (ordinal, "GROUP" if nested else str(column.physical_type))
    return found


def _column_mapping(
    specs: Sequence[FieldSpec], schema: pa.Schema, physical: Mapping[str, tuple[int, str]]
) -> tuple[ColumnMapping, ...]:
    """tantivy4java's column mapping: Parquet column, leaf ordinal and physical type
    (as the first file of the split has them), Tantivy type."""
    by_name = {s.name: s for s in specs}
    mapped = []
    for field in schema:
        spec = by_name.get(field.name)
        if spec is None:
            continue
        ordinal, parquet_type = physical.get(field.name, (-1, "MISSING"))
        mapped.append(
            ColumnMapping(
                tantivy_field_name=spec.name,
                parquet_column_name=field.name,
                physical_ordinal=ordinal,
                parquet_type=parquet_type,
                tantivy_type=_TANTIVY_TYPES[spec.kind],
            )
        )
    return tuple(mapped)
