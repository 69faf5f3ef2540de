"""``indextables companion build|status``: companion indexes over Delta, Iceberg and Parquet tables.

``build`` is BUILD INDEXTABLES COMPANION (indextables.search.build_companion):
it creates or syncs the index and prints the reference's result row.
``status`` reads the index's companion settings and plans a sync without
writing (how many source files are not indexed yet, how many splits are stale).
"""

from __future__ import annotations

from typing import Any

import click

from indextables.admin.commands_search import search_options
from indextables.admin.context import CommandContext, admin_command, common_options
from indextables.admin.errors import UsageError

__all__ = ["build_command", "companion_group", "status_command"]


@click.group("companion")
def companion_group() -> None:
    """Companion indexes: search a Delta table or Parquet directory without copying it."""


def _names(text: str | None, option: str) -> tuple[str, ...]:
    if text is None:
        return ()
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise UsageError(f"{option} is empty: give column names, e.g. {option} message,level")
    return names


def _modes(pairs: tuple[str, ...]) -> dict[str, str]:
    modes: dict[str, str] = {}
    for pair in pairs:
        column, sep, mode = pair.partition("=")
        if not sep or not column.strip() or not mode.strip():
            raise UsageError(f"--indexing-mode {pair!r}: expected COLUMN=MODE, e.g. message=text")
        modes[column.strip()] = mode.strip()
    return modes


def _size(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    from indextables.search.options import parse_size

    try:
        size = parse_size(option, text)
    except ValueError as error:
        raise UsageError(f"{option} {text!r} is not a size (2G, 512M, 1000000)") from error
    if size <= 0:
        raise UsageError(f"{option} must be positive, got {text!r}")
    return size


@companion_group.command("build")
@click.argument("source")
@click.argument("table", metavar="INDEX")
@click.option(
    "--format",
    "source_format",
    type=click.Choice(["delta", "parquet", "iceberg"], case_sensitive=False),
    required=True,
    help="The source's format.",
)
@click.option("--include-columns", default=None, help="Only these columns get fields: a,b.")
@click.option("--exclude-columns", default=None, help="Every column but these gets fields.")
@click.option(
    "--indexing-mode",
    "indexing_modes",
    multiple=True,
    help="COLUMN=MODE (repeatable): string, text, ip or json.",
)
@click.option(
    "--fastfields-mode",
    type=click.Choice(["HYBRID", "DISABLED", "PARQUET_ONLY"], case_sensitive=False),
    default="HYBRID",
    show_default=True,
)
@click.option("--target-input-size", default=None, help="Most source bytes per split (2G).")
@click.option("--writer-heap-size", default=None, help="Tantivy writer heap per split (64M).")
@click.option(
    "--from-version",
    type=click.IntRange(min=0),
    default=None,
    help="Delta version (Iceberg: snapshot id).",
)
@click.option("--where", default=None, help="Condition on partition columns: p = 'a'.")
@click.option("--dry-run", is_flag=True, help="Plan only; write nothing.")
@click.option(
    "--poll",
    "poll_seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Keep syncing: a cycle every N seconds, skipped when the source did not change "
    "(WITH STREAMING POLL INTERVAL); Ctrl-C stops. Prints a result per sync.",
)
@click.option(
    "--max-cycles",
    type=click.IntRange(min=1),
    default=None,
    help="With --poll: stop after this many cycles.",
)
@common_options
@admin_command
def build_command(
    cmd: CommandContext,
    source: str,
    table: str,
    source_format: str,
    include_columns: str | None,
    exclude_columns: str | None,
    indexing_modes: tuple[str, ...],
    fastfields_mode: str,
    target_input_size: str | None,
    writer_heap_size: str | None,
    from_version: int | None,
    where: str | None,
    dry_run: bool,
    poll_seconds: float | None,
    max_cycles: int | None,
) -> None:
    """Create or sync the companion INDEX of the table at SOURCE (a path, or an Iceberg
    table's [catalog.]namespace.table); with --poll, keep it in sync."""
    from indextables.search import build_companion

    sizes: dict[str, Any] = {}
    target = _size(target_input_size, "--target-input-size")
    heap = _size(writer_heap_size, "--writer-heap-size")
    if target is not None:
        sizes["target_input_size"] = target
    if heap is not None:
        sizes["writer_heap_size"] = heap
    if max_cycles is not None and poll_seconds is None:
        raise UsageError("--max-cycles applies with --poll only")
    if poll_seconds is not None and dry_run:
        raise UsageError("--poll and --dry-run cannot both be given")
    settings: dict[str, Any] = {
        "source_format": source_format.lower(),
        "include_columns": _names(include_columns, "--include-columns"),
        "exclude_columns": _names(exclude_columns, "--exclude-columns"),
        "indexing_modes": _modes(indexing_modes),
        "fast_field_mode": fastfields_mode.upper(),
        "from_version": from_version,
        "where": where,
        "options": search_options(cmd.storage_options),
        **sizes,
    }
    if poll_seconds is not None:
        _poll(cmd, source, table, settings, poll_seconds, max_cycles)
        return
    with cmd.progress.phase("indexing source files into splits") as phase:
        result = build_companion(
            source,
            table,
            dry_run=dry_run,
            progress=lambda done, total: phase.update(done, total),
            **settings,
        )
    cmd.output.document(result.as_dict(), title=f"companion build of {table}")


def _poll(
    cmd: CommandContext,
    source: str,
    table: str,
    settings: dict[str, Any],
    poll_seconds: float,
    max_cycles: int | None,
) -> None:
    """Sync whenever the source changes; one result document per sync; Ctrl-C stops."""
    import threading

    from indextables.search import sync_companion_forever

    stop = threading.Event()

    def show(cycle: Any) -> None:
        if cycle.result is not None:
            title = f"companion sync {cycle.number} of {table}"
            cmd.output.document(cycle.result.as_dict(), title=title)

    try:
        sync_companion_forever(
            source,
            table,
            poll_seconds=poll_seconds,
            max_cycles=max_cycles,
            stop=stop,
            on_cycle=show,
            **settings,
        )
    except KeyboardInterrupt:
        stop.set()  # Ctrl-C ends the loop; what the syncs committed stays


@companion_group.command("status")
@click.argument("table", metavar="INDEX")
@common_options
@admin_command
def status_command(cmd: CommandContext, table: str) -> None:
    """A companion INDEX's source, settings and what a sync would do now."""
    from indextables.search import build_companion, open_table
    from indextables.search.companion.sync import companion_config

    options = search_options(cmd.storage_options)
    with cmd.progress.phase("reading the index"):
        index = open_table(table, options=options)
    config = companion_config(index._view.configuration)
    if config is None:
        raise UsageError(f"{table} is an IndexTables table, not a companion index")
    source, source_format = config.get("sourceTablePath", ""), config.get("sourceFormat", "")
    with cmd.progress.phase("listing the source"):
        plan = build_companion(
            source, table, source_format=source_format, dry_run=True, options=options
        )
    cmd.output.document(
        {
            "table_path": table,
            "version": index.version,
            "source_path": source,
            "source_format": source_format,
            "last_synced_version": _int(config.get("lastSyncedVersion")),
            "source_version": plan.source_version,
            "fast_field_mode": config.get("fastFieldMode"),
            "splits": len(index.files),
            "files_to_index": plan.parquet_files_indexed,
            "splits_to_invalidate": plan.splits_invalidated,
            "up_to_date": plan.parquet_files_indexed == 0 and plan.splits_invalidated == 0,
        },
        title=f"companion status of {table}",
    )


def _int(text: str | None) -> int | None:
    return None if text is None else int(text)
