"""indextables.pyspark: the IndexTables data source and maintenance commands for PySpark.

Example:
    >>> import indextables.pyspark as itp  # doctest: +SKIP
    >>> itp.register(spark)  # doctest: +SKIP
    >>> writer = df.write.format("indextables").option("partitionBy", "day")  # doctest: +SKIP
    >>> writer.mode("append").save("/tmp/logs")  # doctest: +SKIP
    >>> reader = spark.read.format("indextables").option("query", "message:x")  # doctest: +SKIP
    >>> reader.load("/tmp/logs").count()  # doctest: +SKIP
    >>> itp.search(spark, "/tmp/logs", "message:timeout", where="level = 'ERROR'")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib as _contextlib
import math as _math
import typing as _typing

from indextables.pyspark.errors import (
    ArgumentError,
    CacheDirectoryError,
    CorruptSplitError,
    DuplicateColumnError,
    FieldKindError,
    IndexTablesSparkError,
    InexactDateBoundError,
    NotATableError,
    OptionError,
    QuerySyntaxError,
    RetentionTooShortError,
    SplitReadError,
    SqlCommandError,
    UnreadableSplitError,
    UnsupportedTypeError,
    VersionNotFoundError,
    from_spark_error,
)
from indextables.pyspark.version import __version__

if _typing.TYPE_CHECKING:  # typing names stay out of dir(itp): annotations are strings
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from datetime import datetime, timedelta
    from typing import Any

    from indextables.pyspark.read.searchargs import SearchArgs
    from indextables.pyspark.writing.tablewrite import WriteResult
    from indextables.search.aggregate.aggspec import (
        DateHistogram,
        GroupSpec,
        Histogram,
        RangeBuckets,
    )
    from indextables.search.metrics import OperationMetrics
    from pyspark.sql import DataFrame, SparkSession

FORMAT = "indextables"

# Spark's limit() takes a 32-bit int.
_MAX_LIMIT = 2**31 - 1


def _check_args(**args: tuple[Any, tuple[type, ...]]) -> None:
    """Raise ArgumentError naming the first argument whose value is not of its types.

    ``args`` maps a name to (value, allowed types); None is allowed when ``type(None)``
    is listed; ``bool`` never passes for ``int``.
    """
    from indextables.pyspark.errors import ArgumentError

    for name, (value, types) in args.items():
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            wanted = " or ".join("None" if t is type(None) else t.__name__ for t in types)
            raise ArgumentError(f"{name}={value!r} must be {wanted}, not {type(value).__name__}")


_SESSION_ATTRIBUTES = ("conf", "read", "dataSource")


def _check_spark(spark: Any) -> None:
    """``spark`` is a SparkSession (classic or Spark Connect: checked by its attributes).

    The attributes are looked up on the class first: on a session they are properties,
    and ``spark.read`` builds a JVM ``DataFrameReader`` over Py4J (~0.3 s on a session's
    first call, a round trip after), which a driver-local search never uses.
    """
    if not all(hasattr(type(spark), a) or hasattr(spark, a) for a in _SESSION_ATTRIBUTES):
        raise ArgumentError(f"spark={spark!r} must be a SparkSession, not {type(spark).__name__}")


def _check_options(options: Any) -> None:
    from collections.abc import Mapping as _Mapping

    _check_args(options=(options, (_Mapping, type(None))))
    for key in options or {}:
        _check_args(**{"options key": (key, (str,))})


def _check_columns(name: str, columns: Any) -> None:
    """Each key of a column -> text mapping (textsearch/fieldmatch) and its value is a str."""
    for column, text in (columns or {}).items():
        _check_args(**{f"{name} column": (column, (str,)), f"{name}[{column!r}]": (text, (str,))})


def _check_search_args(
    path: Any, where: Any, query: Any, textsearch: Any, fieldmatch: Any, options: Any
) -> None:
    from collections.abc import Mapping as _Mapping

    none = type(None)
    _check_args(
        path=(path, (str,)),
        where=(where, (str, none)),
        query=(query, (str, none)),
        textsearch=(textsearch, (_Mapping, none)),
        fieldmatch=(fieldmatch, (_Mapping, none)),
        options=(options, (_Mapping, none)),
    )
    _check_options(options)
    _check_columns("textsearch", textsearch)
    _check_columns("fieldmatch", fieldmatch)


def _search_args(
    spark: Any,
    path: Any,
    *,
    where: Any,
    query: Any,
    textsearch: Any,
    fieldmatch: Any,
    options: Any,
    version: Any = None,
    timestamp: Any = None,
    max_term_expansions: Any = None,
    check_more: Callable[[], None],
) -> SearchArgs:
    """The checked arguments of ``search``/``count``/``aggregate``, the session's settings
    merged under ``options`` (``check_more`` checks the call's own arguments first), and
    ``max_term_expansions`` over both as the ``spark.indextables.query.maxTermExpansions``
    read option."""
    from indextables.pyspark.read.searchargs import SearchArgs
    from indextables.pyspark.sessionconf import session_options
    from indextables.pyspark.tablepath import absolute_table_path

    _check_spark(spark)
    _check_search_args(path, where, query, textsearch, fieldmatch, options)
    check_more()
    from indextables.search.query.termexpand import call_expansion_limit

    call_expansion_limit(max_term_expansions)
    merged = session_options(spark, options)
    if max_term_expansions is not None:
        from indextables.search.options import MAX_TERM_EXPANSIONS_KEY, MAX_TERM_EXPANSIONS_NAME

        merged = {k: v for k, v in merged.items() if k.lower() != MAX_TERM_EXPANSIONS_KEY}
        merged[MAX_TERM_EXPANSIONS_NAME] = str(max_term_expansions)
    return SearchArgs(
        path=absolute_table_path(path, spark),
        where=where,
        query=query,
        textsearch=textsearch,
        fieldmatch=fieldmatch,
        options=merged,
        version=version,
        timestamp=timestamp,
    )


def session_options(
    spark: SparkSession, options: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """``options`` over the session's ``spark.indextables.*`` settings, for ``spark.read`` and
    ``df.write``, which see only ``.option()`` values (see :mod:`.sessionconf`)."""
    from indextables.pyspark.sessionconf import session_options as _session_options

    _check_spark(spark)
    _check_options(options)
    return _session_options(spark, options)


def register(spark: SparkSession) -> None:
    """Register the ``indextables`` format with ``spark`` (unless auto-registered) and turn on
    filter pushdown (``spark.sql.python.filterPushdown.enabled``, off by default in Spark):
    without it every read downloads every split and Spark filters the rows afterwards.
    Errors get short: the error's own line without Python or JVM frames (see
    :func:`indextables.pyspark.errors.short_errors`, which names the settings that show
    them)."""
    from indextables.pyspark.errors import short_errors
    from indextables.pyspark.read.datasource import IndexTablesDataSource

    _check_spark(spark)
    spark.dataSource.register(IndexTablesDataSource)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    short_errors(spark)


def sql(spark: SparkSession, text: str, *, options: Mapping[str, Any] | None = None) -> DataFrame:
    """Run an IndexTables maintenance command, or any other statement through ``spark.sql``.

    ``options`` carries what a command on a cloud table needs: store credentials
    (``spark.indextables.aws.*``/``azure.*``) and engine settings
    (``spark.indextables.checkpoint.interval``, retention windows, commit retries).
    The session's ``spark.indextables.*`` settings apply under them (see
    :mod:`.sessionconf`), as they do for every ``itp.*`` helper.
    """
    from indextables.pyspark.sessionconf import session_options
    from indextables.pyspark.sqlcommands.commands import run_sql

    _check_spark(spark)
    _check_args(text=(text, (str,)))
    _check_options(options)
    return run_sql(spark, text, options=session_options(spark, options))


def last_metrics() -> OperationMetrics | None:
    """The measurements of the last ``itp.*`` call or IndexTables command finished on
    this thread (None before the first): splits considered, pruned and read, rows,
    cache hits and misses, bytes, seconds per phase (docs/pyspark.md, "Logging and
    metrics"). Each call also logs them as one INFO line."""
    from indextables.search.oplog import last_metrics as _last

    return _last()


def search(
    spark: SparkSession,
    path: str,
    query: str | None = None,
    *,
    where: str | None = None,
    textsearch: Mapping[str, str] | None = None,
    fieldmatch: Mapping[str, str] | None = None,
    limit: int | None = None,
    options: Mapping[str, Any] | None = None,
    order_by: str | Sequence[str] | None = None,
    highlight: Sequence[str] | None = None,
    snippet_chars: int | None = None,
    max_term_expansions: int | None = None,
) -> DataFrame:
    """Interactive search: the matching rows, searched in the driver when small
    (see :mod:`.localsearch`), through Spark tasks otherwise.

    ``max_term_expansions`` (here, in ``count`` and ``aggregate``): the most terms of
    one split a wildcard, fuzzy or phrase-prefix term may stand for in this call,
    over the ``spark.indextables.query.maxTermExpansions`` option and setting.

    ``order_by`` (with ``limit``: ``"_score"``, ``"ts DESC, host"``) returns the
    first ``limit`` rows in that order, ``_score`` adding a float ``_score`` column;
    ``highlight`` (text columns) adds ``_snippet_<column>`` string columns,
    ``snippet_chars`` long. Either runs in the driver through the engine
    (:mod:`.rankedsearch`; docs/search.md, "Ranking, sorting and snippets").
    """
    from indextables.pyspark.read.localsearch import search as _search

    def check_limit() -> None:
        _check_args(limit=(limit, (int, type(None))))
        if limit is not None and limit > _MAX_LIMIT:
            raise ArgumentError(f"limit={limit} exceeds Spark's largest limit ({_MAX_LIMIT})")

    args = _search_args(
        spark,
        path,
        where=where,
        query=query,
        textsearch=textsearch,
        fieldmatch=fieldmatch,
        options=options,
        max_term_expansions=max_term_expansions,
        check_more=check_limit,
    )
    if order_by is not None or highlight is not None or snippet_chars is not None:
        from indextables.pyspark.read.rankedsearch import ranked_search

        return ranked_search(
            spark,
            args,
            limit=limit,
            order_by=order_by,
            highlight=highlight,
            snippet_chars=snippet_chars,
        )
    return _search(spark, args, limit=limit)


def count(
    spark: SparkSession,
    path: str,
    *,
    where: str | None = None,
    query: str | None = None,
    textsearch: Mapping[str, str] | None = None,
    fieldmatch: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
    version: int | None = None,
    timestamp: int | str | datetime | None = None,
    max_term_expansions: int | None = None,
) -> int:
    """How many rows a search returns, from the log or the index (see :mod:`.counting`)."""
    from indextables.pyspark.helpers.counting import count as _count

    args = _search_args(
        spark,
        path,
        where=where,
        query=query,
        textsearch=textsearch,
        fieldmatch=fieldmatch,
        options=options,
        version=version,
        timestamp=timestamp,
        max_term_expansions=max_term_expansions,
        check_more=lambda: _check_args(version=(version, (int, type(None)))),
    )
    return _count(spark, args)


def aggregate(
    spark: SparkSession,
    path: str,
    *,
    group_by: Sequence[str | GroupSpec] | str = (),
    metrics: Mapping[str, Any],
    where: str | None = None,
    query: str | None = None,
    textsearch: Mapping[str, str] | None = None,
    fieldmatch: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
    version: int | None = None,
    timestamp: int | str | datetime | None = None,
    max_term_expansions: int | None = None,
) -> DataFrame:
    """Grouped count/sum/min/max/avg from the index, merged exactly (see :mod:`.aggregation`).

    Example:
        >>> itp.aggregate(spark, "/tmp/logs", group_by=["level", itp.histogram("bytes", 100)],
        ...               metrics={"n": "count", "total": ("sum", "bytes")})  # doctest: +SKIP
    """
    from collections.abc import Mapping as _Mapping

    from indextables.pyspark.helpers.aggregation import aggregate as _aggregate

    args = _search_args(
        spark,
        path,
        where=where,
        query=query,
        textsearch=textsearch,
        fieldmatch=fieldmatch,
        options=options,
        version=version,
        timestamp=timestamp,
        max_term_expansions=max_term_expansions,
        check_more=lambda: _check_args(
            metrics=(metrics, (_Mapping,)),
            group_by=(group_by, (str, list, tuple)),
            version=(version, (int, type(None))),
        ),
    )
    return _aggregate(spark, args, group_by=group_by, metrics=metrics)


def _check_bucket_args(column: Any, name: Any) -> None:
    _check_args(column=(column, (str,)), name=(name, (str, type(None))))
    if not column:
        raise ArgumentError("column='' must name a column")


@_contextlib.contextmanager
def _as_argument_error(name: str, value: Any) -> Iterator[None]:
    """Raise an aggspec OptionError about ``name`` as an ArgumentError (still an OptionError's
    ValueError) naming the argument."""
    from indextables.pyspark.errors import OptionError as _OptionError

    try:
        yield
    except _OptionError as error:
        raise ArgumentError(f"{name}={value!r}: {error}") from None


def histogram(column: str, interval: int | float, *, name: str | None = None) -> Histogram:
    """A group key: ``floor(column / interval) * interval`` (see :mod:`.aggspec`)."""
    from indextables.search.aggregate.aggspec import histogram as _histogram

    _check_bucket_args(column, name)
    _check_args(interval=(interval, (int, float)))
    if not _math.isfinite(interval) or interval <= 0:
        raise ArgumentError(f"interval={interval!r} must be a positive finite number")
    return _histogram(column, interval, name=name)


def date_histogram(
    column: str, interval: str | timedelta, *, name: str | None = None
) -> DateHistogram:
    """A group key: fixed time buckets (``"1d"``, ``"6h"``, a timedelta), epoch-aligned, UTC."""
    from datetime import timedelta as _timedelta

    from indextables.search.aggregate.aggspec import date_histogram as _date_histogram

    _check_bucket_args(column, name)
    _check_args(interval=(interval, (str, _timedelta)))
    with _as_argument_error("interval", interval):
        return _date_histogram(column, interval, name=name)


def range(column: str, edges: Sequence[int | float], *, name: str | None = None) -> RangeBuckets:
    """A group key: the label of the range ``[low, high)`` between ascending ``edges``."""
    from indextables.search.aggregate.aggspec import range_

    _check_bucket_args(column, name)
    _check_args(edges=(edges, (list, tuple)))
    for edge in edges:
        if isinstance(edge, bool) or not isinstance(edge, int | float) or not _math.isfinite(edge):
            raise ArgumentError(f"edges={list(edges)!r}: edge {edge!r} is not a finite number")
    with _as_argument_error("edges", edges):
        return range_(column, edges, name=name)


def write(
    df: DataFrame,
    path: str,
    *,
    mode: str = "append",
    partition_by: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    replace_where: str | None = None,
    merge_schema: bool = False,
) -> WriteResult:
    """Write ``df``; merge-on-write then runs as Spark tasks (see :mod:`.tablewrite`).
    ``replace_where`` (with ``mode="overwrite"``): replace only the rows it matches;
    ``merge_schema``: add the columns the table lacks (the ``mergeSchema`` option)."""
    from collections.abc import Mapping as _Mapping

    from indextables.pyspark.sessionconf import session_options
    from indextables.pyspark.tablepath import absolute_table_path
    from indextables.pyspark.writing.tablewrite import write as _write

    if not (hasattr(df, "write") and hasattr(df, "sparkSession")):
        raise ArgumentError(f"df={df!r} must be a DataFrame, not {type(df).__name__}")
    _check_args(
        path=(path, (str,)),
        mode=(mode, (str,)),
        partition_by=(partition_by, (list, tuple, type(None))),
        options=(options, (_Mapping, type(None))),
        replace_where=(replace_where, (str, type(None))),
        merge_schema=(merge_schema, (bool,)),
    )
    _check_options(options)
    for column in partition_by or ():
        _check_args(**{"partition_by entry": (column, (str,))})
    merged = session_options(df.sparkSession, options)
    path = absolute_table_path(path, df.sparkSession)
    return _write(
        df,
        path,
        mode=mode,
        partition_by=partition_by,
        options=merged,
        replace_where=replace_where,
        merge_schema=merge_schema,
    )


def sync_companion_forever(
    spark: SparkSession,
    source: str,
    location: str,
    *,
    source_format: str,
    poll_seconds: float,
    max_cycles: int | None = None,
    stop: Any = None,
    on_cycle: Any = None,
    options: Mapping[str, Any] | None = None,
    **build_args: Any,
) -> Any:
    """Keep the companion index at ``location`` in sync with ``source``: a sync now, then a
    cycle every ``poll_seconds`` that syncs only when the source changed (the reference's
    ``WITH STREAMING POLL INTERVAL``). Runs on the driver until ``stop`` (a
    ``threading.Event``) is set or ``max_cycles`` ran; ``on_cycle`` gets each cycle.
    ``build_args`` are ``indextables.search.build_companion``'s options (indexing_modes,
    where, ...). Returns the engine's ``StreamingSummary`` (cycles, syncs, last result)."""
    from indextables.pyspark.sessionconf import session_options
    from indextables.search import sync_companion_forever as _sync

    _check_spark(spark)
    none = type(None)
    _check_args(
        source=(source, (str,)),
        location=(location, (str,)),
        source_format=(source_format, (str,)),
        poll_seconds=(poll_seconds, (int, float)),
        max_cycles=(max_cycles, (int, none)),
    )
    _check_options(options)
    if not _math.isfinite(poll_seconds) or poll_seconds <= 0:
        raise ArgumentError(f"poll_seconds={poll_seconds!r} must be a positive number of seconds")
    if max_cycles is not None and max_cycles < 1:
        raise ArgumentError(f"max_cycles={max_cycles!r} must be a positive int or None")
    return _sync(
        source,
        location,
        source_format=source_format,
        poll_seconds=poll_seconds,
        max_cycles=max_cycles,
        stop=stop,
        on_cycle=on_cycle,
        options=session_options(spark, options),
        **build_args,
    )


def textsearch(
    spark: SparkSession, path: str, column: str, query: str, **options: Any
) -> DataFrame:
    """Rows whose tokenized ``column`` matches the Tantivy ``query`` (see :mod:`.searchoptions`)."""
    from indextables.pyspark.read.searchreads import textsearch as _textsearch
    from indextables.pyspark.sessionconf import session_options
    from indextables.pyspark.tablepath import absolute_table_path

    _check_spark(spark)
    _check_args(path=(path, (str,)), column=(column, (str,)), query=(query, (str,)))
    path = absolute_table_path(path, spark)
    return _textsearch(spark, path, column, query, **session_options(spark, options))


def fieldmatch(
    spark: SparkSession, path: str, column: str, value: str, **options: Any
) -> DataFrame:
    """Rows whose exact (string) ``column`` equals ``value`` (see :mod:`.searchoptions`)."""
    from indextables.pyspark.read.searchreads import fieldmatch as _fieldmatch
    from indextables.pyspark.sessionconf import session_options
    from indextables.pyspark.tablepath import absolute_table_path

    _check_spark(spark)
    _check_args(path=(path, (str,)), column=(column, (str,)), value=(value, (str,)))
    path = absolute_table_path(path, spark)
    return _fieldmatch(spark, path, column, value, **session_options(spark, options))


__all__ = [
    "ArgumentError",
    "CacheDirectoryError",
    "CorruptSplitError",
    "DuplicateColumnError",
    "FORMAT",
    "FieldKindError",
    "IndexTablesSparkError",
    "InexactDateBoundError",
    "NotATableError",
    "OptionError",
    "QuerySyntaxError",
    "RetentionTooShortError",
    "SplitReadError",
    "SqlCommandError",
    "UnreadableSplitError",
    "UnsupportedTypeError",
    "VersionNotFoundError",
    "__version__",
    "aggregate",
    "count",
    "date_histogram",
    "fieldmatch",
    "from_spark_error",
    "histogram",
    "last_metrics",
    "range",
    "register",
    "search",
    "session_options",
    "sql",
    "sync_companion_forever",
    "textsearch",
    "write",
]

del annotations  # the __future__ feature, not part of the public namespace (dir(itp))
