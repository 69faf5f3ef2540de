"""Commands that change a table: checkpoint, compact, purge, truncate-time-travel,
drop-partitions, delete, merge-splits, repair, validate, gc."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import click

from indextables.admin import api, views
from indextables.admin.commands_inspect import FILE_COLUMNS
from indextables.admin.context import (
    CommandContext,
    admin_command,
    common_options,
    confirm_destructive,
    needs_confirmation,
    table_argument,
)
from indextables.admin.errors import ValidationFailedError
from indextables.admin.options import parse_duration
from indextables.admin.output import JsonObject
from indextables.protocol.errors import RetentionTooShortError

if TYPE_CHECKING:
    from indextables.avrostate import GcReport

__all__ = [
    "checkpoint_command",
    "compact_command",
    "delete_command",
    "drop_partitions_command",
    "gc_command",
    "merge_splits_command",
    "purge_command",
    "repair_command",
    "truncate_time_travel_command",
    "validate_command",
]

_TABLE = table_argument()
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
    with cmd.progress.phase("writing state"):
        result = api.checkpoint(table, storage_options=cmd.storage_options)
    cmd.output.document(views.record(result), title=f"checkpoint of {table}")


@click.command("compact")
@_TABLE
@common_options
@admin_command
def compact_command(cmd: CommandContext, table: str) -> None:
    """Rewrite the state: all live entries, sorted by partition, no tombstones."""
    with cmd.progress.phase("compacting state"):
        result = api.compact(
            table, storage_options=cmd.storage_options, progress=cmd.progress.callback()
        )
    cmd.output.document(views.record(result), title=f"compaction of {table}")


@contextlib.contextmanager
def _cli_retention_hint() -> Iterator[None]:
    """The engine's retention refusal, saying how this command line lifts it (``-S``)."""
    try:
        yield
    except RetentionTooShortError as error:
        raise RetentionTooShortError(
            f"{error}; with this command line: add "
            "-S spark.indextables.purge.retentionCheckEnabled=false"
        ) from None


@click.command("purge")
@_TABLE
@click.option(
    "--older-than",
    default="7d",
    show_default=True,
    help="Orphaned splits younger than this are kept (at least 24h).",
)
@click.option(
    "--log-retention",
    default="30d",
    show_default=True,
    help="Version files younger than this are kept (older ones only when a state covers them).",
)
@_DRY_RUN
@_YES
@common_options
@admin_command
def purge_command(
    cmd: CommandContext, table: str, older_than: str, log_retention: str, dry_run: bool
) -> None:
    """Delete orphaned split files, old version files, old states and manifests."""
    split_age, log_age = parse_duration(older_than), parse_duration(log_retention)

    def run(dry: bool) -> api.PurgeResult:
        with cmd.progress.phase("planning purge" if dry else "purging"), _cli_retention_hint():
            return api.purge(
                table,
                older_than=split_age,
                log_retention=log_age,
                dry_run=dry,
                storage_options=cmd.storage_options,
                progress=cmd.progress.callback(),
            )

    def plan() -> tuple[str, ...]:
        with cmd.progress.phase("listing what purge deletes"), _cli_retention_hint():
            try:
                return api.purge_plan(
                    table,
                    older_than=split_age,
                    log_retention=log_age,
                    storage_options=cmd.storage_options,
                )
            except RetentionTooShortError:
                if dry_run:  # the report says a real run is refused: it would delete nothing
                    return ()
                raise

    _delete_or_plan(
        cmd,
        dry_run=dry_run,
        title=f"purge of {table}",
        report=lambda dry: views.record(run(dry)),
        plan=plan,
        question=lambda count: f"Purge deletes {count} object(s) of {table}",
    )


@click.command("truncate-time-travel")
@_TABLE
@_DRY_RUN
@_YES
@common_options
@admin_command
def truncate_time_travel_command(cmd: CommandContext, table: str, dry_run: bool) -> None:
    """Delete every version file, checkpoint and state older than the current version."""

    def run(dry: bool) -> api.TruncateResult:
        with cmd.progress.phase("planning truncation" if dry else "truncating history"):
            return api.truncate_time_travel(
                table,
                dry_run=dry,
                storage_options=cmd.storage_options,
                progress=cmd.progress.callback(),
            )

    def plan() -> tuple[str, ...]:
        with cmd.progress.phase("listing what truncation deletes"):
            return api.truncate_time_travel_plan(table, storage_options=cmd.storage_options)

    _delete_or_plan(
        cmd,
        dry_run=dry_run,
        title=f"truncate time travel of {table}",
        report=lambda dry: views.record(run(dry)),
        plan=plan,
        question=lambda count: (
            f"Truncation deletes {count} object(s) of {table}; "
            "time travel to older versions is then impossible"
        ),
    )


