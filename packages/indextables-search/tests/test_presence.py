"""Null tests and ``!=`` answered exactly by the index, on fast fields or not.

A number, boolean or date field that is indexed but not fast (a table whose
``fastfields`` option names other columns) holds a value exactly where it holds
a term: ``IS [NOT] NULL`` is a query over the field's whole domain, ``!=``
leaves nulls out. Each is checked on
random hostile rows (nulls everywhere, NaN of both signs, -0.0, infinities,
the extreme dates) against DuckDB, twice: the rows the splits return before
the engine re-applies the filter must already be exactly the answer, and a
count must come from the index (never from reading rows).
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import random
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from indextables.search import open_table, searchtable, write_table

_LOG_NAME = "indextables.search.searchtable"
_FAST_ONLY_TEXT = {"spark.indextables.indexing.fastfields": "s"}

WHERES = (
    "i IS NULL",
    "i IS NOT NULL",
    "f IS NULL",
    "f IS NOT NULL",
    "b IS NULL",
    "b IS NOT NULL",
    "d IS NULL",
    "d IS NOT NULL",
    "b = true",
    "b = false",
    "i != 3",
    "i != -9223372036854775808",
    "i IS NOT NULL AND b IS NULL",
    "i != 0 AND d IS NOT NULL",
)
# Counts do not take these from the index (double comparisons are not exact there: a
# NaN's sign decides where Tantivy sorts it): checked as rows only.
ROWS_ONLY = ("f != 0.0", "f != 1.5")


def _negative_nan() -> float:
    return struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0001))[0]


def _rows(seed: int, count: int) -> pa.Table:
    rng = random.Random(seed)
    ints = [0, 3, -1, 2**63 - 1, -(2**63), 7]
    floats = [0.0, -0.0, math.inf, -math.inf, math.nan, _negative_nan(), 1.5, -2.25]
    dates = [
        datetime.date(1, 1, 1),
        datetime.date(9999, 12, 31),
        datetime.date(1677, 9, 21),
        datetime.date(2262, 4, 12),
        datetime.date(1970, 1, 1),
        datetime.date(2024, 2, 29),
    ]

    def maybe(values: list[Any]) -> Any:
        return None if rng.random() < 0.3 else rng.choice(values)

    return pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "i": pa.array([maybe(ints) for _ in range(count)], pa.int64()),
            "f": pa.array([maybe(floats) for _ in range(count)], pa.float64()),
            "b": pa.array([maybe([True, False]) for _ in range(count)], pa.bool_()),
            "d": pa.array([maybe(dates) for _ in range(count)], pa.date32()),
            "s": pa.array([maybe(["a", "", "b c"]) for _ in range(count)], pa.string()),
        }
    )


@pytest.fixture(params=["numbers_not_fast", "numbers_fast"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, pa.Table]:
    data = _rows(17, 300)
    options = _FAST_ONLY_TEXT if request.param == "numbers_not_fast" else {}
    uri = str(tmp_path / "t")
    for start in (0, 150):
        write_table(uri, data.slice(start, 150), options=options)
    opened = open_table(uri)
    mapping = json.loads(opened._view.splits[0].entry.doc_mapping_json)
    fields = {f["name"]: f["fast"] for f in mapping}
    assert fields["i"] is (request.param == "numbers_fast")  # the option took effect
    return opened, data


def _oracle(data: pa.Table, where: str) -> list[int]:
    connection = duckdb.connect()
    connection.register("t", data)
    return sorted(r[0] for r in connection.execute(f"SELECT id FROM t WHERE {where}").fetchall())


def _split_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the ids every split read returns, before the engine re-applies ``where``."""
    seen: list[int] = []
    read = searchtable.split_batches

    def recording(*args: Any, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        for batch in read(*args, **kwargs):
            seen.extend(batch.column("id").to_pylist())
            yield batch

    monkeypatch.setattr(searchtable, "split_batches", recording)
    return seen


@pytest.mark.parametrize("where", WHERES + ROWS_ONLY)
def test_the_splits_return_exactly_the_rows_kept(
    table: tuple[Any, pa.Table], where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened, data = table
    expected = _oracle(data, where)
    seen = _split_rows(monkeypatch)
    got = sorted(opened.search(where=where, columns=["id"]).column("id").to_pylist())
    assert got == expected
    assert sorted(seen) == expected  # the index alone answered: nothing left for the filter


@pytest.mark.parametrize("where", WHERES)
def test_counts_come_from_the_index(
    table: tuple[Any, pa.Table], where: str, caplog: pytest.LogCaptureFixture
) -> None:
    opened, data = table
    caplog.set_level(logging.DEBUG, logger=_LOG_NAME)
    assert opened.count(where=where) == len(_oracle(data, where))
    answered = [
        r.getMessage().rsplit(" ", 1)[-1]
        for r in caplog.records
        if r.name == _LOG_NAME and " answered from the " in r.getMessage()
    ]
    assert "index" in answered
    assert "rows" not in answered
