"""Every ``where`` operator on every column kind, with literals drawn from the rows.

:func:`operator_matrix` gives, for one table's rows and a seed, one condition per
(operator, column kind) pair, so a run of any seed covers all of them instead of
the random generator's share:

- operators: ``=``, ``!=``, ``<>``, ``<``, ``<=``, ``>``, ``>=`` (each with the
  column on the left and, as a second condition, on the right), ``<=>``, ``IN``,
  ``NOT IN``, ``BETWEEN``, ``NOT BETWEEN``, ``IS NULL``, ``IS NOT NULL``, ``LIKE``,
  ``NOT LIKE``;
- kinds: integers (the four widths in turn), floats (``float`` and ``double`` in
  turn), decimals, strings (exact, full-text and the partition in turn), booleans,
  dates, timestamps (``timestamp`` and ``timestamp_ntz`` in turn), binary.

The literals are values the column holds (a middle one, so that rows lie below, at
and above it), so that an operator answered as its neighbour (``>=`` as ``>``) keeps
other rows. Each condition comes with its DuckDB form (the dialect rules of
``diffcases``); the pairs docs/search.md lists as refused (``<=>``, binary columns
beyond ``IS [NOT] NULL``, ``LIKE`` on a column that is not a string) come with
``duck=None``: the engine must raise ``QuerySyntaxError``.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

COMPARISONS = ("=", "!=", "<>", "<", "<=", ">", ">=")
OPERATORS: tuple[str, ...] = (*COMPARISONS, "<=>", "IN", "NOT IN", "BETWEEN", "NOT BETWEEN")
OPERATORS += ("IS NULL", "IS NOT NULL", "LIKE", "NOT LIKE")
#: The columns of each kind (of ``diffcases.rows``); each condition takes the next in turn.
KINDS: dict[str, tuple[str, ...]] = {
    "int": ("i8", "i16", "i32", "i64"),
    "float": ("f32", "f64"),
    "decimal": ("dec",),
    "string": ("s", "t", "p"),
    "bool": ("b",),
    "date": ("day",),
    "timestamp": ("ts", "ntz"),
    "binary": ("bin",),
}
_MIRROR = {"=": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class Condition:
    """A ``where`` (Spark's dialect) and its DuckDB form, or ``duck=None`` for a refusal."""

    op: str
    kind: str
    column: str
    where: str
    duck: str | None


def _present(data: pa.Table, column: str) -> list[Any]:
    """The column's distinct non-null values, in order (NaN and infinities left out: no
    literal spells them)."""
    found = [v for v in data.column(column).to_pylist() if v is not None]
    found = [v for v in found if not (isinstance(v, float) and not math.isfinite(v))]
    if found and isinstance(found[0], str):
        return sorted(set(found), key=lambda v: v.encode())
    return sorted(set(found))


def _spark_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _duck_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def literal(kind: str, column: str, value: Any) -> tuple[str, str]:
    """``value`` of ``column`` as a (Spark, DuckDB) literal."""
    if kind == "int":
        return str(value), str(value)
    if kind == "float":
        text = repr(float(value))
        text = text if "e" in text else text + "e0"  # a double literal, any digit count
        return text, text
    if kind == "decimal":
        assert isinstance(value, Decimal)
        return str(value), str(value)
    if kind == "string":
        return _spark_string(value), _duck_string(value)
    if kind == "bool":
        return str(value).lower(), str(value).lower()
    if kind == "date":
        assert isinstance(value, dt.date)
        return f"DATE '{value.isoformat()}'", f"DATE '{value.isoformat()}'"
    assert isinstance(value, dt.datetime)
    text = value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if value.tzinfo is not None:
        return f"'{text}Z'", f"TIMESTAMPTZ '{text}+00:00'"
    return f"TIMESTAMP_NTZ '{text}'", f"TIMESTAMP '{text}'"


def _duck_column(column: str) -> str:
    return f"CAST({column} AS DOUBLE)" if column == "f32" else column


def _escaped(text: str) -> str:
    return "".join(("\\" + ch) if ch in "%_\\" else ch for ch in text)


def _like_model(pattern: str) -> re.Pattern[str]:
    """The pattern as a Python regex (``%`` any text, ``_`` one character, ``\\`` escapes):
    ``fullmatch`` is LIKE's meaning, ``match`` (a prefix) the mistake to tell apart."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.S)


def _like_pattern(values: list[str], rng: random.Random) -> str:
    """A pattern some of ``values`` match, chosen (where one exists) so that LIKE read as
    a prefix match (unanchored at the end) keeps other values: a value with one
    character as ``_``, ``%`` and a suffix, or a prefix and ``%``."""
    candidates: list[str] = []
    for value in rng.sample(values, len(values)):
        chars = [_escaped(ch) for ch in value]
        if len(chars) > 1:
            at = rng.randrange(len(chars))
            candidates.append("".join(chars[:at]) + "_" + "".join(chars[at + 1 :]))
        candidates.append("%" + "".join(chars[-2:]))
        candidates.append("".join(chars[: rng.randint(1, 3)]) + "%")
    for pattern in candidates:
        model = _like_model(pattern)
        exact = {v for v in values if model.fullmatch(v)}
        loose = {v for v in values if model.match(v)}
        if exact and exact != loose:
            return pattern
    return candidates[-1] if candidates else "%"


def operator_matrix(data: pa.Table, seed: int) -> list[Condition]:
    """One condition per (operator, kind), two per comparison (the column on each side)."""
    rng = random.Random(seed * 65_537 + 3)
    turn = {kind: rng.randrange(len(columns)) for kind, columns in KINDS.items()}
    out: list[Condition] = []
    for op in OPERATORS:
        for kind, columns in KINDS.items():
            sides = 2 if op in COMPARISONS else 1
            for side in range(sides):
                column = columns[turn[kind] % len(columns)]
                turn[kind] += 1
                out.append(_condition(data, rng, op, kind, column, mirrored=side == 1))
    return out


def _condition(
    data: pa.Table, rng: random.Random, op: str, kind: str, column: str, *, mirrored: bool
) -> Condition:
    def refused(where: str) -> Condition:
        return Condition(op, kind, column, where, None)

    if op in ("IS NULL", "IS NOT NULL"):
        text = f"{column} {op}"
        return Condition(op, kind, column, text, text)
    if kind == "binary":  # refused whatever the operator
        operand = {"IN": "('a')", "NOT IN": "('a')", "LIKE": "'a%'", "NOT LIKE": "'a%'"}
        operand |= {"BETWEEN": "'a' AND 'b'", "NOT BETWEEN": "'a' AND 'b'"}
        return refused(f"{column} {op} {operand.get(op, repr('a'))}")
    values = _present(data, column)
    assert len(values) >= 2, (column, values)
    middle = values[len(values) // 2]
    spark, duck = literal(kind, column, middle)
    duck_col = _duck_column(column)
    if op == "<=>":
        return refused(f"{column} <=> {spark}")
    if op in ("LIKE", "NOT LIKE"):
        if kind != "string":
            return refused(f"{column} {op} '1%'")
        pattern = _like_pattern(values, rng)
        return Condition(
            op,
            kind,
            column,
            f"{column} {op} {_spark_string(pattern)}",
            f"{duck_col} {op} {_duck_string(pattern)} ESCAPE '\\'",
        )
    if op in ("IN", "NOT IN"):
        chosen = [middle, *rng.sample(values, min(2, len(values)))]
        texts = [literal(kind, column, v) for v in dict.fromkeys(chosen)]
        if rng.random() < 0.25:
            texts.append(("NULL", "NULL"))
        return Condition(
            op,
            kind,
            column,
            f"{column} {op} ({', '.join(t[0] for t in texts)})",
            f"{duck_col} {op} ({', '.join(t[1] for t in texts)})",
        )
    if op in ("BETWEEN", "NOT BETWEEN"):
        low = literal(kind, column, values[len(values) // 4])
        high = literal(kind, column, middle)
        return Condition(
            op,
            kind,
            column,
            f"{column} {op} {low[0]} AND {high[0]}",
            f"{duck_col} {op} {low[1]} AND {high[1]}",
        )
    if mirrored:
        return Condition(
            op,
            kind,
            column,
            f"{spark} {_MIRROR[op]} {column}",
            f"{duck} {_MIRROR[op]} {duck_col}",
        )
    return Condition(op, kind, column, f"{column} {op} {spark}", f"{duck_col} {op} {duck}")


def covered(conditions: Sequence[Condition]) -> set[tuple[str, str]]:
    """The (operator, kind) pairs ``conditions`` hold."""
    return {(c.op, c.kind) for c in conditions}