@click.command("drop-partitions")
@_TABLE
@click.option("--where", "where", required=True, help="Partition predicate (required).")
@_DRY_RUN
@_YES
@common_options
@admin_command
def drop_partitions_command(cmd: CommandContext, table: str, where: str, dry_run: bool) -> None:
    """Remove every file of the matching partitions (split files stay until purge)."""
    if dry_run or needs_confirmation(cmd):
        with cmd.progress.phase("finding partitions"):
            plan = api.drop_partitions_plan(table, where=where, storage_options=cmd.storage_options)
        if dry_run:
            cmd.output.document(
                views.drop_plan_document(plan, where=where),
                title=f"drop partitions of {table} (dry run)",
                columns={"files": FILE_COLUMNS},
            )
            return
        confirm_destructive(
            cmd,
            f"Dropping removes {len(plan.files)} file(s) in {len(plan.partitions)} "
            f"partition(s) from {table}",
        )
    with cmd.progress.phase("dropping partitions"):
        result = api.drop_partitions(table, where=where, storage_options=cmd.storage_options)
    cmd.output.document(views.record(result), title=f"drop partitions of {table}")


@click.command("delete")
@_TABLE
@click.option("--where", "where", default=None, help="SQL condition on the rows to delete.")
@click.option("--query", "query", default=None, help="Tantivy query the rows to delete match.")
@click.option(
    "--dry-run", is_flag=True, help="Count the rows and splits a delete takes; change nothing."
)
@_YES
@common_options
@admin_command
def delete_command(
    cmd: CommandContext, table: str, where: str | None, query: str | None, dry_run: bool
) -> None:
    """Delete the rows matching --where and/or --query (Tantivy delete bitsets, no re-index)."""
    from indextables.admin.commands_search import search_options
    from indextables.search import delete_rows

    if where is None and query is None:
        raise click.UsageError("delete needs --where or --query (or both)")
    options = search_options(cmd.storage_options)
    if dry_run or needs_confirmation(cmd):
        with cmd.progress.phase("finding rows"):
            plan = delete_rows(table, where=where, query=query, options=options, dry_run=True)
        if dry_run:
            cmd.output.document(views.record(plan), title=f"delete from {table} (dry run)")
            return
        confirm_destructive(
            cmd,
            f"Deleting removes {plan.rows_deleted} row(s) in {plan.splits_changed} split(s) "
            f"of {table}",
        )
    with cmd.progress.phase("deleting rows"):
        result = delete_rows(table, where=where, query=query, options=options)
    cmd.output.document(views.record(result), title=f"delete from {table}")


