"""Columns a schema change added before any split held them answer as all-null columns.

An append of no rows with ``schema_mode="merge"`` adds columns to the table's schema
while every split predates them: no split's doc mapping has the field. A ``where``,
``query`` or ``textsearch`` clause, an ``order_by`` key and a group or metric over
such a column were refused at validation ("Field does not exist", "has no fast
field"); they now answer as on a column null in every row. Checked against DuckDB
over the same rows, with the added columns null.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import IndexTablesSearchError

WORDS = ["alpha", "bravo", "charlie", "delta"]
ADDED = {
    "tag": pa.string(),
    "n": pa.int64(),
    "f": pa.float64(),
    "flag": pa.bool_(),
    "day": pa.date32(),
}
TEXT = {"spark.indextables.indexing.typemap.words": "text"}


def _rows(rng: random.Random, start: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "msg": [rng.choice(["m1", "m2", "m3"]) for _ in range(n)],
            "words": [" ".join(rng.choices(WORDS, k=rng.randint(1, 3))) for _ in range(n)],
        }
    )


@pytest.fixture(scope="module", params=[11, 12])
def tables(request: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """(the table, a DuckDB connection holding its rows as ``t``) for one seed."""
    rng = random.Random(request.param)
    uri = str(tmp_path_factory.mktemp("unwritten") / "t")
    parts = []
    start = 0
    for number in range(3):
        part = _rows(rng, start, rng.randint(5, 40))
        start += part.num_rows
        parts.append(part)
        write_table(uri, part, mode="overwrite" if number == 0 else "append", options=TEXT)
    empty = pa.table(
        {
            "id": pa.array([], pa.int64()),
            "msg": pa.array([], pa.string()),
            "words": pa.array([], pa.string()),
            **{n: pa.array([], t) for n, t in ADDED.items()},
        }
    )
    write_table(uri, empty, mode="append", schema_mode="merge")
    table = open_table(uri)
    assert set(ADDED) <= set(table.schema.names)
    rows = pa.concat_tables(parts)
    for name, data_type in ADDED.items():
        rows = rows.append_column(name, pa.nulls(rows.num_rows, data_type))
    connection = duckdb.connect()
    connection.register("t", rows)
    return table, connection


def _count(connection: Any, where: str) -> int:
    return int(connection.execute(f"SELECT count(*) FROM t WHERE {where}").fetchone()[0])


WHERES = [
    "n = 5",
    "n IS NULL",
    "n IS NOT NULL",
    "tag = 'ab'",
    "tag LIKE 'a%'",
    "NOT (n = 5)",
    "n = 5 OR id < 10",
    "f > 0.5 AND msg = 'm1'",
    "flag = true",
    "day >= DATE '2020-01-01'",
]


@pytest.mark.parametrize("where", WHERES)
def test_where_on_an_unwritten_column_equals_duckdb(tables: tuple[Any, Any], where: str) -> None:
    table, connection = tables
    assert table.count(where=where) == _count(connection, where)
    got = sorted(table.search(where=where, columns=["id"]).column("id").to_pylist())
    want = sorted(r[0] for r in connection.execute(f"SELECT id FROM t WHERE {where}").fetchall())
    assert got == want


# A query clause on an all-null column and the DuckDB condition it stands for.
QUERIES = [
    ("tag:ab", "false"),
    ("-tag:ab", "true"),
    ("tag:ab OR msg:m1", "msg = 'm1'"),
    ("msg:m2 AND NOT tag:ab", "msg = 'm2'"),
    ("n:5", "false"),
    ("n:[1 TO 5] OR words:alpha", "list_contains(string_split(words, ' '), 'alpha')"),
    ("flag:true", "false"),
    ("tag:(ab OR ba) OR msg:m3", "msg = 'm3'"),
    ("tag:a*", "false"),
]


@pytest.mark.parametrize(("query", "model"), QUERIES)
def test_query_on_an_unwritten_column_equals_duckdb(
    tables: tuple[Any, Any], query: str, model: str
) -> None:
    table, connection = tables
    assert table.count(query=query) == _count(connection, model)
    got = sorted(table.search(query, columns=["id"]).column("id").to_pylist())
    want = sorted(r[0] for r in connection.execute(f"SELECT id FROM t WHERE {model}").fetchall())
    assert got == want


def test_textsearch_and_fieldmatch_on_unwritten_columns_match_nothing(
    tables: tuple[Any, Any],
) -> None:
    table, _ = tables
    assert table.count(fieldmatch={"tag": "ab"}) == 0


@pytest.mark.parametrize(
    ("order_by", "sql"),
    [
        ("n DESC, id ASC", "n DESC NULLS LAST, id ASC"),
        ("n ASC, id DESC", "n ASC NULLS FIRST, id DESC"),
        ("f DESC, day ASC, id DESC", "f DESC NULLS LAST, day ASC NULLS FIRST, id DESC"),
    ],
)
def test_order_by_an_unwritten_column_equals_duckdb(
    tables: tuple[Any, Any], order_by: str, sql: str
) -> None:
    table, connection = tables
    got = table.search(
        "msg:m1 OR msg:m2", order_by=order_by, limit=7, columns=["id", "n", "f", "day"]
    )
    want = connection.execute(
        f"SELECT id, n, f, day FROM t WHERE msg IN ('m1', 'm2') ORDER BY {sql} LIMIT 7"
    ).fetchall()
    assert [tuple(r.values()) for r in got.to_pylist()] == [tuple(r) for r in want]


def test_aggregates_over_unwritten_columns_equal_duckdb(tables: tuple[Any, Any]) -> None:
    table, connection = tables
    got = table.aggregate(
        group_by=["n"], metrics={"c": "count", "s": ("sum", "n"), "m": ("max", "f")}
    )
    want = connection.execute("SELECT n, count(*), sum(n), max(f) FROM t GROUP BY n").fetchall()
    assert [tuple(r.values()) for r in got.to_pylist()] == [tuple(r) for r in want]
    got = table.aggregate(
        group_by=["msg"], metrics={"c": ("count", "tag"), "lo": ("min", "day")}, where="id > 3"
    )
    want = connection.execute(
        "SELECT msg, count(tag), min(day) FROM t WHERE id > 3 GROUP BY msg ORDER BY msg"
    ).fetchall()
    assert [tuple(r.values()) for r in got.to_pylist()] == [tuple(r) for r in want]
    got = table.aggregate(metrics={"c": "count"}, query="tag:ab OR msg:m1")
    assert got.column("c").to_pylist() == [_count(connection, "msg = 'm1'")]


def test_rows_after_a_split_holds_the_column_equal_duckdb(tmp_path: Path) -> None:
    """Once a split holds the column, old splits read it as null and the new split's
    values are searched: the mixed table agrees with DuckDB."""
    uri = str(tmp_path / "t")
    old = _rows(random.Random(3), 0, 20)
    write_table(uri, old, options=TEXT)
    schema = {"id": pa.int64(), "msg": pa.string(), "words": pa.string(), "n": pa.int64()}
    write_table(
        uri,
        pa.table({k: pa.array([], v) for k, v in schema.items()}),
        mode="append",
        schema_mode="merge",
    )
    assert open_table(uri).count(query="n:3") == 0
    new = _rows(random.Random(4), 20, 10).append_column("n", pa.array(range(10), pa.int64()))
    write_table(uri, new, mode="append")
    rows = pa.concat_tables([old.append_column("n", pa.nulls(20, pa.int64())), new])
    connection = duckdb.connect()
    connection.register("t", rows)
    table = open_table(uri)
    assert table.count(query="n:3 OR msg:m1") == _count(connection, "n = 3 OR msg = 'm1'")
    got = table.search(order_by="n DESC, id ASC", limit=12, columns=["id", "n"]).to_pylist()
    want = connection.execute(
        "SELECT id, n FROM t ORDER BY n DESC NULLS LAST, id ASC LIMIT 12"
    ).fetchall()
    assert [tuple(r.values()) for r in got] == [tuple(r) for r in want]


def test_a_column_no_schema_has_is_still_refused_by_name(tables: tuple[Any, Any]) -> None:
    table, _ = tables
    with pytest.raises(IndexTablesSearchError, match="nosuch"):
        table.count(query="nosuch:5")
    with pytest.raises(IndexTablesSearchError, match="nosuch"):
        table.search(order_by="nosuch DESC", limit=3)


def test_the_version_before_the_change_has_no_such_column(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, _rows(random.Random(5), 0, 8), options=TEXT)
    empty = {"id": pa.int64(), "msg": pa.string(), "words": pa.string(), "n": pa.int64()}
    write_table(
        uri,
        pa.table({k: pa.array([], v) for k, v in empty.items()}),
        mode="append",
        schema_mode="merge",
    )
    assert open_table(uri).count(query="-n:1") == 8
    with pytest.raises(IndexTablesSearchError, match="'n'"):
        open_table(uri, version=0).count(query="n:1")
