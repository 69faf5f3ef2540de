"""A Polars IO source: ``scan_indextables(uri)`` is a LazyFrame over a table.

    >>> from indextables.search.polars import scan_indextables  # doctest: +SKIP
    >>> logs = scan_indextables("s3://bucket/logs", query="message:timeout")
    >>> logs.filter(pl.col("level") == "ERROR").select("id", "message").head(20).collect()

Polars hands the source the columns it needs, its filter (a Polars expression)
and a row limit; they go into :meth:`SearchTable.scan`:

- the columns become ``columns=`` (and the filter's columns are read too);
- the filter is always applied by Polars to each batch (so its answer is
  Polars' own), and the parts of it the engine answers exactly also become
  ``where=`` (see :mod:`indextables.search.polarswhere`: comparisons of every
  column kind with a literal, ``is_between``, ``is_in``, ``is_null``,
  ``str.starts_with``/``ends_with``/``contains`` of a literal, ``&``, ``|``
  and ``~``), which narrows the search through the index and prunes splits
  (a condition on partition columns, from the log alone);
- a ``str.contains`` of a literal on a tokenized (``text``) column, which
  ``where`` answers by reading every row, also becomes a ``textsearch=`` over
  the column's term dictionary matching every row that contains the literal
  (:func:`~indextables.search.polarswhere.predicate_text_search`), so only the
  rows it finds are read and tested; offered when every split of the snapshot
  records that its index dropped no token of the column for its length
  (:mod:`indextables.search.query.tokenskept`), never on a companion index;
- the row limit becomes ``limit=`` when the whole filter went into ``where``
  (else reading stops once Polars' filter has kept that many rows);
- consecutive small batches of the scan are joined (up to :data:`COALESCE_ROWS`
  rows, one engine batch under a row limit) before Polars converts and filters
  them: each conversion and filter call has a fixed cost.

Polars is optional: this module imports it when called, and
``indextables.search`` imports without it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from indextables.search.errors import ArgumentError, QuerySyntaxError
from indextables.search.polarswhere import predicate_text_search, predicate_where
from indextables.search.query.tokenskept import merged_tokens_kept
from indextables.search.read.splitreader import BATCH_ROWS

if TYPE_CHECKING:
    from indextables.search.searchtable import SearchTable

__all__ = ["predicate_where", "scan_indextables"]


def scan_indextables(
    uri: str | SearchTable,
    *,
    version: int | None = None,
    options: Mapping[str, Any] | None = None,
    query: str | None = None,
    max_term_expansions: int | None = None,
) -> Any:
    """A ``polars.LazyFrame`` over the table at ``uri`` (its current version or ``version``).

    Args:
        uri: the table's location, or a table already opened with
            :func:`~indextables.search.open_table` (its snapshot is read;
            ``version`` and ``options`` must then be left out). Opening
            reads the log (~1-3 ms): a program asking many questions of one
            snapshot passes the opened table.
        version: time travel to this version.
        options: read options, as for :func:`~indextables.search.open_table`.
        query: a Tantivy query narrowing the rows (``message:timeout``).
        max_term_expansions: the most terms of one split a wildcard, fuzzy or
            phrase-prefix term of ``query`` may stand for, over the option
            (:meth:`~indextables.search.SearchTable.scan`).

    Raises:
        ArgumentError: polars is not installed, or a bad argument.
    """
    try:
        from polars.io.plugins import register_io_source
    except ImportError:
        raise ArgumentError(
            "scan_indextables needs polars: pip install polars (or indextables-search[polars])"
        ) from None

    from indextables.search.searchtable import SearchTable, open_table

    if query is not None and not isinstance(query, str):
        raise ArgumentError(f"query={query!r} must be a string")
    from indextables.search.query.termexpand import call_expansion_limit

    limit = call_expansion_limit(max_term_expansions)
    if isinstance(uri, SearchTable):
        if version is not None or options is not None:
            raise ArgumentError(
                "scan_indextables of an opened table takes no version= or options= "
                "(they were given to open_table)"
            )
        table = uri
    else:
        table = open_table(uri, version=version, options=options)

    def source(
        with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None
    ) -> Iterator[Any]:
        return _batches(table, query, with_columns, predicate, n_rows, limit)

    return register_io_source(
        source, schema=_polars_schema(table), is_pure=True, explain_name=f"indextables {table.uri}"
    )


def _polars_schema(table: SearchTable) -> Any:
    """The table's Polars schema, converted once per opened table (~0.7 ms each time)."""
    found = _schemas.get(table)
    if found is None:
        import polars as pl

        found = _schemas[table] = pl.from_arrow(table.schema.empty_table()).schema
    return found


