"""The local split runner: quick splits on the calling thread, slow ones on one shared pool."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.aggregate import tableplan
from indextables.search.errors import ArgumentError, SplitReadError

OPTIONS = {"spark.indextables.indexing.typemap.message": "text"}


@pytest.fixture
def table(tmp_path: Path) -> Any:
    uri = str(tmp_path / "t")
    for start in range(0, 40, 10):
        ids = list(range(start, start + 10))
        data = pa.table({"id": pa.array(ids, pa.int64()), "message": [f"m {i % 3}" for i in ids]})
        write_table(uri, data, options=OPTIONS)
    opened = open_table(uri)
    assert len(opened.files) == 4
    return opened


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The pools the runner asked for."""
    asked: list[object] = []
    original = tableplan.split_pool

    def counted() -> Any:
        pool = original()
        asked.append(pool)
        return pool

    monkeypatch.setattr(tableplan, "split_pool", counted)
    return asked


def test_quick_splits_run_on_the_calling_thread(
    table: Any, pools: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tableplan, "INLINE_SECONDS", 1e9)  # every split counts as quick
    threads: set[str] = set()
    original = tableplan._apply

    def seen(*args: Any, **kwargs: Any) -> Any:
        threads.add(threading.current_thread().name)
        return original(*args, **kwargs)

    tableplan._apply, saved = seen, original
    try:
        assert table.count("message:1") == 13
    finally:
        tableplan._apply = saved
    assert pools == []
    assert threads == {threading.current_thread().name}


def test_slow_splits_share_one_pool_across_calls(
    table: Any, pools: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tableplan, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(tableplan, "THREADS", 2)
    for _ in range(3):
        assert table.count("message:1") == 13
        got = table.aggregate(metrics={"n": "count"}, query="message:1")
        assert got.column("n").to_pylist() == [13]
    assert len(pools) == 6
    assert len({id(p) for p in pools}) == 1  # one pool, not one per call


def test_a_forked_process_gets_its_own_pool(
    table: Any, pools: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tableplan, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(tableplan, "THREADS", 2)
    assert table.count("message:1") == 13
    parent = tableplan.os.getpid()
    monkeypatch.setattr(tableplan.os, "getpid", lambda: parent + 1)
    assert table.count("message:1") == 13
    assert len(pools) == 2
    assert pools[0] is not pools[1]


def test_a_failing_split_fails_the_call(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tableplan, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(tableplan, "THREADS", 2)
    calls: list[int] = []

    def boom(directory: str, entry: Any) -> int:
        calls.append(1)
        if len(calls) == 2:
            raise KeyError("split two")
        return 1

    plan = table._count_plan("message:1", None, None, None)
    with pytest.raises(SplitReadError, match="split two"):
        tableplan.run_local(plan, boom)


def test_a_repeated_count_plans_and_parses_once(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search import searchtable
    from indextables.search.aggregate import tablecount

    planned: list[object] = []
    parsed: list[object] = []
    plan_table, exact_query = searchtable.plan_table, tablecount.exact_query

    def counted_plan(*args: Any, **kwargs: Any) -> Any:
        planned.append(args)
        return plan_table(*args, **kwargs)

    def counted_query(*args: Any, **kwargs: Any) -> Any:
        parsed.append(args)
        return exact_query(*args, **kwargs)

    monkeypatch.setattr(searchtable, "plan_table", counted_plan)
    monkeypatch.setattr(tablecount, "exact_query", counted_query)
    tablecount._queries.clear()
    for _ in range(3):
        assert table.count("message:1") == 13
        assert table.count("message:1", where="id >= 20") == 6
    assert len(planned) == 2  # one per distinct arguments
    assert len(parsed) == 4 + 2  # per split searched (id >= 20 prunes two) and search
    # Bad arguments still fail after a cached plan.
    with pytest.raises(ArgumentError, match="where="):
        table.count("message:1", where=5)


def test_a_table_with_kept_plans_pickles(table: Any) -> None:
    import pickle

    assert table.count("message:1") == 13
    copy = pickle.loads(pickle.dumps(table))
    assert copy.count("message:1") == 13
    assert copy.version == table.version
