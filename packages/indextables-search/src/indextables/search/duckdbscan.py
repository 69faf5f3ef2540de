"""A table in DuckDB with its filters and projection pushed into the engine.

    >>> con = table.to_duckdb(name="logs")  # doctest: +SKIP
    >>> con.sql("select count(*) from logs where level = 'ERROR'").fetchall()  # doctest: +SKIP

DuckDB scans a ``pyarrow.dataset.Dataset`` by calling its
``scanner(columns=[...], filter=<pyarrow.compute.Expression>)``: the columns the
query needs and the filters it pushes (comparisons of integer, string, decimal,
date and timestamp columns with constants, ``IN``, ``IS [NOT] NULL``, ``AND``,
``OR``; DuckDB keeps float, boolean and ``LIKE`` filters itself). The dataset here
is a ``pyarrow.dataset.InMemoryDataset`` of the table's schema whose ``scanner``
reads :meth:`SearchTable.scan`: the filter becomes ``where=`` as far as it can be
said exactly (the rest, and a filter it cannot read, gives a wider ``where`` or
none), and the scanner returned applies DuckDB's whole filter again to the rows
read, so its answer is pyarrow's over the same rows, as for any dataset.

The filter is read from its own serialization (``Expression.__reduce__``: an
Arrow record batch of the literals, and a key-value list naming the tree in
prefix order: ``call NAME`` arguments [``options I``] ``end NAME``,
``field_ref NAME``, ``literal I``), read through the Arrow C data interface so
that repeated keys keep their order.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Protocol

import pyarrow as pa
import pyarrow.dataset as ds

from indextables.search.errors import ArgumentError, QuerySyntaxError
from indextables.search.schema.columntypes import (
    LONG_MAX,
    LONG_MIN,
    is_boolean,
    is_date,
    is_decimal,
    is_integral,
    is_string,
    is_timestamp,
    is_timestamp_ntz,
)


class SearchTable(Protocol):
    """What the scan needs of :class:`indextables.search.SearchTable` (named here so this
    module, which the table imports, does not import it back)."""

    @property
    def uri(self) -> str: ...

    @property
    def schema(self) -> pa.Schema: ...

    def scan(
        self,
        query: str | None = None,
        *,
        where: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> Any: ...


__all__ = ["filter_where", "register_duckdb"]

_COMPARISONS: Final = {
    "equal": "=",
    "not_equal": "!=",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
}
_FLIPPED: Final = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_EMIT_NULL: Final = 2  # pyarrow's SetLookupOptions.null_matching_behavior
_INCONCLUSIVE: Final = 3
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_NODES: Final = 10_000  # a filter larger than this is left to pyarrow alone


def register_duckdb(table: SearchTable, *, connection: Any = None, name: str | None = None) -> Any:
    """Register ``table`` in ``connection`` (a new in-memory DuckDB connection when None)
    as the view ``name`` (the table's last path segment when it is an identifier, else
    ``indextables``); returns the connection.

    Raises:
        ArgumentError: duckdb is not installed, or ``name`` is not a non-empty string.
    """
    try:
        import duckdb  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ArgumentError("to_duckdb needs duckdb: pip install duckdb") from None
    if name is None:
        last = table.uri.rstrip("/").rsplit("/", 1)[-1]
        name = last if _IDENTIFIER.fullmatch(last) else "indextables"
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"name={name!r} must be a non-empty string")
    connection = duckdb.connect() if connection is None else connection
    connection.register(name, EngineDataset.over(table))
    return connection


class EngineDataset(ds.InMemoryDataset):  # type: ignore[misc]
    """A dataset of the table's schema whose scans are the engine's (see the module);
    pyarrow's ``to_table``, ``to_batches``, ``head`` and ``count_rows`` call ``scanner``."""

    table: Any

    @classmethod
    def over(cls, table: SearchTable) -> EngineDataset:
        dataset = cls(table.schema.empty_table())
        dataset.table = table
        return dataset

    def scanner(
        self, columns: Sequence[str] | None = None, filter: Any = None, **kwargs: Any
    ) -> ds.Scanner:
        schema: pa.Schema = self.table.schema
        wanted = list(schema.names) if columns is None else list(columns)
        read_filter = filter_where(filter, schema) if filter is not None else None
        read = list(wanted)
        if filter is not None:
            needed = read_filter.columns if read_filter is not None else schema.names
            read += [c for c in needed if c not in read]
        if not read:  # DuckDB counts rows: read the narrowest column
            read = [schema.names[0]]
        reader = _scan(self.table, read_filter.where if read_filter else None, read)
        return ds.Scanner.from_batches(
            _batches(reader), schema=reader.schema, columns=wanted, filter=filter
        )


