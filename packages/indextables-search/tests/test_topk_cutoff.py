"""Top-k by a ``DESC`` key reads splits best first and searches past a cutoff only.

An ordered search by a ``DESC`` first key on a fast integer, double or date field
reads its splits one after another, highest max statistic first; once ``limit`` rows
are kept, later splits search only rows whose first key reaches the k-th kept value,
and a split whose max is below it is not opened. The answer must still equal a full
sort of every hit (DuckDB over the unordered read, ties by the row's place in it), on
random data with nulls, NaN, -0.0, ties, dates beyond Tantivy's span and splits whose
value ranges overlap or not.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from indextables.search import SearchTable, open_table, write_table
from indextables.search.read.topk import OrderKey, TopK, cutoff_condition, first_key_ceiling
from indextables.search.schema.mapping import FieldKind, FieldSpec

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}
WORDS = ["alpha", "beta", "gamma", "error"]
FLOATS = [0.0, -0.0, 1.5, -2.0, math.nan, math.inf, -math.inf, None, 7.25]
# Beyond Tantivy's date span (1677-09-21 .. 2262-04-11): indexed clamped to its ends.
FAR = [datetime(2300, 1, 1, tzinfo=UTC), datetime(1600, 6, 1, tzinfo=UTC)]


def _part(rng: random.Random, start: int, count: int, base: int) -> pa.Table:
    """Rows ``start ..`` whose ``n`` and ``ts`` lie around ``base`` (splits apart or not)."""
    epoch = datetime(2024, 1, 1, tzinfo=UTC)

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.1 else value

    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "n": pa.array([maybe(base + rng.randrange(30)) for _ in range(count)], pa.int64()),
            "ts": pa.array(
                [
                    maybe(
                        rng.choice(FAR)
                        if rng.random() < 0.05
                        else epoch + timedelta(seconds=base + rng.randrange(30))
                    )
                    for _ in range(count)
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "d": pa.array(
                [
                    maybe(date(2024, 1, 1) + timedelta(days=base + rng.randrange(5)))
                    for _ in range(count)
                ],
                pa.date32(),
            ),
            "f": pa.array([rng.choice(FLOATS) for _ in range(count)], pa.float64()),
            "message": [" ".join(rng.choices(WORDS, k=rng.randrange(1, 4))) for _ in range(count)],
        }
    )


def build(tmp_path: Path, seed: int) -> SearchTable:
    rng = random.Random(seed)
    uri = str(tmp_path / f"t{seed}")
    start = 0
    bases = [rng.choice([0, 10, 40, 80, 120]) for _ in range(rng.randrange(3, 7))]
    for base in bases:
        count = rng.randrange(1, 60)
        write_table(uri, _part(rng, start, count, base), mode="append", options=OPTIONS)
        start += count
    return open_table(uri)


def oracle(table: SearchTable, keys: list[tuple[str, bool]], k: int, **search: Any) -> list[int]:
    """The ids of the first k hits by DuckDB over the unordered read, ties by place."""
    found = table.search(**search)
    found = found.append_column("rn", pa.array(range(found.num_rows), pa.int64()))
    order = ", ".join(
        f'"{c}" DESC NULLS LAST' if desc else f'"{c}" ASC NULLS FIRST' for c, desc in keys
    )
    # DuckDB orders NaN above every number, as Spark does, and -0.0 equal to 0.0.
    rows = duckdb.from_arrow(found).query(
        "hits", f"SELECT id FROM hits ORDER BY {order}, rn LIMIT {k}"
    )
    return [r[0] for r in rows.fetchall()]


@pytest.mark.parametrize("seed", range(1, 9))
def test_desc_top_k_with_cutoffs_equals_a_full_sort(tmp_path: Path, seed: int) -> None:
    table = build(tmp_path, seed)
    rng = random.Random(seed * 31)
    total = table.count()
    for _ in range(14):
        first = rng.choice(["n", "ts", "d", "f"])
        rest = [(c, rng.random() < 0.5) for c in rng.sample(["n", "f", "id"], rng.randrange(0, 2))]
        keys = [(first, True), *[(c, d) for c, d in rest if c != first]]
        k = rng.choice([1, 2, 5, 17, total])
        search: dict[str, Any] = {}
        if rng.random() < 0.5:
            search["query"] = f"message:{rng.choice(WORDS)}"
        text = ", ".join(f"{c} {'DESC' if d else 'ASC'}" for c, d in keys)
        got = table.search(order_by=text, limit=k, **search)
        assert got.column("id").to_pylist() == oracle(table, keys, k, **search), (text, k)
        assert got.schema == table.schema


def test_splits_below_the_cutoff_are_not_read(tmp_path: Path) -> None:
    """Four splits of disjoint ``n``: the top 5 by ``n DESC`` read the highest alone."""
    uri = str(tmp_path / "t")
    rng = random.Random(4)
    for number, base in enumerate([200, 0, 600, 400]):
        write_table(uri, _part(rng, number * 50, 50, base).drop_columns(["ts"]), mode="append")
    table = open_table(uri)
    got = table.search(order_by="n DESC, id ASC", limit=5)
    assert table.last_metrics is not None
    assert table.last_metrics.splits_read == 1
    want = sorted(
        (r for r in table.to_arrow().to_pylist() if r["n"] is not None),
        key=lambda r: (-r["n"], r["id"]),
    )[:5]
    assert got.column("id").to_pylist() == [r["id"] for r in want]
    assert min(got.column("n").to_pylist()) >= 600


def test_topk_cutoff_is_the_kth_kept_first_key() -> None:
    keys = [OrderKey("n", True)]
    top = TopK(keys, 3)
    assert top.cutoff() is None
    top.add(pa.record_batch({"n": pa.array([5, None, 9], pa.int64())}), split=1)
    assert top.cutoff() is None  # the third kept row is null
    top.add(pa.record_batch({"n": pa.array([7, 1], pa.int64())}), split=0)
    assert top.cutoff() == 5
    floats = TopK([OrderKey("f", True)], 2)
    floats.add(pa.record_batch({"f": pa.array([math.nan, math.nan, 1.0])}))
    assert floats.cutoff() is None  # NaN: no range bounds the rest


def test_ties_across_splits_added_out_of_order_keep_split_order() -> None:
    top = TopK([OrderKey("n", True)], 3)
    top.add(pa.record_batch({"n": [4, 4], "tag": ["s2a", "s2b"]}), split=2)
    top.add(pa.record_batch({"n": [4], "tag": ["s0"]}), split=0)
    top.add(pa.record_batch({"n": [4], "tag": ["s1"]}), split=1)
    found = top.result()
    assert found is not None
    assert found.column("tag").to_pylist() == ["s0", "s1", "s2a"]


def test_only_a_desc_fast_numeric_or_date_first_key_cuts() -> None:
    def spec(kind: FieldKind, fast: bool = True) -> FieldSpec:
        return FieldSpec(name="c", kind=kind, tokenizer=None, stored=True, indexed=True, fast=fast)

    down, up = [OrderKey("c", True)], [OrderKey("c", False)]
    for kind in (FieldKind.I64, FieldKind.F64, FieldKind.DATE):
        condition = cutoff_condition(down, 3, fields={"c": spec(kind)}, partition_columns=())
        assert condition is not None
        assert (condition.op, condition.values) == (">=", (3,))
        assert cutoff_condition(up, 3, fields={"c": spec(kind)}, partition_columns=()) is None
        assert (
            cutoff_condition(down, 3, fields={"c": spec(kind, False)}, partition_columns=()) is None
        )
    assert (
        cutoff_condition(down, 3, fields={"c": spec(FieldKind.I64)}, partition_columns=("c",))
        is None
    )
    assert (
        cutoff_condition(down, "x", fields={"c": spec(FieldKind.STRING)}, partition_columns=())
        is None
    )


def test_first_key_ceiling_reads_integer_and_timestamp_maxima_only() -> None:
    down = [OrderKey("c", True)]
    assert first_key_ceiling(down, pa.int64(), {"c": "42"}) == 42
    assert first_key_ceiling(down, pa.timestamp("us", tz="UTC"), {"C": "1700000000000000"}) == (
        1700000000000000
    )
    assert first_key_ceiling(down, pa.float64(), {"c": "4.5"}) is None  # NaN may be left out
    assert first_key_ceiling(down, pa.int64(), {"c": "2024-01-01"}) is None
    assert first_key_ceiling(down, pa.int64(), None) is None
    assert first_key_ceiling([OrderKey("c", False)], pa.int64(), {"c": "42"}) is None
