"""``write_table(..., mode="overwrite", replace_where=...)`` against DuckDB.

Seeded random tables (partitioned by ``day``, with nulls) take random replaces:
DuckDB applies the same operation (``DELETE WHERE cond`` then ``INSERT``) to its
own copy, and every version read through the engine equals DuckDB's rows at it.
A replace is one version; new rows outside the condition are refused with
nothing committed and no file left behind.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import ArgumentError, QuerySyntaxError, ReplaceWhereMismatchError

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
CONDITIONS = (
    "day = 3",
    "day IN (1, 2)",
    "n < 50",
    "day = 2 AND n >= 30",
    "n IS NULL OR day = 4",
    "msg = 'w7'",
    "NOT (n > 20)",
)


def _rows(rng: random.Random, start: int, count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "day": pa.array([rng.randrange(5) for _ in range(count)], pa.int32()),
            "n": pa.array(
                [None if rng.random() < 0.15 else rng.randrange(100) for _ in range(count)],
                pa.int64(),
            ),
            "msg": pa.array([f"w{rng.randrange(10)}" for _ in range(count)], pa.string()),
        },
        schema=SCHEMA,
    )


def _matching(duck: duckdb.DuckDBPyConnection, data: pa.Table, where: str) -> pa.Table:
    duck.register("candidate", data)
    found = duck.sql(f"SELECT * FROM candidate WHERE {where}").to_arrow_table()
    duck.unregister("candidate")
    return pa.Table.from_batches(found.to_batches(), schema=found.schema).cast(SCHEMA)


def _engine_rows(uri: str, version: int | None = None) -> list[tuple[object, ...]]:
    table = open_table(uri) if version is None else open_table(uri, version=version)
    return row_multiset(table.search().to_pylist())


def _duck_rows(duck: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    rows = duck.sql("SELECT * FROM model").to_arrow_table().to_pylist()
    return row_multiset(rows)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_replaces_answer_as_duckdb_at_every_version(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    uri = str(tmp_path / "t")
    duck = duckdb.connect()
    first = _rows(rng, 0, 150)
    write_table(uri, first.slice(0, 80), partition_by="day")
    write_table(uri, first.slice(80), partition_by="day")
    duck.register("first", first)
    duck.execute("CREATE TABLE model AS SELECT * FROM first")
    history = [(open_table(uri).version, _duck_rows(duck))]
    next_id = 1000
    for where in rng.sample(CONDITIONS, 5):
        new = _matching(duck, _rows(rng, next_id, 60), where)
        next_id += 1000
        before = open_table(uri).version
        result = write_table(uri, new, mode="overwrite", replace_where=where)
        assert result.version == before + 1  # removes and adds in one version
        assert result.rows == new.num_rows
        duck.execute(f"DELETE FROM model WHERE {where}")
        duck.register("new", new)
        duck.execute("INSERT INTO model SELECT * FROM new")
        duck.unregister("new")
        history.append((result.version, _duck_rows(duck)))
        assert _engine_rows(uri) == history[-1][1], where
        assert open_table(uri).count() == len(history[-1][1])  # the log's numRecords
    for version, expected in history:
        assert _engine_rows(uri, version) == expected, version


def test_a_partition_condition_removes_whole_splits_without_rewriting(tmp_path: Path) -> None:
    rng = random.Random(7)
    uri = str(tmp_path / "t")
    data = _rows(rng, 0, 200)
    write_table(uri, data, partition_by="day")
    before = set(open_table(uri).files)
    new = data.filter(pa.compute.equal(data["day"], 3))
    write_table(uri, new, mode="overwrite", replace_where="day = 3", workers=1)
    after = set(open_table(uri).files)
    # every split of another day is kept as it is; the day's splits are replaced by new ones
    assert before - after == {p for p in before if "day=3/" in p}
    assert before - after
    (added,) = after - before
    assert "day=3/" in added
    assert _engine_rows(uri) == row_multiset(data.to_pylist())


def test_rows_outside_the_condition_are_refused_with_nothing_written(tmp_path: Path) -> None:
    rng = random.Random(9)
    uri = str(tmp_path / "t")
    write_table(uri, _rows(rng, 0, 100), partition_by="day")
    version = open_table(uri).version
    listing = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    new = _rows(rng, 500, 40)
    outside = [r for r in new.to_pylist() if r["day"] != 2]
    assert outside
    with pytest.raises(ReplaceWhereMismatchError, match=r"day = 2.*'id': \d+") as raised:
        write_table(uri, new, mode="overwrite", replace_where="day = 2")
    assert "'day': 2," not in str(raised.value)  # the sample row is one outside
    assert open_table(uri).version == version
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == listing


def test_a_null_outside_the_condition_is_refused(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, _rows(random.Random(3), 0, 20), partition_by="day")
    new = pa.table(
        {"id": [1], "day": [1], "n": [None], "msg": ["x"]}, schema=SCHEMA
    )  # n > 5 is null there: not a match
    with pytest.raises(ReplaceWhereMismatchError):
        write_table(uri, new, mode="overwrite", replace_where="n > 5")


def test_arguments_are_checked(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = _rows(random.Random(4), 0, 10)
    version = write_table(uri, data).version
    with pytest.raises(ArgumentError, match="replace_where"):
        write_table(uri, data, mode="append", replace_where="day = 1")
    with pytest.raises(ArgumentError, match="replace_where"):
        write_table(uri, data, mode="overwrite", replace_where="  ")
    with pytest.raises(QuerySyntaxError):
        write_table(uri, data, mode="overwrite", replace_where="nope = 1")
    assert open_table(uri).version == version


def test_a_replace_on_a_new_table_creates_it(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = _rows(random.Random(5), 0, 30)
    new = data.filter(pa.compute.less(data["day"], 2))
    write_table(uri, new, mode="overwrite", replace_where="day < 2", partition_by="day")
    assert _engine_rows(uri) == row_multiset(new.to_pylist())
    with pytest.raises(ReplaceWhereMismatchError):
        write_table(str(tmp_path / "u"), data, mode="overwrite", replace_where="day < 2")
    assert not os.path.exists(tmp_path / "u" / "_transaction_log")
