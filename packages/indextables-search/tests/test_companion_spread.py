"""A sync's groups cut between files so every build worker indexes (companion/spread.py)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from test_companion import canonical, hostile

from indextables.search import build_companion, open_table
from indextables.search.companion import parallel, spread
from indextables.search.companion.build import CompanionGroup
from indextables.search.companion.parallel import PARALLELISM_OPTION
from indextables.search.companion.sources import SourceFile
from indextables.search.companion.spread import spread_groups

MB = 1 << 20
CACHE = "spark.indextables.cache.directoryPath"


def _group(sizes: list[int], part: str = "a") -> CompanionGroup:
    files = tuple(SourceFile(f"{part}/f{i}", s * MB, {"p": part}) for i, s in enumerate(sizes))
    return CompanionGroup((("p", part),), files)


def _paths(groups: list[CompanionGroup]) -> list[list[str]]:
    return [[f.path for f in g.files] for g in groups]


def test_one_group_is_cut_into_contiguous_runs_of_about_equal_bytes() -> None:
    group = _group([10, 10, 10, 10])
    assert _paths(spread_groups([group], workers=2)) == [["a/f0", "a/f1"], ["a/f2", "a/f3"]]
    assert _paths(spread_groups([group], workers=4)) == [[f"a/f{i}"] for i in range(4)]
    cut = spread_groups([_group([30, 1, 1, 1, 20])], workers=2)
    assert _paths(cut) == [["a/f0"], ["a/f1", "a/f2", "a/f3", "a/f4"]]
    assert all(g.partition_values == (("p", "a"),) for g in cut)


def test_nothing_is_cut_below_the_minimum_or_with_enough_groups() -> None:
    group = _group([10, 10, 10, 10])
    assert spread_groups([group], workers=1) == [group]
    assert spread_groups([group], workers=2, min_bytes=21 * MB) == [group]
    assert len(spread_groups([group], workers=8, min_bytes=10 * MB)) == 4
    assert len(spread_groups([group], workers=8, min_bytes=15 * MB)) == 2
    assert spread_groups([_group([40])], workers=4) == [_group([40])]  # one file
    two = [_group([10, 10], "a"), _group([1, 1], "b")]
    assert spread_groups(two, workers=2) == two


def test_the_biggest_group_gets_the_extra_workers_and_order_is_kept() -> None:
    small, big = _group([10, 10], "a"), _group([10, 10, 10, 10], "b")
    out = spread_groups([small, big], workers=3)
    assert _paths(out) == [["a/f0", "a/f1"], ["b/f0", "b/f1"], ["b/f2", "b/f3"]]
    every = [f for g in spread_groups([small, big], workers=6) for f in g.files]
    assert every == [*small.files, *big.files]  # each file once, in order


def _source(root: Path, files: int) -> None:
    rng = random.Random(5)
    root.mkdir(parents=True)
    for number in range(files):
        pq.write_table(hostile(rng, number * 100, 25), root / f"part-{number}.parquet")


def test_a_table_of_one_group_is_built_as_one_split_per_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    _source(source, 4)
    monkeypatch.setattr(spread, "MIN_SPREAD_BYTES", 1)
    in_workers: list[Any] = []
    monkeypatch.setattr(parallel, "_in_worker", lambda job, group: in_workers.append(group))
    answers = {}
    for workers, splits in (("1", 1), ("2", 2)):
        index = tmp_path / f"idx-{workers}"
        result = build_companion(
            str(source), str(index), source_format="parquet", options={PARALLELISM_OPTION: workers}
        )
        assert (result.splits_created, result.parquet_files_indexed) == (splits, 4)
        table = open_table(str(index), options={CACHE: str(tmp_path / "cache")})
        answers[workers] = table.to_arrow().sort_by("id")
    assert in_workers == []  # two builds: both threads of this process, no worker start-up
    assert canonical(answers["2"]) == canonical(answers["1"])
    expected = pq.read_table(source)
    assert canonical(answers["2"].select(["id", "s", "x"])) == canonical(
        expected.select(["id", "s", "x"])
    )
    # A sync after one appended file still indexes only that file.
    _source(tmp_path / "more", 1)
    (tmp_path / "more" / "part-0.parquet").rename(source / "part-9.parquet")
    again = build_companion(
        str(source), str(tmp_path / "idx-2"), source_format="parquet",
        options={PARALLELISM_OPTION: "2"},
    )  # fmt: skip
    assert (again.parquet_files_indexed, again.splits_created) == (1, 1)
