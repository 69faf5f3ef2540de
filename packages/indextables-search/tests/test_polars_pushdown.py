"""Random Polars filters through ``scan_indextables`` against Polars over the rows in memory.

Every filter is drawn (seeded) from the operators Polars hands an IO source:
comparisons from both sides over every column kind the engine writes, ``is_in``,
``is_between``, ``is_null``, the string functions, ``&``, ``|``, ``~``; over the
hostile rows of ``diffcases`` (NaN payloads, signed zeros, extreme integers,
dates of year 1 and 9999, zoned and naive timestamps, partition columns).
The answer must be Polars' own, and where the filter went into the engine as an
exact ``where``, the engine itself must have returned exactly those rows (Polars'
own filter after the scan would hide a ``where`` keeping too many).
"""

from __future__ import annotations

import datetime as dt
import operator
import random
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

import indextables.search.polars as itpolars
import indextables.search.read.splitbatches as splitbatches
import indextables.search.searchtable as searchtable
from indextables.search import SearchTable, open_table, write_table
from indextables.search.polars import predicate_where, scan_indextables
from indextables.search.read.anysplit import read_any_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import (
    DATES,
    DECIMALS,
    DOUBLES,
    FLOATS,
    INSTANTS,
    OPTIONS,
    PARTITION_BY,
    PARTS,
    STRINGS,
    WORDS,
    rows,
)

ROWS = 240
SEEDS = (1, 2)
SLOW_SEEDS = (3, 4, 5, 6)
FILTERS = 60