def _batches(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    yield from reader


def _scan(table: Any, where: str | None, columns: list[str]) -> pa.RecordBatchReader:
    if where is not None:
        try:
            reader: pa.RecordBatchReader = table.scan(None, where=where, columns=columns)
            return reader
        except QuerySyntaxError:
            pass  # a condition the evaluator cannot answer: pyarrow filters alone
    reader = table.scan(None, columns=columns)
    return reader


@dataclass(frozen=True)
class ReadFilter:
    """What a pyarrow filter becomes: ``where`` (None: nothing the engine can say),
    whether it keeps exactly the filter's rows, and the columns the filter names."""

    where: str | None
    exact: bool
    columns: tuple[str, ...]


def filter_where(expression: Any, schema: pa.Schema) -> ReadFilter | None:
    """The engine's ``where`` for a ``pyarrow.compute.Expression``: every row the
    expression keeps, exactly them when ``exact``. None: the expression could not be read
    (then its columns are unknown too)."""
    try:
        entries, literals = _serialized(expression)
    except Exception:
        return None
    if len(entries) > _MAX_NODES:
        return None
    parser = _Parser(entries, literals, {f.name: f.type for f in schema})
    try:
        found = parser.node()
    except (_Unreadable, IndexError, ValueError, TypeError, RecursionError):
        return None
    if parser.at != len(entries):
        return None
    columns = tuple(dict.fromkeys(parser.columns))
    if any(c not in schema.names for c in columns):
        return None
    sql = found[1] if found[0] == "sql" else None
    if sql is None:
        return ReadFilter(None, False, columns)
    return ReadFilter(sql[0], sql[1], columns)


class _Unreadable(Exception):
    """The serialized tree is not of the form this module reads."""


class _Parser:
    def __init__(
        self, entries: list[tuple[str, str]], literals: pa.RecordBatch, types: dict[str, Any]
    ) -> None:
        self.entries, self.literals, self.types = entries, literals, types
        self.at = 0
        self.columns: list[str] = []
        self.plain_in: dict[str, tuple[str, str]] = {}

    def take(self) -> tuple[str, str]:
        entry = self.entries[self.at]
        self.at += 1
        return entry

    def node(self) -> Any:
        """``(kind, payload)``: ``("field", name)``, ``("literal", scalar)`` or
        ``("sql", (text, exact) | None)`` for a call."""
        key, value = self.take()
        if key == "field_ref":
            self.columns.append(value)
            return ("field", value)
        if key == "literal":
            return ("literal", self.literals.column(int(value))[0])
        if key != "call":
            raise _Unreadable(key)
        arguments = []
        options = None
        while True:
            key, inner = self.entries[self.at]
            if key == "end":
                self.at += 1
                if inner != value:
                    raise _Unreadable(inner)
                break
            if key == "options":
                self.at += 1
                options = self.literals.column(int(inner))[0]
                continue
            arguments.append(self.node())
        return ("sql", self.call(value, arguments, options))

    def call(self, function: str, arguments: list[Any], options: Any) -> tuple[str, bool] | None:
        sqls = [a[1] if a[0] == "sql" else _NOT_SQL for a in arguments]
        if function in ("and_kleene", "and") and len(arguments) == 2:
            left, right = sqls
            if left in (None, _NOT_SQL) or right in (None, _NOT_SQL):
                found = next((s for s in sqls if s not in (None, _NOT_SQL)), None)
                return None if found is None else (found[0], False)
            return f"({left[0]}) AND ({right[0]})", left[1] and right[1]
        if function in ("or_kleene", "or") and len(arguments) == 2:
            left, right = sqls
            if left in (None, _NOT_SQL) or right in (None, _NOT_SQL):
                return None
            return f"({left[0]}) OR ({right[0]})", left[1] and right[1]
        if function == "invert" and len(arguments) == 1:
            inner = sqls[0]
            if inner in (None, _NOT_SQL) or not inner[1]:
                return None
            return f"NOT ({inner[0]})", True
        if function in _COMPARISONS and len(arguments) == 2:
            op = _COMPARISONS[function]
            (left_kind, left), (right_kind, right) = arguments
            if left_kind == "literal" and right_kind == "field":
                left_kind, left, right_kind, right, op = (
                    "field",
                    right,
                    "literal",
                    left,
                    _FLIPPED[op],
                )
            if left_kind != "field" or right_kind != "literal":
                return None
            text = _sql_value(right, self.types.get(left))
            return None if text is None else (f"{_quoted(left)} {op} {text}", True)
        if function in ("is_null", "is_valid") and len(arguments) == 1:
            kind, column = arguments[0]
            if kind != "field":
                return None
            return f"{_quoted(column)} IS {'NOT ' if function == 'is_valid' else ''}NULL", True
        if function == "is_in" and len(arguments) == 1:
            return self.is_in(arguments[0], options)
        if function == "if_else" and len(arguments) == 3:
            return self.if_valid(arguments, sqls)
        return None

    def is_in(self, argument: Any, options: Any) -> tuple[str, bool] | None:
        kind, column = argument
        if kind != "field" or options is None:
            return None
        values = options.get("value_set") if isinstance(options, pa.StructScalar) else None
        if values is None or not values.is_valid:
            return None
        texts = [_sql_value(v, self.types.get(column)) for v in values.values]
        if not texts or any(t is None for t in texts):
            return None
        # Without a null in the set, a non-null value is in it or not under every
        # null-matching behaviour, as in SQL; a null value gives null (EMIT_NULL,
        # INCONCLUSIVE), as SQL's IN does, or false (MATCH, SKIP), which SQL says by
        # IS NOT NULL (the two differ under a NOT).
        plain = f"{_quoted(column)} IN ({', '.join(t for t in texts if t)})"
        behaviour = options.get("null_matching_behavior")
        if behaviour is not None and behaviour.as_py() in (_EMIT_NULL, _INCONCLUSIVE):
            return plain, True
        guarded = f"({_quoted(column)} IS NOT NULL) AND ({plain})"
        self.plain_in[guarded] = (column, plain)
        return guarded, True

    def if_valid(self, arguments: list[Any], sqls: list[Any]) -> tuple[str, bool] | None:
        """DuckDB's ``IN``: ``if_else(is_valid(x), is_in(x, ...), null)``: null for a null
        ``x``, else ``is_in``'s answer: SQL's ``x IN (...)``."""
        _, _, otherwise = arguments
        null = otherwise[0] == "literal" and not otherwise[1].is_valid
        guard, then = sqls[0], sqls[1]
        if not null or guard in (None, _NOT_SQL) or then in (None, _NOT_SQL):
            return None
        found = self.plain_in.get(then[0])
        if found is None or guard[0] != f"{_quoted(found[0])} IS NOT NULL":
            return None
        return found[1], True


_NOT_SQL: Final = ("", False)  # an argument that is a column or a literal, not a condition


def _sql_value(scalar: Any, column_type: Any) -> str | None:
    """A literal of ``column_type``'s kind (floats never: pyarrow's NaN rules are not the
    engine's)."""
    if column_type is None or not isinstance(scalar, pa.Scalar) or not scalar.is_valid:
        return None
    kind = scalar.type
    value = scalar.as_py()
    if is_string(column_type) and is_string(kind):
        return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"
    if is_integral(column_type) and pa.types.is_integer(kind):
        return str(value) if LONG_MIN <= value <= LONG_MAX else None
    if is_boolean(column_type) and is_boolean(kind):
        return "true" if value else "false"
    if is_decimal(column_type) and (is_decimal(kind) or pa.types.is_integer(kind)):
        return format(Decimal(value), "f")
    if is_date(column_type) and pa.types.is_date32(kind):
        return f"DATE '{value.isoformat()}'" if 1 <= value.year <= 9999 else None
    if (is_timestamp(column_type) or is_timestamp_ntz(column_type)) and pa.types.is_timestamp(kind):
        zoned = is_timestamp(column_type)
        if (kind.tz is not None) != zoned:
            return None
        micros = scalar.cast(pa.timestamp("us", tz=kind.tz), safe=True).as_py()
        if zoned:
            micros = micros.astimezone(dt.UTC).replace(tzinfo=None)
        if not 1 <= micros.year <= 9999:
            return None
        text = micros.isoformat(sep=" ", timespec="microseconds")
        return f"'{text}Z'" if zoned else f"TIMESTAMP_NTZ '{text}'"
    return None


def _quoted(column: str) -> str:
    if "`" in column:
        raise _Unreadable(column)
    return f"`{column}`"


class _ArrowSchema(ctypes.Structure):
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ArrowSchema))


