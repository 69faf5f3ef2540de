"""Executor side of a read: one split -> Tantivy search -> Arrow batches typed to the schema.

Partition columns are not stored in splits: their values come from the log
and are added as constant columns. A read that matches every row scans the
split's Arrow copy; a searched read fetches stored documents (or numeric fast
fields) for its hits, and takes from the Arrow copy, by row key, the columns
stored documents cannot hold exactly (:func:`rowcopy.exact_in_docs`).
"""

from __future__ import annotations

import functools
import json
import logging
import operator
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search import oplog
from indextables.search.boundedcache import BoundedCache
from indextables.search.errors import CompanionError
from indextables.search.query.casenotice import notice_case_mismatch
from indextables.search.query.conditions import Condition
from indextables.search.query.jsonquery import json_path_query
from indextables.search.query.searchoptions import SearchSpec, build_query, whole_second_dates
from indextables.search.query.tantivyquery import conjunction, fully_indexed_columns, to_query
from indextables.search.read import bulkrows
from indextables.search.read.bulkrows import BulkColumns
from indextables.search.read.convert import column_from_docs, has_clamped_dates
from indextables.search.read.docstore import DecodeSession, DocStoreError
from indextables.search.read.docstore.pool import DecoderThreads
from indextables.search.read.rowcopy import RowCopy, exact_in_docs
from indextables.search.read.snippets import Highlight, Snippets
from indextables.search.read.topk import Ordering, Scoring, TopK, score_field
from indextables.search.read.wholesplit import whole_split_batches
from indextables.search.schema.mapping import (
    ROW_KEY_FIELD,
    FieldKind,
    FieldSpec,
    specs_from_doc_mapping,
)
from indextables.search.schema.partitionvalues import partition_column
from indextables.search.schema.tokenizers import open_index
from indextables.search.splits.entryid import content_identity, on_forget
from indextables.search.splits.nearterms import remember_directory
from indextables.search.splits.splitcache import SplitRef
from indextables.search.splits.termbuffer import infix_terms_of
from indextables.search.write.splitwriter import ROWS_FILE

BATCH_ROWS = 8192
# What a companion split embeds (see indextables.search.companion.manifest).
COMPANION_MANIFEST = "_parquet_manifest.json"
_log = logging.getLogger(__name__)
_FAST_NUMERIC = (FieldKind.I64, FieldKind.F64, FieldKind.BOOL)


@dataclass(frozen=True, slots=True)
class SplitEntry:
    """One live split as a read task sees it.

    Attributes:
        ref: how to fetch it.
        partition_values: its partition values from the log.
        doc_mapping_json: its resolved doc mapping JSON.
        split_tags: its split tags from the log (see
            :func:`~indextables.search.query.tantivyquery.fully_indexed_columns`).
    """

    ref: SplitRef
    partition_values: Mapping[str, str | None] = field(default_factory=dict)
    doc_mapping_json: str | None = None
    split_tags: tuple[str, ...] = ()


