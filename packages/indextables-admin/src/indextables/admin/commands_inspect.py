"""Read-only commands: describe, files, history, changes, schema."""

from __future__ import annotations

import click

from indextables.admin import api, views
from indextables.admin.context import (
    CommandContext,
    admin_command,
    common_options,
    table_argument,
)
from indextables.admin.errors import UsageError
from indextables.admin.options import parse_timestamp_ms

__all__ = [
    "changes_command",
    "describe_command",
    "files_command",
    "history_command",
    "indexing_command",
    "schema_command",
]

_TABLE = table_argument()
# The text form shows these columns of a file; JSON has every wire field.
FILE_COLUMNS = ("path", "partitionValues", "size", "numRecords", "addedAtVersion")


@click.command("describe")
@_TABLE
@common_options
@admin_command
def describe_command(cmd: CommandContext, table: str) -> None:
    """State format, version, files, manifests, tombstones, bytes, protocol and schema."""
    with cmd.progress.phase("reading state"):
        description = api.describe_table(table, storage_options=cmd.storage_options)
    cmd.output.document(views.describe_document(description), title=f"table {table}")


@click.command("files")
@_TABLE
@click.option(
    "--where", "where", default=None, help="Partition filter, e.g. \"date >= '2024-01-01'\"."
)
@click.option("--version", "version", type=int, default=None, help="Files at this version.")
@common_options
@admin_command
def files_command(cmd: CommandContext, table: str, where: str | None, version: int | None) -> None:
    """List the live files (wire field names in JSON)."""
    with cmd.progress.phase("reading files"):
        snap = api.snapshot(
            table, version=version, where=where, storage_options=cmd.storage_options
        )
    document = views.files_document(table, snap.files, version=snap.version, where=where)
    cmd.output.document(document, title=f"files of {table}", columns={"files": FILE_COLUMNS})


@click.command("history")
@_TABLE
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Newest N versions only.")
@common_options
@admin_command
def history_command(cmd: CommandContext, table: str, limit: int | None) -> None:
    """List the retained versions, newest first."""
    entries = api.history(table, storage_options=cmd.storage_options)
    cmd.output.document(
        views.history_document(table, entries, limit=limit), title=f"history of {table}"
    )


@click.command("changes")
@_TABLE
@click.option("--since-version", type=click.IntRange(min=-1), default=None)
@click.option("--since-timestamp", default=None, help="Epoch ms or ISO 8601 (UTC if no offset).")
@common_options
@admin_command
def changes_command(
    cmd: CommandContext, table: str, since_version: int | None, since_timestamp: str | None
) -> None:
    """Files added and removed after a version (or after the version current at a time)."""
    if (since_version is None) == (since_timestamp is None):
        raise UsageError("give exactly one of --since-version or --since-timestamp")
    timestamp = None if since_timestamp is None else parse_timestamp_ms(since_timestamp)
    found = api.changes(
        table,
        since_version=since_version,
        since_timestamp=timestamp,
        storage_options=cmd.storage_options,
    )
    cmd.output.document(
        views.changes_document(table, found),
        title=f"changes of {table}",
        columns={"adds": FILE_COLUMNS},
    )


@click.command("schema")
@_TABLE
@click.option("--version", "version", type=int, default=None, help="Schema at this version.")
@common_options
@admin_command
def schema_command(cmd: CommandContext, table: str, version: int | None) -> None:
    """Show the columns, their types and the partition columns."""
    found = api.schema(table, version=version, storage_options=cmd.storage_options)
    cmd.output.document(views.schema_document(table, found), title=f"schema of {table}")


@click.command("indexing")
@_TABLE
@click.option("--version", "version", type=int, default=None, help="Indexing at this version.")
@common_options
@admin_command
def indexing_command(cmd: CommandContext, table: str, version: int | None) -> None:
    """Show how each column is indexed: type, tokenizer, indexed, fast, stored."""
    with cmd.progress.phase("reading doc mappings"):
        found_version, columns = api.indexing(
            table, version=version, storage_options=cmd.storage_options
        )
    cmd.output.document(
        views.indexing_document(table, found_version, columns), title=f"indexing of {table}"
    )
