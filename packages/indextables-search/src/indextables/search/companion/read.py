"""Read a companion split: Tantivy hits -> (file, row) -> the projected columns from Parquet.

A hit ``(segment, doc)`` becomes a file and a row in one of three ways, by the
split's fields: tantivy4java's hidden fast fields ``__pq_file_hash`` and
``__pq_row_in_file`` (its current splits and those written here now); this
package's first row key ``__indextables_row`` (``file number << 32 | row in
file``, companion tables written by its first version); or, with neither
(tantivy4java's older splits), ``segment_row_ranges`` and the files' row
offsets. Per file, only the projected columns are read, and of them only
the pages holding hits (:mod:`.parquetpages`, by the offset index); nested
columns and files without an offset index are read by the row groups holding
hits (pyarrow), then the rows are taken. Columns come out of the files in their
plain Arrow layouts (:mod:`indextables.search.schema.plainarrow`: the views
deltalake and Polars write become strings and binaries before any row is taken),
then are cast to the table schema. Before a file is
read its size is compared with the manifest's ``file_size_bytes``: a file that
changed raises :class:`~indextables.search.errors.StaleCompanionError`; a file that
cannot be decoded raises :class:`~indextables.search.errors.CompanionSourceError`
naming it.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import tantivy

from indextables.search.companion.fastcolumns import as_file_type, fast_columns, fast_values
from indextables.search.companion.manifest import (
    MANIFEST_FILE,
    ParquetManifest,
    manifest_from_bytes,
)
from indextables.search.companion.pagethreads import PageThreads, page_workers
from indextables.search.companion.parquetpages import (
    FileKey,
    ParquetFooter,
    footer_of,
    page_rows,
)
from indextables.search.companion.pathhash import FILE_HASH_FIELD, ROW_IN_FILE_FIELD
from indextables.search.companion.sourceio import source_filesystem
from indextables.search.errors import CompanionError, CompanionSourceError, StaleCompanionError
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec, whole_second_dates
from indextables.search.query.tantivyquery import fully_indexed_columns
from indextables.search.read.snippets import Highlight, Snippets
from indextables.search.read.splitreader import (
    BATCH_ROWS,
    SplitEntry,
    _fields,
    _query,
    open_split,
    split_traits,
)
from indextables.search.schema.mapping import ROW_KEY_FIELD
from indextables.search.schema.partitionvalues import partition_column
from indextables.search.schema.plainarrow import plain_array
from indextables.search.splits.entryid import content_identity

__all__ = ["read_companion_split", "split_manifest"]

# string_indexing_modes whose fields are plain text fields (see .stringmodes)
_STRIP_MODES = ("text_uuid_strip", "text_custom_strip")


def split_manifest(directory: str) -> ParquetManifest:
    """The manifest embedded in an unbundled companion split."""
    with open(os.path.join(directory, MANIFEST_FILE), "rb") as handle:
        return manifest_from_bytes(handle.read())


def read_companion_split(
    directory: str,
    entry: SplitEntry,
    schema: pa.Schema,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
    root: str,
    options: Mapping[str, str] | None = None,
    threads: PageThreads = "auto",
    highlight: Highlight | None = None,
) -> Iterator[pa.RecordBatch]:
    """The rows of one companion split that match, as batches of ``schema``.

    ``root`` is the source table root the manifest's relative paths resolve against;
    ``options`` the table's options (their storage options reach a source on object
    storage: :mod:`.sourceio`); ``threads`` the ``read.companionThreads`` option
    (:mod:`.pagethreads`); ``highlight``: snippet columns appended, from the text the
    source's Parquet holds (read for them when ``schema`` lacks the column).
    """
    batches = _matching(
        directory, entry, schema, search=search, conditions=conditions, root=root,
        options=options, threads=threads, highlight=highlight,
    )  # fmt: skip
    for batch, snippets in batches:
        if snippets is None or highlight is None:
            yield batch
            continue
        texts = [batch.column(name) for name in highlight.columns]
        columns = [batch.column(f.name) for f in schema]
        fields = [*schema, *snippets.fields]
        found = snippets.columns_from_text(texts)
        yield pa.RecordBatch.from_arrays([*columns, *found], schema=pa.schema(fields))


def _matching(
    directory: str,
    entry: SplitEntry,
    schema: pa.Schema,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
    root: str,
    options: Mapping[str, str] | None,
    threads: PageThreads,
    highlight: Highlight | None,
) -> Iterator[tuple[pa.RecordBatch, Snippets | None]]:
    """The matching rows as batches of ``schema`` widened by the highlighted columns it
    lacks, each with the split's snippet generators (None without ``highlight``)."""
    workers = page_workers(threads)
    manifest = split_manifest(directory)
    hashed = {
        k: v.get("mode", "?")
        for k, v in manifest.string_indexing_modes.items()
        if v.get("mode") not in _STRIP_MODES
    }
    if hashed:
        modes = ", ".join(f"{k} ({v})" for k, v in sorted(hashed.items()))
        raise CompanionError(
            f"companion split {entry.ref.path!r} indexes {modes} with a hashed string indexing "
            "mode, which this package does not read; rebuild the companion without it"
        )
    identity = content_identity(directory)
    index, searcher = open_split(directory, identity=identity)
    if searcher.num_docs == 0:
        return
    fields = _fields(index, entry)
    traits = split_traits(directory, identity=identity)
    query = _query(
        index, fields, search, conditions, fully_indexed_columns(entry.split_tags), traits,
        whole_second_dates(schema),
    )  # fmt: skip
    snippets = None
    if highlight is not None:
        names = {key: spec.name for key, spec in fields.items()}
        snippets = Snippets(searcher, index, query or tantivy.Query.all_query(), highlight, names)
        present = set(schema.names)
        extra = [pa.field(c, pa.string()) for c in highlight.columns if c not in present]
        schema = pa.schema([*schema, *extra])
    filesystem, base = source_filesystem(root, options)
    reader = _FileRows(manifest, filesystem, base, schema, entry.partition_values, workers=workers)
    if query is None and searcher.num_docs < manifest.total_rows:
        # Rows deleted by a Delta deletion vector are not indexed: read the indexed ones.
        query = tantivy.Query.all_query()
    if query is None:
        for number in range(len(manifest.parquet_files)):
            for batch in reader.whole_file(number):
                yield batch, snippets
        return
    hits = searcher.search(query, limit=searcher.num_docs, count=False).hits
    addresses = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))
    located = sorted(_locate(searcher, manifest, addresses, _row_mapping(directory, identity)))
    # Integer and float columns come from the split's fast fields (no Parquet pages).
    fast = fast_columns(directory, identity, schema, skip=list(entry.partition_values))
    values = fast_values(searcher, addresses, fast)
    start = 0
    while start < len(located):
        number = located[start][0]
        stop = bisect.bisect_left(located, (number + 1, -1, -1), lo=start)
        for offset in range(start, stop, BATCH_ROWS):
            part = located[offset : min(stop, offset + BATCH_ROWS)]
            take = pa.array([position for _, _, position in part], pa.int64())
            given = {name: array.take(take) for name, array in values.items()}
            yield reader.rows(number, [row for _, row, _ in part], given=given), snippets
        start = stop


