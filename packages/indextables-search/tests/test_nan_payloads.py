"""Every NaN is one value: float and double columns holding NaNs of any bit pattern.

Spark puts every NaN (quiet or signaling, any payload, either sign) above every
number, ``+inf`` included, and equal to every other NaN; ``min`` over ``[1, NaN]``
is 1, ``max`` NaN. A NaN with the quiet bit clear (R's ``NA_real_`` is
``0x7FF00000000007A2``) is real data, which pyarrow's ``min_max`` and hash
``min``/``max`` do not order as NaN (module ``indextables.search.schema.nans``).

Per seed, a table of doubles and floats (nulls, ``-0.0``, infinities, numbers and
NaNs of random bits) is written in several appends (several splits, so split
statistics decide pruning), and random filters and aggregations are compared
with DuckDB over the same Arrow rows (DuckDB orders and groups NaN as Spark
does): ``search``/``count`` with ``where``, Tantivy query text on the same
columns, ``aggregate`` (min, max, sum, avg, count; grouped by an integer, by
the floating columns themselves and by a histogram). The same filters and
aggregations run through a companion index over the rows as Parquet.
"""

from __future__ import annotations

import math
import random
import struct
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indextables.search import build_companion, open_table, write_table
from indextables.search.aggregate.aggspec import histogram
from indextables.search.schema.mapping import FieldKind, FieldSpec
from indextables.search.schema.nans import quiet_nans
from indextables.search.write.stats import StatsCollector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aggcompare import same_rows
from diffcases import float32_array

SEEDS = (1, 2, 3)
ROWS = 160
APPENDS = 4
LITERALS = ["-1.0", "0.1", "0", "-0.0", "1.5", "5", "-2", "10", "1e308", "-1e308"]
OPS = ["=", "<", "<=", ">", ">=", "!=", "<>"]

# NaNs of fixed bits: R's NA_real_, another signaling one, both with the sign bit set,
# quiet ones with a payload and the sign; float32: signaling, negative, payload.
FIXED_64 = [0x7FF00000000007A2, 0x7FF0000000000123, 0xFFF00000000007A2, 0xFFF8000000000000]
FIXED_64 += [0x7FF8000000000001, 0x7FF8000000000000]
FIXED_32 = [0x7F800123, 0xFF800001, 0x7FC00001, 0xFFC00000, 0x7FC00000]


def _double(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


def _random_nan64(rng: random.Random) -> int:
    if rng.random() < 0.3:
        return rng.choice(FIXED_64)
    sign, quiet = rng.choice([0, 1 << 63]), rng.choice([0, 1 << 51])
    return sign | 0x7FF0 << 48 | quiet | rng.randrange(0 if quiet else 1, 1 << 51)


def _random_nan32(rng: random.Random) -> int:
    if rng.random() < 0.3:
        return rng.choice(FIXED_32)
    sign, quiet = rng.choice([0, 1 << 31]), rng.choice([0, 1 << 22])
    return sign | 0x7F800000 | quiet | rng.randrange(0 if quiet else 1, 1 << 22)


def _number(rng: random.Random) -> float:
    return rng.choice([0.0, -0.0, math.inf, -math.inf, -1.0, 0.1, 1.5, 5.0, rng.uniform(-9, 9)])


def nan_rows(seed: int, n: int) -> pa.Table:
    """``n`` rows: ``id``, a small integer ``g``, a double ``d`` and a float ``f``."""
    rng = random.Random(seed)
    doubles: list[float | None] = []
    floats: list[float | int | None] = []
    for _ in range(n):
        roll = rng.random()
        doubles.append(
            None if roll < 0.1 else _double(_random_nan64(rng)) if roll < 0.4 else _number(rng)
        )
        roll = rng.random()
        floats.append(None if roll < 0.1 else _random_nan32(rng) if roll < 0.4 else _number(rng))
    groups = [None if rng.random() < 0.1 else rng.randint(0, 3) for _ in range(n)]
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "g": pa.array(groups, pa.int64()),
            "d": pa.array(doubles, pa.float64()),
            "f": float32_array(floats),
        }
    )


def _bits(column: pa.ChunkedArray | pa.Array) -> list[int | None]:
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    width = pa.uint64() if pa.types.is_float64(values.type) else pa.uint32()
    return values.view(width).to_pylist()


def _nan_or_value(column: pa.ChunkedArray) -> list[Any]:
    return ["NaN" if v is not None and math.isnan(v) else v for v in column.to_pylist()]


# -- cases --------------------------------------------------------------------------------


def _duck(column: str) -> str:
    return "CAST(f AS DOUBLE)" if column == "f" else column


def _duck_literal(text: str) -> str:
    return f"CAST('{text}' AS DOUBLE)"


