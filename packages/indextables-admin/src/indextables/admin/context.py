"""What every command receives: its output, progress, storage options and switches.

The options shared by every command (``--output``, ``--quiet``,
``--verbose``, ``--storage-option``) may be given before the command name
(``indextables --output json describe T``) or after it; after wins.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TextIO, TypeVar, cast

import click

from indextables.admin.errors import AdminError
from indextables.admin.exitcodes import exit_code_for
from indextables.admin.options import parse_storage_options, storage_options_from_env
from indextables.admin.output import Output, OutputFormat, RedactingOutput, make_output
from indextables.admin.progress import Progress
from indextables.admin.redact import is_secret_key, redact_text
from indextables.admin.stats import write_stats
from indextables.protocol.errors import ProtocolError

if TYPE_CHECKING:
    from indextables.search.oplog import Operation

__all__ = [
    "CommandContext",
    "GlobalOptions",
    "admin_command",
    "common_options",
    "confirm_destructive",
    "needs_confirmation",
    "rows_command",
    "rows_options",
]

P = ParamSpec("P")
F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")
_LOG = logging.getLogger(__name__)


@dataclass(slots=True)
class GlobalOptions:
    """Shared options given before the command name (stored on the click context)."""

    output: str | None = None
    quiet: bool = False
    verbose: bool = False
    storage_options: tuple[str, ...] = ()
    stats: bool = False


@dataclass(slots=True)
class CommandContext:
    """Everything a command body needs; it never touches streams itself."""

    output: Output
    progress: Progress
    storage_options: dict[str, str]
    verbose: bool = False
    yes: bool = False
    interactive: bool = False
    #: ``--output`` as given: the commands that write rows (search, ...) write them
    #: to ``stdout`` themselves in this form; the others hand documents to ``output``.
    output_format: str = "text"
    stdout: TextIO = sys.stdout
    #: ``--stats``: write the operation's measurements to stderr after it.
    stats: bool = False

    @property
    def secrets(self) -> list[str]:
        """The values of every credential option, to scrub from messages."""
        return [value for key, value in self.storage_options.items() if is_secret_key(key)]


def _table_uri(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A table URI must name something: an empty one is a usage error, never the cwd."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty (give a path or URI)", param=param)
    return value


def table_argument(name: str = "table", metavar: str = "TABLE") -> Callable[[F], F]:
    """The positional table URI of a command (non-empty)."""
    return click.argument(name, metavar=metavar, callback=_table_uri)


DOCUMENT_FORMATS = ("text", "json")
ROW_FORMATS = ("text", "json", "csv")


def common_options(func: Callable[P, R]) -> Callable[P, R]:
    """Add ``--output text|json``, ``--quiet``, ``--verbose`` and ``--storage-option``."""
    return _shared_options(func, DOCUMENT_FORMATS)


def rows_options(func: Callable[P, R]) -> Callable[P, R]:
    """:func:`common_options` of a command writing rows: ``--output text|json|csv``."""
    return _shared_options(func, ROW_FORMATS)


def _shared_options(func: Callable[P, R], formats: Sequence[str]) -> Callable[P, R]:
    help_text = "text (tables, the default) or json (stable keys, for scripts)"
    if "csv" in formats:
        help_text += "; csv for the rows of search, count and aggregate"
    decorators = [
        click.option(
            "--output",
            "-o",
            "output_format",
            type=click.Choice(list(formats)),
            default=None,
            help=help_text + ".",
        ),
        click.option("--quiet", "-q", is_flag=True, default=None, help="No progress bars."),
        click.option(
            "--verbose", "-v", is_flag=True, default=None, help="Show tracebacks on errors."
        ),
        click.option(
            "--stats",
            is_flag=True,
            default=None,
            help=(
                "After the command, write what it measured to stderr (splits considered, "
                "pruned and read, rows, bytes, cache hits and misses, seconds per phase); "
                "one JSON line with --output json."
            ),
        ),
        click.option(
            "--storage-option",
            "--option",
            "-S",
            "storage_option",
            multiple=True,
            metavar="KEY=VALUE",
            help=(
                "Store option or engine setting (repeatable), e.g. region=us-east-1 or "
                "spark.indextables.checkpoint.interval=5. Values are never echoed."
            ),
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def admin_command(
    func: Callable[..., None], *, formats: Sequence[str] = DOCUMENT_FORMATS
) -> Callable[..., None]:
    """Turn a ``body(cmd: CommandContext, **params)`` into a click callback.

    Resolves the shared options, builds the :class:`CommandContext`, runs the
    body, and turns any exception into a redacted message and an exit code
    (with a traceback only under ``--verbose``). ``formats`` are the
    ``--output`` forms the command writes (csv only for rows).
    """

    @wraps(func)
    def callback(**params: Any) -> None:
        click_ctx = click.get_current_context()
        cmd = _build_context(click_ctx, params, formats)
        name = " ".join(click_ctx.command_path.split()[1:]) or click_ctx.info_name or "command"
        table = params.get("table")
        op = _start(name, table)
        try:
            with cmd.progress.session(), op.active() if op else contextlib.nullcontext():
                func(cmd, **params)
        except click.exceptions.Exit as done:
            if op is not None:
                op.set(exit_code=done.exit_code)
            _finish(cmd, op, None)
            raise
        except (click.ClickException, click.Abort) as error:
            _finish(cmd, op, error)
            raise  # click's own control flow: usage errors, a "no" at a prompt
        except Exception as error:  # every failure becomes an exit code, never a crash
            _finish(cmd, op, error)
            click_ctx.exit(_report(cmd, error, table=table))
        _finish(cmd, op, None)

    return callback


def _start(name: str, table: Any) -> Operation | None:
    """The command's operation (its INFO line and ``--stats`` figures), or None when the
    engine cannot be imported: ``indextables version`` must still run and say why (a
    bad ``INDEXTABLES_AVROSTATE_IMPL`` fails every import of the engine)."""
    try:
        from indextables.search import oplog
    except Exception:  # reported by the command itself (``version``) or by its own import
        return None
    return oplog.start(_LOG, name, uri=table if isinstance(table, str) else "-")


def _finish(cmd: CommandContext, op: Operation | None, error: BaseException | None) -> None:
    """End the command's operation (its INFO line); under ``--stats`` show its figures."""
    if op is None:
        return
    metrics = op.finish(error)
    if cmd.stats:
        secrets = cmd.secrets
        write_stats(
            sys.stderr,
            metrics,
            as_json=cmd.output_format == "json",
            scrub=lambda text: redact_text(text, secrets),
        )


