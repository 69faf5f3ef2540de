"""A Polars IO source: ``scan_indextables(uri)`` is a LazyFrame over a table.

    >>> from indextables.search.polars import scan_indextables  # doctest: +SKIP
    >>> logs = scan_indextables("s3://bucket/logs", query="message:timeout")
    >>> logs.filter(pl.col("level") == "ERROR").select("id", "message").head(20).collect()

Polars hands the source the columns it needs, its filter (a Polars expression)
and a row limit; they go into :meth:`SearchTable.scan`:

- the columns become ``columns=`` (and the filter's columns are read too);
- the filter is always applied by Polars to each batch (so its answer is
  Polars' own), and the parts of it this module can say exactly as a SQL
  condition (comparisons of an integer or string column with a literal,
  ``is_null``/``is_not_null``, ``is_in`` of literals, ``&`` and ``|`` of
  those) also become ``where=``, which narrows the search and prunes splits;
- the row limit becomes ``limit=`` when the whole filter went into ``where``
  (else reading stops once Polars' filter has kept that many rows).

Polars is optional: this module imports it when called, and
``indextables.search`` imports without it.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from indextables.search.errors import ArgumentError, QuerySyntaxError
from indextables.search.schema.columntypes import is_integral, is_string

if TYPE_CHECKING:
    from indextables.search.searchtable import SearchTable

__all__ = ["predicate_where", "scan_indextables"]

_OPS = {"Eq": "=", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def scan_indextables(
    uri: str | SearchTable,
    *,
    version: int | None = None,
    options: Mapping[str, Any] | None = None,
    query: str | None = None,
) -> Any:
    """A ``polars.LazyFrame`` over the table at ``uri`` (its current version or ``version``).

    Args:
        uri: the table's location, or a table already opened with
            :func:`~indextables.search.open_table` (its snapshot is read;
            ``version`` and ``options`` must then be left out). Opening
            reads the log (~1-3 ms): a program asking many questions of one
            snapshot passes the opened table.
        version: time travel to this version.
        options: read options, as for :func:`~indextables.search.open_table`.
        query: a Tantivy query narrowing the rows (``message:timeout``).

    Raises:
        ArgumentError: polars is not installed, or a bad argument.
    """
    try:
        from polars.io.plugins import register_io_source
    except ImportError:
        raise ArgumentError(
            "scan_indextables needs polars: pip install polars (or indextables-search[polars])"
        ) from None

    from indextables.search.searchtable import SearchTable, open_table

    if query is not None and not isinstance(query, str):
        raise ArgumentError(f"query={query!r} must be a string")
    if isinstance(uri, SearchTable):
        if version is not None or options is not None:
            raise ArgumentError(
                "scan_indextables of an opened table takes no version= or options= "
                "(they were given to open_table)"
            )
        table = uri
    else:
        table = open_table(uri, version=version, options=options)

    def source(
        with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None
    ) -> Iterator[Any]:
        return _batches(table, query, with_columns, predicate, n_rows)

    return register_io_source(
        source, schema=_polars_schema(table), is_pure=True, explain_name=f"indextables {table.uri}"
    )


def _polars_schema(table: SearchTable) -> Any:
    """The table's Polars schema, converted once per opened table (~0.7 ms each time)."""
    found = _schemas.get(table)
    if found is None:
        import polars as pl

        found = _schemas[table] = pl.from_arrow(table.schema.empty_table()).schema
    return found


_schemas: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _batches(
    table: Any,
    query: str | None,
    with_columns: list[str] | None,
    predicate: Any,
    n_rows: int | None,
) -> Iterator[Any]:
    import polars as pl

    names = table.schema.names
    wanted = list(with_columns) if with_columns is not None else list(names)
    where = predicate_where(predicate, table.schema) if predicate is not None else None
    read = list(wanted)
    if predicate is not None:
        read += [c for c in predicate.meta.root_names() if c not in read]
    if not read:  # Polars counts rows: read the narrowest column
        read = [names[0]]
    exact = predicate is None or (where is not None and where[1])
    reader = _scan(table, query, where[0] if where else None, read, n_rows if exact else None)
    if predicate is None and read == wanted:
        # Nothing for Polars to do per batch: the scan projects and limits itself.
        for batch in reader:
            if batch.num_rows:
                yield pl.from_arrow(batch, rechunk=False)
        return
    left = n_rows
    for batch in reader:
        frame = pl.from_arrow(batch, rechunk=False)
        assert isinstance(frame, pl.DataFrame)
        if predicate is not None:
            frame = frame.filter(predicate)
        frame = frame.select(wanted)
        if left is not None:
            frame = frame.head(left)
            left -= frame.height
        if frame.height or not wanted:
            yield frame
        if left == 0:
            return


