"""Splits read at once come back in split order, with bounded read-ahead and a row cap."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from indextables.search.read import splitorder


def _split_batches(sizes: list[int]) -> Callable[[int], Iterator[pa.RecordBatch]]:
    """A stand-in for a split read over splits of ``sizes`` rows, the later ones faster."""

    def batches(i: int) -> Iterator[pa.RecordBatch]:
        time.sleep(0.01 * (len(sizes) - i))  # later splits finish first when run in parallel
        for start in range(0, sizes[i], 3):
            count = min(3, sizes[i] - start)
            yield pa.record_batch({"split": [i] * count, "row": list(range(start, start + count))})

    return batches


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[int, int]]:
    return [
        (s, r)
        for b in batches
        for s, r in zip(b["split"].to_pylist(), b["row"].to_pylist(), strict=True)
    ]


@pytest.mark.parametrize("held", [32 << 20, 1])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_splits_read_in_parallel_come_back_in_split_order(
    threads: int, held: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``held=1``: every split's read ahead stops after one batch, the rest follows in turn."""
    monkeypatch.setattr(splitorder, "READ_THREADS", threads)
    monkeypatch.setattr(splitorder, "HELD_BYTES", held)
    sizes = [4, 0, 7, 1, 5, 2]
    with ThreadPoolExecutor(threads) as pool:
        splits = splitorder.ahead(pool, _split_batches(sizes), len(sizes), None)
        batches = list(splitorder.in_order(splits, None, None))
    assert _rows(batches) == [(i, r) for i, size in enumerate(sizes) for r in range(size)]
    together = list(splitorder.ordered_batches(_split_batches(sizes), len(sizes), parallel=True))
    assert _rows(together) == _rows(batches)


@pytest.mark.parametrize(("sizes", "cap"), [([4, 30, 2], 10), ([6, 6, 6], 10), ([3, 3], 5)])
def test_parallel_reads_stop_past_the_row_cap(
    sizes: list[int], cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(splitorder, "READ_THREADS", 2)
    with ThreadPoolExecutor(2) as pool:
        splits = splitorder.ahead(pool, _split_batches(sizes), len(sizes), cap)
        with pytest.raises(splitorder.RowCapExceeded):
            list(splitorder.in_order(splits, cap, None))
    with ThreadPoolExecutor(2) as pool:
        splits = splitorder.ahead(pool, _split_batches(sizes), len(sizes), sum(sizes))
        assert sum(b.num_rows for b in splitorder.in_order(splits, sum(sizes), None)) == sum(sizes)


def test_a_stop_at_read_goes_split_by_split_and_stops_mid_split() -> None:
    read: list[int] = []
    split_batches = _split_batches([4, 5, 6])

    def batches(i: int) -> Iterator[pa.RecordBatch]:
        read.append(i)
        return split_batches(i)

    out = list(splitorder.ordered_batches(batches, 3, parallel=True, stop_at=6))
    assert sum(b.num_rows for b in out) == 7  # split 0 (4 rows), then a batch of split 1 (3)
    assert read == [0, 1]


def test_reads_share_the_process_readers_and_leave_none_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every parallel read runs on the process's split readers (no threads of its own per
    call), and one given up part-way (here past its row cap) returns only once the split
    still being read has ended and been closed."""
    monkeypatch.setattr(splitorder, "HELD_BYTES", 1)  # a read ahead keeps its split open
    names: set[str] = set()
    closed: list[int] = []

    def batches(i: int) -> Iterator[pa.RecordBatch]:
        names.add(threading.current_thread().name)
        try:
            if i == 1:
                time.sleep(0.3)  # still running when split 0 passes the cap
            for k in range(3):
                yield pa.record_batch({"split": [i] * 5, "row": list(range(5 * k, 5 * k + 5))})
        finally:
            closed.append(i)

    for _ in range(3):
        together = splitorder.ordered_batches(batches, 4, parallel=True)
        assert _rows(list(together)) == [(i, r) for i in range(4) for r in range(15)]
    pool = splitorder._readers.get()
    assert len(names) <= pool._max_workers
    assert all(name.startswith("indextables-splits") for name in names), names
    closed.clear()
    capped = splitorder.ordered_batches(batches, 4, parallel=True, row_cap=3)
    with pytest.raises(splitorder.RowCapExceeded):
        list(capped)
    assert 1 in closed  # ended and closed before the read returned, not later
