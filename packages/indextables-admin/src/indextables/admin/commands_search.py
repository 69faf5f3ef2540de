"""Commands that answer from a table's rows: search, count, aggregate (indextables.search).

Each reads only what its answer needs: ``search`` the columns asked for and
at most ``--limit`` rows (a text table at most the rows it shows), ``count``
and ``aggregate`` no row at all beyond what the engine reads for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click
import pyarrow as pa

from indextables.admin.aggargs import parse_group_by_args, parse_metric_args, split_top_level
from indextables.admin.context import CommandContext, rows_command, rows_options, table_argument
from indextables.admin.errors import AdminError, UsageError
from indextables.admin.redact import redact_text
from indextables.admin.rowsout import RowsFormat, write_rows

__all__ = ["aggregate_command", "count_command", "search_command", "search_options"]

_TABLE = table_argument()
_QUERY = click.argument("query", required=False, default=None, metavar="[QUERY]")
_WHERE = click.option(
    "--where",
    "where",
    default=None,
    help="SQL condition on any column, e.g. \"level = 'ERROR' AND latency > 0.5\".",
)
_VERSION = click.option("--version", "version", type=int, default=None, help="Read this version.")
_EXPANSIONS = click.option(
    "--max-term-expansions",
    "max_term_expansions",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="At most N terms of one split per wildcard, fuzzy or phrase-prefix term "
    "(default: the spark.indextables.query.maxTermExpansions setting, else 100000).",
)


class SearchUnavailableError(AdminError):
    """The installed indextables-search lacks what the command needs."""


def search_options(storage_options: Mapping[str, str]) -> dict[str, str]:
    """``-S`` pairs as ``open_table`` options: a store option ``name`` is ``storage.name``.

    ``spark.indextables.*`` settings (and keys already spelled ``storage.*``) pass
    as they are, so does any other key: ``open_table`` refuses an unknown one by name.
    """
    from indextables.storage.options import KNOWN

    options: dict[str, str] = {}
    for key, value in storage_options.items():
        lowered = key.lower()
        if lowered in KNOWN:
            options[f"storage.{key}"] = value
        else:
            options[key] = value
    return options


def _open(cmd: CommandContext, table: str, version: int | None) -> Any:
    from indextables.search import open_table

    with cmd.progress.phase("reading the table's state"):
        return open_table(table, version=version, options=search_options(cmd.storage_options))


def _scrub(cmd: CommandContext) -> Any:
    secrets = cmd.secrets
    return lambda text: redact_text(text, secrets)


def _columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = split_top_level((text,))
    if not names:
        raise UsageError("--columns is empty: give column names, e.g. --columns id,message")
    return names


def _expansions(limit: int | None) -> dict[str, int]:
    """The engine call's ``max_term_expansions`` argument, when the flag is given."""
    return {} if limit is None else {"max_term_expansions": limit}