def _target_size(_ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    from indextables.search.errors import OptionError
    from indextables.search.options import parse_size

    if value is None:
        return None
    try:
        return parse_size("--target-size", value)
    except OptionError as error:
        raise click.BadParameter(str(error), param=param) from None


@click.command("merge-splits")
@_TABLE
@click.option("--where", "where", default=None, help="Partition predicate: merge only those.")
@click.option(
    "--target-size",
    "target_size",
    default=None,
    callback=_target_size,
    help="Merged splits' size bound (e.g. 512M, 4G; default 1G).",
)
@click.option(
    "--purge-deletes",
    is_flag=True,
    help="Also rewrite every split holding deleted rows, so their bytes leave the live splits.",
)
@click.option(
    "--min-deleted-fraction",
    "min_deleted_fraction",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="With --purge-deletes: only splits whose deleted rows are at least this share.",
)
@common_options
@admin_command
def merge_splits_command(
    cmd: CommandContext,
    table: str,
    where: str | None,
    target_size: int | None,
    purge_deletes: bool,
    min_deleted_fraction: float | None,
) -> None:
    """Bin-pack small splits into bigger ones (MERGE SPLITS), in one commit."""
    from indextables.admin.commands_search import search_options
    from indextables.search import merge_splits

    if min_deleted_fraction is not None and not purge_deletes:
        raise click.UsageError("--min-deleted-fraction needs --purge-deletes")
    with cmd.progress.phase("merging splits"):
        result = merge_splits(
            table,
            where=where,
            target_size=target_size,
            purge_deletes=purge_deletes,
            min_deleted_fraction=min_deleted_fraction,
            options=search_options(cmd.storage_options),
        )
    cmd.output.document(views.record(result), title=f"merge splits of {table}")


def _non_empty_destination(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("must not be empty (give a path or URI)", param=param)
    return value


@click.command("repair")
@table_argument("source", "SRC")
@click.option(
    "--to",
    "destination",
    required=True,
    metavar="DST",
    callback=_non_empty_destination,
    help="Where to write.",
)
@common_options
@admin_command
def repair_command(cmd: CommandContext, source: str, destination: str) -> None:
    """Write a clean log for SRC at DST, keeping only splits that exist."""
    with cmd.progress.phase("checking splits and writing the new log"):
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
    with cmd.progress.phase("validating"):
        result = api.validate(
            table, storage_options=cmd.storage_options, progress=cmd.progress.callback()
        )
    cmd.output.document(views.validate_document(result), title=f"validation of {table}")
    if not result.ok:
        raise ValidationFailedError(
            f"{table}: {len(result.problems)} invariant(s) failed",
            findings=len(result.problems),
        )


@click.command("gc")
@_TABLE
@click.option(
    "--retention", default="7d", show_default=True, help="Old states younger than this are kept."
)
@click.option(
    "--keep-versions",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Old states always kept besides the current one.",
)
@click.option(
    "--min-manifest-age",
    default="1h",
    show_default=True,
    help="Unreferenced manifests younger than this are kept.",
)
@_DRY_RUN
@_YES
@common_options
@admin_command
def gc_command(
    cmd: CommandContext,
    table: str,
    retention: str,
    keep_versions: int,
    min_manifest_age: str,
    dry_run: bool,
) -> None:
    """Delete expired old states and manifests no kept state references."""
    state_age, manifest_age = parse_duration(retention), parse_duration(min_manifest_age)

    def run(dry: bool) -> GcReport:
        with cmd.progress.phase("collecting garbage"):
            return api.gc(
                table,
                retention=state_age,
                keep_versions=keep_versions,
                min_manifest_age=manifest_age,
                dry_run=dry,
                storage_options=cmd.storage_options,
                progress=cmd.progress.callback(),
            )

    def plan() -> tuple[str, ...]:
        with cmd.progress.phase("listing what gc deletes"):
            return api.gc_plan(
                table,
                retention=state_age,
                keep_versions=keep_versions,
                min_manifest_age=manifest_age,
                storage_options=cmd.storage_options,
            )

    _delete_or_plan(
        cmd,
        dry_run=dry_run,
        title=f"gc of {table}",
        report=lambda dry: views.gc_document(table, run(dry), dry_run=dry),
        plan=plan,
        question=lambda count: f"GC deletes {count} object(s) of {table}",
    )


def _delete_or_plan(
    cmd: CommandContext,
    *,
    dry_run: bool,
    title: str,
    report: Callable[[bool], JsonObject],
    plan: Callable[[], tuple[str, ...]],
    question: Callable[[int], str],
) -> None:
    """The flow every deleting command shares: a dry run, or a confirmed real run.

    Args:
        cmd: the command's context.
        dry_run: show the dry-run report and the exact paths; delete nothing.
        title: the caption of the report (`` (dry run)`` is appended for a dry run).
        report: runs the command (``True`` for a dry run) and returns its document.
        plan: lists the paths the real run would delete.
        question: the confirmation prompt, given how many objects would go.
    """
    if dry_run:
        document = {**report(True), "would_delete": list(plan())}
        cmd.output.document(document, title=f"{title} (dry run)")
        return
    if needs_confirmation(cmd):
        # Planning is a listing pass: only pay for it when a person will see the count.
        confirm_destructive(cmd, question(len(plan())))
    cmd.output.document(report(False), title=title)
