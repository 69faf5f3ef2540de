"""Dates past Tantivy's span (its nanosecond i64: 1677-2262) through the JSON feed: the index
holds them clamped into the span (never wrapped around by an overflow) and range conditions
answer as on the dates written."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table

FEED = "spark.indextables.indexWriter.feed"
EPOCH = dt.date(1970, 1, 1)
# Tantivy's span in days from the epoch (its dates are i64 nanoseconds).
LOW, HIGH = dt.date(1677, 9, 22), dt.date(2262, 4, 11)


def _days(rng: random.Random, n: int) -> list[int | None]:
    edges = [2**31 - 1, -(2**31), 200_000_000, -200_000_000, 106_751, 106_752, -106_752, 0]
    out: list[int | None] = []
    for _ in range(n):
        pick = rng.random()
        if pick < 0.3:
            out.append(rng.choice(edges))
        elif pick < 0.4:
            out.append(None)
        elif pick < 0.7:
            out.append(rng.randint(-(2**31), 2**31 - 1))
        else:
            out.append(rng.randint(-120_000, 120_000))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_far_dates_answer_range_conditions_as_written(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    days = _days(rng, 300)
    table = pa.table({"d": pa.array(days, pa.date32()), "i": pa.array(range(len(days)))})
    uri = str(tmp_path / "t")
    write_table(uri, table, options={FEED: "json"})
    searched = open_table(uri)
    bounds = [LOW, HIGH, dt.date(2000, 1, 1), dt.date(1700, 1, 1), dt.date(2250, 6, 1)]
    for bound in bounds:
        where = f"d > date '{bound.isoformat()}'"
        limit = (bound - EPOCH).days
        expected = sorted(i for i, d in enumerate(days) if d is not None and d > limit)
        got = sorted(searched.search(where=where).column("i").to_pylist())
        assert got == expected, where
        assert searched.count(where=where) == len(expected), where
    # The values read back are the values written, whatever the index holds.
    back = searched.to_arrow().sort_by("i").column("d").cast(pa.int32()).to_pylist()
    assert back == days