def _highlight(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = split_top_level((text,))
    if not names:
        raise UsageError("--highlight is empty: give text column names, e.g. --highlight message")
    return names


@click.command("search")
@_TABLE
@_QUERY
@_WHERE
@click.option("--columns", "columns", default=None, help="Columns to show, e.g. id,message.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most N rows.")
@click.option(
    "--order-by",
    "order_by",
    default=None,
    help="The first --limit rows in this order, e.g. '_score' or 'ts DESC, host'.",
)
@click.option(
    "--highlight",
    "highlight",
    default=None,
    help="Text columns to add a _snippet_<column> of, e.g. message,title.",
)
@click.option(
    "--snippet-chars",
    "snippet_chars",
    type=click.IntRange(min=1),
    default=None,
    help="A snippet's length in characters (default 150).",
)
@_EXPANSIONS
@_VERSION
@rows_options
@rows_command
def search_command(
    cmd: CommandContext,
    table: str,
    query: str | None,
    where: str | None,
    columns: str | None,
    limit: int | None,
    order_by: str | None,
    highlight: str | None,
    snippet_chars: int | None,
    max_term_expansions: int | None,
    version: int | None,
) -> None:
    """Rows matching QUERY (Tantivy syntax, e.g. message:timeout) and --where."""
    found = _open(cmd, table, version)
    reader = found.scan(
        query,
        where=where,
        columns=_columns(columns),
        limit=limit,
        order_by=order_by,
        highlight=_highlight(highlight),
        snippet_chars=snippet_chars,
        **_expansions(max_term_expansions),
    )
    header = {"table": table, "version": found.version, "query": query, "where": where}
    if order_by is not None:
        header["order_by"] = order_by
    if max_term_expansions is not None:
        header["max_term_expansions"] = max_term_expansions
    write_rows(
        cmd.stdout,
        _format(cmd),
        schema=reader.schema,
        batches=reader,
        header=header,
        title=f"search of {table}",
        scrub=_scrub(cmd),
    )


@click.command("count")
@_TABLE
@_QUERY
@_WHERE
@_EXPANSIONS
@_VERSION
@rows_options
@rows_command
def count_command(
    cmd: CommandContext,
    table: str,
    query: str | None,
    where: str | None,
    max_term_expansions: int | None,
    version: int | None,
) -> None:
    """How many rows match QUERY and --where (every row without them)."""
    found = _open(cmd, table, version)
    count = found.count(query, where=where, **_expansions(max_term_expansions))
    header: dict[str, Any] = {
        "table": table,
        "version": found.version,
        "query": query,
        "where": where,
    }
    if max_term_expansions is not None:
        header["max_term_expansions"] = max_term_expansions
    if _format(cmd) == "csv":
        answer = pa.record_batch({"count": pa.array([count], pa.int64())})
        write_rows(cmd.stdout, "csv", schema=answer.schema, batches=[answer], header={}, title="")
        return
    cmd.output.document({**header, "count": count}, title=f"count of {table}")


@click.command("aggregate")
@_TABLE
@_QUERY
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    required=True,
    help="Group key (repeatable): a column, histogram(col, 10), date_histogram(col, 1h), "
    "range(col, 0, 10, 100); '... as name' names it.",
)
@click.option(
    "--metrics",
    "--metric",
    "metrics",
    multiple=True,
    required=True,
    help="Metric (repeatable or comma-separated): count or fn(column), fn one of "
    "count/sum/min/max/avg; 'name=...' names it.",
)
@_WHERE
@_EXPANSIONS
@_VERSION
@rows_options
@rows_command
def aggregate_command(
    cmd: CommandContext,
    table: str,
    query: str | None,
    group_by: tuple[str, ...],
    metrics: tuple[str, ...],
    where: str | None,
    max_term_expansions: int | None,
    version: int | None,
) -> None:
    """Groups and metrics over the rows matching QUERY and --where (from the index)."""
    keys, wanted = parse_group_by_args(group_by), parse_metric_args(metrics)
    found = _open(cmd, table, version)
    aggregate = getattr(found, "aggregate", None)
    if aggregate is None:
        raise SearchUnavailableError(
            "aggregate needs SearchTable.aggregate, which the installed indextables-search "
            "does not have: upgrade indextables-search"
        )
    with cmd.progress.phase("aggregating"):
        answer: pa.Table = aggregate(
            group_by=keys,
            metrics=wanted,
            where=where,
            query=query,
            **_expansions(max_term_expansions),
        )
    header = {
        "table": table,
        "version": found.version,
        "query": query,
        "where": where,
        "group_by": list(group_by),
        "metrics": list(metrics),
    }
    if max_term_expansions is not None:
        header["max_term_expansions"] = max_term_expansions
    write_rows(
        cmd.stdout,
        _format(cmd),
        schema=answer.schema,
        batches=answer.to_batches(),
        header=header,
        title=f"aggregate of {table}",
        scrub=_scrub(cmd),
    )


def _format(cmd: CommandContext) -> RowsFormat:
    kind = cmd.output_format
    return kind if kind in ("json", "csv") else "text"  # type: ignore[return-value]