def read_split(
    directory: str,
    entry: SplitEntry,
    schema: pa.Schema,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
    docstore_threads: DecoderThreads = "auto",
    cache_session: DecodeSession | None = None,
    scoring: Scoring | None = None,
    ordering: Ordering | None = None,
    highlight: Highlight | None = None,
) -> Iterator[pa.RecordBatch]:
    """Search one unbundled split and yield its matching rows as Arrow batches of ``schema``
    (the table's columns to read, partition columns included).

    ``scoring``: add a last column ``_score`` (float32), Tantivy's BM25 score of
    the row for the query within this split (1.0 for every row when nothing is
    searched), keeping only the best ``scoring.limit`` hits when it is set.

    ``docstore_threads`` (the ``read.docStoreThreads`` option): whether a large
    stored-row decode may run on the doc-store decoder's threads (:mod:`.docstore.pool`).
    ``cache_session``: the search's view of the doc-store block cache, shared by
    the splits it reads (:func:`.bulkrows.search_session`), else one per decode.

    ``directory`` is a split cache entry (:mod:`.splitcache`): its term
    dictionaries are in tantivy-py's FST form whatever form the split carries.
    A companion split (one embedding ``_parquet_manifest.json``) holds no values:
    :func:`indextables.search.read.anysplit.read_any_split` reads it from the source.

    Raises:
        CompanionError: a companion split.
    """
    identity, index, searcher = _open_own_split(
        directory, entry, "this read path does not serve companion indexes"
    )
    total = searcher.num_docs
    if total == 0:
        return
    fields = _fields(index, entry)
    traits = split_traits(directory, identity=identity)

    def source_of() -> _DocSource:
        return _DocSource(directory, entry, identity, docstore_threads, cache_session)

    query = _query(
        index,
        fields,
        search,
        conditions,
        fully_indexed_columns(entry.split_tags),
        traits,
        whole_second_dates(schema),
    )
    rows = RowCopy.open(os.path.join(directory, ROWS_FILE), identity=identity)
    if rows is not None:
        rows = rows.resolved(traits.segments)
    snippets = None
    if highlight is not None:
        names = {key: spec.name for key, spec in fields.items()}
        snippets = Snippets(searcher, index, query or tantivy.Query.all_query(), highlight, names)
    if scoring is not None:
        yield from _scored(
            searcher, query, total, scoring, schema, entry, fields, rows, source_of(), snippets
        )
        return
    if (
        snippets is None
        and query is None
        and rows is not None
        and not traits.deletes
        and _copy_covers(rows, schema, entry, fields)
    ):
        yield from _scan_rows(rows, schema, entry, fields)
        return
    done = 0
    if snippets is None and query is None and ordering is None and not traits.deletes:
        whole = whole_split_batches(
            directory,
            identity,
            searcher,
            schema,
            partition_values=entry.partition_values,
            fields=fields,
            copy=rows,
            threads=docstore_threads,
            session=cache_session,
        )
        if whole is not None:
            for batch in _until_failure(whole, entry):
                if batch is None:
                    break  # the rest of the split from the per-hit path
                yield batch
                done += batch.num_rows
            else:
                bulkrows.release_pages(directory, identity=identity)
                return
    addresses = _every_address(directory, total, identity) if query is None else None
    if addresses is None:
        hits = _search(searcher, query or tantivy.Query.all_query(), total)
        if not hits and search.query:
            notice_case_mismatch(searcher, search.query, fields)
        addresses = in_store_order(hits)
    if done:
        addresses = addresses[done:]  # the rows before came from the whole-split read
    source = source_of()
    if ordering is not None and len(addresses) > ordering.limit:
        addresses = _first_by_keys(
            searcher, addresses, ordering, schema, entry, fields, rows, source
        )
    for start in range(0, len(addresses), BATCH_ROWS):
        chunk = addresses[start : start + BATCH_ROWS]
        yield _with_snippets(
            _batch(searcher, chunk, schema, entry, fields, rows, source), chunk, snippets
        )
    if query is None:
        bulkrows.release_pages(directory, identity=identity)


def _until_failure(
    batches: Iterator[pa.RecordBatch], entry: SplitEntry
) -> Iterator[pa.RecordBatch | None]:
    """``batches``, then None if reading them failed (logged, the split named)."""
    try:
        yield from batches
    except (DocStoreError, pa.ArrowException, OSError) as exc:
        _log.warning(
            "split %s: its whole-split read failed (%s); reading the rest hit by hit",
            entry.ref.path,
            exc,
        )
        yield None


def _scored(
    searcher: tantivy.Searcher,
    query: tantivy.Query | None,
    total: int,
    scoring: Scoring,
    schema: pa.Schema,
    entry: SplitEntry,
    fields: Mapping[str, FieldSpec],
    rows: RowCopy | None,
    source: _DocSource,
    snippets: Snippets | None = None,
) -> Iterator[pa.RecordBatch]:
    """The split's hits with their ``_score``, read in store order (see :func:`read_split`)."""
    limit = total if scoring.limit is None else min(scoring.limit, total)
    if limit == 0:
        return
    with oplog.timed("search"):
        found = searcher.search(query or tantivy.Query.all_query(), limit=limit, count=False).hits
    hits = sorted(found, key=_ADDRESS)
    out = pa.schema([*schema, score_field()])
    for start in range(0, len(hits), BATCH_ROWS):
        chunk = hits[start : start + BATCH_ROWS]
        addresses = [h[1] for h in chunk]
        batch = _batch(searcher, addresses, schema, entry, fields, rows, source)
        scores = pa.array([h[0] for h in chunk], pa.float32())
        scored = pa.RecordBatch.from_arrays([*batch.columns, scores], schema=out)
        yield _with_snippets(scored, addresses, snippets)


