"""The engine against oracles on random hostile tables (the engine's differential test).

Per seed, a table of every column kind the engine writes (integers of each
width, float/double with NaN, -0.0 and infinities, booleans, dates, instants,
wall-clock timestamps, exact strings, full-text, IP, binary, struct, string and
decimal partitions; nulls everywhere, empty and unicode strings) is written by
``write_table`` in two appends (several splits per partition). Random cases
(``query``, ``textsearch``, ``fieldmatch``, ``where``, ``columns``, ``limit``;
see ``diffcases.py`` for the oracles) then compare:

- ``search``, ``scan``, ``to_arrow`` and ``count`` with the oracle's rows (a
  ``limit`` answer is a subset of the oracle's of the right size);
- ``aggregate`` with DuckDB's ``GROUP BY`` over the same rows.

Each count records what answered it (log, index or rows, from the debug log);
most filtered counts must come from the index. The default run takes 3 seeds;
the ``slow`` run 12 more.
"""

from __future__ import annotations

import logging
import math
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from indextables.search import SearchTable, open_table, write_table
from indextables.search.errors import ArithmeticOverflowError, QuerySyntaxError
from indextables.search.query.whereeval import compile_where

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import OPTIONS, PARTITION_BY, Case, cases, condition, leaf, rows
from wherematrix import KINDS, OPERATORS, covered, operator_matrix
from writedata import canonical, row_multiset

_LOG_NAME = "indextables.search.searchtable"
FAST_SEEDS = (1, 2, 3)
SLOW_SEEDS = tuple(range(10, 22))
ROWS = 240
CASES = 16  # per seed in the default run; the slow run takes 40


def build(tmp_path: Path, seed: int) -> tuple[SearchTable, pa.Table]:
    data = rows(seed, ROWS)
    uri = str(tmp_path / f"t{seed}")
    half = ROWS // 2
    for start in (0, half):
        write_table(uri, data.slice(start, half), partition_by=PARTITION_BY, options=OPTIONS)
    table = open_table(uri)
    assert table.count() == ROWS
    return table, data


def oracle_ids(duck: Any, data: pa.Table, case: Case) -> list[int]:
    ids = {r["id"] for r in data.to_pylist() if case.match(r)}
    if case.duck_where:
        found = duck.execute(f"SELECT id FROM data WHERE {case.duck_where}").fetchall()
        ids &= {r[0] for r in found}
    return sorted(ids)


def sources(caplog: pytest.LogCaptureFixture) -> list[str]:
    found = [
        r.getMessage().rsplit(" ", 1)[-1]
        for r in caplog.records
        if r.name == _LOG_NAME and " answered from the " in r.getMessage()
    ]
    caplog.clear()
    return found


def check_case(table: SearchTable, data: pa.Table, case: Case, want: list[int]) -> None:
    args: dict[str, Any] = {
        "where": case.where,
        "textsearch": case.textsearch,
        "fieldmatch": case.fieldmatch,
    }
    by_id = {r["id"]: r for r in data.to_pylist()}
    names = {n.lower(): n for n in data.column_names}
    columns = [names[c.lower()] for c in case.columns] if case.columns else data.column_names
    expected = [{c: by_id[i][c] for c in columns} for i in want]

    got = table.search(case.query, columns=case.columns, limit=case.limit, **args)
    assert got.schema.names == columns
    assert got.schema == data.select(columns).schema
    if case.limit is None:
        assert row_multiset(got.to_pylist()) == row_multiset(expected)
    else:
        assert got.num_rows == min(case.limit, len(want))
        pool = Counter(canonical(r) for r in expected)
        assert not Counter(canonical(r) for r in got.to_pylist()) - pool
    streamed = table.scan(case.query, columns=case.columns, limit=case.limit, **args)
    assert streamed.schema == got.schema
    assert row_multiset(streamed.read_all().to_pylist()) == row_multiset(got.to_pylist())
    assert table.count(case.query, **args) == len(want)
    if case.query is None and case.textsearch is None and case.fieldmatch is None:
        whole = table.to_arrow(columns=case.columns, where=case.where)
        assert row_multiset(whole.to_pylist()) == row_multiset(expected)


# -- aggregations ------------------------------------------------------------------------

GROUPS = ["s", "b", "i8", "day", "p", "dec", "ntz"]
METRICS = {
    "n": ("count", None),
    "n_f64": ("count", "f64"),
    "sum_i32": ("sum", "i32"),
    "sum_i64": ("sum", "i64"),
    "min_i16": ("min", "i16"),
    "max_i16": ("max", "i16"),
    "avg_i32": ("avg", "i32"),
    "max_day": ("max", "day"),
    "min_s": ("min", "s"),
    "max_f64": ("max", "f64"),
    "min_f64": ("min", "f64"),
    "min_f32": ("min", "f32"),
    "max_f32": ("max", "f32"),
}


def _duck_metric(fn: str, column: str | None) -> str:
    if column is None:
        return "count(*)"
    if column in ("f64", "f32"):
        # Spark: max is NaN when a NaN is present (NaN above every number), as DuckDB orders it.
        return f"{fn}({column})"
    if fn == "sum":
        return f"CAST(sum({column}) AS HUGEINT)"
    return f"{fn}({column})"


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        if got is None or want is None:
            return got is want
        if math.isnan(want):
            return math.isnan(got)
        return math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0) or got == want
    return bool(canonical(got) == canonical(want))


