"""Optimized write, balanced mode: a writer closes a split at maxSplitSize (write_table too)."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import OptionError
from indextables.search.options import OptimizeWrite, parse_optimize_write, parse_write
from indextables.search.table.tableaccess import load_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import random_table, row_multiset

OW = "spark.indextables.write.optimizeWrite."
BALANCED = {OW + "enabled": "true", OW + "distributionMode": "balanced"}


def _splits(uri: str) -> list[tuple[tuple[tuple[str, str | None], ...], int]]:
    return sorted(
        (tuple(sorted(s.partition_values.items())), s.num_records or 0)
        for s in load_view(uri, {}).splits
    )


def test_defaults_and_values() -> None:
    assert parse_optimize_write({}) == OptimizeWrite(False, "hash", 4 << 30)
    assert not parse_optimize_write({}).repartitions
    settings = parse_optimize_write({**BALANCED, OW.upper() + "MAXSPLITSIZE": "2G"})
    assert (settings.repartitions, settings.rolls, settings.max_split_bytes) == (
        True,
        True,
        2 << 30,
    )
    hashed = parse_optimize_write({OW + "enabled": "true"})
    assert (hashed.repartitions, hashed.rolls) == (True, False)
    assert parse_write(BALANCED).max_split_bytes == 4 << 30
    assert parse_write({OW + "enabled": "true"}).max_split_bytes is None
    assert parse_write({OW + "maxSplitSize": "1M"}).max_split_bytes is None  # not enabled


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("enabled", "yes please", "optimizewrite.enabled"),
        ("distributionMode", "range", "optimizewrite.distributionmode"),
        ("maxSplitSize", "-5", "optimizewrite.maxsplitsize"),
        ("maxSplitSize", "0", "optimizewrite.maxsplitsize"),
    ],
)
def test_bad_values_name_the_option(key: str, value: str, match: str) -> None:
    with pytest.raises(OptionError, match=match):
        parse_optimize_write({OW + key: value})


def test_balanced_write_rolls_splits_and_keeps_every_row(tmp_path: Path) -> None:
    data = random_table(5, 1200)
    per_row = pa.Table.from_batches(data.to_batches()).slice(0, 200).nbytes / 200
    uri = str(tmp_path / "t")
    options = {
        **BALANCED,
        OW + "maxSplitSize": str(int(per_row * 450)),
        "spark.indextables.indexWriter.batchSize": "100",
    }
    write_table(uri, data, options=options)
    counts = [n for _, n in _splits(uri)]
    assert sum(counts) == 1200
    assert len(counts) >= 2  # one split without rolling
    assert all(n <= 600 for n in counts)  # closed within a batch of passing the size
    assert row_multiset(open_table(uri).to_arrow().to_pylist()) == row_multiset(data.to_pylist())


def test_rolling_is_per_partition_value(tmp_path: Path) -> None:
    data = pa.table({"id": list(range(900)), "part": ["a", "b", "c"] * 300, "s": ["x" * 50] * 900})
    uri = str(tmp_path / "t")
    options = {
        **BALANCED,
        OW + "maxSplitSize": "10K",
        "spark.indextables.indexWriter.batchSize": "300",
    }
    write_table(uri, data, partition_by="part", options=options)
    splits = _splits(uri)
    # Each batch of 300 rows routes 100 rows (~6K Arrow bytes) to each value: every value's
    # split closes on its second batch, and the third batch starts another.
    assert splits == sorted([((("part", v),), n) for v in "abc" for n in (200, 100)])
    rows = open_table(uri).to_arrow().sort_by("id").to_pylist()
    assert rows == data.to_pylist()


def test_hash_mode_and_no_optimize_write_never_roll(tmp_path: Path) -> None:
    data = random_table(6, 500)
    for k, options in enumerate(({OW + "enabled": "true", OW + "maxSplitSize": "1K"}, {})):
        uri = str(tmp_path / f"t{k}")
        write_table(uri, data, options=options)
        assert [n for _, n in _splits(uri)] == [500]