def _with_snippets(
    batch: pa.RecordBatch, addresses: Sequence[Any], snippets: Snippets | None
) -> pa.RecordBatch:
    """``batch`` with the snippet columns of its rows appended (as is without snippets)."""
    if snippets is None:
        return batch
    found = snippets.columns(addresses)
    schema = pa.schema([*batch.schema, *snippets.fields])
    return pa.RecordBatch.from_arrays([*batch.columns, *found], schema=schema)


def _first_by_keys(
    searcher: tantivy.Searcher,
    addresses: list[Any],
    ordering: Ordering,
    schema: pa.Schema,
    entry: SplitEntry,
    fields: Mapping[str, FieldSpec],
    copy: RowCopy | None = None,
    source: _DocSource | None = None,
) -> list[Any]:
    """The first ``ordering.limit`` of ``addresses`` by the keys, in store order
    (ties keep store order). A key's values come from its numeric fast field, else
    as :func:`_batch` reads a row's (the doc store in bulk, the Arrow copy where the
    docs are inexact, as clamped dates), else from the copy by row key; all the
    addresses when a key has none of them. Decoding one stored field of the hits
    beat decompressing the copy's batches (2M log rows, newest 100 of ~1,000 hits by
    a timestamp: 26 -> 6 ms)."""
    keyed = copy if copy is not None and copy.keyed else None
    partitions = {k.lower(): v for k, v in entry.partition_values.items()}
    types = {f.name.lower(): f.type for f in schema}
    columns: dict[str, pa.Array] = {}
    for key in ordering.keys:
        name = key.column.lower()
        if name in partitions:
            columns[key.column] = partition_column(partitions[name], types[name], len(addresses))
        elif _is_fast_numeric(fields, name) and name in types:
            values = searcher.fast_field_values(fields[name].name, addresses)
            columns[key.column] = pa.array(values).cast(types[name])
        elif source is not None and _stored(fields, name) and name in types:
            # As a row would read it (doc store, or the copy where the docs are inexact):
            # decoding a few stored fields beats decompressing the copy's whole batches.
            one = pa.schema([f for f in schema if f.name.lower() == name])
            columns[key.column] = _batch(
                searcher, addresses, one, entry, fields, copy, source
            ).column(0)
        elif keyed is not None and keyed.has(name) and _stored(fields, name) and name in types:
            taken = _RowFetch(searcher, addresses, keyed, {name}).column(name)
            columns[key.column] = taken.cast(types[name])
        else:
            return addresses
    columns[_PLACE] = pa.array(range(len(addresses)), pa.int64())
    top = TopK(ordering.keys, ordering.limit)
    top.add(pa.RecordBatch.from_pydict(columns))
    found = top.result()
    if found is None:
        return []
    return [addresses[i] for i in sorted(found.column(_PLACE).to_pylist())]


_PLACE = "__place"


def in_store_order(hits: list[Any]) -> list[Any]:
    """Hit addresses sorted by (segment ordinal, doc id), the order rows are read in.

    ``tantivy.DocAddress`` compares as that pair: sorting by its own comparison
    costs no Python call per hit (a key function cost ~0.5 us a hit, ~20 ms for
    the 20M-row exact match's 39,729 hits).
    """
    return sorted(hits)


def _every_address(directory: str, total: int, identity: str | None = None) -> list[Any] | None:
    """Every document of a split without deletes, in (segment, doc) order, or None.

    An unfiltered scan without a covering Arrow copy needs no search: the
    documents are those of each segment's doc store (~3x cheaper than
    collecting and sorting an all-docs search's hits). None when the stores do
    not parse, or when their documents outnumber the live ones (deletes).
    """
    try:
        stores = bulkrows.split_stores(directory, identity=identity).stores
    except (DocStoreError, OSError):
        return None
    if sum(store.num_docs for store in stores) != total:
        return None
    address = tantivy.DocAddress
    return [address(ordinal, doc) for ordinal, s in enumerate(stores) for doc in range(s.num_docs)]


