"""Commands that change a table: checkpoint, compact, purge, truncate-time-travel,
drop-partitions, repair, validate, gc."""

from __future__ import annotations

import click

from indextables.admin import api, views
from indextables.admin.context import (
    CommandContext,
    admin_command,
    common_options,
    confirm_destructive,
    needs_confirmation,
)
from indextables.admin.errors import ValidationFailedError
from indextables.admin.options import parse_duration

__all__ = [
    "checkpoint_command",
    "compact_command",
    "drop_partitions_command",
    "gc_command",
    "purge_command",
    "repair_command",
    "truncate_time_travel_command",
    "validate_command",
]

_TABLE = click.argument("table", metavar="TABLE")
_DRY_RUN = click.option(
    "--dry-run", is_flag=True, help="Show exactly what would be deleted; change nothing."
)
_YES = click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")


@click.command("checkpoint")
@_TABLE
@common_options
@admin_command
def checkpoint_command(cmd: CommandContext, table: str) -> None:
    """Write a state (checkpoint) at the current version."""
    with cmd.progress.phase("checkpoint"):
        result = api.checkpoint(table, storage_options=cmd.storage_options)
    cmd.output.document(views.record(result), title=f"checkpoint of {table}")


@click.command("compact")
@_TABLE
@common_options
@admin_command
def compact_command(cmd: CommandContext, table: str) -> None:
    """Rewrite the state: all live entries, sorted by partition, no tombstones."""
    result = api.compact(
        table, storage_options=cmd.storage_options, progress=cmd.progress.callback()
    )
    cmd.output.document(views.record(result), title=f"compaction of {table}")


@click.command("purge")
@_TABLE
@click.option(
    "--older-than",
    default="7d",
    show_default=True,
    help="Delete orphaned splits older than this (7d, 168h, ...).",
)
@click.option(
    "--log-retention",
    default="30d",
    show_default=True,
    help="Delete log versions and states older than this, when a checkpoint covers them.",
)
@_DRY_RUN
@_YES
@common_options
@admin_command
def purge_command(
    cmd: CommandContext, table: str, older_than: str, log_retention: str, dry_run: bool
) -> None:
    """Delete orphaned split files, old log versions and old states."""
    options = {
        "older_than": parse_duration(older_than),
        "log_retention": parse_duration(log_retention),
        "storage_options": cmd.storage_options,
        "progress": cmd.progress.callback(),
    }
    if not dry_run and needs_confirmation(cmd):
        preview = api.purge(table, dry_run=True, **options)  # type: ignore[arg-type]
        confirm_destructive(cmd, views.deletion_summary(preview, table=table))
    result = api.purge(table, dry_run=dry_run, **options)  # type: ignore[arg-type]
    cmd.output.document(views.record(result), title=f"purge of {table}")


@click.command("truncate-time-travel")
@_TABLE
@_DRY_RUN
@_YES
@common_options
@admin_command
def truncate_time_travel_command(cmd: CommandContext, table: str, dry_run: bool) -> None:
    """Delete every log version and state older than the current one."""
    if not dry_run and needs_confirmation(cmd):
        preview = api.truncate_time_travel(table, dry_run=True, storage_options=cmd.storage_options)
        confirm_destructive(cmd, views.deletion_summary(preview, table=table))
    result = api.truncate_time_travel(table, dry_run=dry_run, storage_options=cmd.storage_options)
    cmd.output.document(views.record(result), title=f"truncate time travel of {table}")


@click.command("drop-partitions")
@_TABLE
@click.option("--where", "where", required=True, help="Partition predicate (required).")
@_DRY_RUN
@_YES
@common_options
@admin_command
def drop_partitions_command(cmd: CommandContext, table: str, where: str, dry_run: bool) -> None:
    """Remove every file of the matching partitions from the table (logically)."""
    if not dry_run and needs_confirmation(cmd):
        preview = api.drop_partitions(
            table, where=where, dry_run=True, storage_options=cmd.storage_options
        )
        confirm_destructive(cmd, views.deletion_summary(preview, table=table))
    result = api.drop_partitions(
        table, where=where, dry_run=dry_run, storage_options=cmd.storage_options
    )
    cmd.output.document(views.record(result), title=f"drop partitions of {table}")


@click.command("repair")
@click.argument("source", metavar="SRC")
@click.option("--to", "destination", required=True, metavar="DST", help="Where to write.")
@common_options
@admin_command
def repair_command(cmd: CommandContext, source: str, destination: str) -> None:
    """Write a clean log for SRC at DST, keeping only splits that exist."""
    result = api.repair(
        source,
        destination=destination,
        storage_options=cmd.storage_options,
        progress=cmd.progress.callback(),
    )
    cmd.output.document(views.record(result), title=f"repair of {source}")


@click.command("validate")
@_TABLE
@common_options
@admin_command
def validate_command(cmd: CommandContext, table: str) -> None:
    """Check the table's invariants; exit 4 when any fails, listing each finding."""
    result = api.validate(
        table, storage_options=cmd.storage_options, progress=cmd.progress.callback()
    )
    document = views.record(result)
    cmd.output.document(document, title=f"validation of {table}")
    failures = views.failure_count(result)
    if failures:
        raise ValidationFailedError(f"{failures} invariant(s) failed", findings=failures)


@click.command("gc")
@_TABLE
@_DRY_RUN
@_YES
@common_options
@admin_command
def gc_command(cmd: CommandContext, table: str, dry_run: bool) -> None:
    """Delete unreferenced manifests and states past their retention."""
    if not dry_run and needs_confirmation(cmd):
        preview = api.gc(table, dry_run=True, storage_options=cmd.storage_options)
        confirm_destructive(cmd, views.deletion_summary(preview, table=table))
    result = api.gc(table, dry_run=dry_run, storage_options=cmd.storage_options)
    cmd.output.document(views.record(result), title=f"gc of {table}")
