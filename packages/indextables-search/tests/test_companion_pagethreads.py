"""Companion hit pages cut on two threads (``companion.pagethreads``).

Threaded and unthreaded reads give identical arrays on the hostile random
files of ``test_companion_pages`` (every codec, data pages v1 and v2), both
kernel twins; the ordered runner keeps unit order, raises the first failing
unit's exception after every batch finished; the read option reaches the page reader.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from test_companion_pages import FLAT, hostile, open_footer, same, write

from indextables.search import build_companion, open_table
from indextables.search.companion import _kernels_py, parquetpages, read, slimpages
from indextables.search.companion.pagethreads import batches, page_workers, run_ordered
from indextables.search.errors import CompanionError, OptionError
from indextables.search.schema.plainarrow import plain_array


@pytest.fixture
def every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parquetpages, "DENSE_SHARE", 1.0)


@pytest.fixture(params=["kernel", "twin"])
def twin(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "twin":
        monkeypatch.setattr(slimpages, "byte_array_starts", _kernels_py.byte_array_starts)
        monkeypatch.setattr(slimpages, "cut_page", _kernels_py.cut_page)
    return str(request.param)


@pytest.mark.parametrize("seed", range(8))  # every codec, data pages v1 and v2
@pytest.mark.usefixtures("every_page")
def test_threaded_and_unthreaded_reads_give_identical_arrays(
    tmp_path: Path, seed: int, twin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(1000 + seed)
    table = hostile(rng, rng.choice([400, 1500]))
    path = tmp_path / "f.parquet"
    write(path, table, rng, seed=seed)
    seen: set[str] = set()
    original = parquetpages.cut_parts

    def recording(*args: Any) -> bytes | None:
        seen.add(threading.current_thread().name)
        return original(*args)

    monkeypatch.setattr(parquetpages, "cut_parts", recording)
    whole = pq.read_table(path)
    handle, footer = open_footer(path)
    with handle:
        for count in (1, 7, 60, table.num_rows // 3):
            rows = sorted(rng.sample(range(table.num_rows), count))
            alone = page_rows_of(handle, footer, whole.column_names, rows, 1)
            paired = page_rows_of(handle, footer, whole.column_names, rows, 2)
            assert alone.rest == paired.rest
            assert list(alone.arrays) == list(paired.arrays)
            indices = pa.array(rows, pa.int64())
            for name in alone.arrays:
                assert same(paired.arrays[name], alone.arrays[name]), (seed, name, count)
                expected = plain_array(whole.column(name)).take(indices)
                assert same(paired.arrays[name], expected), name
    assert set(alone.arrays) == set(FLAT)
    assert any(name.startswith("indextables-companion") for name in seen), seen


def page_rows_of(
    handle: Any, footer: Any, columns: list[str], rows: list[int], workers: int
) -> Any:
    return parquetpages.page_rows(handle, footer, columns, rows, workers=workers)


def test_batches_are_contiguous_and_balanced_by_weight() -> None:
    assert batches([], 2) == []
    assert batches([5], 2) == [range(1)]
    assert batches([1, 1, 1, 1], 2) == [range(2), range(2, 4)]
    assert batches([10, 1, 1, 1], 2) == [range(1), range(1, 4)]
    assert batches([1, 1, 1, 10], 2) == [range(3), range(3, 4)]
    assert batches([0, 0], 2) == [range(2)]
    for weights in ([3, 1, 4, 1, 5, 9, 2, 6], [1] * 17, [7, 0, 0, 7]):
        for count in (1, 2, 3):
            found = batches(weights, count)
            assert [i for span in found for i in span] == list(range(len(weights)))
            assert 1 <= len(found) <= count
            assert all(found)


def test_run_ordered_keeps_unit_order_on_two_threads() -> None:
    names: list[str] = []

    def work(unit: int) -> int:
        names.append(threading.current_thread().name)
        time.sleep(0.001 * (unit % 3))
        return unit * unit

    assert run_ordered(list(range(40)), work, workers=2) == [u * u for u in range(40)]
    assert any(n.startswith("indextables-companion") for n in names)
    assert threading.current_thread().name in names


@pytest.mark.parametrize("failing", [(3,), (30,), (3, 30)])
def test_run_ordered_raises_the_first_failing_unit_after_every_batch(
    failing: tuple[int, ...],
) -> None:
    done: list[int] = []

    def work(unit: int) -> int:
        if unit in failing:
            raise CompanionError(f"unit {unit} is damaged")
        time.sleep(0.0005)
        done.append(unit)
        return unit

    with pytest.raises(CompanionError, match=f"unit {failing[0]} is damaged"):
        run_ordered(list(range(40)), work, workers=2)
    # every batch ran to its end or its failure before the error was raised
    first_batch, second_batch = range(20), range(20, 40)
    stop_first = min([f for f in failing if f in first_batch], default=20)
    stop_second = min([f for f in failing if f in second_batch], default=40)
    assert sorted(done) == [*range(stop_first), *range(20, stop_second)]


def test_page_workers_follow_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from indextables.search.read.docstore import pool

    monkeypatch.setattr(pool, "_cores", lambda: 8)
    assert page_workers("off") == 1
    assert page_workers("on") == 2
    monkeypatch.setattr(pool, "others_load", lambda: 9.0)
    assert page_workers("auto") == 1
    monkeypatch.setattr(pool, "others_load", lambda: 0.5)
    assert page_workers("auto") == 2
    monkeypatch.setattr(pool, "_cores", lambda: 1)
    assert page_workers("on") == 1
    with pytest.raises(CompanionError, match="sometimes"):
        page_workers("sometimes")  # type: ignore[arg-type]


def test_the_companion_threads_option_reaches_the_page_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    source = tmp_path / "src"
    source.mkdir()
    table = pa.table(
        {
            "id": pa.array(range(3000), pa.int64()),
            "text": pa.array([f"w{rng.randrange(50)} {'y' * (i % 7)}" for i in range(3000)]),
        }
    )
    pq.write_table(table, source / "part-0.parquet", data_page_size=512, write_page_index=True)
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    asked: list[int] = []
    original = read.page_rows

    def recording(*args: Any, workers: int = 1, **kwargs: Any) -> Any:
        asked.append(workers)
        return original(*args, workers=workers, **kwargs)

    monkeypatch.setattr(read, "page_rows", recording)
    from indextables.search.read.docstore import pool

    monkeypatch.setattr(pool, "_cores", lambda: 2)
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    key = "spark.indextables.read.companionThreads"
    results = {}
    for value, workers in (("off", 1), ("ON", 2)):
        asked.clear()
        found = open_table(str(tmp_path / "idx"), options={**cache, key: value}).search(
            query="id:[0 TO 39] OR id:[2900 TO 2999]"
        )
        assert asked
        assert set(asked) == {workers}
        results[value] = found.sort_by("id")
    assert results["off"].equals(results["ON"])
    expected = table.filter(pc.or_(pc.greater_equal(table["id"], 2900), pc.less(table["id"], 40)))
    assert results["off"].select(["id", "text"]).equals(expected)
    with pytest.raises(OptionError, match=r"spark\.indextables\.read\.companionthreads"):
        open_table(str(tmp_path / "idx"), options={key: "sometimes"})


def test_page_threads_beside_splits_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from indextables.search.companion.pagethreads import beside_splits
    from indextables.search.read import splitorder

    monkeypatch.setattr(splitorder, "READ_THREADS", 4)
    assert splitorder.splits_at_once(5, parallel=True) == 4
    assert splitorder.splits_at_once(3, parallel=True) == 3
    assert splitorder.splits_at_once(1, parallel=True) == 1
    assert splitorder.splits_at_once(5, parallel=False) == 1
    assert splitorder.splits_at_once(5, parallel=True, stop_at=10) == 1
    monkeypatch.setattr(splitorder, "READ_THREADS", 1)
    assert splitorder.splits_at_once(5, parallel=True) == 1
    assert [beside_splits(t, 1) for t in ("auto", "on", "off")] == ["auto", "on", "off"]
    assert [beside_splits(t, 2) for t in ("auto", "on", "off")] == ["off", "on", "off"]


def test_a_companions_splits_are_searched_at_once_without_page_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SearchTable.search`` reads a companion's splits several at once (without a limit),
    each with page threads off under ``auto``; with a limit, one after the other as
    before. Rows come back in split order either way, equal to the source's."""
    from indextables.search.read import splitbatches, splitorder

    source = tmp_path / "src"
    source.mkdir()
    for part in range(3):
        ids = range(part * 1000, (part + 1) * 1000)
        pq.write_table(
            pa.table({"id": pa.array(ids, pa.int64()), "text": [f"w{i % 7}" for i in ids]}),
            source / f"part-{part}.parquet", data_page_size=512, write_page_index=True,
        )  # fmt: skip
    built = build_companion(
        str(source), str(tmp_path / "idx"), source_format="parquet", target_input_size=1
    )
    assert built.splits_created >= 2
    monkeypatch.setattr(splitorder, "READ_THREADS", 2)
    settings: list[str] = []
    original = read.page_workers

    def recording(threads: Any = "auto") -> int:
        settings.append(threads)
        return original(threads)

    monkeypatch.setattr(read, "page_workers", recording)
    parallel: list[bool] = []
    ordered = splitbatches.ordered_batches

    def watching(*args: Any, **kwargs: Any) -> Any:
        parallel.append(kwargs["parallel"])
        return ordered(*args, **kwargs)

    monkeypatch.setattr(splitbatches, "ordered_batches", watching)
    cache = {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    table = open_table(str(tmp_path / "idx"), options=cache)
    expected = [i for i in range(3000) if i % 7 == 3]
    found = table.search(query="text:w3")
    assert sorted(found.column("id").to_pylist()) == expected
    assert parallel == [True]
    assert len(settings) >= 2
    assert set(settings) == {"off"}
    settings.clear()
    limited = table.search(query="text:w3", limit=5)
    assert limited.num_rows == 5
    assert parallel == [True, False]
    assert set(settings) == {"auto"}
