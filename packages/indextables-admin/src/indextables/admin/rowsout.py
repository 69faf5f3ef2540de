"""Rows out of a table (``search``, ``count``, ``aggregate``) as text, JSON or CSV.

JSON and CSV stream: each Arrow batch is written as it arrives, so a large
answer never sits in memory whole. JSON is one document on stdout, the
answer's description (``header``: table, version, query, ...) and then
``"rows": [...]`` and ``"num_rows"``; CSV is a header line and one line per
row (RFC 4180 quoting). Text is a table for people: at most ``TEXT_MAX_ROWS``
rows are read and laid out, and a last line says when more rows match.

Row values are never redacted (they are the table's data); the header's
strings are (the table URI may carry user info).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TextIO

import pyarrow as pa
from rich.console import Console
from rich.table import Table
from rich.text import Text

from indextables.admin.rowvalues import cell_text, json_rows

__all__ = ["RowsFormat", "TEXT_MAX_ROWS", "write_rows"]

RowsFormat = Literal["text", "json", "csv"]
#: The text form lays out at most this many rows (JSON and CSV have every row).
TEXT_MAX_ROWS = 1000
_MAX_CELL = 120
_PIPE_WIDTH = 160


def write_rows(
    stream: TextIO,
    kind: RowsFormat,
    *,
    schema: pa.Schema,
    batches: Iterable[pa.RecordBatch],
    header: Mapping[str, Any],
    title: str,
    scrub: Callable[[str], str] = str,
) -> int:
    """Write the rows of ``batches`` in form ``kind``; return how many were written.

    Args:
        stream: where to write (stdout).
        kind: ``text``, ``json`` or ``csv``.
        schema: the rows' columns (the header of an empty answer).
        batches: the rows.
        header: what the answer is (JSON keys before ``rows``); not shown in CSV.
        title: the caption of the text table.
        scrub: applied to every string of ``header`` and to ``title``.
    """
    clean = {key: _scrub(value, scrub) for key, value in header.items()}
    if kind == "json":
        return _write_json(stream, clean, schema, batches)
    if kind == "csv":
        return _write_csv(stream, schema, batches)
    return _write_text(stream, scrub(title), schema, batches)


def _scrub(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {k: _scrub(v, scrub) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, scrub) for v in value]
    return value


def _write_json(
    stream: TextIO, header: Mapping[str, Any], schema: pa.Schema, batches: Iterable[pa.RecordBatch]
) -> int:
    head = json.dumps({**header, "columns": schema.names}, indent=2, ensure_ascii=False)
    stream.write(head[:-2] + ',\n  "rows": [')  # reopen the object: rows follow
    count = 0
    for batch in batches:
        for row in json_rows(batch):
            stream.write(("\n    " if count == 0 else ",\n    ") + _json_line(row))
            count += 1
    stream.write(("\n  " if count else "") + f'],\n  "num_rows": {count}\n}}\n')
    stream.flush()
    return count


def _json_line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, allow_nan=False)


def _write_csv(stream: TextIO, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> int:
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(schema.names)
    count = 0
    for batch in batches:
        for row in json_rows(batch):
            writer.writerow([cell_text(value) for value in row.values()])
            count += 1
    stream.flush()
    return count


def _write_text(
    stream: TextIO, title: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
) -> int:
    table = Table()
    for name in schema.names:
        table.add_column(name, overflow="fold")
    count, more = 0, False
    for batch in batches:
        shown = batch.slice(0, TEXT_MAX_ROWS - count)
        for row in json_rows(shown):
            table.add_row(*(Text(_cut(cell_text(value))) for value in row.values()))
        count += shown.num_rows
        if batch.num_rows > shown.num_rows:
            more = True  # stop reading: the rest would not be shown
            break
    console = _console(stream)
    console.print(Text(f"{title} ({count}{'+' if more else ''} rows)"))
    console.print(table)
    if more:
        console.print(
            f"only the first {TEXT_MAX_ROWS} rows are shown "
            "(--limit, or --output csv|json for every row)"
        )
    return count


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"


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