def _row_mapping(directory: str, identity: str) -> str:
    """How the split maps hits: ``"pq"`` (tantivy4java's hidden fields), ``"row_key"``
    (this package's first layout) or ``"segments"`` (``segment_row_ranges``); kept per
    content identity (never per inode: inode numbers are reused at once)."""
    return _mapping_of(directory, identity)


@functools.lru_cache(maxsize=64)
def _mapping_of(directory: str, identity: str) -> str:
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
        names = {entry.get("name") for entry in json.load(source).get("schema", [])}
    if FILE_HASH_FIELD in names and ROW_IN_FILE_FIELD in names:
        return "pq"
    return "row_key" if ROW_KEY_FIELD in names else "segments"


def _locate(
    searcher: tantivy.Searcher, manifest: ParquetManifest, addresses: list[Any], mapping: str
) -> list[tuple[int, int, int]]:
    """``(file number, row in file, position in addresses)`` of each hit."""
    if not addresses:
        return []
    if mapping == "pq":
        numbers = manifest.file_numbers()
        hashes = searcher.fast_field_values(FILE_HASH_FIELD, addresses)
        rows = searcher.fast_field_values(ROW_IN_FILE_FIELD, addresses)
        found = []
        for position, (file_hash, row) in enumerate(zip(hashes, rows, strict=True)):
            number = numbers.get(-1 if file_hash is None else int(file_hash))
            if number is None or row is None:
                raise CompanionError(
                    f"a hit's {FILE_HASH_FIELD} ({file_hash}) names no file of the split's "
                    f"{MANIFEST_FILE}"
                )
            found.append((number, int(row), position))
        return found
    if mapping == "row_key":
        keys = searcher.fast_field_values(ROW_KEY_FIELD, addresses)
        return [
            (int(k) >> 32, int(k) & 0xFFFFFFFF, position)
            for position, k in enumerate(keys)
            if k is not None
        ]
    global_rows = [manifest.segment_offset(a.segment_ord) + a.doc for a in addresses]
    return [
        (number, row, position)
        for position, (number, row) in enumerate(manifest.locate(global_rows))
    ]


