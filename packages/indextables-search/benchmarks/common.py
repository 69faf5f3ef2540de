"""What the search benchmarks share: the questions, the timing loop, DuckDB's row count,
and the command-line preamble (``--rows``, ``--repeat``, ``--path``)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

NEEDLE, NEEDLE_SQL = "message:needlezz", "message LIKE '%needlezz%'"
EXACT = "host = 'host-42'"


def measure(action: Callable[[], Any], repeat: int, *, warm: int = 1) -> tuple[float, float, Any]:
    """Median and spread (max - min) of ``repeat`` timed runs after ``warm`` untimed ones."""
    for _ in range(warm):
        action()
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times) - min(times), result


def measure_pair(
    ours: Callable[[], Any], base: Callable[[], Any], repeat: int, *, warm: int = 1
) -> tuple[tuple[float, float, Any], tuple[float, float, Any]]:
    """:func:`measure` of two actions with their runs interleaved (ours, base, ours, ...),
    so a change of load on a shared machine falls on both alike."""
    for _ in range(warm):
        ours()
        base()
    times: tuple[list[float], list[float]] = ([], [])
    results: list[Any] = [None, None]
    for _ in range(repeat):
        for at, action in enumerate((ours, base)):
            start = time.perf_counter()
            results[at] = action()
            times[at].append(time.perf_counter() - start)
    return (
        (statistics.median(times[0]), max(times[0]) - min(times[0]), results[0]),
        (statistics.median(times[1]), max(times[1]) - min(times[1]), results[1]),
    )


def duck_rows(db: Any, sql: str) -> Callable[[], int]:
    """A run of ``sql`` on DuckDB connection ``db`` fetching its answer as Arrow; its rows."""

    def rows() -> int:
        result = db.sql(sql)
        fetch = getattr(result, "to_arrow_table", None) or result.fetch_arrow_table
        return int(fetch().num_rows)

    return rows


def parser(*, repeat: int, path: str | None, path_help: str) -> argparse.ArgumentParser:
    """The arguments every search benchmark takes: ``--rows``, ``--repeat``, ``--path``."""
    found = argparse.ArgumentParser()
    found.add_argument("--rows", type=int, default=2_000_000)
    found.add_argument("--repeat", type=int, default=repeat)
    found.add_argument("--path", default=path, help=path_help)
    return found