def _scan(
    table: Any, query: str | None, where: str | None, columns: list[str], limit: int | None
) -> pa.RecordBatchReader:
    if where is not None:
        try:
            reader: pa.RecordBatchReader = table.scan(
                query, where=where, columns=columns, limit=limit
            )
            return reader
        except QuerySyntaxError:
            pass  # a condition the evaluator cannot answer exactly: Polars filters alone
    return table.scan(query, columns=columns, limit=None if where is not None else limit)


def predicate_where(predicate: Any, schema: pa.Schema) -> tuple[str, bool] | None:
    """A SQL condition keeping every row ``predicate`` keeps, and whether it keeps only them.

    Returns None when no part of the predicate can be said exactly. An ``&``
    of which only some parts translate gives those parts (not exact).
    """
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:
        return None
    return _node(tree, {f.name: f.type for f in schema})


def _node(node: Any, types: Mapping[str, pa.DataType]) -> tuple[str, bool] | None:
    if not isinstance(node, dict) or len(node) != 1:
        return None
    kind, body = next(iter(node.items()))
    if kind == "BinaryExpr":
        return _binary(body, types)
    if kind == "Function":
        return _function(body, types)
    return None


def _binary(body: Any, types: Mapping[str, pa.DataType]) -> tuple[str, bool] | None:
    op = body.get("op")
    if op in ("And", "LogicalAnd"):
        left, right = _node(body.get("left"), types), _node(body.get("right"), types)
        if left is None or right is None:
            found = left or right  # one side narrows alone; Polars applies both
            return None if found is None else (found[0], False)
        return f"({left[0]}) AND ({right[0]})", left[1] and right[1]
    if op in ("Or", "LogicalOr"):
        left, right = _node(body.get("left"), types), _node(body.get("right"), types)
        if left is None or right is None:
            return None
        return f"({left[0]}) OR ({right[0]})", left[1] and right[1]
    if op not in _OPS:
        return None
    sql = _OPS[op]
    column, literal = _column(body.get("left")), _literal(body.get("right"))
    if column is None:
        column, literal, sql = _column(body.get("right")), _literal(body.get("left")), _FLIPPED[sql]
    if column is None or literal is None or column not in types or "`" in column:
        return None
    text = _sql_literal(literal, types[column])
    return (f"{_quoted(column)} {sql} {text}", True) if text is not None else None


def _function(body: Any, types: Mapping[str, pa.DataType]) -> tuple[str, bool] | None:
    function, inputs = body.get("function"), body.get("input") or []
    if not isinstance(function, dict) or "Boolean" not in function or not inputs:
        return None
    boolean = function["Boolean"]
    column = _column(inputs[0])
    if column is None or column not in types or "`" in column:
        return None
    if boolean in ("IsNull", "IsNotNull"):
        return f"{_quoted(column)} IS {'NOT ' if boolean == 'IsNotNull' else ''}NULL", True
    if isinstance(boolean, dict) and "IsIn" in boolean and len(inputs) == 2:
        values = _list_literal(inputs[1])
        texts = [_sql_literal(v, types[column]) for v in values] if values else None
        if not texts or any(t is None for t in texts):
            return None
        return f"{_quoted(column)} IN ({', '.join(t for t in texts if t)})", True
    return None


def _column(node: Any) -> str | None:
    if isinstance(node, dict) and isinstance(node.get("Column"), str):
        return str(node["Column"])
    return None


def _literal(node: Any) -> Any:
    """The Python value of a scalar literal node (None when it is not one)."""
    if not isinstance(node, dict) or not isinstance(node.get("Literal"), dict):
        return None
    literal = node["Literal"]
    inner = literal.get("Scalar") or literal.get("Dyn")
    if not isinstance(inner, dict) or len(inner) != 1:
        return None
    kind, value = next(iter(inner.items()))
    if kind == "String" and isinstance(value, str):
        return value
    if (kind == "Int" or kind.startswith(("Int", "UInt"))) and isinstance(value, int):
        return value if not isinstance(value, bool) else None
    return None


def _list_literal(node: Any) -> list[Any] | None:
    """The values of ``is_in``'s list (Polars serializes it as Arrow IPC bytes)."""
    try:
        literal = node["Literal"]["Scalar"]["List"]
        table = pa.ipc.open_stream(bytes(literal)).read_all()
    except Exception:
        return None
    values = table.column(0).to_pylist() if table.num_columns == 1 else None
    return values if values and None not in values else None


def _sql_literal(value: Any, column_type: pa.DataType) -> str | None:
    if is_string(column_type) and isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
    if is_integral(column_type) and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _quoted(column: str) -> str:
    return f"`{column}`"
