"""The Python API: open a table, search it, read it as Arrow, without Spark.

    >>> from indextables.search import open_table  # doctest: +SKIP
    >>> logs = open_table("s3://bucket/logs", options={"storage.region": "eu-west-1"})
    >>> logs.search("message:timeout", where="level = 'ERROR'", limit=20)
    pyarrow.Table ...
    >>> logs.count("message:timeout")
    3212

A :class:`SearchTable` is one snapshot of a table (a version): every call on it
answers as of that version. Options are the data source's (docs/pyspark.md):
the same keys, checked the same way (a typo names the closest key).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Generator, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from indextables.search import oplog
from indextables.search.aggregate.aggspec import (
    GroupSpec,
    output_names,
    parse_group_by,
    parse_metrics,
)
from indextables.search.aggregate.arrowagg import aggregate_rows
from indextables.search.aggregate.tableagg import aggregate_table
from indextables.search.aggregate.tablecount import count_table
from indextables.search.aggregate.tableplan import TablePlan, plan_table
from indextables.search.boundedcache import BoundedCache
from indextables.search.companion.sync import companion_root
from indextables.search.errors import ArgumentError
from indextables.search.metrics import OperationMetrics
from indextables.search.options import parse_read
from indextables.search.query.conditions import translate_where
from indextables.search.query.searchoptions import SearchSpec, validate, whole_second_dates
from indextables.search.query.termexpand import call_expansion_limit
from indextables.search.query.whereeval import WhereFilter, compile_where
from indextables.search.query.wheregrammar import parse_where
from indextables.search.read.fullscan import is_full_scan
from indextables.search.read.plan import plan_splits, view_fields
from indextables.search.read.snippets import Highlight, parse_highlight
from indextables.search.read.splitbatches import split_batches
from indextables.search.read.splitreader import SplitEntry
from indextables.search.read.topk import (
    MAX_TOP,
    SCORE,
    Ordering,
    OrderKey,
    Scoring,
    TopK,
    comparable_cutoff,
    cutoff_condition,
    cuts,
    first_key_ceiling,
    parse_order_by,
    score_field,
)
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.storeoptions import with_storage_options
from indextables.search.table.tableaccess import (
    TableView,
    load_view,
    open_table_store,
    table_handle,
)
from indextables.search.table.tablehistory import CommitRecord, table_history

__all__ = ["SearchTable", "open_table"]

_LOG = logging.getLogger(__name__)

# The most rows a search may return (Arrow arrays index rows with 64-bit offsets, but a
# larger limit is surely a mistake, such as a byte count).
_MAX_LIMIT = 2**40
# Count and aggregation plans a SearchTable keeps (by arguments), most recently used.
_PLANS = 32


def open_table(
    uri: str,
    *,
    version: int | None = None,
    timestamp: datetime | str | int | None = None,
    options: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> SearchTable:
    """The table at ``uri`` as of its current version, or of ``version`` / ``timestamp``.

    Args:
        uri: the table's location (``s3://``, ``abfss://``, ``file:``, a local path...).
        version: time travel to this version (``versionAsOf``).
        timestamp: time travel to the version current at this time: a datetime (naive
            is UTC), an ISO-8601 string or epoch milliseconds (``timestampAsOf``).
        options: read options, as for ``spark.read`` (store credentials, cache settings).
        storage_options: store options by their names (``region``, ``endpoint_url``...:
            docs/storage.md), the same as ``options`` keys ``storage.<name>``.

    Raises:
        ArgumentError: an argument of the wrong type.
        OptionError: an unknown or bad option, or both ``version`` and ``timestamp``.
        NotATableError: nothing at ``uri`` is an IndexTables table.
        VersionNotFoundError: the version or time cannot be reached.
    """
    if not isinstance(uri, str) or not uri:
        raise ArgumentError(f"uri={uri!r} must be a non-empty string")
    if options is not None and not isinstance(options, Mapping):
        raise ArgumentError(f"options={options!r} must be a mapping of option keys to values")
    opts = with_storage_options(
        {str(k): str(v) for k, v in (options or {}).items()}, storage_options
    )
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ArgumentError(f"version={version!r} must be a table version (an int >= 0)")
        opts["versionAsOf"] = str(version)
    if timestamp is not None:
        opts["timestampAsOf"] = _timestamp_text(timestamp)
    read = parse_read(opts)
    view = load_view(uri, opts, version=read.version_as_of, timestamp=read.timestamp_as_of)
    return SearchTable(view, opts)


def _timestamp_text(timestamp: Any) -> str:
    if isinstance(timestamp, datetime):
        return timestamp.isoformat()
    if isinstance(timestamp, int) and not isinstance(timestamp, bool):
        return str(timestamp)
    if isinstance(timestamp, str):
        return timestamp
    raise ArgumentError(
        f"timestamp={timestamp!r} must be a datetime, an ISO-8601 string or epoch milliseconds"
    )


class SearchTable:
    """One snapshot of a table, searched and read without Spark (see :func:`open_table`)."""

    def __init__(self, view: TableView, options: Mapping[str, str]) -> None:
        self._view = view
        self._options = dict(options)
        self._read = parse_read(self._options)
        self._schema = arrow_schema(view.schema_json)
        self._companion_root = companion_root(view.configuration, self._options)
        self._plans: BoundedCache[tuple[Any, ...], TablePlan] = BoundedCache(max_entries=_PLANS)
        self._last_metrics: OperationMetrics | None = None

    def __repr__(self) -> str:
        return f"SearchTable({self.uri!r}, version={self.version})"

    def __getstate__(self) -> dict[str, Any]:
        # The kept plans stay behind (a lock does not pickle; the copy plans afresh).
        state = dict(self.__dict__)
        del state["_plans"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._plans = BoundedCache(max_entries=_PLANS)

    @property
    def uri(self) -> str:
        """The table's location."""
        return self._view.uri

    @property
    def version(self) -> int:
        """The snapshot's table version."""
        return self._view.version

    @property
    def schema(self) -> pa.Schema:
        """The table's columns as Arrow types (partition columns included)."""
        return self._schema

    @property
    def partition_columns(self) -> tuple[str, ...]:
        """The partition columns, in order."""
        return tuple(self._view.partition_columns)

    @property
    def last_metrics(self) -> OperationMetrics | None:
        """The measurements of the last search, scan, count or aggregate finished on this
        snapshot (None before the first): splits considered, pruned and read, cache hits
        and misses, bytes fetched, seconds per phase. A scan's are there once its
        stream is read to the end or closed (docs/search.md, "Logging and metrics")."""
        return getattr(self, "_last_metrics", None)

    def _remember(self, metrics: OperationMetrics) -> None:
        self._last_metrics = metrics

    def _operation(self, name: str) -> contextlib.AbstractContextManager[oplog.Operation]:
        return oplog.operation(_LOG, name, uri=self.uri, version=self.version, done=self._remember)

    @property
    def files(self) -> list[str]:
        """The live splits' paths, relative to the table root."""
        return [split.path for split in self._view.splits]

    def history(self, limit: int | None = None) -> list[CommitRecord]:
        """The table's retained versions, newest first, as delta-rs' ``history()``
        (:class:`~indextables.search.table.tablehistory.CommitRecord`: version, time,
        operation, parameters, files and rows added and removed); ``limit`` keeps
        the newest ones. Read from the log now: versions after this snapshot's too."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ArgumentError(f"limit={limit!r} must be None or an int >= 0")
        if limit is not None and limit < 0:
            raise ArgumentError(f"limit={limit!r} must be None or an int >= 0")
        return table_history(table_handle(self.uri, self._options), limit=limit)

    def search(
        self,
        query: str | None = None,
        *,
        where: str | None = None,
        textsearch: Mapping[str, str] | None = None,
        fieldmatch: Mapping[str, str] | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
        order_by: str | Sequence[str] | None = None,
        highlight: Sequence[str] | None = None,
        snippet_chars: int | None = None,
        max_term_expansions: int | None = None,
    ) -> pa.Table:
        """The rows matching a search as one Arrow table (see :meth:`scan`)."""
        reader = self.scan(
            query,
            where=where,
            textsearch=textsearch,
            fieldmatch=fieldmatch,
            columns=columns,
            limit=limit,
            order_by=order_by,
            highlight=highlight,
            snippet_chars=snippet_chars,
            max_term_expansions=max_term_expansions,
        )
        return reader.read_all()

    def scan(
        self,
        query: str | None = None,
        *,
        where: str | None = None,
        textsearch: Mapping[str, str] | None = None,
        fieldmatch: Mapping[str, str] | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
        order_by: str | Sequence[str] | None = None,
        highlight: Sequence[str] | None = None,
        snippet_chars: int | None = None,
        max_term_expansions: int | None = None,
    ) -> pa.RecordBatchReader:
        """The rows matching a search, streamed split by split.

        Args:
            query: Tantivy query syntax over the table's fields (the ``query`` option).
            where: a SQL condition (``level = 'ERROR' AND latency > 0.5``), applied
                exactly with Spark's semantics; its simple conjuncts also narrow the
                search and prune splits.
            textsearch: column -> query, on tokenized (``text``) columns.
            fieldmatch: column -> exact value, on exact (``string``) columns.
            columns: the columns to return (default all), in this order.
            limit: at most this many rows (without ``order_by``: the first found, in
                split order).
            order_by: the first ``limit`` rows in this order instead (``"ts DESC"``,
                ``"a ASC, b DESC"``, ``"_score"``): fast fields, partition columns
                and ``_score`` (Tantivy's BM25 score within the row's split, added
                as a float32 ``_score`` column); nulls first ASC, last DESC, NaN
                greatest; ties in split order, then document order. Needs
                ``limit`` (at most 1,000,000): each split keeps its own best
                ``limit`` rows, merged into a buffer of that size.
            highlight: text columns whose best fragment for the query is added as
                a string column ``_snippet_<column>`` (matched terms in
                ``<b>...</b>``, the rest HTML-escaped: tantivy-py's
                ``SnippetGenerator``), null where the value is null.
            snippet_chars: a fragment's length in characters (default 150).
            max_term_expansions: the most terms of one split a wildcard, fuzzy or
                phrase-prefix term may stand for in this call (an int >= 1), in
                place of the ``spark.indextables.query.maxTermExpansions`` option
                (None: the option, else 100,000); a term standing for more is refused.

        Raises:
            ArgumentError: an argument of the wrong type or an unknown column; an
                ``order_by`` key that is unknown, has no fast field or a bad
                direction; ``order_by`` without ``limit`` or above the maximum.
            CompanionError: ``order_by="_score"`` on a companion index.
            QuerySyntaxError, FieldKindError: a query that does not parse, or a
                search on a column of the wrong kind.
        """
        op = oplog.start(_LOG, "search", uri=self.uri, version=self.version)
        try:
            with op.active():
                plan = self._plan(
                    query,
                    where,
                    textsearch,
                    fieldmatch,
                    columns,
                    limit,
                    order_by,
                    highlight,
                    snippet_chars,
                    max_term_expansions,
                )
        except BaseException as error:
            self._remember(op.finish(error))
            raise
        batches = oplog.tracked(
            op, self._rows(plan), rows=lambda batch: batch.num_rows, done=self._remember
        )
        return pa.RecordBatchReader.from_batches(plan.output, batches)

    def count(
        self,
        query: str | None = None,
        *,
        where: str | None = None,
        textsearch: Mapping[str, str] | None = None,
        fieldmatch: Mapping[str, str] | None = None,
        max_term_expansions: int | None = None,
    ) -> int:
        """How many rows match a search (arguments as :meth:`scan`).

        From the log's record counts when only partition columns are
        constrained, else from Tantivy's count per split; when the index
        cannot answer exactly, from the rows the exact ``where`` filter keeps.
        """
        with self._operation("count") as op:
            plan = self._count_plan(query, where, textsearch, fieldmatch, max_term_expansions)
            op.planned(considered=len(self._view.splits), kept=len(plan.splits))
            found, source = count_table(
                plan,
                lambda: self._count_rows(query, where, textsearch, fieldmatch, max_term_expansions),
            )
            op.add(rows=found)
            op.set(source=source)
        _LOG.debug("count of %s v%d answered from the %s", op.uri, self.version, source)
        return found

    def aggregate(
        self,
        *,
        group_by: Sequence[str | GroupSpec] | str = (),
        metrics: Mapping[str, Any],
        where: str | None = None,
        query: str | None = None,
        textsearch: Mapping[str, str] | None = None,
        fieldmatch: Mapping[str, str] | None = None,
        max_term_expansions: int | None = None,
    ) -> pa.Table:
        """One row per group of the matching rows: group columns first, then the metrics.

        Args:
            group_by: column names and bucket specs (``histogram``, ``date_histogram``,
                ``range_`` of :mod:`indextables.search.aggregate.aggspec`); empty for
                one global row.
            metrics: output name -> ``"count"`` or ``(function, column)``, function one
                of count/sum/min/max/avg.
            where, query, textsearch, fieldmatch, max_term_expansions: as :meth:`scan`.

        Returns:
            A table typed as Spark's ``groupBy().agg()`` types it, sorted by the
            group columns (nulls first). From the index when it answers exactly,
            else from the matching rows with Spark's semantics.

        Raises:
            OptionError: bad group keys or metrics (unknown column, wrong type,
                a data column without a fast field).
            ArithmeticOverflowError: an integral sum beyond a long.
        """
        if not isinstance(metrics, Mapping):
            raise ArgumentError(f"metrics={metrics!r} must map output names to metrics")
        if not isinstance(group_by, str | Sequence):
            raise ArgumentError(f"group_by={group_by!r} must be a column name or a list of keys")
        groups = parse_group_by(group_by)
        wanted = parse_metrics(metrics)
        output_names(groups, wanted)
        limit = call_expansion_limit(max_term_expansions)
        with self._operation("aggregate") as op:
            return self._aggregated(op, groups, wanted, where, query, textsearch, fieldmatch, limit)

    def _aggregated(
        self,
        op: oplog.Operation,
        groups: Sequence[GroupSpec],
        wanted: Sequence[Any],
        where: Any,
        query: Any,
        textsearch: Any,
        fieldmatch: Any,
        max_term_expansions: int | None,
    ) -> pa.Table:
        plan = self._count_plan(query, where, textsearch, fieldmatch, max_term_expansions)
        op.planned(considered=len(self._view.splits), kept=len(plan.splits))

        def from_rows(schema: pa.Schema) -> pa.Table:
            needed = {g.column.lower() for g in groups}
            needed |= {m.column.lower() for m in wanted if m.column}
            columns = [f.name for f in self._schema if f.name.lower() in needed]
            read = self._plan(
                query,
                where,
                textsearch,
                fieldmatch,
                columns or self._schema.names[:1],
                None,
                None,
                None,
                None,
                max_term_expansions,
            )
            return aggregate_rows(self._rows(read), groups, wanted, schema, rows_schema=read.output)

        fields_plan = _fast_only(plan) if self._companion_root else plan
        table, source = aggregate_table(fields_plan, groups, wanted, from_rows)
        op.add(rows=table.num_rows)
        op.set(source=source)
        _LOG.debug("aggregate of %s v%d answered from the %s", op.uri, self.version, source)
        return table

    def to_arrow(self, columns: Sequence[str] | None = None, where: str | None = None) -> pa.Table:
        """The table's rows (those ``where`` keeps) as one Arrow table."""
        return self.search(columns=columns, where=where)

    def to_polars(self, columns: Sequence[str] | None = None, where: str | None = None) -> Any:
        """The table's rows (those ``where`` keeps) as a Polars DataFrame (needs ``polars``),
        its columns in the chunks they were read in (joining them costs a copy), its string
        and binary columns handed over as Arrow views (no copy of the values)."""
        import polars as pl

        from indextables.search.read.stringviews import with_string_views

        # Views are Polars' own string layout: imported without copying the values.
        table = with_string_views(self.to_arrow(columns=columns, where=where))
        return pl.from_arrow(table, rechunk=False)

    def to_pandas(self, columns: Sequence[str] | None = None, where: str | None = None) -> Any:
        """The table's rows (those ``where`` keeps) as a pandas DataFrame."""
        return self.to_arrow(columns=columns, where=where).to_pandas()

    def to_duckdb(self, connection: Any = None, name: str | None = None) -> Any:
        """Register the table in DuckDB as the view ``name`` (a new connection when
        ``connection`` is None) with DuckDB's filters and projection pushed into the
        engine; returns the connection (see :mod:`indextables.search.duckdbscan`)."""
        from indextables.search.duckdbscan import register_duckdb

        return register_duckdb(self, connection=connection, name=name)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Every row as an Arrow C stream: Polars, DuckDB and pyarrow read the table directly."""
        return self.scan().__arrow_c_stream__(requested_schema)

    # -- planning and reading ------------------------------------------------------------

    def _count_rows(
        self, query: Any, where: Any, textsearch: Any, fieldmatch: Any, max_term_expansions: Any
    ) -> int:
        """The matching rows counted by reading them (the exact fallback of :meth:`count`)."""
        # A batch without columns has no rows: read one column to count them.
        one = [self._schema.names[0]]
        plan = self._plan(
            query, where, textsearch, fieldmatch, one, None, None, None, None, max_term_expansions
        )
        return sum(batch.num_rows for batch in self._rows(plan))

    def _count_plan(
        self,
        query: Any,
        where: Any,
        textsearch: Any,
        fieldmatch: Any,
        max_term_expansions: Any = None,
    ) -> TablePlan:
        """The count/aggregation plan, kept per arguments: a snapshot's plans never change."""
        _check_text("query", query)
        _check_text("where", where)
        limit = call_expansion_limit(max_term_expansions)
        key = (
            query,
            where,
            tuple(sorted(_check_mapping("textsearch", textsearch).items())),
            tuple(sorted(_check_mapping("fieldmatch", fieldmatch).items())),
            limit,
        )
        found = self._plans.get(key)
        if found is not None:
            return found
        spec = self._search_spec(query, where, textsearch, fieldmatch, limit)
        with oplog.timed("plan"):
            found = plan_table(self._view, self._options, self._read, search=spec, where=where)
        self._plans.put(key, found)
        return found

    def _search_spec(
        self,
        query: Any,
        where: Any,
        textsearch: Any,
        fieldmatch: Any,
        max_term_expansions: Any = None,
    ) -> SearchSpec:
        _check_text("query", query)
        _check_text("where", where)
        text_search = _check_mapping("textsearch", textsearch)
        field_match = _check_mapping("fieldmatch", fieldmatch)
        limit = call_expansion_limit(max_term_expansions)
        if limit is None:
            limit = self._read.max_term_expansions
        spec = SearchSpec(query or None, text_search, field_match, limit)
        if not spec.is_empty:
            validate(
                spec,
                view_fields(self._view),
                whole_dates=whole_second_dates(self._schema),
                partition_columns=self._view.partition_columns,
            )
        return spec

    def _plan(
        self,
        query: Any,
        where: Any,
        textsearch: Any,
        fieldmatch: Any,
        columns: Any,
        limit: Any,
        order_by: Any = None,
        highlight: Any = None,
        snippet_chars: Any = None,
        max_term_expansions: Any = None,
    ) -> _ReadPlan:
        spec = self._search_spec(query, where, textsearch, fieldmatch, max_term_expansions)
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= _MAX_LIMIT
        ):
            raise ArgumentError(f"limit={limit!r} must be an int from 0 to {_MAX_LIMIT}")
        order = self._order(order_by, limit)
        output = self._projection(columns)
        # One parse serves both the exact filter and the index conditions.
        tree = parse_where(where) if where else None
        where_filter = compile_where(where, self._schema, tree=tree) if where else None
        conditions = translate_where(where, self._schema, tree=tree).conditions if where else ()
        needed = {f.name for f in output} | set(where_filter.columns if where_filter else ())
        needed |= {key.column for key in order if key.column != SCORE}
        read_schema = pa.schema([f for f in self._schema if f.name in needed])
        if any(key.column == SCORE for key in order):
            if SCORE in {name.lower() for name in self._schema.names}:
                raise ArgumentError(
                    f"order_by={order_by!r} ranks by {SCORE}, a name the table's own "
                    f"column {SCORE!r} has: the score column would shadow it"
                )
            output = pa.schema([*output, score_field()])
        marked = parse_highlight(
            highlight,
            snippet_chars,
            schema=self._schema,
            fields=view_fields(self._view),
            text_from_source=self._companion_root is not None,
        )
        if marked is not None:
            output = pa.schema([*output, *marked.fields()])
        entries = plan_splits(self._view, self._options, conditions)
        return _ReadPlan(
            output, read_schema, spec, conditions, where_filter, entries, limit, order, marked
        )

    def _order(self, order_by: Any, limit: int | None) -> tuple[OrderKey, ...]:
        if order_by is None:
            return ()
        order = parse_order_by(
            order_by,
            schema=self._schema,
            fields=view_fields(self._view),
            partition_columns=self._view.partition_columns,
        )
        if limit is None or limit > MAX_TOP:
            raise ArgumentError(
                f"order_by={order_by!r} needs a limit from 0 to {MAX_TOP} (limit={limit!r}): "
                "an ordered search keeps only its first limit rows"
            )
        return order

    def _projection(self, columns: Any) -> pa.Schema:
        if columns is None:
            return self._schema
        if isinstance(columns, str) or not isinstance(columns, Sequence):
            raise ArgumentError(f"columns={columns!r} must be a list of column names")
        by_name = {f.name.lower(): f for f in self._schema}
        fields = []
        for name in columns:
            found = by_name.get(name.lower()) if isinstance(name, str) else None
            if found is None:
                raise ArgumentError(
                    f"columns names {name!r}, which the table does not have "
                    f"(columns: {', '.join(self._schema.names)})"
                )
            fields.append(found)
        return pa.schema(fields)

    def _rows(self, plan: _ReadPlan) -> Iterator[pa.RecordBatch]:
        """The matching rows, split by split in order.

        Splits not in the local cache are fetched in the background meanwhile
        (:meth:`SplitCache.directories`). An ordinary table's splits are read one
        after the other on this thread: measured on warm splits, reading two at once
        was slower (the stored-row decoding holds the GIL most of the time). A
        companion's splits without a limit are read several at once
        (:func:`~indextables.search.read.splitbatches.split_batches`), their page
        threads standing down (``auto`` -> ``off``): their Parquet reads and page cuts
        run mostly without the GIL (20M companion, one process alternating: needle
        177 -> 139 ms, exact match 631 -> 543 ms, the same CPU).
        """
        left = plan.limit
        if left == 0:
            return
        if plan.order:
            yield from self._ordered(plan)
            return
        batches = self._split_batches(plan, parallel=left is None)
        with contextlib.closing(batches):
            for batch in batches:
                if plan.where is not None:
                    batch = batch.filter(plan.where.mask(batch))
                if left is not None:
                    batch = batch.slice(0, left)
                    left -= batch.num_rows
                if batch.num_rows:
                    yield _select(batch, plan.output)
                if left == 0:
                    return

    def _split_batches(
        self,
        plan: _ReadPlan,
        *,
        parallel: bool,
        scoring: Scoring | None = None,
        ordering: Ordering | None = None,
    ) -> Generator[pa.RecordBatch, None, None]:
        """The planned splits' batches; a companion's splits, and a full scan's
        (:func:`~indextables.search.read.fullscan.is_full_scan`), are read several at
        once (``read.splitThreads``) when ``parallel``."""
        uri, options = self._view.uri, self._options
        full = (
            scoring is None
            and ordering is None
            and is_full_scan(
                plan.search,
                plan.conditions,
                self._view.partition_columns,
                highlighted=plan.highlight is not None,
            )
        )

        def open_store() -> Any:
            return open_table_store(uri, options)

        return split_batches(
            uri,
            plan.entries,
            open_store=open_store,
            read=self._read,
            schema=plan.read_schema,
            search=plan.search,
            conditions=plan.conditions,
            companion_root=self._companion_root,
            options=options,
            parallel=parallel and (self._companion_root is not None or full),
            scoring=scoring,
            ordering=ordering,
            highlight=plan.highlight,
        )

    def _ordered(self, plan: _ReadPlan) -> Iterator[pa.RecordBatch]:
        """The first ``plan.limit`` rows in ``plan.order``: each split's best rows
        (by score: Tantivy's top ``limit`` hits of the split, all of them when an
        exact ``where`` filter follows) merged into one bounded :class:`TopK`."""
        assert plan.limit is not None
        scored = any(key.column == SCORE for key in plan.order)
        exact = plan.where is None  # an exact filter after the split reads needs every hit
        # Tantivy's collector keeps a split's best hits by score alone (ties: lower
        # address), the order's own rule only when _score DESC is the whole order.
        by_score = plan.order == (OrderKey(SCORE, True),)
        scoring = Scoring(plan.limit if exact and by_score else None) if scored else None
        ordering = Ordering(plan.order, plan.limit) if exact and not scored else None
        top = TopK(plan.order, plan.limit)
        cutting = ordering is not None and cuts(
            plan.order,
            fields=view_fields(self._view),
            partition_columns=self._view.partition_columns,
        )
        if ordering is not None and cutting and self._companion_root is None:
            self._ordered_by_cutoff(plan, ordering, top)
        else:
            batches = self._split_batches(plan, parallel=True, scoring=scoring, ordering=ordering)
            with contextlib.closing(batches):
                for batch in batches:
                    if plan.where is not None:
                        batch = batch.filter(plan.where.mask(batch))
                    top.add(batch)
        found = top.result()
        if found is None:
            return
        for batch in found.to_batches():
            if batch.num_rows:
                yield _select(batch, plan.output)

    def _ordered_by_cutoff(self, plan: _ReadPlan, ordering: Ordering, top: TopK) -> None:
        """Each split's first rows into ``top``, one split after the other (as an
        unordered read of this table goes), newest split first for a ``DESC`` first
        key: once ``top`` is full, the next splits search only the rows whose first key
        reaches its cutoff (:func:`~.topk.cutoff_condition`), so a split holding none
        reads no row. Ties still go by the splits' order in the table."""
        fields = view_fields(self._view)
        places = list(range(len(plan.entries)))
        ceilings = self._ceilings(plan)
        if any(c is not None for c in ceilings):
            # Splits of unknown reach first, then by their max, highest first.
            places.sort(key=lambda p: _reach_order(ceilings[p]))
        else:
            places.reverse()  # appends come last: their values are the likeliest to lead
        for place in places:
            reach, ceiling = comparable_cutoff(top.cutoff()), ceilings[place]
            if reach is not None and ceiling is not None and ceiling < reach:
                continue  # its every row orders after the kept ones
            bound = cutoff_condition(
                plan.order,
                top.cutoff(),
                fields=fields,
                partition_columns=self._view.partition_columns,
            )
            conditions = plan.conditions if bound is None else (*plan.conditions, bound)
            one = _ReadPlan(
                plan.output,
                plan.read_schema,
                plan.search,
                conditions,
                plan.where,
                (plan.entries[place],),
                plan.limit,
                plan.order,
                plan.highlight,
            )
            batches = self._split_batches(one, parallel=False, ordering=ordering)
            with contextlib.closing(batches):
                for batch in batches:
                    top.add(batch, split=place)

    def _ceilings(self, plan: _ReadPlan) -> list[int | None]:
        """Each planned split's :func:`~.topk.first_key_ceiling` (all None for an ASC
        first key or one without such statistics)."""
        key = plan.order[0]
        if not key.descending or key.column == SCORE:
            return [None] * len(plan.entries)
        found = self._schema.field(key.column) if key.column in self._schema.names else None
        if found is None or key.column.lower() in {c.lower() for c in self._view.partition_columns}:
            return [None] * len(plan.entries)
        stats = {s.path: s.max_values for s in self._view.splits}
        return [
            first_key_ceiling(plan.order, found.type, stats.get(e.ref.path)) for e in plan.entries
        ]