COMPARE: list[tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = [
    (operator.eq, operator.eq),
    (operator.ne, operator.ne),
    (operator.lt, operator.gt),
    (operator.le, operator.ge),
    (operator.gt, operator.lt),
    (operator.ge, operator.le),
]
ZONES = [
    dt.UTC,
    dt.timezone(dt.timedelta(hours=5, minutes=30)),
    dt.timezone(-dt.timedelta(hours=8)),
]
INTS = [0, 1, -1, 7, 100, 127, -128, 32767, -32768, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]


def _value(rng: random.Random, column: str) -> Any:
    if column in ("i8", "i16", "i32", "i64"):
        return rng.choice(INTS)
    if column == "f64":
        return rng.choice([v for v in DOUBLES if v == v] + [1, -3])
    if column == "f32":
        return rng.choice([v for v in FLOATS if v == v] + [1, 0.5, -2])
    if column == "b":
        return rng.random() < 0.5
    if column == "day":
        return rng.choice(DATES)
    if column == "ts":
        return rng.choice(INSTANTS).astimezone(rng.choice(ZONES))
    if column == "ntz":
        return rng.choice(INSTANTS).replace(tzinfo=None)
    if column == "dec":
        return rng.choice([*DECIMALS, Decimal("0"), Decimal("-1.5"), Decimal("999999.98")])
    if column == "p":
        return rng.choice(PARTS)
    if column == "s":
        return rng.choice(STRINGS)
    return rng.choice([*STRINGS, *WORDS])  # t


COLUMNS = ["i8", "i16", "i32", "i64", "f32", "f64", "b", "day", "ts", "ntz", "dec", "p", "s", "t"]
TEXTS = ["s", "t", "p"]
NEEDLES = ["", "a", "A", "é", "日本", "%", "_", "a%b", "a_b", "it's", "\\", "lpha", "x\ny", "Beta"]


def leaf(rng: random.Random) -> pl.Expr:
    form = rng.choice(["cmp", "cmp", "cmp", "in", "null", "between", "string", "bool"])
    if form == "string":
        column = pl.col(rng.choice(TEXTS))
        needle = rng.choice(NEEDLES)
        kind = rng.choice(["starts", "ends", "contains", "contains_regex"])
        if kind == "starts":
            return column.str.starts_with(needle)
        if kind == "ends":
            return column.str.ends_with(needle)
        return column.str.contains(needle, literal=kind == "contains")
    if form == "bool":
        return rng.choice([pl.col("b"), ~pl.col("b"), pl.col("b") == False])  # noqa: E712
    name = rng.choice(COLUMNS)
    column = pl.col(name)
    if form == "null":
        return column.is_null() if rng.random() < 0.5 else column.is_not_null()
    if form == "in":
        values = [_value(rng, name) for _ in range(rng.randint(1, 3))]
        if name in ("ts", "ntz"):
            values = [v.astimezone(dt.UTC) if v.tzinfo else v for v in values]
        if name in ("f32", "f64"):
            values = [float(v) for v in values]
        return column.is_in(values)
    if form == "between":
        low, high = sorted([_value(rng, name), _value(rng, name)])
        closed = rng.choice(["both", "left", "right", "none"])
        return column.is_between(pl.lit(low), pl.lit(high), closed=closed)
    straight, swapped = rng.choice(COMPARE)
    value = _value(rng, name)
    side = rng.randrange(3)
    if side == 0:
        return straight(column, value)
    if side == 1:
        return swapped(value, column)
    return swapped(pl.lit(value), column)


def predicate(rng: random.Random, depth: int = 0) -> pl.Expr:
    roll = rng.random()
    if depth >= 2 or roll < 0.45:
        return leaf(rng)
    if roll < 0.6:
        return ~predicate(rng, depth + 1)
    left, right = predicate(rng, depth + 1), predicate(rng, depth + 1)
    return left & right if rng.random() < 0.5 else left | right


def build(tmp_path: Path, seed: int) -> tuple[SearchTable, pa.Table]:
    data = rows(seed, ROWS)
    uri = str(tmp_path / f"t{seed}")
    half = ROWS // 2
    for start in (0, half):
        write_table(uri, data.slice(start, half), partition_by=PARTITION_BY, options=OPTIONS)
    return open_table(uri), data


class ScanRecorder:
    """The ``where`` and row count of every ``SearchTable.scan`` the source makes, and
    the translations of the predicates Polars handed the source (after its rewrites)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str | None, int]] = []
        self.translated: list[tuple[str, bool] | None] = []
        original = searchtable.SearchTable.scan

        def translate(predicate: Any, schema: pa.Schema) -> Any:
            found = predicate_where(predicate, schema)
            self.translated.append(found)
            return found

        monkeypatch.setattr(itpolars, "predicate_where", translate)

        def scan(table: Any, query: Any = None, **kwargs: Any) -> Any:
            reader = original(table, query, **kwargs)
            batches = list(reader)
            self.calls.append((kwargs.get("where"), sum(b.num_rows for b in batches)))
            return pa.RecordBatchReader.from_batches(reader.schema, batches)

        monkeypatch.setattr(searchtable.SearchTable, "scan", scan)


def check_seed(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    table, data = build(tmp_path, seed)
    memory = pl.from_arrow(data)
    assert isinstance(memory, pl.DataFrame)
    recorder = ScanRecorder(monkeypatch)
    rng = random.Random(seed)
    answered = exact = narrowed = 0
    for number in range(FILTERS):
        expr = predicate(rng)
        try:
            want = sorted(memory.filter(expr)["id"].to_list())
        except pl.exceptions.PolarsError:
            continue  # a filter Polars itself refuses over these types
        recorder.calls.clear()
        recorder.translated.clear()
        lazy = scan_indextables(table).filter(expr).select("id", "s", "day")
        got = lazy.collect()
        assert sorted(got["id"].to_list()) == want, (number, str(expr))
        answered += 1
        want_rows = memory.filter(expr).select("id", "s", "day").sort("id")
        assert got.sort("id").equals(want_rows), (number, str(expr))
        found = recorder.translated[0] if recorder.translated else None
        pushed = [w for w, _ in recorder.calls if w is not None]
        if found is not None and found[1] and pushed == [found[0]]:
            exact += 1
            assert [n for _, n in recorder.calls] == [len(want)], (number, str(expr), found)
            narrowed += 0 < len(want) < ROWS
    print(f"seed {seed}: {answered} answered, {exact} exact in the engine, {narrowed} narrowed")
    assert answered >= FILTERS * 0.8, answered
    # Most filters go into the engine exactly, and most of those keep some rows, not all.
    assert exact >= answered * 0.5, (exact, answered)
    assert narrowed >= exact * 0.3, (narrowed, exact)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_filters_give_polars_answer_through_the_engine(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_seed(tmp_path, seed, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_random_filters_give_polars_answer_through_the_engine_more_seeds(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_seed(tmp_path, seed, monkeypatch)


def test_a_partition_filter_reads_no_split_of_another_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, data = build(tmp_path, 7)
    partitions: list[dict[str, Any]] = []
    original = read_any_split

    def counted(*args: Any, **kwargs: Any) -> Any:
        partitions.append(dict(kwargs["entry"].partition_values))
        return original(*args, **kwargs)

    monkeypatch.setattr(splitbatches, "read_any_split", counted)
    expr = (pl.col("p") == "p1") & (pl.col("dec") > Decimal("0"))
    got = scan_indextables(table).filter(expr).select("id").collect()
    want = [r["id"] for r in data.to_pylist() if r["p"] == "p1" and (r["dec"] or 0) > 0]
    assert sorted(got["id"].to_list()) == sorted(want)
    assert want
    assert partitions
    assert all(v["p"] == "p1" and Decimal(v["dec"]) > 0 for v in partitions), partitions
    partitions.clear()
    scan_indextables(table).select("id").collect()
    assert any(v["p"] != "p1" for v in partitions)  # the unfiltered scan reads the others


def test_a_string_filter_goes_to_the_engine_as_like(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, data = build(tmp_path, 8)
    recorder = ScanRecorder(monkeypatch)
    expr = pl.col("t").str.contains("lpha") | pl.col("s").str.starts_with("a%")
    got = scan_indextables(table).filter(expr).select("id").collect()
    want = [
        r["id"]
        for r in data.to_pylist()
        if (r["t"] is not None and "lpha" in r["t"]) or (r["s"] or "").startswith("a%")
    ]
    assert sorted(got["id"].to_list()) == sorted(want)
    assert recorder.calls == [("(`t` LIKE '%lpha%') OR (`s` LIKE 'a\\\\%%')", len(want))]
