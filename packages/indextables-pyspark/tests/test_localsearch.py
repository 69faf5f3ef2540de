"""Interactive search (``itp.search``): same rows in the driver and through Spark tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import NotATableError, OptionError, QuerySyntaxError
from indextables.pyspark.read.localsearch import SearchPlacement, parse_placement

pytestmark = [pytest.mark.spark, pytest.mark.integration]

MODE = "spark.indextables.search.mode"
ROWS = [
    {
        "id": i,
        "day": f"2024-01-0{i % 3 + 1}",
        "level": "ERROR" if i % 10 == 0 else "INFO",
        "message": f"request {i} timed out" if i % 7 == 0 else f"request {i} ok",
        "latency": i / 4,
    }
    for i in range(200)
]


def _ids(df: Any) -> list[int]:
    return sorted(r["id"] for r in df.collect())


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().analyzed().toString())


SEARCHES: list[tuple[dict[str, Any], list[int]]] = [
    ({"query": "message:timed"}, [r["id"] for r in ROWS if r["id"] % 7 == 0]),
    (
        {"where": "level = 'ERROR' AND day = '2024-01-01'"},
        [r["id"] for r in ROWS if r["level"] == "ERROR" and r["day"] == "2024-01-01"],
    ),
    ({"where": "latency > 49"}, [r["id"] for r in ROWS if r["latency"] > 49]),
    ({"where": "id IN (1, 2, 3, 500)"}, [1, 2, 3]),
    (
        {"where": "day BETWEEN '2024-01-02' AND '2024-01-03' AND level <> 'ERROR' AND id < 20"},
        [
            r["id"]
            for r in ROWS
            if r["day"] >= "2024-01-02" and r["level"] != "ERROR" and r["id"] < 20
        ],
    ),
    ({"where": "level LIKE 'ERR%' AND id < 50"}, [0, 10, 20, 30, 40]),
    # Outside the pushed grammar: Spark alone applies it.
    (
        {"where": "lower(level) = 'error' OR id = 5"},
        [5, *(r["id"] for r in ROWS if r["id"] % 10 == 0)],
    ),
    ({"where": "id = '7'"}, [7]),
    (
        {"query": "message:timed", "where": "level = 'ERROR'"},
        [r["id"] for r in ROWS if r["id"] % 70 == 0],
    ),
    ({"fieldmatch": {"level": "ERROR"}}, [r["id"] for r in ROWS if r["id"] % 10 == 0]),
    ({"textsearch": {"message": "out"}}, [r["id"] for r in ROWS if r["id"] % 7 == 0]),
    ({"options": {"versionAsOf": "1"}}, list(range(100))),
]


@pytest.mark.parametrize("mode", ["local", "distributed", "auto"])
@pytest.mark.parametrize(("kwargs", "ids"), SEARCHES)
def test_search_returns_the_matching_rows(
    spark: Any, logs: str, mode: str, kwargs: dict[str, Any], ids: list[int]
) -> None:
    options = {**kwargs.get("options", {}), MODE: mode}
    df = itp.search(spark, logs, **{**kwargs, "options": options})
    assert _ids(df) == sorted(ids)
    assert [f.name for f in df.schema.fields] == ["id", "day", "level", "message", "latency"]


def test_local_rows_equal_the_data_source_rows(spark: Any, logs: str) -> None:
    local = itp.search(spark, logs, "message:timed", options={MODE: "local"})
    read = spark.read.format("indextables").option("query", "message:timed").load(logs)
    assert "LocalRelation" in _plan(local)
    assert sorted(map(tuple, local.collect())) == sorted(map(tuple, read.collect()))


def test_small_searches_run_in_the_driver(spark: Any, logs: str) -> None:
    assert "LocalRelation" in _plan(itp.search(spark, logs, "message:timed"))


@pytest.mark.parametrize(
    "options",
    [
        {"spark.indextables.search.localMaxRows": "10"},
        {"spark.indextables.search.localMaxSplits": "1"},
        {MODE: "distributed"},
    ],
)
def test_large_searches_go_distributed(spark: Any, logs: str, options: dict[str, str]) -> None:
    df = itp.search(spark, logs, "message:timed", options=options)
    assert "LocalRelation" not in _plan(df)
    assert "indextables" in _plan(df)
    assert _ids(df) == [r["id"] for r in ROWS if r["id"] % 7 == 0]


def test_local_mode_ignores_the_limits(spark: Any, logs: str) -> None:
    options = {MODE: "local", "spark.indextables.search.localMaxRows": "1"}
    df = itp.search(spark, logs, options=options)
    assert "LocalRelation" in _plan(df)
    assert df.count() == 200


@pytest.mark.parametrize("where", [None, "level = 'INFO'"])
def test_limit(spark: Any, logs: str, where: str | None) -> None:
    rows = itp.search(spark, logs, where=where, limit=5).collect()
    assert len(rows) == 5
    assert all(where is None or r["level"] == "INFO" for r in rows)
    assert itp.search(spark, logs, limit=0).collect() == []


def test_placement_options() -> None:
    assert parse_placement({}) == SearchPlacement()
    parsed = parse_placement(
        {
            "Spark.IndexTables.Search.Mode": "LOCAL",
            "spark.indextables.search.localMaxRows": "7",
            "spark.indextables.search.localMaxSplits": "3",
        }
    )
    assert parsed == SearchPlacement("local", 3, 7)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"options": {MODE: "fast"}}, OptionError, "must be one of auto, local, distributed"),
        ({"options": {"spark.indextables.search.localMaxRows": "0"}}, OptionError, ">= 1"),
        ({"limit": -1}, OptionError, "limit=-1"),
        ({"query": "message:(unclosed"}, QuerySyntaxError, "is not a valid Tantivy query"),
    ],
)
def test_bad_input_is_a_clear_python_error(
    spark: Any, logs: str, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        itp.search(spark, logs, **kwargs)


def test_not_a_table(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(NotATableError):
        itp.search(spark, str(tmp_path / "nothing"), "x")


@pytest.mark.parametrize("mode", ["local", "distributed"])
def test_a_search_answers_as_of_the_call(spark: Any, tmp_path: Path, mode: str) -> None:
    path = str(tmp_path / "t")
    rows = spark.range(10).selectExpr("id", "concat('line ', id) as message")
    writer = rows.write.format("indextables").option(
        "spark.indextables.indexing.typemap.message", "text"
    )
    writer.mode("append").save(path)
    df = itp.search(spark, path, "message:line", options={MODE: mode})
    assert df.count() == 10
    writer.mode("append").save(path)  # a later commit doubles the table
    assert df.count() == 10
    assert itp.search(spark, path, "message:line", options={MODE: mode}).count() == 20
    pinned = {MODE: mode, "versionAsOf": "1"}
    assert itp.search(spark, path, "message:line", options=pinned).count() == 10


def _no_fetch_pool() -> Any:
    """Stands in for the fetch pool where a search must start no fetch threads."""
    raise AssertionError("a fetch pool was started for splits already on local disk")


def test_splits_on_local_disk_are_read_without_fetch_threads(
    spark: Any, logs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.splits import splitcache

    options = {MODE: "local", "spark.indextables.cache.directoryPath": str(tmp_path / "cache")}
    cold = _ids(itp.search(spark, logs, "message:timed", options=options))  # fetches
    assert any((tmp_path / "cache").iterdir())
    monkeypatch.setattr(splitcache, "fetch_pool", _no_fetch_pool)
    assert _ids(itp.search(spark, logs, "message:timed", options=options)) == cold
    other = {**options, "spark.indextables.cache.directoryPath": str(tmp_path / "cold")}
    with pytest.raises(AssertionError, match="fetch pool"):
        itp.search(spark, logs, "message:timed", options=other)


def test_concurrent_searches_from_threads_return_their_own_rows(spark: Any, logs: str) -> None:
    """Notebook users share one driver: searches from threads share open splits and the JVM."""
    from concurrent.futures import ThreadPoolExecutor

    searches = [("message:timed", 7), ("message:ok", None)] * 4

    def run(query: str) -> list[int]:
        return _ids(itp.search(spark, logs, query, options={MODE: "local"}))

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, [q for q, _ in searches]))
    for (_, step), ids in zip(searches, results, strict=True):
        wanted = [r["id"] for r in ROWS if (r["id"] % 7 == 0) == (step == 7)]
        assert ids == wanted