def _copy_covers(
    copy: RowCopy, schema: pa.Schema, entry: SplitEntry, fields: Mapping[str, FieldSpec]
) -> bool:
    """True when the copy holds every stored column of ``schema`` (a scan needs no docs).

    Splits written with ``indexWriter.arrowCopy=all`` (and every split written
    before that option) have a full copy; others copy only some columns.
    """
    partitions = {k.lower() for k in entry.partition_values}
    return all(
        copy.has(f.name)
        for f in schema
        if f.name.lower() not in partitions and _stored(fields, f.name.lower())
    )


_OPEN_SPLITS = 128
_open: BoundedCache[tuple[int, str, str], tuple[tantivy.Index, tantivy.Searcher]] = BoundedCache(
    max_entries=_OPEN_SPLITS
)


@on_forget
def _forget(directory: str) -> None:
    _open.evict_if(lambda key: key[1] == directory)
    _traits.cache_clear()


def open_split(
    directory: str, *, identity: str | None = None
) -> tuple[tantivy.Index, tantivy.Searcher]:
    """The Tantivy index and searcher of an unbundled split, kept open for later reads.

    Splits are immutable and a split cache directory is named by the split's
    path and size; the key also holds the directory's content identity
    (:func:`~indextables.search.splits.entryid.content_identity`, or ``identity``
    when the caller took it already), so a directory re-created with other
    contents is opened afresh, whatever inode numbers and times its files
    have. Opening costs ~0.4 ms, a large share of a selective search. The most
    recently used ``_OPEN_SPLITS`` stay open per process (the key holds the pid:
    a forked worker opens its own): enough for a table's every split, so a
    repeated search over a table of many splits reopens none. Each open index
    keeps Tantivy's meta-file watcher thread (an idle thread), and an evicted
    split's files keep their disk space until its index is dropped from here,
    hence a cap at all.
    """
    key = (os.getpid(), directory, identity or content_identity(directory))
    found = _open.get(key)
    if found is not None:
        return found
    index = open_index(directory)
    opened = (index, index.searcher())
    _open.put(key, opened)
    remember_directory(index, directory)
    return opened


def _scan_rows(
    copy: RowCopy, schema: pa.Schema, entry: SplitEntry, fields: Mapping[str, FieldSpec]
) -> Iterator[pa.RecordBatch]:
    """Every row of the split from its columnar copy (no stored-document fetches).

    Columns the split does not store (index-only) read as null, as they do
    from stored documents.
    """
    partitions = {k.lower(): v for k, v in entry.partition_values.items()}
    wanted = {
        f.name.lower()
        for f in schema
        if f.name.lower() not in partitions and _stored(fields, f.name.lower()) and copy.has(f.name)
    }
    # Only the asked columns are read (a column is decompressed only when included);
    # one column at least, for the batches' row counts.
    included = sorted(copy.columns[k] for k in wanted) or [0]
    options = pa.ipc.IpcReadOptions(included_fields=included)
    with pa.memory_map(copy.path) as source:
        reader = pa.ipc.open_file(source, options=options)
        place = {n.lower(): i for i, n in enumerate(reader.schema.names)}
        for number in range(reader.num_record_batches):
            batch = reader.get_batch(number)
            arrays = []
            for arrow_field in schema:
                key = arrow_field.name.lower()
                if key in partitions:
                    column = partition_column(partitions[key], arrow_field.type, batch.num_rows)
                elif key in wanted:
                    column = batch.column(place[key])
                    if column.type != arrow_field.type:
                        column = column.cast(arrow_field.type)
                else:
                    column = pa.nulls(batch.num_rows, type=arrow_field.type)
                arrays.append(column)
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def _stored(fields: Mapping[str, FieldSpec], key: str) -> bool:
    spec = fields.get(key)
    return spec is None or spec.stored


