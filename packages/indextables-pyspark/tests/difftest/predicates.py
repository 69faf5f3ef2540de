"""Random filters as small trees, rendered to Spark SQL conditions.

Leaves are single conditions on one column (comparisons, IN, null tests,
LIKE/startswith/contains/endswith, nested field access); inner nodes are AND,
OR and NOT. Operands are drawn from the table's own values (so filters hit)
or from a hostile pool (NaN, -0.0, '', huge strings, extreme dates).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from difftest import values
from difftest.tables import STOREONLY, TYPEMAP, TablePlan

_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_FLOATING = (FloatType, DoubleType)
_COMPARISONS = ("=", "<=>", "<", "<=", ">", ">=", "!=", "<>")
# Integer operands past every integral type: a 21-digit decimal Spark compares, 2**63
# exactly, and 40-digit literals Spark refuses (a decimal past 38 digits).
OUT_OF_RANGE = (10**20, -(10**20), 2**63, -(2**63) - 1, 10**40 - 1, -(10**40 - 1))


@dataclass(frozen=True)
class Pred:
    """A filter tree: ``op`` is ``leaf`` (with ``sql``), ``and``, ``or`` or ``not``."""

    op: str
    sql: str = ""
    children: tuple[Pred, ...] = ()

    def render(self) -> str:
        if self.op == "leaf":
            return self.sql
        if self.op == "not":
            return f"NOT ({self.children[0].render()})"
        joiner = " AND " if self.op == "and" else " OR "
        return joiner.join(f"({c.render()})" for c in self.children)

    def simpler(self) -> list[Pred]:
        """Smaller filters for shrinking: each child, then trees with one child simplified."""
        out: list[Pred] = list(self.children)
        for i, child in enumerate(self.children):
            for smaller in child.simpler():
                kids = list(self.children)
                kids[i] = smaller
                out.append(Pred(self.op, self.sql, tuple(kids)))
        return out


def leaf(sql: str) -> Pred:
    return Pred("leaf", sql)


# -- literals ---------------------------------------------------------------


def sql_string(value: str) -> str:
    """A Spark SQL string literal (backslash escapes, as Spark's parser unescapes them)."""
    escaped = (
        value.replace("\\", "\\\\")
        .replace("'", "\\'")
        .replace("\n", "\\n")
        .replace("\t", "\\t")
        .replace("\r", "\\r")
    )
    return f"'{escaped}'"


def _float_literal(value: float, single: bool) -> str:
    target = "FLOAT" if single else "DOUBLE"
    if value != value:
        return f"CAST('NaN' AS {target})"
    if value in (float("inf"), float("-inf")):
        return f"CAST('{'-' if value < 0 else ''}Infinity' AS {target})"
    if value == 0.0:
        return f"CAST('{'-' if str(value).startswith('-') else ''}0.0' AS {target})"
    if single:
        return f"CAST('{value!r}' AS FLOAT)"
    return f"{value!r}D"


def _timestamp_text(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return f"{value.year:04d}-{value:%m-%d %H:%M:%S}.{value.microsecond:06d}"


def sql_literal(value: Any, data_type: DataType) -> str:
    """``value`` as a Spark SQL literal of ``data_type`` (typed NULL for None)."""
    if value is None:
        return f"CAST(NULL AS {data_type.simpleString()})"
    if isinstance(data_type, BooleanType):
        return "TRUE" if value else "FALSE"
    if isinstance(data_type, _INTEGRAL):
        if -(2**31) <= value < 2**31 or not -(2**63) <= value < 2**63:
            # Past a bigint Spark reads the digits as a decimal (a refused one past 38 digits).
            return str(value)
        return f"{value}L"
    if isinstance(data_type, _FLOATING):
        return _float_literal(float(value), isinstance(data_type, FloatType))
    if isinstance(data_type, StringType):
        return sql_string(value)
    if isinstance(data_type, DateType):
        assert isinstance(value, date)
        return f"DATE '{value.year:04d}-{value:%m-%d}'"
    if isinstance(data_type, TimestampNTZType):
        return f"TIMESTAMP_NTZ '{_timestamp_text(value)}'"
    if isinstance(data_type, TimestampType):
        return f"TIMESTAMP '{_timestamp_text(value)}'"
    if isinstance(data_type, BinaryType):
        return f"X'{bytes(value).hex()}'"
    if isinstance(data_type, DecimalType):
        assert isinstance(value, Decimal)
        return f"CAST('{value}' AS {data_type.simpleString()})"
    raise TypeError(f"no literal for {data_type.simpleString()}")


def like_prefix(prefix: str) -> str:
    """``LIKE 'prefix%'`` for a literal prefix (wildcards and the escape character escaped)."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return sql_string(escaped + "%")


# -- operands ---------------------------------------------------------------


def hostile(rng: random.Random, data_type: DataType) -> Any:
    """An operand chosen to hurt: NaN, signed zero, infinities, '', huge, extreme dates."""
    if isinstance(data_type, _FLOATING):
        return rng.choice([values.NAN, -0.0, 0.0, values.INF, -values.INF, 5e-324])
    if isinstance(data_type, _INTEGRAL):
        return rng.choice([0, -1, 2**63 - 1, -(2**63), 2**53 + 1, 300, -129, *OUT_OF_RANGE])
    if isinstance(data_type, StringType):
        plain = ["", " ", "\n", "%", "_", "a", "ab\n", "\\", "'", values.PREFIX32]
        return rng.choice([*plain, values.huge_string(rng), "x" * 70_000])
    if isinstance(data_type, DateType):
        return rng.choice([date(1, 1, 1), date(9999, 12, 31), date(1677, 9, 21), date(2262, 4, 12)])
    if isinstance(data_type, (TimestampType, TimestampNTZType)):
        aware = not isinstance(data_type, TimestampNTZType)
        return values.moment(rng, aware=aware)
    return values.value_for(rng, data_type, 0.0)


def _operand(rng: random.Random, pool: Sequence[Any], data_type: DataType) -> Any:
    present = [v for v in pool if v is not None]
    if present and rng.random() < 0.75:
        return rng.choice(present)
    if rng.random() < 0.08:
        return None
    return hostile(rng, data_type)


def _fit(value: Any, data_type: DataType) -> Any:
    """Integers out of a narrow type's range are fine as SQL literals (Spark widens)."""
    if isinstance(data_type, FloatType) and isinstance(value, float):
        return values.to_float32(value)
    return value


# -- leaves -----------------------------------------------------------------


def _scalar_leaf(rng: random.Random, col: str, data_type: DataType, pool: Sequence[Any]) -> Pred:
    pick = rng.random()
    if pick < 0.1:
        return leaf(f"{col} IS {rng.choice(['', 'NOT '])}NULL")
    if isinstance(data_type, StringType) and pick < 0.45:
        return _string_leaf(rng, col, pool)
    if pick < 0.7:
        op = rng.choice(_COMPARISONS)
        literal = sql_literal(_fit(_operand(rng, pool, data_type), data_type), data_type)
        if rng.random() < 0.2:
            flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            return leaf(f"{literal} {flipped} {col}")
        return leaf(f"{col} {op} {literal}")
    items = [
        sql_literal(_fit(_operand(rng, pool, data_type), data_type), data_type)
        for _ in range(rng.randint(1, 4))
    ]
    negated = "NOT " if rng.random() < 0.2 else ""
    return leaf(f"{col} {negated}IN ({', '.join(items)})")


def _string_leaf(rng: random.Random, col: str, pool: Sequence[Any]) -> Pred:
    present = [v for v in pool if isinstance(v, str)]
    source = rng.choice(present) if present and rng.random() < 0.8 else hostile(rng, StringType())
    cut = rng.randint(0, len(source)) if source else 0
    kind = rng.choice(["like", "startswith", "contains", "endswith", "like_contains"])
    if kind == "like":
        return leaf(f"{col} LIKE {like_prefix(source[:cut])}")
    if kind == "startswith":
        return leaf(f"startswith({col}, {sql_string(source[:cut])})")
    if kind == "endswith":
        return leaf(f"endswith({col}, {sql_string(source[cut:])})")
    start = rng.randint(0, cut)
    if kind == "contains":
        return leaf(f"contains({col}, {sql_string(source[start:cut])})")
    inner = source[start:cut].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return leaf(f"{col} LIKE {sql_string('%' + inner + '%')}")


def _nested_leaf(rng: random.Random, col: str, data_type: DataType, pool: Sequence[Any]) -> Pred:
    if rng.random() < 0.3:
        return leaf(f"{col} IS {rng.choice(['', 'NOT '])}NULL")
    present = [v for v in pool if v is not None]
    if isinstance(data_type, StructType):
        index = rng.randrange(len(data_type.fields))
        inner = data_type.fields[index]
        inner_pool = [v[index] for v in present]
        if isinstance(inner.dataType, (ArrayType, MapType, StructType)):
            return _nested_leaf(rng, f"{col}.{inner.name}", inner.dataType, inner_pool)
        return _scalar_leaf(rng, f"{col}.{inner.name}", inner.dataType, inner_pool)
    if isinstance(data_type, ArrayType):
        if rng.random() < 0.5:
            return leaf(f"size({col}) {rng.choice(['=', '>', '<='])} {rng.randint(0, 2)}")
        elements = [e for v in present for e in v if e is not None]
        if isinstance(data_type.elementType, (ArrayType, MapType, StructType)):
            return leaf(f"size({col}) > 0")
        operand = _operand(rng, elements, data_type.elementType)
        if operand is None:
            operand = hostile(rng, data_type.elementType)
        return leaf(f"array_contains({col}, {sql_literal(operand, data_type.elementType)})")
    assert isinstance(data_type, MapType)
    keys = [k for v in present for k in v]
    if not keys or rng.random() < 0.3:
        return leaf(f"size({col}) = 0")
    key = rng.choice(keys)
    key_sql = sql_literal(key, data_type.keyType)
    if rng.random() < 0.4:
        return leaf(f"map_contains_key({col}, {key_sql})")
    value_type = data_type.valueType
    if isinstance(value_type, (ArrayType, MapType, StructType)):
        return leaf(f"{col}[{key_sql}] IS NULL")
    inner_pool = [v.get(key) for v in present]
    return _scalar_leaf(rng, f"{col}[{key_sql}]", value_type, inner_pool)


def spelled(rng: random.Random, column: str) -> str:
    """``column`` as a user may spell it: sometimes differing only by case (Spark resolves
    column names case-insensitively by default)."""
    pick = rng.random()
    if pick < 0.1:
        return column.upper()
    if pick < 0.2:
        return "".join(ch.upper() if i % 2 else ch for i, ch in enumerate(column))
    return column


def random_leaf(rng: random.Random, plan: TablePlan, pools: dict[str, list[Any]]) -> Pred:
    weights = [4.0 if c in plan.partition_by else 1.0 for c in plan.columns]
    col = rng.choices(plan.columns, weights)[0]
    data_type = plan.type_of(col)
    name = spelled(rng, col)
    if isinstance(data_type, (ArrayType, MapType, StructType)):
        return _nested_leaf(rng, name, data_type, pools[col])
    return _scalar_leaf(rng, name, data_type, pools[col])


def translatable_columns(plan: TablePlan) -> list[str]:
    """Scalar data columns the index holds exactly: integers, booleans, dates and
    ``string``-typed strings (not store-only, not partition columns)."""
    store_only = set(plan.options.get(STOREONLY, "").split(","))
    out = []
    for column in plan.columns:
        data_type = plan.type_of(column)
        if column in store_only or column in plan.partition_by:
            continue
        if isinstance(data_type, StringType):
            if plan.options.get(TYPEMAP + column, "string") != "string" or column == "c_ip":
                continue
        elif not isinstance(data_type, (*_INTEGRAL, BooleanType, DateType)):
            continue
        out.append(column)
    return out


def translatable_filter(rng: random.Random, plan: TablePlan, pools: dict[str, list[Any]]) -> Pred:
    """A filter drawn to be answered by the index: one or two (AND) comparisons, IN lists
    or null tests on :func:`translatable_columns`, operands from the written values."""
    columns = translatable_columns(plan) or ["id"]

    def one() -> Pred:
        col = rng.choice(columns)
        data_type = plan.type_of(col)
        name = spelled(rng, col)
        present = [v for v in pools[col] if v is not None]
        if not present or rng.random() < 0.1:
            return leaf(f"{name} IS {rng.choice(['', 'NOT '])}NULL")
        if isinstance(data_type, StringType):
            present = [v for v in present if len(v.encode()) < 1000]
            if not present:
                return leaf(f"{name} IS NOT NULL")
        if rng.random() < 0.25:
            items = [sql_literal(rng.choice(present), data_type) for _ in range(rng.randint(1, 3))]
            return leaf(f"{name} IN ({', '.join(items)})")
        op = rng.choice(
            ("=", "<", "<=", ">", ">=") if not isinstance(data_type, StringType) else ("=",)
        )
        return leaf(f"{name} {op} {sql_literal(rng.choice(present), data_type)}")

    if rng.random() < 0.3:
        return Pred("and", children=(one(), one()))
    return one()


def random_filter(
    rng: random.Random, plan: TablePlan, pools: dict[str, list[Any]], depth: int = 2
) -> Pred:
    """A random filter tree over ``plan``'s columns (``pools``: each column's written values)."""
    pick = rng.random()
    if depth == 0 or pick < 0.45:
        return random_leaf(rng, plan, pools)
    if pick < 0.7:
        return Pred("and", children=tuple(random_filter(rng, plan, pools, depth - 1) for _ in "ab"))
    if pick < 0.87:
        return Pred("or", children=tuple(random_filter(rng, plan, pools, depth - 1) for _ in "ab"))
    return Pred("not", children=(random_filter(rng, plan, pools, depth - 1),))


def column_pools(plan: TablePlan) -> dict[str, list[Any]]:
    """Every value written to each column (overwritten rows too: they make misses)."""
    pools: dict[str, list[Any]] = {c: [] for c in plan.columns}
    for write in plan.writes:
        for row in write.rows:
            for col, value in zip(plan.columns, row, strict=True):
                pools[col].append(value)
    return pools


# -- negations in query text -------------------------------------------------

# How ``kept`` and ``excluded`` are joined: Tantivy's ``-x`` (must not) in its forms, and
# ``NOT`` wherever it stands (rewritten by the engine), each with the Spark operator joining
# the two filters: ``k AND NOT e`` or ``k OR NOT e``.
_NEGATIONS = (
    ("{k} AND NOT {e}", "AND"),
    ("{k} && NOT {e}", "AND"),
    ("{k} AND -{e}", "AND"),
    ("{k} -{e}", "AND"),
    ("NOT {e} AND {k}", "AND"),
    ("(NOT {e}) AND {k}", "AND"),
    ("{k} OR NOT {e}", "OR"),
    ("NOT {e} || {k}", "OR"),
)


def negated_query(
    rng: random.Random, kept: tuple[str, str], excluded: tuple[str, str]
) -> tuple[str, str]:
    """``kept`` without ``excluded`` (or ``kept`` or not ``excluded``) as ``query`` text,
    and the equal Spark filter.

    ``kept`` and ``excluded`` are (query clause, Spark filter) pairs. A query
    exclusion drops the rows its clause matches and keeps every other row, those
    where the clause's column is null included (test_literals.py: ``AND NOT d:1``
    is ``NOT (d <=> 1)``), so the excluded filter's unknown counts as false.
    Each side is a single field clause, written bare or in parentheses.
    """
    (k_text, k_sql), (e_text, e_sql) = kept, excluded
    if rng.random() < 0.5:
        k_text, e_text = f"({k_text})", f"({e_text})"
    form, joined = rng.choice(_NEGATIONS)
    text = form.format(k=k_text, e=e_text)
    return text, f"({k_sql}) {joined} NOT coalesce(({e_sql}), false)"
