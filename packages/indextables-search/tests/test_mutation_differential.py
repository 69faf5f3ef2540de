"""Random sequences of appends, deletes (``where`` and ``query``), replaces, overwrites,
merges and purges of deletes, against DuckDB applying the same operations to its own
table: after each operation, and again at every version by time travel at the end, the
engine's rows equal DuckDB's at that version.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from indextables.search import delete_rows, merge_splits, open_table, write_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import row_multiset

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("day", pa.int32()),
        pa.field("n", pa.int64()),
        pa.field("msg", pa.string()),
    ]
)
OPTIONS = {"spark.indextables.indexing.typemap.msg": "text"}
CONDITIONS = (
    "day = 1",
    "day IN (0, 3)",
    "n < 30",
    "n IS NULL",
    "day = 2 AND n > 50",
    "msg IN ('w1', 'w4')",
)


def _rows(rng: random.Random, start: int, count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "day": pa.array([rng.randrange(4) for _ in range(count)], pa.int32()),
            "n": pa.array(
                [None if rng.random() < 0.1 else rng.randrange(100) for _ in range(count)],
                pa.int64(),
            ),
            "msg": pa.array([f"w{rng.randrange(6)}" for _ in range(count)], pa.string()),
        },
        schema=SCHEMA,
    )


def _model(duck: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return row_multiset(duck.sql("SELECT * FROM model").to_arrow_table().to_pylist())


def _engine(uri: str, version: int | None = None) -> list[tuple[object, ...]]:
    table = open_table(uri) if version is None else open_table(uri, version=version)
    return row_multiset(table.search().to_pylist())


def _insert(duck: duckdb.DuckDBPyConnection, data: pa.Table) -> None:
    duck.register("incoming", data)
    duck.execute("INSERT INTO model SELECT * FROM incoming")
    duck.unregister("incoming")


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_random_mutations_answer_as_duckdb_at_every_version(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    uri = str(tmp_path / "t")
    duck = duckdb.connect()
    duck.execute("CREATE TABLE model (id BIGINT, day INTEGER, n BIGINT, msg VARCHAR)")
    first = _rows(rng, 0, 60)
    write_table(uri, first, partition_by="day", options=OPTIONS)
    _insert(duck, first)
    history = [(open_table(uri).version, _model(duck))]
    next_id = 1000
    for _ in range(16):
        op = rng.choice(["append", "delete", "query", "replace", "overwrite", "merge", "purge"])
        version = open_table(uri).version
        if op == "append":
            data = _rows(rng, next_id, rng.randrange(1, 40))
            write_table(uri, data, options=OPTIONS)
            _insert(duck, data)
        elif op == "delete":
            where = rng.choice(CONDITIONS)
            delete_rows(uri, where=where)
            duck.execute(f"DELETE FROM model WHERE {where}")
        elif op == "query":
            word = f"w{rng.randrange(6)}"
            delete_rows(uri, query=f"msg:{word}", where="n >= 10")
            duck.execute(f"DELETE FROM model WHERE msg = '{word}' AND n >= 10")
        elif op == "replace":
            where = rng.choice(CONDITIONS)
            candidates = _rows(rng, next_id, 50)
            duck.register("candidates", candidates)
            data = duck.sql(f"SELECT * FROM candidates WHERE {where}").to_arrow_table()
            duck.unregister("candidates")
            data = data.cast(SCHEMA)
            write_table(uri, data, mode="overwrite", replace_where=where, options=OPTIONS)
            duck.execute(f"DELETE FROM model WHERE {where}")
            _insert(duck, data)
        elif op == "overwrite":
            data = _rows(rng, next_id, rng.randrange(1, 30))
            write_table(uri, data, mode="overwrite", options=OPTIONS)
            duck.execute("DELETE FROM model")
            _insert(duck, data)
        else:
            merge_splits(uri, purge_deletes=op == "purge", target_size=1 if op == "purge" else None)
        next_id += 1000
        expected = _model(duck)
        assert _engine(uri) == expected, op
        assert open_table(uri).count() == len(expected), op
        now = open_table(uri).version
        if now != version:
            history.append((now, expected))
    for version, expected in history:
        assert _engine(uri, version) == expected, version