def _search(searcher: tantivy.Searcher, query: tantivy.Query, total: int) -> list[Any]:
    # search(limit=0) panics in tantivy-py: callers guarantee total >= 1.
    with oplog.timed("search"):
        return list(map(_ADDRESS, searcher.search(query, limit=total, count=False).hits))


_ADDRESS = operator.itemgetter(1)  # a hit is (score, DocAddress)


def _fields(index: tantivy.Index, entry: SplitEntry) -> dict[str, FieldSpec]:
    if entry.doc_mapping_json:
        return specs_from_doc_mapping(entry.doc_mapping_json)
    return {}


@dataclass(frozen=True, slots=True)
class SplitTraits:
    """What a split's ``meta.json`` says about how its fields answer queries.

    Attributes:
        exact_dates: lowercase names of the date fields whose range queries
            compare microseconds (fast fields of microsecond precision).
        own: the split has this package's row key field (it was written here:
            its raw text fast fields are readable).
        positions: lowercase names of the text and JSON fields whose postings
            hold positions (phrase queries need them).
        segments: the segment ids in meta.json's order (Tantivy's segment ordinals).
        deletes: some segment has deleted documents (a ``.del`` alive bitset): the
            Arrow copy still holds their rows, so it is read only at live documents.
    """

    exact_dates: frozenset[str] = frozenset()
    own: bool = False
    positions: frozenset[str] = frozenset()
    segments: tuple[str, ...] = ()
    deletes: bool = False


_EXACT_PRECISIONS = ("microseconds", "nanoseconds")


def split_traits(directory: str, *, identity: str | None = None) -> SplitTraits:
    """The :class:`SplitTraits` of an unbundled split (its ``meta.json``, read once per
    content identity, as :func:`open_split` keys it)."""
    return _traits(directory, identity or content_identity(directory))


@functools.lru_cache(maxsize=64)
def _traits(directory: str, identity: str) -> SplitTraits:
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
        meta = json.load(source)
    schema = meta.get("schema", [])
    segments = tuple(str(s.get("segment_id", "")) for s in meta.get("segments", []))
    exact: set[str] = set()
    positions: set[str] = set()
    own = False
    for entry in schema:
        name, options = entry.get("name", ""), entry.get("options") or {}
        own = own or name == ROW_KEY_FIELD
        if (options.get("indexing") or {}).get("record") == "position":
            positions.add(str(name).lower())
        if (
            entry.get("type") == "date"
            and options.get("fast")
            and options.get("precision") in _EXACT_PRECISIONS
        ):
            exact.add(str(name).lower())
    deletes = any(s.get("deletes") for s in meta.get("segments", []))
    return SplitTraits(frozenset(exact), own, frozenset(positions), segments, deletes)


def _query(
    index: tantivy.Index,
    fields: Mapping[str, FieldSpec],
    search: SearchSpec,
    conditions: Sequence[Condition],
    fully_indexed: frozenset[str],
    traits: SplitTraits = SplitTraits(),
    whole_dates: frozenset[str] = frozenset(),
) -> tantivy.Query | None:
    parts: list[tantivy.Query] = []
    option_query = (
        build_query(
            index,
            search,
            fields,
            exact_dates=traits.exact_dates,
            whole_dates=whole_dates,
            missing_match_nothing=True,
        )
        if not search.is_empty
        else None
    )
    if option_query is not None:
        parts.append(option_query)
    for condition in conditions:
        spec = fields.get(condition.column.lower())
        if spec is None:
            continue  # a partition column: pruned at planning, re-checked by Spark
        if condition.path:
            positions = spec.name.lower() in traits.positions
            nested = json_path_query(index, spec, condition, positions=positions)
            if nested is not None:
                parts.append(nested)
            continue
        query = to_query(
            condition,
            spec,
            index.schema,
            fully_indexed=fully_indexed,
            exact_dates=traits.exact_dates,
            readable_text_fast=traits.own,
            held_terms=infix_terms_of(index),
        )
        if query is not None:
            parts.append(query)
    if option_query is not None and len(parts) > 1:
        # ``where=`` filters, never scores: a row's ``_score`` is its score for the query
        # (a term query of an exact condition would add its own BM25, a regex its 1.0).
        parts[1:] = [tantivy.Query.const_score_query(p, 0.0) for p in parts[1:]]
    return conjunction(parts) if parts else None


