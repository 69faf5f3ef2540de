"""Companion reads against DuckDB over the source, on random hostile tables and queries.

Per seed, the engine differential's table (``diffcases.rows``: integers of each
width, float/double with NaN, -0.0 and infinities, booleans, dates, instants,
wall-clock timestamps, exact and full-text strings, IP, binary, struct, a
decimal column; nulls everywhere, empty and unicode strings) is written as a
hive-partitioned Parquet directory (by ``p``) in two files per partition with
small row groups, and a companion is built over it. The same random cases as the
engine differential (``query``, ``textsearch``, ``fieldmatch``, ``where``,
``columns``, ``limit``) then compare ``search``, ``scan``, ``to_arrow`` and
``count`` with the oracle's rows (``check_case``). The default run takes 3 seeds;
the ``slow`` run 10 more (140 more seeds passed once by hand, 2026-11-27).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from indextables.search import build_companion, open_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import cases, rows
from test_search_differential import check_case, oracle_ids

FAST_SEEDS = (1, 2, 3)
SLOW_SEEDS = tuple(range(30, 40))
ROWS = 240

# A search for "A" on the case-sensitive `s` warns that "a" exists: expected here.
pytestmark = pytest.mark.filterwarnings(
    "ignore::indextables.search.query.casenotice.CaseMismatchWarning"
)


def _source(root: Path, data: pa.Table) -> None:
    half = data.num_rows // 2
    parquet = ds.ParquetFileFormat()
    for number, part in enumerate((data.slice(0, half), data.slice(half))):
        # The first half's files carry an offset index, so their hit rows are read page by
        # page (pages cut down to their hits when sparse); the second half's by row group.
        options = parquet.make_write_options(write_page_index=number == 0)
        ds.write_dataset(
            part, root, format="parquet", partitioning=["p"], partitioning_flavor="hive",
            basename_template=f"part-{number}-{{i}}.parquet", file_options=options,
            existing_data_behavior="overwrite_or_ignore", max_rows_per_group=17,
            min_rows_per_group=1,
        )  # fmt: skip


def _run(tmp_path: Path, seed: int, count: int) -> None:
    data = rows(seed, ROWS)
    # A hive partition column reads back last, as a string (diffcases' `p` is one).
    data = data.select([c for c in data.column_names if c != "p"] + ["p"])
    _source(tmp_path / "src", data)
    result = build_companion(
        str(tmp_path / "src"), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes={"t": "text", "ip": "ip"}, target_input_size=10**9,
    )  # fmt: skip
    assert result.status == "success"
    # Odd seeds cut pages on two threads, even ones on one (read.companionThreads).
    table = open_table(
        str(tmp_path / "idx"),
        options={
            "spark.indextables.cache.directoryPath": str(tmp_path / "cache"),
            "spark.indextables.read.companionThreads": "on" if seed % 2 else "off",
        },
    )
    assert table.count() == ROWS
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.register("data", data)
    try:
        # The companion's columns are not fast: "has a value" is refused there (test_queryhints).
        for case in cases(seed, count, valued=()):
            try:
                check_case(table, data, case, oracle_ids(duck, data, case))
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}: {case}") from exc
    finally:
        duck.close()


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_companion_matches_oracles(tmp_path: Path, seed: int) -> None:
    _run(tmp_path, seed, 24)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_companion_matches_oracles_more_seeds(tmp_path: Path, seed: int) -> None:
    _run(tmp_path, seed, 40)


def test_companion_matches_oracles_on_the_pure_kernel_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same differential with the page-cut kernels' pure twin (the compiled one runs in
    every other test here): compared with the oracles, and it must really have cut pages."""
    from indextables.search.companion import _kernels_py, slimpages

    calls: Counter[str] = Counter()

    def counted(name: str) -> Any:
        function = getattr(_kernels_py, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    for name in ("byte_array_starts", "cut_page", "page_header"):
        monkeypatch.setattr(slimpages, name, counted(name))
    _run(tmp_path, 5, 24)
    assert calls["cut_page"] > 0, calls
    assert calls["page_header"] > 0, calls