def check_aggregate(
    table: SearchTable,
    duck: Any,
    group: str | None,
    names: list[str],
    where: tuple[str, str] | None,
) -> str:
    metrics = {n: "count" if METRICS[n][1] is None else METRICS[n] for n in names}
    select = ", ".join(f"{_duck_metric(*METRICS[n])} AS {n}" for n in names)
    keys = f"{group}, " if group else ""
    sql = f"SELECT {keys}{select} FROM data"
    if where:
        sql += f" WHERE {where[1]}"
    if group:
        sql += f" GROUP BY {group}"
    cursor = duck.execute(sql)
    heads = [d[0] for d in cursor.description]
    result = [dict(zip(heads, r, strict=True)) for r in cursor.fetchall()]
    overflow = any(
        r[n] is not None and not -(2**63) <= r[n] < 2**63
        for r in result
        for n in names
        if METRICS[n][0] == "sum"
    )
    if overflow:
        with pytest.raises(ArithmeticOverflowError, match="overflows a long"):
            table.aggregate(
                group_by=[group] if group else [],
                metrics=metrics,
                where=where[0] if where else None,
            )
        return "overflow"
    got = table.aggregate(
        group_by=[group] if group else [], metrics=metrics, where=where[0] if where else None
    ).to_pylist()
    assert len(got) == len(result), (group, names, where)
    expected = {canonical(r[group]) if group else (): r for r in result}
    for row in got:
        want = expected[canonical(row[group]) if group else ()]
        for n in names:
            assert _same(row[n], want[n]), (group, n, where, row[n], want[n])
    return "ok"


# -- the tests ---------------------------------------------------------------------------


def _run(tmp_path: Path, caplog: pytest.LogCaptureFixture, seed: int, count: int = CASES) -> None:
    caplog.set_level(logging.DEBUG, logger=_LOG_NAME)
    table, data = build(tmp_path, seed)
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.register("data", data)
    paths: Counter[str] = Counter()
    try:
        for case in cases(seed, count):
            caplog.clear()
            want = oracle_ids(duck, data, case)
            try:
                check_case(table, data, case, want)
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}: {case}") from exc
            if case.filtered:
                found = [s for s in sources(caplog) if s in ("log", "index", "rows")]
                paths[found[-1]] += 1
        rng = random.Random(seed)
        for _ in range(max(4, count // 4)):
            group = rng.choice([None, *GROUPS])
            names = rng.sample(list(METRICS), 3)
            where = rng.choice([None, leaf(rng, simple=True), condition(rng)])
            try:
                check_aggregate(table, duck, group, names, where)
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}: {group} {names} {where}") from exc
    finally:
        duck.close()
    filtered = sum(paths.values())
    # The index answers what it can: conditions it translates, every search.
    assert paths["index"] + paths["log"] > filtered / 2, paths


# A search for "A" on the case-sensitive `s` warns that "a" exists: expected here.
pytestmark = pytest.mark.filterwarnings(
    "ignore::indextables.search.query.casenotice.CaseMismatchWarning"
)


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_engine_matches_oracles(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, seed: int
) -> None:
    _run(tmp_path, caplog, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_engine_matches_oracles_more_seeds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, seed: int
) -> None:
    _run(tmp_path, caplog, seed, 40)


@pytest.mark.parametrize("decoder", ["python", "cython"])
def test_engine_matches_oracles_on_each_doc_store_decoder(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    decoder: str,
) -> None:
    """The same differential with rows decoded in bulk by each doc-store twin:
    the twins are compared with each other elsewhere (test_docstore, test_bulkrows); here
    each is compared with the oracles, and must really have served columns."""
    from indextables.search.read import bulkrows
    from indextables.search.read.docstore import impl

    monkeypatch.setenv(impl.IMPL_ENV, decoder)
    served: list[int] = []
    original = bulkrows.bulk_columns

    def counting(*args: Any, **kwargs: Any) -> Any:
        found = original(*args, **kwargs)
        served.append(len(found.arrays))
        return found

    monkeypatch.setattr(bulkrows, "bulk_columns", counting)
    _run(tmp_path, caplog, 4)
    assert sum(served) > 0, "the bulk decoder served no column"


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_every_where_operator_on_every_column_kind(tmp_path: Path, seed: int) -> None:
    """Each seed of the default run puts every operator on every column kind
    (:mod:`wherematrix`), with literals the rows hold: the evaluator over the rows in
    memory, and ``search``/``count`` over the table, keep DuckDB's rows; the pairs the docs
    list as refused raise ``QuerySyntaxError`` naming the condition."""
    table, data = build(tmp_path, seed)
    conditions = operator_matrix(data, seed)
    assert covered(conditions) == {(op, kind) for op in OPERATORS for kind in KINDS}
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.register("data", data)
    batch = data.combine_chunks().to_batches()[0]
    ids = data.column("id").to_pylist()
    kept_some = dropped_some = 0
    try:
        for c in conditions:
            if c.duck is None:
                with pytest.raises(QuerySyntaxError) as refused:
                    table.search(where=c.where, columns=["id"])
                assert f"where={c.where!r}" in str(refused.value), c
                continue
            want = sorted(
                r[0] for r in duck.execute(f"SELECT id FROM data WHERE {c.duck}").fetchall()
            )
            mask = compile_where(c.where, batch.schema).mask(batch).to_pylist()
            assert sorted(i for i, keep in zip(ids, mask, strict=True) if keep) == want, c
            got = table.search(where=c.where, columns=["id"]).column("id").to_pylist()
            assert sorted(got) == want, c
            assert table.count(where=c.where) == len(want), c
            kept_some += bool(want)
            dropped_some += len(want) < ROWS
    finally:
        duck.close()
    # Not vacuous: nearly every condition keeps some rows and drops others.
    answered = sum(c.duck is not None for c in conditions)
    assert kept_some > answered * 0.9, (kept_some, answered)
    assert dropped_some > answered * 0.9, (dropped_some, answered)