def _batch(
    searcher: tantivy.Searcher,
    addresses: list[tantivy.DocAddress],
    schema: pa.Schema,
    entry: SplitEntry,
    fields: Mapping[str, FieldSpec],
    copy: RowCopy | None,
    source: _DocSource | None = None,
) -> pa.RecordBatch:
    partitions = {k.lower(): v for k, v in entry.partition_values.items()}
    data_columns = [f for f in schema if f.name.lower() not in partitions]
    keyed = copy if copy is not None and copy.keyed else None
    from_copy = {
        f.name.lower()
        for f in data_columns
        if keyed is not None
        and keyed.has(f.name)
        and _stored(fields, f.name.lower())
        and not exact_in_docs(fields.get(f.name.lower()), f.type)
    }
    docs: list[tantivy.Document] = []
    bulk = BulkColumns({}, frozenset())
    from_docs = [f for f in data_columns if f.name.lower() not in from_copy]
    if any(not _is_fast_numeric(fields, f.name) for f in from_docs):
        if source is not None and addresses:
            bulk = source.columns(addresses, from_docs)
        if any(f.name.lower() not in bulk.arrays for f in from_docs):
            docs = [searcher.doc(a) for a in addresses]
    rows = _RowFetch(searcher, addresses, keyed, from_copy)
    arrays = []
    for arrow_field in schema:
        key = arrow_field.name.lower()
        if key in partitions:
            arrays.append(partition_column(partitions[key], arrow_field.type, len(addresses)))
        elif key in from_copy:
            arrays.append(rows.column(key).cast(arrow_field.type))
        elif key in bulk.arrays:
            arrays.append(_from_bulk(bulk, arrow_field, fields, rows))
        elif docs or not addresses:
            arrays.append(_from_docs(docs, arrow_field, fields, rows))
        else:
            values = searcher.fast_field_values(arrow_field.name, addresses)
            arrays.append(pa.array(values).cast(arrow_field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _from_docs(
    docs: list[tantivy.Document],
    arrow_field: pa.Field,
    fields: Mapping[str, FieldSpec],
    rows: _RowFetch,
) -> pa.Array:
    spec = fields.get(arrow_field.name.lower())
    name = arrow_field.name
    if (
        spec is not None
        and spec.kind is FieldKind.DATE
        and rows.has(name)
        and has_clamped_dates(docs, name)
    ):
        # A date outside Tantivy's span was indexed clamped: its exact value is in the copy.
        return rows.column(name.lower()).cast(arrow_field.type)
    return column_from_docs(docs, name, arrow_field.type)


def _from_bulk(
    bulk: BulkColumns, arrow_field: pa.Field, fields: Mapping[str, FieldSpec], rows: _RowFetch
) -> pa.Array:
    key = arrow_field.name.lower()
    spec = fields.get(key)
    if (
        spec is not None
        and spec.kind is FieldKind.DATE
        and key in bulk.clamped_dates
        and rows.has(arrow_field.name)
    ):
        # As _from_docs: a date at an end of Tantivy's span may stand for one beyond it.
        return rows.column(key).cast(arrow_field.type)
    return bulk.arrays[key]


class _DocSource:
    """A split's doc stores for bulk row decoding, or nothing once they failed.

    Any failure (a store that cannot be parsed or decoded, a value that does not
    convert) is logged with the split named and the split's rows come from
    tantivy-py's ``searcher.doc`` instead: never a wrong row.
    """

    def __init__(
        self,
        directory: str,
        entry: SplitEntry,
        identity: str | None = None,
        threads: DecoderThreads = "auto",
        session: DecodeSession | None = None,
    ) -> None:
        self._directory = directory
        self._entry = entry
        self._identity = identity
        self._threads = threads
        self._session = session
        self._failed = not bulkrows.enabled()

    def columns(self, addresses: Sequence[Any], columns: Sequence[pa.Field]) -> BulkColumns:
        """The columns served in bulk at ``addresses`` (empty after a failure)."""
        if self._failed:
            return BulkColumns({}, frozenset())
        try:
            stores = bulkrows.split_stores(self._directory, identity=self._identity)
            return bulkrows.bulk_columns(
                stores, addresses, columns, threads=self._threads, session=self._session
            )
        except (DocStoreError, pa.ArrowException, OSError) as exc:
            self._failed = True
            _log.warning(
                "split %s: bulk row decoding failed (%s); reading its stored documents one by one",
                self._entry.ref.path,
                exc,
            )
            return BulkColumns({}, frozenset())


class _RowFetch:
    """Columns of the Arrow copy at a batch's hits, their row keys read once when needed."""

    def __init__(
        self,
        searcher: tantivy.Searcher,
        addresses: list[Any],
        copy: RowCopy | None,
        wanted: set[str],
    ) -> None:
        self._searcher = searcher
        self._addresses = addresses
        self._copy = copy
        self._wanted = wanted
        self._taken: dict[str, pa.Array] = {}

    def has(self, name: str) -> bool:
        return self._copy is not None and self._copy.has(name)

    def column(self, key: str) -> pa.Array:
        """Column ``key`` (lowercase) at the hits; the wanted columns are taken together."""
        if key not in self._taken:
            assert self._copy is not None
            found = self._searcher.fast_field_values(ROW_KEY_FIELD, self._addresses)
            keys = [int(k) for k in found if k is not None]
            if len(keys) != len(self._addresses):
                raise ValueError("a document of a split with an Arrow copy has no row key")
            keys = self._copy.row_keys(keys, [a.segment_ord for a in self._addresses])
            self._taken.update(self._copy.take([*self._wanted - self._taken.keys(), key], keys))
        return self._taken[key]


def _is_fast_numeric(fields: Mapping[str, FieldSpec], name: str) -> bool:
    spec = fields.get(name.lower())
    return spec is not None and spec.fast and spec.kind in _FAST_NUMERIC


def matching_addresses(
    directory: str,
    entry: SplitEntry,
    schema: pa.Schema,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
    where: Any = None,
) -> list[Any]:
    """The addresses of the live documents of one unbundled split that a search matches,
    in store order (DELETE finds its documents here).

    The index query is :func:`read_split`'s; ``where`` (a compiled
    :class:`~indextables.search.query.whereeval.WhereFilter`, or None) is then applied
    exactly to the hits' rows, read with the columns of ``schema`` (those it reads).

    Raises:
        CompanionError: a companion split.
    """
    identity, index, searcher = _open_own_split(
        directory, entry, "its documents are not addressed here"
    )
    total = searcher.num_docs
    if total == 0:
        return []
    fields = _fields(index, entry)
    traits = split_traits(directory, identity=identity)
    query = _query(
        index,
        fields,
        search,
        conditions,
        fully_indexed_columns(entry.split_tags),
        traits,
        whole_second_dates(schema),
    )
    addresses = in_store_order(_search(searcher, query or tantivy.Query.all_query(), total))
    if where is None:
        return addresses
    rows = RowCopy.open(os.path.join(directory, ROWS_FILE), identity=identity)
    if rows is not None:
        rows = rows.resolved(traits.segments)
    source = _DocSource(directory, entry, identity)
    kept: list[Any] = []
    for start in range(0, len(addresses), BATCH_ROWS):
        chunk = addresses[start : start + BATCH_ROWS]
        batch = _batch(searcher, chunk, schema, entry, fields, rows, source)
        mask = where.mask(batch).to_pylist()
        kept.extend(a for a, keep in zip(chunk, mask, strict=True) if keep is True)
    return kept


def _open_own_split(directory: str, entry: SplitEntry, refusal: str) -> tuple[Any, Any, Any]:
    """(content identity, index, searcher) of an unbundled split that holds its rows.

    Raises:
        CompanionError: a companion split (``refusal`` says what it cannot do).
    """
    if os.path.exists(os.path.join(directory, COMPANION_MANIFEST)):
        raise CompanionError(
            f"split {entry.ref.path} is a companion split (its rows live in the source "
            f"table's Parquet files); {refusal}"
        )
    identity = content_identity(directory)
    index, searcher = open_split(directory, identity=identity)
    return identity, index, searcher
