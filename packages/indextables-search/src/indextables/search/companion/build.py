"""One group of source Parquet files -> one companion split (indexed, nothing stored).

Documents follow the files' concatenated row order. No field is stored and no
Arrow copy is bundled: values are read back from the Parquet files (see
:mod:`.read`). Each document carries the hidden row key fast field, here
``(file number << 32) | row in file``, and the split embeds
``_parquet_manifest.json`` (:mod:`.manifest`) as tantivy4java's companion
splits do, with ``segment_row_ranges`` mapping segments to global rows.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from indextables.protocol.actions import AddAction
from indextables.protocol.splitbundle import write_split_bundle
from indextables.protocol.store import ObjectStore
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
from indextables.search.companion.sources import SourceFile, source_filesystem
from indextables.search.errors import CompanionSourceError
from indextables.search.read.convert import documents
from indextables.search.schema.mapping import (
    ROW_KEY_FIELD,
    FieldKind,
    FieldSpec,
    doc_mapping_json,
    tantivy_schema,
)
from indextables.search.splits.splitcache import write_checksums
from indextables.search.write.arrowinput import conform_batch
from indextables.search.write.splitwriter import (
    PartitionIndex,
    _directory_size,
    _split_tags,
    split_path,
    to_reference_form,
)

__all__ = ["IDENTITY_TAG", "CompanionGroup", "build_split", "identity_tag"]

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
) -> AddAction:
    """Index ``group``'s files into one split, upload it and return its AddAction.

    ``data_schema`` is the non-partition columns in Spark's Arrow types; a
    column a file lacks (added to the table later) is indexed as null.

    Raises:
        CompanionSourceError: a file that cannot be read or does not fit the schema.
    """
    filesystem, base = source_filesystem(root)
    schema = tantivy_schema(specs, row_key=True)
    part = PartitionIndex.create(specs, schema, heap_size=heap_size)
    try:
        entries = []
        offset = 0
        for number, source in enumerate(group.files):
            entry = _index_file(
                part, filesystem, f"{base}/{source.path}", source, number, offset, specs,
                data_schema, batch_size,
            )  # fmt: skip
            entries.append(entry)
            offset += entry.num_rows
        part.commit()
        manifest = ParquetManifest(
            fast_field_mode=fast_field_mode,
            # A split missing deleted rows maps hits through its row keys only: no
            # segment is a run of the files' rows (a reader by segment ranges fails).
            segment_row_ranges=(
                ()
                if any(f.deleted is not None for f in group.files)
                else _segment_ranges(part, entries)
            ),
            parquet_files=tuple(entries),
            column_mapping=_column_mapping(
                specs, data_schema, _physical_types(filesystem, f"{base}/{group.files[0].path}")
            ),
            total_rows=offset,
            table_root="",
        )
        with open(os.path.join(part.directory, MANIFEST_FILE), "wb") as handle:
            handle.write(manifest_to_bytes(manifest))
        to_reference_form(part.directory)
        write_checksums(part.directory, [MANIFEST_FILE])
        buffer = io.BytesIO()
        footer = write_split_bundle(part.directory, buffer)
        data = buffer.getvalue()
        values = dict(group.partition_values)
        path = split_path(partition_columns, tuple(values[c] for c in partition_columns))
        store.put(path, data)
        return AddAction(
            path=path,
            partition_values=values,
            size=len(data),
            modification_time=int(time.time() * 1000),
            data_change=True,
            min_values=part.stats.min_values(),
            max_values=part.stats.max_values(),
            num_records=part.stats.num_records,
            footer_start_offset=footer.footer_start_offset,
            footer_end_offset=footer.footer_end_offset,
            has_footer_offsets=True,
            num_merge_ops=0,
            doc_mapping_json=doc_mapping_json(specs),
            uncompressed_size_bytes=_directory_size(part.directory),
            split_tags=(*(_split_tags(part.stats) or ()), identity_tag(group.files)),
            companion_source_files=tuple(f.path for f in group.files),
            companion_delta_version=source_version,
            companion_fast_field_mode=fast_field_mode.upper(),
        )
    finally:
        part.discard()


def identity_tag(files: Sequence[SourceFile]) -> str:
    """The split tag naming ``files`` and their identities (order-independent)."""
    lines = sorted(f"{f.path}\t{f.identity}" for f in files)
    return IDENTITY_TAG + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _index_file(
    part: PartitionIndex,
    filesystem: object,
    location: str,
    source: SourceFile,
    number: int,
    offset: int,
    specs: tuple[FieldSpec, ...],
    data_schema: pa.Schema,
    batch_size: int,
) -> ParquetFileEntry:
    try:
        parquet = pq.ParquetFile(location, filesystem=filesystem)
    except (OSError, pa.ArrowException) as exc:
        raise CompanionSourceError(f"source file {source.path!r} cannot be read: {exc}") from None
    with parquet:
        metadata = parquet.metadata
        present = set(parquet.schema_arrow.names)
        wanted = [f.name for f in data_schema if f.name in present]
        schema = tantivy_schema(specs, row_key=True)
        row = 0
        for batch in parquet.iter_batches(batch_size=batch_size, columns=wanted):
            batch = _with_all_columns(batch, data_schema, source.path)
            # Rows a Delta deletion vector deletes are never indexed (see .deletions).
            runs = (
                [(0, batch.num_rows)]
                if source.deleted is None
                else source.deleted.live_runs(row, batch.num_rows)
            )
            for start, length in runs:
                piece = batch if length == batch.num_rows else batch.slice(start, length)
                for doc in documents(
                    piece, specs, schema, batch_number=number, first_row=row + start
                ):
                    part.writer.add_document(doc)
                part.stats.add(piece)
            row += batch.num_rows
        return ParquetFileEntry(
            relative_path=source.path,
            file_size_bytes=source.size,
            row_offset=offset,
            num_rows=row,
            has_offset_index=_has_offset_index(metadata),
            row_groups=_row_groups(metadata),
        )


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


def _segment_ranges(
    part: PartitionIndex, entries: Sequence[ParquetFileEntry]
) -> tuple[SegmentRowRange, ...]:
    """Each segment's global rows, read back from the committed index's row keys.

    tantivy4java numbers a segment's documents from its ``row_offset``; a
    segment whose rows are not one run (a merge of non-adjacent segments)
    cannot be described that way, and the split is then readable through
    its row keys only (the manifest records ``row_key_only``).
    """
    import tantivy

    part.index.reload()
    searcher = part.index.searcher()
    if searcher.num_docs == 0:
        return ()
    hits = searcher.search(tantivy.Query.all_query(), limit=searcher.num_docs, count=False).hits
    addresses = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))
    keys = searcher.fast_field_values(ROW_KEY_FIELD, addresses)
    starts = [e.row_offset for e in entries]
    rows: dict[int, list[tuple[int, int]]] = {}
    for address, key in zip(addresses, keys, strict=True):
        assert key is not None
        global_row = starts[int(key) >> 32] + (int(key) & 0xFFFFFFFF)
        rows.setdefault(address.segment_ord, []).append((address.doc, global_row))
    ranges = []
    for ordinal in sorted(rows):
        docs = sorted(rows[ordinal])
        first = docs[0][1] - docs[0][0]
        if any(g != first + d for d, g in docs):
            raise CompanionSourceError(
                "a companion split's segment holds rows out of source order; "
                "lower TARGET INPUT SIZE or raise the writer heap"
            )
        ranges.append(SegmentRowRange(ordinal, first, len(docs)))
    return tuple(ranges)


def _physical_types(filesystem: Any, location: str) -> dict[str, tuple[int, str]]:
    """Top-level column -> (its leaf ordinal, its Parquet physical type) in one file."""
    schema = pq.read_metadata(location, filesystem=filesystem).schema
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