_schemas: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _kept_tokens(table: SearchTable) -> dict[str, str]:
    """The text columns (lowercase -> tokenizer) every live split of the snapshot kept
    every token of, read once per opened table from the splits' tags; none on a
    companion index (its splits' text is searched another way) or a table without splits."""
    found = _kept.get(table)
    if found is None:
        view = getattr(table, "_view", None)
        splits = getattr(view, "splits", None)
        if getattr(table, "_companion_root", None) is not None or not splits:
            found = {}
        else:
            found = merged_tokens_kept([split.entry.split_tags for split in splits])
        _kept[table] = found
    return found


_kept: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()


class _TextSearched:
    """A table whose scans also search ``textsearch`` (every row the predicate keeps
    matches it); a scan the index refuses so runs as without it."""

    __slots__ = ("_table", "_textsearch")

    def __init__(self, table: Any, textsearch: dict[str, str]) -> None:
        self._table = table
        self._textsearch = textsearch

    def scan(self, query: str | None = None, **options: Any) -> pa.RecordBatchReader:
        try:
            reader: pa.RecordBatchReader = self._table.scan(
                query, textsearch=self._textsearch, **options
            )
            return reader
        except QuerySyntaxError:
            plain: pa.RecordBatchReader = self._table.scan(query, **options)
            return plain


def _text_searched(table: Any, predicate: Any) -> Any:
    """``table``, or it searching the predicate's ``str.contains`` of text columns."""
    searched = predicate_text_search(predicate, table.schema, _kept_tokens(table))
    return _TextSearched(table, searched) if searched else table


def _batches(
    table: Any,
    query: str | None,
    with_columns: list[str] | None,
    predicate: Any,
    n_rows: int | None,
    expansions: int | None = None,
) -> Iterator[Any]:
    import polars as pl

    names = table.schema.names
    wanted = list(with_columns) if with_columns is not None else list(names)
    where = predicate_where(predicate, table.schema) if predicate is not None else None
    read = list(wanted)
    if predicate is not None:
        read += [c for c in predicate.meta.root_names() if c not in read]
    if not read:  # Polars counts rows: read the narrowest column
        read = [names[0]]
    exact = predicate is None or (where is not None and where[1])
    if predicate is not None:
        table = _text_searched(table, predicate)
    reader = _scan(
        table, query, where[0] if where else None, read, n_rows if exact else None, expansions
    )
    if predicate is None and read == wanted:
        # Nothing for Polars to do per batch: the scan projects and limits itself.
        for chunk in _coalesced(reader, COALESCE_ROWS):
            yield pl.from_arrow(chunk, rechunk=False)
        return
    left = n_rows
    # With a row limit Polars' filter decides when reading stops: join no more than a
    # full engine batch, so no more is read than without joining.
    joined = COALESCE_ROWS if n_rows is None else LIMITED_COALESCE_ROWS
    for chunk in _coalesced(reader, joined):
        frame = pl.from_arrow(chunk, rechunk=False)
        assert isinstance(frame, pl.DataFrame)
        if predicate is not None:
            frame = frame.filter(predicate)
        frame = frame.select(wanted)
        if left is not None:
            frame = frame.head(left)
            left -= frame.height
        if frame.height or not wanted:
            yield frame
        if left == 0:
            return


#: Batches of fewer rows are joined up to this many before Polars converts and filters
#: them (each ``from_arrow`` and ``filter`` call costs ~0.1-0.3 ms, whatever its rows).
COALESCE_ROWS = 65_536
#: The same under a row limit Polars' filter enforces (the engine's batch size).
LIMITED_COALESCE_ROWS = BATCH_ROWS


def _coalesced(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """``batches`` in order, as tables of consecutive non-empty batches: each of at least
    ``rows`` rows except the last, and joined only while under ``rows``, so no batch waits
    behind one that already reached it."""
    held: list[pa.RecordBatch] = []
    count = 0
    schema: pa.Schema | None = None
    for batch in batches:
        schema = batch.schema
        if not batch.num_rows:
            continue
        held.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(held, schema=schema)
            held, count = [], 0
    if held:
        yield pa.Table.from_batches(held, schema=schema)


def _scan(
    table: Any,
    query: str | None,
    where: str | None,
    columns: list[str],
    limit: int | None,
    expansions: int | None = None,
) -> pa.RecordBatchReader:
    if where is not None:
        try:
            reader: pa.RecordBatchReader = table.scan(
                query, where=where, columns=columns, limit=limit, max_term_expansions=expansions
            )
            return reader
        except QuerySyntaxError:
            pass  # a condition the evaluator cannot answer exactly: Polars filters alone
    return table.scan(
        query,
        columns=columns,
        limit=None if where is not None else limit,
        max_term_expansions=expansions,
    )
