"""How commands show their results: the ``Output`` interface and its text and JSON forms.

Commands never print. Each builds one JSON-compatible document and hands it
to an :class:`Output`; :class:`JsonOutput` writes it verbatim (the stable,
documented form for scripts) and :class:`TextOutput` lays the same data out
as rich tables, so the two can never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol, TextIO, TypeAlias

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = [
    "JsonObject",
    "JsonValue",
    "JsonOutput",
    "Output",
    "OutputFormat",
    "RedactingOutput",
    "TextOutput",
    "make_output",
]

JsonValue: TypeAlias = (
    bool | int | float | str | Sequence["JsonValue"] | Mapping[str, "JsonValue"] | None
)
JsonObject: TypeAlias = Mapping[str, JsonValue]
OutputFormat = Literal["text", "json"]

# Text cells longer than this are cut (the JSON form always has the whole value).
_MAX_CELL = 120
# Width used when stdout is not a terminal (files, pipes, tests): wide enough
# that tables of paths stay readable without wrapping every cell.
_PIPE_WIDTH = 160


class Output(Protocol):
    """Where a command's result and its error go."""

    def document(
        self,
        data: JsonObject | Sequence[JsonObject],
        *,
        title: str,
        columns: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Show a command's result: one object (a record) or a list of records.

        Args:
            data: the JSON-compatible result.
            title: a caption for the text form.
            columns: for the text form, the columns to show of each list of
                records, by its key (``""`` for a top-level list); lists not
                named show every scalar key. JSON always has every key.
        """
        ...

    def error(self, message: str, *, kind: str, exit_code: int) -> None:
        """Report the error that ended the command (already redacted)."""
        ...


class JsonOutput:
    """Writes each document as indented JSON on stdout, errors as JSON on stderr."""

    def __init__(self, stdout: TextIO, stderr: TextIO) -> None:
        """Write to the given streams."""
        self._stdout = stdout
        self._stderr = stderr

    def document(
        self,
        data: JsonObject | Sequence[JsonObject],
        *,
        title: str,
        columns: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Write ``data`` as one JSON document (``title``/``columns`` are for text only)."""
        self._stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        self._stdout.flush()

    def error(self, message: str, *, kind: str, exit_code: int) -> None:
        """Write ``{"error": {...}}`` on stderr."""
        payload = {"error": {"type": kind, "message": message, "exit_code": exit_code}}
        self._stderr.write(json.dumps(payload, ensure_ascii=False) + "\n")
        self._stderr.flush()


class TextOutput:
    """Lays documents out as rich tables on stdout; errors go to stderr."""

    def __init__(self, stdout: TextIO, stderr: TextIO) -> None:
        """Write to the given streams (colours only on a terminal)."""
        self._console = _console(stdout)
        self._err_console = _console(stderr)

    def document(
        self,
        data: JsonObject | Sequence[JsonObject],
        *,
        title: str,
        columns: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Print a record as a property/value table, a list of records as a table.

        Lists of records nested in a record follow as tables of their own.
        """
        shown = columns or {}
        if isinstance(data, Mapping):
            self._record(data, title=title, columns=shown)
        else:
            self._console.print(_rows_table(data, title=title, columns=shown.get("")))

    def error(self, message: str, *, kind: str, exit_code: int) -> None:
        """Print ``error: <message>`` on stderr."""
        self._err_console.print(Text(f"error: {message}", style="bold red"))

    def _record(
        self, data: JsonObject, *, title: str, columns: Mapping[str, Sequence[str]]
    ) -> None:
        table = Table(title=title, title_justify="left", show_header=True)
        table.add_column("property", no_wrap=True)
        table.add_column("value", overflow="fold")
        nested: list[tuple[str, Sequence[JsonObject]]] = []
        for key, value in data.items():
            if _is_record_list(value) and value:
                nested.append((key, value))  # type: ignore[arg-type]
            elif _is_long_scalar_list(value):
                # Paths to delete and the like: one per row, never cut short.
                nested.append((key, [{key: item} for item in value]))  # type: ignore[union-attr]
            else:
                table.add_row(Text(key), Text(_cell(value)))
        self._console.print(table)
        for key, rows in nested:
            self._console.print(_rows_table(rows, title=key, columns=columns.get(key)))


class RedactingOutput:
    """Passes documents and errors on with every string scrubbed by ``scrub``.

    The command line wraps its output in one, so a credential that reaches a
    result (say a URI with user info echoed back as ``table_path``) is never
    printed.
    """

    def __init__(self, inner: Output, scrub: Callable[[str], str]) -> None:
        """Wrap ``inner``; ``scrub`` maps a string to its printable form."""
        self._inner = inner
        self._scrub = scrub

    def document(
        self,
        data: JsonObject | Sequence[JsonObject],
        *,
        title: str,
        columns: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Scrub every string of ``data`` (and the title), then show it."""
        clean = self._clean(data)
        self._inner.document(clean, title=self._scrub(title), columns=columns)  # type: ignore[arg-type]

    def error(self, message: str, *, kind: str, exit_code: int) -> None:
        """Scrub the message, then report it."""
        self._inner.error(self._scrub(message), kind=kind, exit_code=exit_code)

    def _clean(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self._scrub(value)
        if isinstance(value, Mapping):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, Sequence):
            return [self._clean(item) for item in value]
        return value


def make_output(kind: OutputFormat, *, stdout: TextIO, stderr: TextIO) -> Output:
    """Return the :class:`Output` for ``--output text|json``."""
    if kind == "json":
        return JsonOutput(stdout, stderr)
    return TextOutput(stdout, stderr)


def _console(stream: TextIO) -> Console:
    interactive = stream.isatty()
    return Console(
        file=stream,
        width=None if interactive else _PIPE_WIDTH,
        highlight=False,
        markup=False,
        emoji=False,
        no_color=not interactive,
        soft_wrap=False,
    )


def _is_record_list(value: JsonValue) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(item, Mapping) for item in value)
    )


def _is_long_scalar_list(value: JsonValue) -> bool:
    """A list of strings too long for one cell (it would be cut)."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(item, str) for item in value)
        and len(", ".join(value)) > _MAX_CELL  # type: ignore[arg-type]
    )


def _rows_table(rows: Sequence[JsonObject], *, title: str, columns: Sequence[str] | None) -> Table:
    names = list(columns) if columns is not None else _scalar_keys(rows)
    table = Table(title=f"{title} ({len(rows)})", title_justify="left")
    for name in names:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(Text(_cell(row.get(name))) for name in names))
    return table


def _scalar_keys(rows: Sequence[JsonObject]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        for key, value in row.items():
            if not _is_record_list(value) or not value:
                names.setdefault(key, None)
    return list(names)


def _cell(value: JsonValue) -> str:
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, int | float):
        text = str(value)
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    else:
        text = ", ".join(_cell(item) for item in value)
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"
