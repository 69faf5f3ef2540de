"""Polars predicates as the engine's SQL conditions: the exact part of a filter, no more.

:func:`predicate_where` reads a Polars expression through its JSON form
(``expr.meta.serialize(format="json")``, the tree Polars hands an IO source
after its own rewrites) and says, as a ``where`` condition, what the engine
can answer with Polars' answer: the same rows, under the same three-valued
logic (a null result drops the row in both). Polars and the engine agree on:

- comparisons (``== != < <= > >=``, either side a literal) of integer, float
  (NaN equal to itself and above every number, ``-0.0 == 0.0``, a ``Float32``
  literal compared as the double it is), decimal, string (byte order), boolean,
  date and timestamp columns (an instant for a zoned timestamp, the wall clock
  for a naive one) with a literal of the column's kind;
- ``is_between``, ``is_in`` of literals (no null, no NaN), ``is_null`` and
  ``is_not_null``, a boolean column alone;
- ``str.starts_with``, ``str.ends_with`` and ``str.contains`` of a literal
  (a pattern without a regex metacharacter is a literal) as ``LIKE``;
- ``&`` and ``|`` of those, and ``~`` of an exact one.

Anything else (casts, arithmetic, ``is_nan``, column against column, a literal
Polars folded to NaN or infinity) stays with Polars. An ``&`` of which only some
parts translate gives those parts: a condition keeping more rows than the
predicate, flagged inexact, so Polars filters the rows the engine returns.

The engine answers ``LIKE`` on a tokenized (``text``) column by reading every
row. :func:`predicate_text_search` gives, for the ``str.contains`` of a literal
on such a column, a search over the column's term dictionary that matches every
row containing the literal (a superset: the exact test still runs on the rows it
finds). The analyzers ``default``/``simple`` cut a value at every character that
is not alphanumeric, ``whitespace`` at ASCII whitespace; both lowercase each
character on its own (no final-sigma rule: ``Σ`` is always U+03C3, ``İ`` is
``i`` and a combining dot), with Tantivy's tables
(:mod:`~indextables.search.write.segwriter.tokenize`). So a literal made of
token characters lies inside one token, and that token's lowercase form holds
the literal's lowercase form: a regex ``.*x.*`` over the terms. A literal with
other characters spans tokens: its first run of token characters ends a token
(``.*x``), its last starts one (``x.*``), and the runs between are whole tokens;
the search requires them all. This holds only where the analyzer dropped no
token of the column for its length: the caller offers the columns every split
records so (:mod:`~indextables.search.query.tokenskept`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

import pyarrow as pa

from indextables.search.schema.columntypes import (
    LONG_MAX,
    LONG_MIN,
    is_boolean,
    is_date,
    is_decimal,
    is_float32,
    is_floating,
    is_integral,
    is_string,
    is_timestamp,
    is_timestamp_ntz,
)

__all__ = ["predicate_text_search", "predicate_where"]

_OPS: Final = {"Eq": "=", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIPPED: Final = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_BETWEEN: Final = {
    "Both": (">=", "<="),
    "Left": (">=", "<"),
    "Right": (">", "<="),
    "None": (">", "<"),
}
_UNIT_MICROS: Final = {"Milliseconds": 1000, "Microseconds": 1}
_REGEX_SPECIAL: Final = re.compile(r"[\\.^$|?*+()\[\]{}#&~-]|\s")
_EPOCH_DAY: Final = dt.date(1970, 1, 1)
_EPOCH: Final = dt.datetime(1970, 1, 1)
_MAX_DEPTH: Final = 200  # an expression nested deeper stays with Polars
# A run of token characters searched by at most this many characters of it (a part of
# a run is still in the token), and at most this many runs per literal: the regexes stay
# small, the search still a superset.
_MAX_RUN_CHARS: Final = 64
_MAX_RUNS: Final = 16
_ANY: Final = "[\\s\\S]*"


class _NoValue:
    """Not a literal the engine can be given."""


_NO: Final = _NoValue()

Found = tuple[str, bool] | None


def predicate_where(predicate: Any, schema: pa.Schema) -> Found:
    """A SQL condition keeping every row ``predicate`` keeps, and whether it keeps only them.

    Returns None when no part of the predicate can be said exactly. An ``&``
    of which only some parts translate gives those parts (not exact).
    """
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:
        return None
    return _node(tree, {f.name: f.type for f in schema}, 0)


def predicate_text_search(
    predicate: Any, schema: pa.Schema, kept: Mapping[str, str]
) -> dict[str, str]:
    """Column -> a Tantivy query (``textsearch``) every row ``predicate`` keeps matches.

    Args:
        predicate: the Polars expression.
        schema: the table's columns.
        kept: lowercase text column -> its tokenizer name, for the columns whose every
            token is in the index of every split read.

    Returns the ``str.contains`` of a literal among ``predicate``'s ``&``-joined parts
    on those columns (``default``, ``simple`` and ``whitespace`` analyzers), as regexes
    over the column's terms (the module doc); nothing for the rest.
    """
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:
        return {}
    types = {f.name: f.type for f in schema}
    found: dict[str, list[str]] = {}
    for part in _conjuncts(tree, 0):
        searched = _contains_search(part, types, kept)
        if searched is not None:
            found.setdefault(searched[0], []).append(searched[1])
    return {column: " AND ".join(parts) for column, parts in found.items()}


def _conjuncts(node: Any, depth: int) -> list[Any]:
    """The parts of an ``&`` chain (the node itself when it is none)."""
    if depth > _MAX_DEPTH or not isinstance(node, dict):
        return []
    body = node.get("BinaryExpr")
    if isinstance(body, dict) and body.get("op") in ("And", "LogicalAnd"):
        return _conjuncts(body.get("left"), depth + 1) + _conjuncts(body.get("right"), depth + 1)
    return [node]


def _contains_search(
    node: Any, types: Mapping[str, pa.DataType], kept: Mapping[str, str]
) -> tuple[str, str] | None:
    """(column, query) for ``str.contains`` of a literal on a column in ``kept``."""
    body = node.get("Function") if isinstance(node, dict) else None
    if not isinstance(body, dict):
        return None
    function, inputs = body.get("function"), body.get("input")
    if not isinstance(function, dict) or not isinstance(inputs, list) or len(inputs) != 2:
        return None
    kind = function.get("StringExpr")
    if not isinstance(kind, dict) or not isinstance(kind.get("Contains"), dict):
        return None
    column = _column(inputs[0], types)
    needle = _literal(inputs[1])
    if column is None or not isinstance(needle, str) or not is_string(types[column]):
        return None
    if kind["Contains"].get("literal") is not True and _REGEX_SPECIAL.search(needle):
        return None
    tokenizer = kept.get(column.lower())
    if tokenizer is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", column):
        return None  # a name query text could not spell plainly: no search
    clauses = _needle_clauses(needle, tokenizer)
    if not clauses:
        return None
    return column, " AND ".join(f"{column}:/{c}/" for c in clauses)


def _needle_clauses(needle: str, tokenizer: str) -> list[str]:
    """Regexes (Tantivy's dialect) over whole terms that a row containing ``needle`` has
    a term matching each of (module doc); none when the analyzer is not one of these."""
    from indextables.search.write.segwriter.tokenize import analyzer_for

    analyzer = analyzer_for(tokenizer)
    if analyzer is None or analyzer.kind == "raw":
        return []
    token_char = _alphanumeric if analyzer.kind == "simple" else _not_whitespace
    runs: list[tuple[int, int]] = []  # [start, end) of each run of token characters
    start = None
    for at, char in enumerate(needle):
        if token_char(char):
            start = at if start is None else start
        elif start is not None:
            runs.append((start, at))
            start = None
    if start is not None:
        runs.append((start, len(needle)))
    clauses = []
    for first, last in runs[:_MAX_RUNS]:
        opens = first == 0  # the token may start before the needle does
        closes = last == len(needle)  # ... and go on after it
        run = needle[first:last]
        if len(run) > _MAX_RUN_CHARS:
            run = run[-_MAX_RUN_CHARS:] if opens and not closes else run[:_MAX_RUN_CHARS]
            closes = closes or not opens  # only its first characters: the token goes on
        text = _regex_text("".join(_lower(c) for c in run))
        clauses.append(f"{_ANY if opens else ''}{text}{_ANY if closes else ''}")
    return clauses


def _regex_text(text: str) -> str:
    """``text`` as a regex of itself: ASCII letters and digits as they are, every other
    character as ``\\x{..}`` (nothing the query text would read as syntax)."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in text)


def _lower(char: str) -> str:
    from indextables.search.write.segwriter._unicodetables import LOWERCASE

    return LOWERCASE.get(ord(char), char)


def _in_ranges(char: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    import bisect

    code = ord(char)
    at = bisect.bisect_right(ranges, (code, 0x10FFFF + 1)) - 1
    return at >= 0 and ranges[at][0] <= code <= ranges[at][1]


def _alphanumeric(char: str) -> bool:
    from indextables.search.write.segwriter._unicodetables import ALPHANUMERIC

    return _in_ranges(char, ALPHANUMERIC)


def _not_whitespace(char: str) -> bool:
    from indextables.search.write.segwriter._unicodetables import WHITESPACE

    return not _in_ranges(char, WHITESPACE)


def _node(node: Any, types: Mapping[str, pa.DataType], depth: int) -> Found:
    if depth > _MAX_DEPTH or not isinstance(node, dict) or len(node) != 1:
        return None
    kind, body = next(iter(node.items()))
    if kind == "BinaryExpr" and isinstance(body, dict):
        return _binary(body, types, depth + 1)
    if kind == "Function" and isinstance(body, dict):
        return _function(body, types, depth + 1)
    column = _column(node, types)
    if column is not None and is_boolean(types[column]):
        return _quoted(column), True
    return None


def _binary(body: Mapping[str, Any], types: Mapping[str, pa.DataType], depth: int) -> Found:
    op = body.get("op")
    if op in ("And", "LogicalAnd", "Or", "LogicalOr"):
        left = _node(body.get("left"), types, depth)
        right = _node(body.get("right"), types, depth)
        if op in ("And", "LogicalAnd"):
            if left is None or right is None:
                found = left or right  # one side narrows alone; Polars applies both
                return None if found is None else (found[0], False)
            return f"({left[0]}) AND ({right[0]})", left[1] and right[1]
        if left is None or right is None:
            return None
        return f"({left[0]}) OR ({right[0]})", left[1] and right[1]
    if op not in _OPS:
        return None
    sql = _OPS[op]
    column, other = _column(body.get("left"), types), body.get("right")
    if column is None:
        column, other, sql = _column(body.get("right"), types), body.get("left"), _FLIPPED[sql]
    if column is None:
        return None
    text = _sql_value(_literal(other), types[column])
    return (f"{_quoted(column)} {sql} {text}", True) if text is not None else None


def _function(body: Mapping[str, Any], types: Mapping[str, pa.DataType], depth: int) -> Found:
    function, inputs = body.get("function"), body.get("input")
    if not isinstance(function, dict) or not isinstance(inputs, list) or not inputs:
        return None
    if "StringExpr" in function:
        return _string_function(function["StringExpr"], inputs, types)
    boolean = function.get("Boolean")
    if boolean == "Not" and len(inputs) == 1:
        inner = _node(inputs[0], types, depth)
        return (f"NOT ({inner[0]})", True) if inner is not None and inner[1] else None
    column = _column(inputs[0], types)
    if column is None:
        return None
    if boolean in ("IsNull", "IsNotNull") and len(inputs) == 1:
        return f"{_quoted(column)} IS {'NOT ' if boolean == 'IsNotNull' else ''}NULL", True
    if isinstance(boolean, dict) and "IsIn" in boolean and len(inputs) == 2:
        texts = [_sql_value(v, types[column]) for v in _list_literal(inputs[1])]
        if not texts or any(t is None for t in texts):
            return None
        return f"{_quoted(column)} IN ({', '.join(t for t in texts if t)})", True
    if isinstance(boolean, dict) and "IsBetween" in boolean and len(inputs) == 3:
        ops = _BETWEEN.get(str((boolean["IsBetween"] or {}).get("closed")))
        low = _sql_value(_literal(inputs[1]), types[column])
        high = _sql_value(_literal(inputs[2]), types[column])
        if ops is None or low is None or high is None:
            return None
        name = _quoted(column)
        return f"({name} {ops[0]} {low}) AND ({name} {ops[1]} {high})", True
    return None


def _string_function(kind: Any, inputs: list[Any], types: Mapping[str, pa.DataType]) -> Found:
    column = _column(inputs[0], types)
    if column is None or not is_string(types[column]) or len(inputs) != 2:
        return None
    needle = _literal(inputs[1])
    if not isinstance(needle, str):
        return None
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    if kind == "StartsWith":
        pattern = f"{escaped}%"
    elif kind == "EndsWith":
        pattern = f"%{escaped}"
    elif isinstance(kind, dict) and isinstance(kind.get("Contains"), dict):
        literal = kind["Contains"].get("literal") is True
        if not literal and _REGEX_SPECIAL.search(needle):
            return None  # a regular expression: Polars answers it
        pattern = f"%{escaped}%"
    else:
        return None
    return f"{_quoted(column)} LIKE {_string(pattern)}", True


def _column(node: Any, types: Mapping[str, pa.DataType]) -> str | None:
    if isinstance(node, dict) and isinstance(node.get("Column"), str):
        name = str(node["Column"])
        return name if name in types and "`" not in name else None
    return None


def _literal(node: Any) -> Any:
    """The Python value of a scalar literal node (``_NO`` when it is not one)."""
    if not isinstance(node, dict) or not isinstance(node.get("Literal"), dict):
        return _NO
    literal = node["Literal"]
    inner = literal.get("Scalar") or literal.get("Dyn")
    if not isinstance(inner, dict) or len(inner) != 1:
        return _NO
    kind, value = next(iter(inner.items()))
    try:
        return _scalar(str(kind), value)
    except (ValueError, TypeError, OverflowError, ArithmeticError, struct.error):
        return _NO


def _scalar(kind: str, value: Any) -> Any:
    if kind == "String" and isinstance(value, str):
        return value
    if kind == "Boolean" and isinstance(value, bool):
        return value
    if (kind == "Int" or kind.startswith(("Int", "UInt"))) and type(value) is int:
        return value
    if kind in ("Float", "Float64") and type(value) in (int, float):
        return float(value)  # NaN and infinities arrive as null: not given
    if kind == "Float32" and type(value) in (int, float):
        return struct.unpack("<f", struct.pack("<f", float(value)))[0]
    if kind == "Date" and type(value) is int:
        return _EPOCH_DAY + dt.timedelta(days=value)
    if kind == "Datetime" and isinstance(value, list) and len(value) == 3:
        ticks, unit, zone = value
        if type(ticks) is not int:
            return _NO
        if unit == "Nanoseconds":
            if ticks % 1000:
                return _NO  # finer than the engine's microseconds
            micros = ticks // 1000
        elif unit in _UNIT_MICROS:
            micros = ticks * _UNIT_MICROS[unit]
        else:
            return _NO
        moment = _EPOCH + dt.timedelta(microseconds=micros)
        return moment.replace(tzinfo=dt.UTC) if zone is not None else moment
    if kind == "Decimal" and isinstance(value, list) and len(value) == 3:
        digits, _, scale = value
        if type(digits) is int and type(scale) is int and 0 <= scale <= 38:
            return Decimal(digits).scaleb(-scale)
    return _NO


def _list_literal(node: Any) -> list[Any]:
    """The values of ``is_in``'s list (Polars serializes it as Arrow IPC bytes)."""
    try:
        literal = node["Literal"]["Scalar"]["List"]
        table = pa.ipc.open_stream(bytes(literal)).read_all()
    except Exception:
        return []
    if table.num_columns != 1:
        return []
    return list(table.column(0).to_pylist())


def _sql_value(value: Any, column_type: pa.DataType) -> str | None:
    """``value`` as a literal of ``column_type``'s kind, or None when it is of another kind."""
    if value is None or isinstance(value, _NoValue):
        return None
    if is_string(column_type):
        return _string(value) if isinstance(value, str) else None
    if is_boolean(column_type):
        return ("true" if value else "false") if isinstance(value, bool) else None
    if is_integral(column_type):
        if type(value) is int and LONG_MIN <= value <= LONG_MAX:
            return str(value)
        return None
    if is_floating(column_type):
        return _float(value, float32=is_float32(column_type))
    if is_decimal(column_type):
        if isinstance(value, Decimal) and value.is_finite():
            return format(value, "f")
        return None
    if is_date(column_type):
        if type(value) is dt.date and 1 <= value.year <= 9999:
            return f"DATE '{value.isoformat()}'"
        return None
    if is_timestamp(column_type) or is_timestamp_ntz(column_type):
        return _timestamp(value, zoned=is_timestamp(column_type))
    return None


def _float(value: Any, *, float32: bool) -> str | None:
    if type(value) is int and abs(value) <= 2**53:
        value = float(value)
    if type(value) is not float or value != value or value in (float("inf"), float("-inf")):
        return None
    if float32 and struct.unpack("<f", struct.pack("<f", value))[0] != value:
        return None  # Polars rounds the literal to the column's 32 bits; say that value only
    return repr(value)


def _timestamp(value: Any, *, zoned: bool) -> str | None:
    if not isinstance(value, dt.datetime) or (value.tzinfo is not None) != zoned:
        return None
    if zoned:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    if not 1 <= value.year <= 9999:
        return None
    text = value.isoformat(sep=" ", timespec="microseconds")
    return f"'{text}Z'" if zoned else f"TIMESTAMP_NTZ '{text}'"


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _quoted(column: str) -> str:
    return f"`{column}`"