def _serialized(expression: Any) -> tuple[list[tuple[str, str]], pa.RecordBatch]:
    """The key-value entries (in order, repeated keys kept) and the literals' batch of
    ``expression``'s serialization."""
    _, (buffer,) = expression.__reduce__()
    reader = pa.ipc.open_file(buffer)
    literals = reader.get_batch(0) if reader.num_record_batches else None
    if literals is None:
        literals = pa.RecordBatch.from_pylist([], schema=reader.schema)
    exported = _ArrowSchema()
    reader.schema._export_to_c(ctypes.addressof(exported))
    try:
        return _metadata(exported.metadata), literals
    finally:
        if exported.release:
            _RELEASE(exported.release)(ctypes.byref(exported))


def _metadata(address: int | None) -> list[tuple[str, str]]:
    """The C data interface's metadata: an int32 count, then each key and value as an
    int32 length and that many bytes."""
    if not address:
        return []

    def int32(at: int) -> int:
        return int.from_bytes(ctypes.string_at(at, 4), "little", signed=True)

    count, at = int32(address), address + 4
    entries = []
    for _ in range(count):
        parts = []
        for _ in range(2):
            size = int32(at)
            parts.append(ctypes.string_at(at + 4, size).decode())
            at += 4 + size
        entries.append((parts[0], parts[1]))
    return entries