def _reach_order(ceiling: int | None) -> tuple[bool, int]:
    """Sort key of a split by its first key's ceiling: unknown first, then highest first."""
    return (ceiling is not None, -ceiling if ceiling is not None else 0)


class _ReadPlan:
    """What one read does: the columns out and read, the search, the splits, the order."""

    __slots__ = (
        "conditions",
        "entries",
        "highlight",
        "limit",
        "order",
        "output",
        "read_schema",
        "search",
        "where",
    )

    def __init__(
        self,
        output: pa.Schema,
        read_schema: pa.Schema,
        search: SearchSpec,
        conditions: Sequence[Any],
        where: WhereFilter | None,
        entries: Sequence[SplitEntry],
        limit: int | None,
        order: Sequence[OrderKey] = (),
        highlight: Highlight | None = None,
    ) -> None:
        self.output = output
        self.read_schema = read_schema
        self.search = search
        self.conditions = tuple(conditions)
        self.where = where
        self.entries = tuple(entries)
        self.limit = limit
        self.order = tuple(order)
        self.highlight = highlight


def _fast_only(plan: TablePlan) -> TablePlan:
    """A companion's plan whose columns without a fast field aggregate from the rows
    (their values are in the source's Parquet files) instead of being refused."""
    return dataclasses.replace(plan, fields={k: v for k, v in plan.fields.items() if v.fast})


def _select(batch: pa.RecordBatch, output: pa.Schema) -> pa.RecordBatch:
    if batch.schema.names == output.names:
        return batch
    return pa.RecordBatch.from_arrays([batch.column(f.name) for f in output], schema=output)


def _check_text(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ArgumentError(f"{name}={value!r} must be a string")


def _check_mapping(name: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ArgumentError(f"{name}={value!r} must map column names to strings")
    return {k.lower(): v for k, v in value.items()}