def where_leaf(rng: random.Random) -> tuple[str, str]:
    """A condition on ``d`` or ``f`` as (the engine's text, DuckDB's)."""
    column = rng.choice(["d", "f"])
    a, b = rng.choice(LITERALS), rng.choice(LITERALS)
    form = rng.choice(["cmp", "cmp", "cmp", "between", "in", "null"])
    if form == "between":
        neg = rng.choice(["", "NOT "])
        return (
            f"{column} {neg}BETWEEN {a} AND {b}",
            f"{_duck(column)} {neg}BETWEEN {_duck_literal(a)} AND {_duck_literal(b)}",
        )
    if form == "in":
        neg = rng.choice(["", "NOT "])
        return (
            f"{column} {neg}IN ({a}, {b})",
            f"{_duck(column)} {neg}IN ({_duck_literal(a)}, {_duck_literal(b)})",
        )
    if form == "null":
        text = f"{column} IS {rng.choice(['', 'NOT '])}NULL"
        return text, text
    op = rng.choice(OPS)
    return f"{column} {op} {a}", f"{_duck(column)} {op} {_duck_literal(a)}"


def where_case(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.7:
        return where_leaf(rng)
    (a, da), (b, db) = where_leaf(rng), where_leaf(rng)
    joint = rng.choice(["AND", "OR"])
    return f"({a}) {joint} ({b})", f"({da}) {joint} ({db})"


def query_case(rng: random.Random) -> tuple[str, str]:
    """Tantivy query text on ``d``/``f`` and the equal DuckDB condition (floatquery's rules:
    ``x:[a TO b]`` is ``x >= a AND x <= b``, ``x:a`` is ``x = a``, ``x:NaN`` every NaN)."""
    column = rng.choice(["d", "f"])
    pool = [t for t in LITERALS if "e" not in t]
    a, b = sorted((rng.choice(pool), rng.choice(pool)), key=float)
    col = _duck(column)
    form = rng.choice(["range", "open", "cmp", "term", "nan", "set"])
    if form == "range":
        left, right = rng.choice("[{"), rng.choice("]}")
        low = ">=" if left == "[" else ">"
        high = "<=" if right == "]" else "<"
        text = f"{column}:{left}{a} TO {b}{right}"
        return text, f"{col} {low} {_duck_literal(a)} AND {col} {high} {_duck_literal(b)}"
    if form == "open":
        if rng.random() < 0.5:
            return f"{column}:[{a} TO *]", f"{col} >= {_duck_literal(a)}"
        return f"{column}:[* TO {b}]", f"{col} <= {_duck_literal(b)}"
    if form == "cmp":
        op = rng.choice([">", ">=", "<", "<="])
        return f"{column}:{op}{a}", f"{col} {op} {_duck_literal(a)}"
    if form == "term":
        return f"{column}:{a}", f"{col} = {_duck_literal(a)}"
    if form == "nan":
        return f"{column}:NaN", f"isnan({col})"
    return f"{column}: IN [{a} NaN]", f"({col} = {_duck_literal(a)} OR isnan({col}))"


METRICS = {
    "min_d": ("min", "d"),
    "max_d": ("max", "d"),
    "sum_d": ("sum", "d"),
    "avg_d": ("avg", "d"),
    "n_d": ("count", "d"),
    "min_f": ("min", "f"),
    "max_f": ("max", "f"),
    "avg_f": ("avg", "f"),
}
GROUPS = [None, "g", "d", "f", "hist"]


def _duck_metric(fn: str, column: str) -> str:
    return f"{fn}({_duck(column)})"


def check_aggregate(
    table: Any, duck: Any, group: str | None, where: tuple[str, str] | None
) -> None:
    names = list(METRICS)
    select = ", ".join(f"{_duck_metric(*METRICS[n])} AS {n}" for n in names)
    key = {
        "hist": "(CASE WHEN isnan(d / 2.5) OR abs(d / 2.5) >= 9007199254740992.0"
        " THEN d / 2.5 ELSE floor(d / 2.5) END) * 2.5",
        "f": "CAST(f AS DOUBLE)",
    }.get(group or "", group)
    sql = f"SELECT {key + ' AS k, ' if group else ''}{select} FROM data"
    if where:
        sql += f" WHERE {where[1]}"
    if group:
        sql += " GROUP BY k ORDER BY k NULLS FIRST"
    want = duck.execute(sql).fetchall()
    group_by: list[Any] = [] if group is None else [histogram("d", 2.5, name="k")]
    if group in ("g", "d", "f"):
        group_by = [group]
    got = table.aggregate(group_by=group_by, metrics=METRICS, where=where[0] if where else None)
    rows = [tuple(r.values()) for r in got.to_pylist()]
    assert same_rows(rows, want), (group, where, rows, want)


# -- the tests -----------------------------------------------------------------------------


def _duck_ids(duck: Any, condition: str) -> list[int]:
    return sorted(r[0] for r in duck.execute(f"SELECT id FROM data WHERE {condition}").fetchall())


def _check_all(table: Any, data: pa.Table, seed: int, *, queries: bool) -> None:
    duck = duckdb.connect()
    duck.register("data", data)
    rng = random.Random(seed * 31 + 7)
    narrowing = 0  # cases that keep some rows and drop others
    try:
        for _ in range(30):
            where, duck_where = where_case(rng)
            want = _duck_ids(duck, duck_where)
            narrowing += 0 < len(want) < data.num_rows
            got = table.search(where=where, columns=["id"]).column("id").to_pylist()
            assert sorted(got) == want, (seed, where)
            assert table.count(where=where) == len(want), (seed, where)
        assert narrowing > 15, narrowing
        for _ in range(20 if queries else 0):
            query, duck_where = query_case(rng)
            want = _duck_ids(duck, duck_where)
            got = table.search(query, columns=["id"]).column("id").to_pylist()
            assert sorted(got) == want, (seed, query)
            assert table.count(query) == len(want), (seed, query)
        for group in GROUPS:
            check_aggregate(table, duck, group, None)
            check_aggregate(table, duck, group, where_case(rng))
    finally:
        duck.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_engine_matches_duckdb_on_nan_payloads(tmp_path: Path, seed: int) -> None:
    data = nan_rows(seed, ROWS)
    uri = str(tmp_path / "t")
    step = ROWS // APPENDS
    for start in range(0, ROWS, step):
        write_table(uri, data.slice(start, step))
    table = open_table(uri)
    assert table.count() == ROWS
    stored = table.search(columns=["id", "d", "f"]).sort_by("id")
    assert _bits(stored.column("d")) == _bits(data.column("d"))  # read back bit for bit
    # A float's NaN comes back quiet (widened to a double on the way): still every NaN.
    assert _nan_or_value(stored.column("f")) == _nan_or_value(data.column("f"))
    _check_all(table, data, seed, queries=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_companion_matches_duckdb_on_nan_payloads(tmp_path: Path, seed: int) -> None:
    data = nan_rows(seed, ROWS)
    source = tmp_path / "src"
    source.mkdir()
    step = ROWS // APPENDS
    for number, start in enumerate(range(0, ROWS, step)):
        pq.write_table(data.slice(start, step), source / f"part-{number}.parquet", row_group_size=9)
    assert _bits(pq.read_table(source).sort_by("id").column("d")) == _bits(data.column("d"))
    result = build_companion(
        str(source), str(tmp_path / "idx"), source_format="parquet", target_input_size=2000
    )
    assert result.status == "success"
    table = open_table(
        str(tmp_path / "idx"),
        options={"spark.indextables.cache.directoryPath": str(tmp_path / "c")},
    )
    assert table.count() == ROWS
    _check_all(table, data, seed, queries=False)


# -- split statistics ------------------------------------------------------------------------


def _spark_bounds(values: list[float]) -> tuple[float, float]:
    """Spark's min and max: NaN above every number (a plain model of its order)."""
    key = [(math.isnan(v), 0.0 if math.isnan(v) else v) for v in values]
    return values[key.index(min(key))], values[key.index(max(key))]


def _as_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return str(int(value)) if math.isfinite(value) and value.is_integer() else str(value)


@pytest.mark.parametrize("bits", [*FIXED_64, 0xFFF0000000000123], ids=hex)
@pytest.mark.parametrize(
    "around", [[-1.0, None, 5.0], [1.0, None, 2.0], [math.inf, None], [None, -3.0], [None]]
)
def test_double_statistics_count_every_nan(bits: int, around: list[float | None]) -> None:
    values = [_double(bits) if v is None else v for v in around]
    collector = StatsCollector((FieldSpec("d", FieldKind.F64, None, True, True, True),))
    collector.add(pa.record_batch({"d": pa.array(values, pa.float64())}))
    low, high = _spark_bounds(values)
    assert collector.min_values() == {"d": _as_text(low)}
    assert collector.max_values() == {"d": _as_text(high)}


@pytest.mark.parametrize("bits", FIXED_32, ids=hex)
def test_float_statistics_count_every_nan(bits: int) -> None:
    for around in ([-1.0, None, 2.0], [2.0, -1.0, None, 4.0], [None, 0.5]):
        column = float32_array([bits if v is None else v for v in around])
        collector = StatsCollector((FieldSpec("f", FieldKind.F64, None, True, True, True),))
        collector.add(pa.record_batch({"f": column}))
        low, high = _spark_bounds([math.nan if v is None else v for v in around])
        assert collector.min_values() == {"f": _as_text(low)}, around
        assert collector.max_values() == {"f": _as_text(high)}, around


def test_quiet_nans_keeps_every_other_bit_pattern() -> None:
    values = [-0.0, 0.0, math.inf, -math.inf, 5e-324, None, 1.5]
    column = pa.array([*values, *(_double(b) for b in FIXED_64)], pa.float64())
    out = quiet_nans(column)
    assert _bits(out)[: len(values)] == _bits(column)[: len(values)]
    assert set(_bits(out)[len(values) :]) == {0x7FF8000000000000}
    single = float32_array([*FIXED_32, -0.0, None])
    assert _bits(quiet_nans(single)) == [0x7FC00000] * len(FIXED_32) + [0x80000000, None]
    strings = pa.array(["a"])
    assert quiet_nans(strings) is strings
