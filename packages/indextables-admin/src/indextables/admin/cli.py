"""The ``indextables`` command line: the group, its shared options and the entry point."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from indextables.admin.commands_about import version_command
from indextables.admin.commands_companion import companion_group
from indextables.admin.commands_inspect import (
    changes_command,
    describe_command,
    files_command,
    history_command,
    indexing_command,
    schema_command,
)
from indextables.admin.commands_maintain import (
    checkpoint_command,
    compact_command,
    delete_command,
    drop_partitions_command,
    gc_command,
    merge_splits_command,
    purge_command,
    repair_command,
    truncate_time_travel_command,
    validate_command,
)
from indextables.admin.commands_search import (
    aggregate_command,
    count_command,
    search_command,
)
from indextables.admin.context import GlobalOptions, rows_options
from indextables.admin.exitcodes import ExitCode
from indextables.admin.output import JsonOutput

__all__ = ["cli", "main"]


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asked for ``--output json`` (read even when it failed to parse)."""
    for index, arg in enumerate(argv):
        if arg == "--":
            return False
        if arg in ("-o", "--output") and index + 1 < len(argv):
            if argv[index + 1] == "json":
                return True
        elif arg in ("--output=json", "-ojson", "-o=json"):
            return True
    return False


class AdminGroup(click.Group):
    """A group whose exit codes follow the admin convention.

    click exits with 2 on a usage error; here 2 means "not found", so usage
    errors exit with 1 like every other user error.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line and exit with an :class:`ExitCode`."""
        argv = list(sys.argv[1:] if args is None else args)
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            code = ExitCode.USER_ERROR if isinstance(error, click.UsageError) else error.exit_code
            if _wants_json(argv):
                kind = "UsageError" if isinstance(error, click.UsageError) else type(error).__name__
                JsonOutput(sys.stdout, sys.stderr).error(
                    error.format_message(), kind=kind, exit_code=int(code)
                )
            else:
                error.show()
        except click.Abort:
            click.echo("Aborted.", err=True)
            code = ExitCode.USER_ERROR
        else:
            code = result if isinstance(result, int) else ExitCode.OK
        if not standalone_mode:
            return int(code)
        sys.exit(int(code))


@click.group(cls=AdminGroup, context_settings={"help_option_names": ["-h", "--help"]})
@rows_options
@click.pass_context
def cli(
    ctx: click.Context,
    output_format: str | None,
    quiet: bool | None,
    verbose: bool | None,
    storage_option: tuple[str, ...],
    stats: bool | None,
) -> None:
    """Search, inspect and maintain IndexTables tables on any store, without Spark.

    TABLE is a table URI: a local path, file://, s3://bucket/prefix, az://, memory://.
    Exit codes: 0 ok, 1 user error, 2 not found, 3 conflict, 4 validation failed.
    """
    ctx.obj = GlobalOptions(
        output=output_format,
        quiet=bool(quiet),
        verbose=bool(verbose),
        storage_options=storage_option,
        stats=bool(stats),
    )


for _command in (
    search_command,
    count_command,
    aggregate_command,
    describe_command,
    files_command,
    history_command,
    changes_command,
    schema_command,
    indexing_command,
    checkpoint_command,
    compact_command,
    purge_command,
    truncate_time_travel_command,
    drop_partitions_command,
    delete_command,
    merge_splits_command,
    repair_command,
    validate_command,
    gc_command,
    version_command,
    companion_group,
):
    cli.add_command(_command)


def main() -> None:
    """Entry point of the ``indextables`` script."""
    cli.main(prog_name="indextables")
