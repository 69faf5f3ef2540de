"""read/readahead.py: several readers at once, items handed over in the readers' order."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from indextables.search.read.readahead import in_order


def _sources(
    counts: list[int], *, delays: bool, seen: list[tuple[int, int]] | None = None
) -> list[Callable[[], Iterator[tuple[int, int]]]]:
    rng = random.Random(7)
    pauses = [[rng.random() * 0.002 if delays else 0.0 for _ in range(n)] for n in counts]

    def source(k: int) -> Iterator[tuple[int, int]]:
        for i, pause in enumerate(pauses[k]):
            time.sleep(pause)
            if seen is not None:
                seen.append((k, i))
            yield (k, i)

    return [lambda k=k: source(k) for k in range(len(counts))]


@pytest.mark.parametrize("threads", [1, 2, 4, 8])
def test_items_come_in_the_readers_order(threads: int) -> None:
    counts = [5, 0, 3, 9, 1, 0, 4, 7]
    got = list(in_order(_sources(counts, delays=True), threads=threads))
    assert got == [(k, i) for k, n in enumerate(counts) for i in range(n)]


def test_no_thread_outlives_a_consumer_that_stops_early() -> None:
    before = threading.active_count()
    items = in_order(_sources([50] * 6, delays=False), threads=4, depth=2)
    assert [next(items) for _ in range(3)] == [(0, 0), (0, 1), (0, 2)]
    items.close()
    assert threading.active_count() == before


def test_a_reader_ahead_waits_once_its_queue_is_full() -> None:
    seen: list[tuple[int, int]] = []
    items = in_order(_sources([1, 100, 100], delays=False, seen=seen), threads=3, depth=2)
    assert next(items) == (0, 0)
    time.sleep(0.3)  # readers 1 and 2 run ahead, then block on their full queues
    ahead = [k for k, _ in seen if k > 0]
    # each may have produced its queue's worth plus the one it is trying to put
    assert ahead.count(1) <= 3
    assert ahead.count(2) <= 3
    items.close()


def test_a_failure_is_raised_in_its_turn_after_the_items_before_it() -> None:
    def failing() -> Iterator[tuple[int, int]]:
        yield (1, 0)
        raise ValueError("split 1 is damaged")

    sources = [*_sources([2], delays=False), failing, *_sources([3], delays=False)]
    got: list[tuple[int, int]] = []
    before = threading.active_count()
    items = in_order(sources, threads=3)
    got.extend(next(items) for _ in range(3))
    with pytest.raises(ValueError, match="split 1 is damaged"):
        next(items)
    assert got == [(0, 0), (0, 1), (1, 0)]
    assert threading.active_count() == before


def test_a_stopped_reader_closes_its_source() -> None:
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            yield from range(1000)
        finally:
            closed.set()

    items = in_order([source, source], threads=2, depth=1)
    assert next(items) == 0
    items.close()
    assert closed.is_set()