class _FileRows:
    """Reads rows of the manifest's files (each file's size checked once)."""

    def __init__(
        self,
        manifest: ParquetManifest,
        filesystem: pafs.FileSystem,
        base: str,
        schema: pa.Schema,
        partition_values: Mapping[str, str | None],
        *,
        workers: int = 1,
    ) -> None:
        self.manifest = manifest
        self.filesystem = filesystem
        self.base = base
        self.schema = schema
        self.partitions = {k.lower(): v for k, v in partition_values.items()}
        self.checked: dict[int, FileKey] = {}
        self.workers = workers

    def _checked(self, number: int) -> tuple[str, FileKey]:
        """The file's location and version, once its size is checked against the manifest."""
        entry = self.manifest.parquet_files[number]
        location = f"{self.base}/{entry.relative_path}"
        known = self.checked.get(number)
        if known is not None:
            return location, known
        try:
            info = self.filesystem.get_file_info(location)
        except (OSError, pa.ArrowException) as exc:
            raise CompanionSourceError(
                f"source file {entry.relative_path!r} cannot be read: {exc}"
            ) from None
        if info.type == pafs.FileType.NotFound:
            raise StaleCompanionError(entry.relative_path, "the file is gone")
        if info.size != entry.file_size_bytes:
            raise StaleCompanionError(
                entry.relative_path,
                f"its size is {info.size} bytes, the index recorded {entry.file_size_bytes}",
            )
        key = FileKey(location, entry.file_size_bytes, info.mtime_ns)
        self.checked[number] = key
        return location, key

    def _data_columns(self, schema: pa.Schema) -> list[str]:
        present = set(schema.names)
        return [
            f.name
            for f in self.schema
            if f.name.lower() not in self.partitions and f.name in present
        ]

    @contextlib.contextmanager
    def _reading(self, number: int) -> Iterator[None]:
        """Errors reading file ``number`` (its bytes or their decoding) as
        :class:`CompanionSourceError` naming the file, not the split."""
        try:
            yield
        except (pa.ArrowException, OSError) as exc:
            path = self.manifest.parquet_files[number].relative_path
            raise CompanionSourceError(
                f"source file {path!r} cannot be read: {type(exc).__name__}: {exc}"
            ) from exc

    def whole_file(self, number: int) -> Iterator[pa.RecordBatch]:
        location, key = self._checked(number)
        with self._reading(number), self.filesystem.open_input_file(location) as handle:
            footer = footer_of(handle, key)
            columns = self._data_columns(footer.schema)
            if not columns:
                yield self._typed(pa.table({}), self.manifest.parquet_files[number].num_rows)
                return
            with pq.ParquetFile(handle, metadata=footer.metadata) as parquet:
                for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns):
                    yield self._typed(pa.Table.from_batches([batch]), batch.num_rows)

    def rows(
        self, number: int, rows: Sequence[int], *, given: Mapping[str, pa.Array] | None = None
    ) -> pa.RecordBatch:
        """``rows`` of file ``number``; the columns in ``given`` (their values at those
        rows, from the split's fast fields) are not read from the file."""
        given = given or {}
        location, key = self._checked(number)
        with self._reading(number), self.filesystem.open_input_file(location) as handle:
            footer = footer_of(handle, key)
            present = self._data_columns(footer.schema)
            arrays: dict[str, pa.Array] = {}
            for name in present:
                if name in given:
                    typed = as_file_type(given[name], footer.schema.field(name).type)
                    if typed is not None:
                        arrays[name] = typed
            columns = [c for c in present if c not in arrays]
            if columns:
                served = page_rows(handle, footer, columns, rows, workers=self.workers)
                arrays.update(served.arrays)
                if served.rest:
                    with pq.ParquetFile(handle, metadata=footer.metadata) as parquet:
                        table = _row_group_rows(parquet, footer, list(served.rest), rows)
                    arrays.update(zip(table.column_names, table.columns, strict=True))
        if not present:
            return self._typed(pa.table({}), len(rows))
        return self._typed(pa.table({c: arrays[c] for c in present}), len(rows))

    def _typed(self, table: pa.Table, count: int) -> pa.RecordBatch:
        arrays = []
        for field in self.schema:
            key = field.name.lower()
            if key in self.partitions:
                arrays.append(partition_column(self.partitions[key], field.type, count))
            elif field.name in table.column_names:
                column = table.column(field.name).combine_chunks()
                arrays.append(_cast(column, field.type))
            else:
                arrays.append(pa.nulls(count, field.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _row_group_rows(
    parquet: pq.ParquetFile, footer: ParquetFooter, columns: list[str], rows: Sequence[int]
) -> pa.Table:
    """``rows`` of ``columns`` read by whole row groups (nested columns, no offset index)."""
    starts = footer.group_starts
    needed = sorted({bisect.bisect_right(starts, r) - 1 for r in rows})
    table = parquet.read_row_groups(needed, columns=columns)
    # plain layouts first: pyarrow has no take for views or run-end encoded arrays
    table = pa.table([plain_array(c) for c in table.columns], names=table.column_names)
    # Positions in the concatenation of the row groups read.
    base: dict[int, int] = {}
    position = 0
    for group in needed:
        base[group] = position
        position += footer.group_rows[group]
    indices = []
    for row in rows:
        group = bisect.bisect_right(starts, row) - 1
        indices.append(base[group] + row - starts[group])
    return table.take(pa.array(indices, pa.int64()))


def _cast(column: pa.Array, target: pa.DataType) -> pa.Array:
    column = plain_array(column)
    if column.type == target:
        return column
    from indextables.search.write.arrowinput import conform_batch

    batch = pa.RecordBatch.from_arrays([column], names=["c"])
    return conform_batch(batch, pa.schema([pa.field("c", target)])).column(0)
