"""``SearchTable.to_duckdb``: random DuckDB filters over the registered table against the
same filters over the written rows in a DuckDB table, with the pushed ``where`` checked."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import indextables.search.duckdbscan as duckdbscan
import indextables.search.searchtable as searchtable
from indextables.search import SearchTable, open_table, write_table
from indextables.search.duckdbscan import EngineDataset, filter_where

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import OPTIONS, PARTITION_BY, condition, rows

ROWS = 240
SEEDS = (1, 2)
FILTERS = 40
#: Columns DuckDB reads back alike from both sides (no struct or binary layouts to compare).
SELECTED = "id, i8, i64, s, p, dec, day, ts"


def build(tmp_path: Path, seed: int) -> tuple[SearchTable, pa.Table]:
    data = rows(seed, ROWS)
    uri = str(tmp_path / f"t{seed}")
    half = ROWS // 2
    for start in (0, half):
        write_table(uri, data.slice(start, half), partition_by=PARTITION_BY, options=OPTIONS)
    return open_table(uri), data


class ScanRecorder:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str | None, int]] = []
        original = searchtable.SearchTable.scan

        def scan(table: Any, query: Any = None, **kwargs: Any) -> Any:
            reader = original(table, query, **kwargs)
            batches = list(reader)
            self.calls.append((kwargs.get("where"), sum(b.num_rows for b in batches)))
            return pa.RecordBatchReader.from_batches(reader.schema, batches)

        monkeypatch.setattr(searchtable.SearchTable, "scan", scan)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_filters_give_duckdb_answer_through_the_engine(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, data = build(tmp_path, seed)
    con = table.to_duckdb(name="logs")
    con.register("written", data)
    recorder = ScanRecorder(monkeypatch)
    translations: list[tuple[Any, Any]] = []

    def translate(expression: Any, schema: pa.Schema) -> Any:
        found = filter_where(expression, schema)
        translations.append((expression, found))
        return found

    monkeypatch.setattr(duckdbscan, "filter_where", translate)
    plain = ds.dataset(data)
    rng = random.Random(seed)
    pushed = 0
    for number in range(FILTERS):
        where = condition(rng)[1]
        recorder.calls.clear()
        translations.clear()
        want = con.sql(f"SELECT {SELECTED} FROM written WHERE {where} ORDER BY id").fetchall()
        got = con.sql(f"SELECT {SELECTED} FROM logs WHERE {where} ORDER BY id").fetchall()
        assert got == want, (number, where)
        count = con.execute(f"SELECT count(*) FROM logs WHERE {where}").fetchall()
        assert count == [(len(want),)], (number, where)
        pushed += any(w is not None for w, _ in recorder.calls)
        # An exact where: the engine returned the rows pyarrow's filter keeps over the
        # written rows (pyarrow's own filter after the scan would hide more).
        scanned = {sent: n for sent, n in recorder.calls if sent is not None}
        for expression, found in translations:
            if found is not None and found.exact and found.where in scanned:
                want_count = plain.count_rows(filter=expression)
                assert scanned[found.where] == want_count, (number, where, found.where)
    print(f"seed {seed}: {pushed} of {FILTERS} filters pushed into the engine")
    assert pushed >= FILTERS * 0.3, pushed


@pytest.mark.parametrize(
    ("sql", "where"),
    [
        ("i32 = 7", "`i32` = 7"),
        ("7 < i64", "`i64` > 7"),
        ("s = 'it''s' AND p IS NOT NULL", "(`p` IS NOT NULL) AND (`s` = 'it''s')"),
        ("i16 IN (1, 7)", "`i16` IN (1, 7)"),
        ("i16 NOT IN (1, 7)", "NOT (`i16` IN (1, 7))"),
        ("day = DATE '2024-02-29'", "`day` = DATE '2024-02-29'"),
        ("ts < TIMESTAMPTZ '2024-01-01 00:00:00+00'", "`ts` < '2024-01-01 00:00:00.000000Z'"),
        ("dec > 1.5 OR i8 IS NULL", "(`dec` > 1.50) OR (`i8` IS NULL)"),
    ],
)
def test_pushed_filters_become_exact_where(
    tmp_path: Path, sql: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, data = build(tmp_path, 3)
    con = table.to_duckdb(name="logs")
    con.register("written", data)
    recorder = ScanRecorder(monkeypatch)
    got = con.sql(f"SELECT id FROM logs WHERE {sql} ORDER BY id").fetchall()
    assert got == con.sql(f"SELECT id FROM written WHERE {sql} ORDER BY id").fetchall()
    assert recorder.calls == [(where, len(got))]  # the engine returned exactly those rows


def test_filter_where_reads_pyarrow_expressions() -> None:
    schema = pa.schema([("a", pa.int32()), ("f", pa.float64()), ("w`x", pa.int64())])
    exact = filter_where((ds.field("a") > 1) & ~ds.field("a").isin([3]), schema)
    assert exact is not None
    # pyarrow's is_in is false for a null (SQL's IN is null): NOT of it keeps the nulls.
    want = "(`a` > 1) AND (NOT ((`a` IS NOT NULL) AND (`a` IN (3))))"
    assert (exact.where, exact.exact) == (want, True)
    kept = filter_where(~ds.field("a").isin([3]), schema)
    assert kept is not None
    assert kept.where == "NOT ((`a` IS NOT NULL) AND (`a` IN (3)))"
    wider = filter_where((ds.field("a") > 1) & (ds.field("f") > 0.5), schema)
    assert wider is not None
    assert (wider.where, wider.exact, wider.columns) == ("`a` > 1", False, ("a", "f"))
    assert filter_where(ds.field("f") > 0.5, schema).where is None  # type: ignore[union-attr]
    assert filter_where(ds.field("w`x") > 1, schema) is None


def test_the_dataset_reads_the_engine_through_every_method(tmp_path: Path) -> None:
    table, data = build(tmp_path, 5)
    dataset = EngineDataset.over(table)
    plain = ds.dataset(data)
    where = (ds.field("i8") > 0) | ds.field("s").is_null()
    assert dataset.count_rows() == plain.count_rows() == ROWS
    assert dataset.count_rows(filter=where) == plain.count_rows(filter=where)
    got = dataset.to_table(columns=["id", "s"], filter=where).sort_by("id")
    assert got.equals(plain.to_table(columns=["id", "s"], filter=where).sort_by("id"))
    batches = list(dataset.to_batches(columns=["id"], filter=where))
    assert sum(b.num_rows for b in batches) == got.num_rows
    assert dataset.head(5, columns=["id"]).num_rows == 5


def test_a_deeply_nested_filter_is_left_to_pyarrow() -> None:
    schema = pa.schema([("a", pa.int32())])
    deep = ds.field("a") > 0
    for _ in range(5000):
        deep = ~deep
    found = filter_where(deep, schema)
    assert found is None or found.where is None or found.where.count("NOT") == 5000


def test_duckdb_count_speed_figures(tmp_path: Path) -> None:
    """Prints DuckDB's ``count(*)`` with an exact filter over the engine beside DuckDB over
    the same rows as a plain pyarrow dataset (figures only)."""
    table, data = build(tmp_path, 4)
    con = table.to_duckdb(name="logs")
    con.register("plain", ds.dataset(data))
    sql = "SELECT count(*) FROM {} WHERE s = 'a' AND i8 > 0"
    figures = {}
    for name in ("logs", "plain"):
        start = time.perf_counter()
        result = [con.execute(sql.format(name)).fetchall() for _ in range(5)]
        figures[name] = (time.perf_counter() - start) / 5 * 1000
        assert all(r == result[0] for r in result)
    assert con.execute(sql.format("logs")).fetchall() == con.execute(sql.format("plain")).fetchall()
    engine, plain = figures["logs"], figures["plain"]
    print(f"count(*) exact: engine {engine:.2f} ms, pyarrow dataset {plain:.2f} ms")