def rows_command(func: Callable[..., None]) -> Callable[..., None]:
    """:func:`admin_command` for a command writing rows: ``--output text|json|csv``."""
    return admin_command(func, formats=ROW_FORMATS)


def _build_context(
    click_ctx: click.Context, params: dict[str, Any], formats: Sequence[str] = DOCUMENT_FORMATS
) -> CommandContext:
    shared = click_ctx.find_object(GlobalOptions) or GlobalOptions()
    output_format = params.pop("output_format", None) or shared.output or "text"
    if output_format not in formats:
        raise click.UsageError(
            f"--output {output_format} is not available for this command "
            f"(choose from {', '.join(formats)})"
        )
    quiet = bool(params.pop("quiet", None) or shared.quiet)
    verbose = bool(params.pop("verbose", None) or shared.verbose)
    stats = bool(params.pop("stats", None) or shared.stats)
    pairs = (*shared.storage_options, *params.pop("storage_option", ()))
    yes = bool(params.pop("yes", False))
    stdout, stderr = sys.stdout, sys.stderr
    documents = output_format if output_format in DOCUMENT_FORMATS else "text"
    output = make_output(cast(OutputFormat, documents), stdout=stdout, stderr=stderr)
    cmd = CommandContext(
        output=output,
        progress=Progress(stderr, quiet=quiet),
        storage_options={},
        verbose=verbose,
        yes=yes,
        interactive=sys.stdin.isatty(),
        output_format=output_format,
        stdout=stdout,
        stats=stats,
    )
    try:
        cmd.storage_options = {**storage_options_from_env(), **parse_storage_options(pairs)}
    except AdminError as error:
        click_ctx.exit(_report(cmd, error))
    secrets = cmd.secrets
    cmd.output = RedactingOutput(output, lambda text: redact_text(text, secrets))
    return cmd


def _names_table(message: str, table: str) -> bool:
    return table in message or os.path.abspath(table) in message


def _report(cmd: CommandContext, error: BaseException, *, table: object = None) -> int:
    code = exit_code_for(error)
    if cmd.verbose:
        text = "".join(traceback.format_exception(error))
        sys.stderr.write(redact_text(text, cmd.secrets))
    message = str(error) or type(error).__name__
    # State and manifest errors name the file inside the table only: name the table.
    if (
        isinstance(error, ProtocolError)
        and isinstance(table, str)
        and table
        and not _names_table(message, table)
    ):
        message = f"{table}: {message}"
    message = redact_text(message, cmd.secrets)
    cmd.output.error(message, kind=type(error).__name__, exit_code=int(code))
    return int(code)


def needs_confirmation(cmd: CommandContext) -> bool:
    """True when a destructive command must ask first: a terminal and no ``--yes``."""
    return cmd.interactive and not cmd.yes


def confirm_destructive(cmd: CommandContext, what: str) -> None:
    """Ask before a destructive step when a person is at the terminal.

    Skipped with ``--yes`` and when stdin is not a terminal (scripts).

    Raises:
        click.Abort: the person answered no.
    """
    if not needs_confirmation(cmd):
        return
    if not click.confirm(f"{what}. Continue?", default=False, err=True):
        raise click.Abort()
