"""The exact aggregation fallback streams: batch by batch, the same answer as all at once."""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search.aggregate import arrowagg
from indextables.search.aggregate.aggspec import histogram, parse_group_by, parse_metrics
from indextables.search.aggregate.arrowagg import aggregate_rows
from indextables.search.aggregate.tableagg import output_schema
from indextables.search.errors import ArithmeticOverflowError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import canonical

METRICS = {
    "n": "count",
    "n_x": ("count", "x"),
    "sum_i": ("sum", "i"),
    "sum_x": ("sum", "x"),
    "avg_i": ("avg", "i"),
    "min_x": ("min", "x"),
    "max_x": ("max", "x"),
    "min_s": ("min", "s"),
    "max_day": ("max", "day"),
}


def hostile(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)

    def some(values: list[object]) -> list[object]:
        return [None if rng.random() < 0.2 else rng.choice(values) for _ in range(n)]

    return pa.table(
        {
            "k": pa.array(some(["a", "b", "", "é"]), pa.string()),
            "i": pa.array(some([0, 1, -7, 2**62, -(2**62), 2**40]), pa.int64()),
            "x": pa.array(some([0.0, -0.0, math.nan, math.inf, 1.5, -2.25, 1e300]), pa.float64()),
            "s": pa.array(some(["", "z", "é", "a b"]), pa.string()),
            "day": pa.array(some([0, 1, -719162, 2932896]), pa.int32()).cast(pa.date32()),
        }
    )


def run(table: pa.Table, group_by: list[object], batches: list[pa.RecordBatch]) -> pa.Table:
    groups, metrics = parse_group_by(group_by), parse_metrics(METRICS)
    schema = output_schema(table.schema, groups, metrics)
    return aggregate_rows(iter(batches), groups, metrics, schema, rows_schema=table.schema)


def same(a: pa.Table, b: pa.Table) -> bool:
    def rows(t: pa.Table) -> list[object]:
        out = []
        for row in t.to_pylist():
            # Floating sums add in another order batch by batch (as Spark's partitions do).
            out.append(
                {
                    k: round(v, 6) if isinstance(v, float) and math.isfinite(v) else v
                    for k, v in row.items()
                }
            )
        return [canonical(r) for r in out]

    return rows(a) == rows(b)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("group_by", [[], ["k"], ["k", "s"], [histogram("i", 2**40)], ["day"]])
def test_batches_give_the_answer_of_one_batch(
    seed: int, group_by: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = hostile(seed, 300)
    monkeypatch.setattr(arrowagg, "_COMPACT_ROWS", 8)  # merge partial groups often
    try:
        whole = run(table, group_by, table.to_batches())
    except ArithmeticOverflowError:
        with pytest.raises(ArithmeticOverflowError):
            run(table, group_by, table.to_batches(max_chunksize=7))
        return
    assert same(run(table, group_by, table.to_batches(max_chunksize=7)), whole)
    assert same(run(table, group_by, table.to_batches(max_chunksize=1)), whole)


def test_no_batches_is_one_global_row_or_no_groups() -> None:
    table = hostile(1, 0)
    assert run(table, [], []).to_pylist()[0]["n"] == 0
    assert run(table, ["k"], []).num_rows == 0


def test_memory_holds_one_batch_not_the_rows() -> None:
    rows = 20_000
    schema = pa.schema([("k", pa.int64()), ("i", pa.int64()), ("x", pa.float64())])
    peaks: list[int] = []

    def batches() -> Iterator[pa.RecordBatch]:
        base = pa.total_allocated_bytes()
        for b in range(100):  # 100 batches of 20,000 rows: 48 MB in all
            keys = pa.array([(b * rows + r) % 3 for r in range(rows)], pa.int64())
            yield pa.record_batch([keys, keys, keys.cast(pa.float64())], schema=schema)
            peaks.append(pa.total_allocated_bytes() - base)

    groups = parse_group_by(["k"])
    metrics = parse_metrics({"n": "count", "s": ("sum", "i"), "m": ("max", "x")})
    out = aggregate_rows(
        batches(), groups, metrics, output_schema(schema, groups, metrics), rows_schema=schema
    )
    assert out.column("n").to_pylist() == [666_667, 666_667, 666_666]
    assert max(peaks) < 10_000_000, max(peaks)  # a few batches, never all 48 MB
