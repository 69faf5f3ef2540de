"""Whole-split reads (``read/wholesplit.py``) against DuckDB over the same rows.

Seeded hostile tables (``diffcases.rows``: every column kind the engine writes, with
bounds, NaNs of several bit patterns, signed zeros, empty and multi-byte strings,
nulls) plus long strings that cross doc-store blocks and NUL characters are written
and read back with the whole-split path taken for every split read (a spy counts
it). DuckDB is the oracle: it filters the written rows by the same partition
condition, and the rows read must equal its answer as multisets (``EXCEPT ALL``
both ways, with each float's sign bit as an extra column: DuckDB compares -0.0 equal
to 0.0). DuckDB also counts the partitions the condition keeps, which is how many
splits must be read whole (one write per partition and append, nothing merged), and
after a MERGE SPLITS the rows must still equal DuckDB's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from diffcases import OPTIONS, PARTITION_BY, rows

from indextables.search import open_table, write_table
from indextables.search.read import wholesplit
from indextables.search.write.merge import merge_table

COPY_KEY = "spark.indextables.indexWriter.arrowCopy"
#: Conditions over the partition columns only (a read that still takes whole splits),
#: in Spark's dialect, which DuckDB shares for these.
CONDITIONS = [
    None,
    "p = 'p1'",
    "p IS NULL OR dec > 0",
    "p <> 'P1' AND dec < 0",
    "dec IS NULL",
    "NOT (p = 'P1') OR dec IS NOT NULL",
]
FLOATS = ("f32", "f64")
#: Copy modes where the whole-split path (not the covering copy) reads the split.
MODES = ("required", "numeric")


def _hostile(seed: int, n: int) -> pa.Table:
    """``diffcases.rows`` with two more string columns: long values (up to ~40 KB, past
    a doc-store block) and values holding NUL and other control characters."""
    data = rows(seed, n)
    rng = random.Random(seed * 7 + 1)
    long = [None if rng.random() < 0.1 else "ü" * rng.randint(0, 20_000) + str(i) for i in range(n)]
    odd = [
        rng.choice(["\x00", "a\x00b", "\r\n", "\x7f", "\u2028", "\ufeff", "", None])
        for _ in range(n)
    ]
    return data.append_column("long", pa.array(long, pa.string())).append_column(
        "odd", pa.array(odd, pa.string())
    )


def _write(tmp_path: Path, data: pa.Table, mode: str, appends: int) -> str:
    uri = str(tmp_path / f"t-{mode}-{appends}")
    step = -(-data.num_rows // appends)
    for start in range(0, data.num_rows, step):
        write_table(
            uri,
            data.slice(start, step),
            partition_by=PARTITION_BY,
            options={**OPTIONS, COPY_KEY: mode},
            workers=1,
        )
    return uri


def _spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"whole": 0}
    real = wholesplit._batches

    def whole(*args: Any, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        counts["whole"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(wholesplit, "_batches", whole)
    return counts


def _select(columns: list[str]) -> str:
    """The columns, and each float's sign bit (top level and in the struct ``j``)."""
    parts = [f'"{c}"' for c in columns]
    parts += [f'signbit("{c}") AS "{c}_sign"' for c in columns if c in FLOATS]
    if "j" in columns:
        parts.append("signbit(j.v) AS j_sign")
    return ", ".join(parts)


def _assert_same_rows(duck: Any, found: pa.Table, columns: list[str], where: str | None) -> None:
    duck.register("found", found)
    condition = f"WHERE {where}" if where else ""
    duck.execute(f"CREATE OR REPLACE TEMP VIEW wanted AS SELECT * FROM data {condition}")
    wanted = duck.execute("SELECT count(*) FROM wanted").fetchall()[0][0]
    assert found.num_rows == wanted, where
    pick = _select(columns)
    for left, right in (("found", "wanted"), ("wanted", "found")):
        extra = duck.execute(
            f"SELECT {pick} FROM {left} EXCEPT ALL SELECT {pick} FROM {right} LIMIT 3"
        ).fetchall()
        assert extra == [], (left, right, where, extra)
    duck.unregister("found")


def _partitions(duck: Any, where: str | None) -> int:
    """How many partitions (p, dec) hold rows the condition keeps."""
    condition = f"WHERE {where}" if where else ""
    return int(
        duck.execute(f"SELECT count(DISTINCT (p, dec)) FROM data {condition}").fetchall()[0][0]
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [21, 22])
def test_whole_split_reads_equal_duckdb_over_the_written_rows(
    tmp_path: Path, seed: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _hostile(seed, 150 + seed)
    uri = _write(tmp_path, data, mode, appends=1)
    table = open_table(uri)
    rng = random.Random(seed)
    monkeypatch.setattr(wholesplit, "WHOLE_ROWS", rng.choice([3, 16, 65_536]))
    duck = duckdb.connect()
    duck.register("data", data)
    names = data.column_names
    strings = ["s", "t", "long", "odd"]  # a string column keeps the covering copy out
    for where in CONDITIONS:
        columns = sorted({*rng.sample(names, rng.randint(1, len(names))), rng.choice(strings)})
        for chosen in (None, columns):
            spied = _spy(monkeypatch)
            found = table.to_arrow(columns=chosen, where=where)
            picked = chosen or names
            assert found.column_names == picked
            assert found.schema == data.select(picked).schema
            # every split read is read whole: at least those of the kept partitions
            # (a plan may keep a split the condition then filters out row by row)
            assert _partitions(duck, where) <= spied["whole"] <= len(table.files)
            _assert_same_rows(duck, found, picked, where)


def test_whole_split_reads_after_appends_and_a_merge_equal_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _hostile(23, 240)
    uri = _write(tmp_path, data, "numeric", appends=4)
    duck = duckdb.connect()
    duck.register("data", data)
    names = data.column_names
    monkeypatch.setattr(wholesplit, "WHOLE_ROWS", 5)
    spied = _spy(monkeypatch)
    found = open_table(uri).to_arrow()
    assert spied["whole"] == len(open_table(uri).files)
    _assert_same_rows(duck, found, names, None)
    assert merge_table(uri)["new_files"] >= 1
    merged = open_table(uri)
    spied = _spy(monkeypatch)
    for where in CONDITIONS:
        found = merged.to_arrow(where=where)
        _assert_same_rows(duck, found, names, where)
    assert spied["whole"] > 0
