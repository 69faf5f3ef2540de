"""``itp.search`` on a companion index: searched in the driver, no Spark job, Spark's answer.

A companion's hits are joined back to the source's Parquet rows. A small search of one
must take the same driver-local path as an ordinary table's (a local relation, no Spark
job to build or collect it), and answer what Spark's own read of the source answers,
whichever path runs.
"""

from __future__ import annotations

from typing import Any

import pytest

import indextables.pyspark as itp

pytestmark = [pytest.mark.spark, pytest.mark.integration]

MODE = "spark.indextables.search.mode"
SEARCHES: list[tuple[str | None, str | None, str]] = [
    # query, where, the same condition on the Parquet source
    ("message:timed", None, "message LIKE '%timed%'"),
    (None, "host = 'host-4'", "host = 'host-4'"),
    ("message:timed", "latency > 10", "message LIKE '%timed%' AND latency > 10"),
    (None, "latency = 0", "latency = 0"),  # -0.0 and 0.0 both
    (None, "message = ''", "message = ''"),
]


@pytest.fixture(scope="module")
def companion(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("companion-search")
    source, index = str(root / "src"), str(root / "idx")
    spark.range(400).selectExpr(
        "id",
        "concat('host-', id % 9) as host",
        "case when id % 11 = 0 then null when id % 5 = 0 then '' "
        "else concat('request ', id, case when id % 7 = 0 then ' timed out' else ' ok' end) "
        "end as message",
        "case when id % 13 = 0 then double('NaN') when id % 17 = 0 then -0.0 "
        "when id % 19 = 0 then double('-Infinity') else id / 4.0 end as latency",
    ).repartition(3).write.parquet(source)
    built = itp.sql(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' "
        f"INDEXING MODES ('message':'text') AT LOCATION '{index}'",
    ).first()
    assert built.status == "success"
    return source, index


def rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(
        tuple(("nan" if v != v else v) if isinstance(v, float) else v for v in r)
        for r in frame.collect()
    )  # NaN as text: NaN != NaN


def jobs(spark: Any) -> int:
    """Spark jobs started so far in this session (outside job groups)."""
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


@pytest.mark.parametrize(("query", "where", "sql"), SEARCHES)
def test_a_small_companion_search_runs_in_the_driver_without_a_spark_job(
    spark: Any, companion: tuple[str, str], query: str | None, where: str | None, sql: str
) -> None:
    source, index = companion
    columns = spark.read.parquet(source).columns
    expected = rows(spark.read.parquet(source).where(sql).select(*columns))
    assert expected  # every case has hits
    before = jobs(spark)
    found = itp.search(spark, index, query, where=where)
    answer = rows(found.select(*columns))
    assert jobs(spark) == before, "the search or its collect ran a Spark job"
    assert "LocalRelation" in found._jdf.queryExecution().optimizedPlan().toString()
    assert answer == expected


@pytest.mark.parametrize(("query", "where", "sql"), SEARCHES)
def test_the_distributed_companion_search_answers_the_same(
    spark: Any, companion: tuple[str, str], query: str | None, where: str | None, sql: str
) -> None:
    source, index = companion
    columns = spark.read.parquet(source).columns
    found = itp.search(spark, index, query, where=where, options={MODE: "distributed"})
    assert "LocalRelation" not in found._jdf.queryExecution().optimizedPlan().toString()
    expected = spark.read.parquet(source).where(sql).select(*columns)
    assert rows(found.select(*columns)) == rows(expected)


def test_the_search_never_builds_a_spark_reader_in_the_driver(
    spark: Any, companion: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking the session argument must not touch ``spark.read``: each access builds a JVM
    ``DataFrameReader`` over Py4J, which a driver-local search has no use for."""
    _, index = companion
    session_class = type(spark)
    built: list[int] = []
    reader = session_class.read

    def counted(self: Any) -> Any:
        built.append(1)
        return reader.fget(self)

    monkeypatch.setattr(session_class, "read", property(counted))
    found = itp.search(spark, index, "message:timed", where="latency > 10")
    assert found.count() > 0
    assert built == []


def test_a_non_session_is_still_refused() -> None:
    from indextables.pyspark.errors import ArgumentError

    class HalfSession:
        conf = None
        read = None  # no dataSource

    with pytest.raises(ArgumentError, match=r"spark=.* must be a SparkSession"):
        itp.search(HalfSession(), "/nowhere", "x")  # type: ignore[arg-type]


@pytest.mark.parametrize(("setting", "expected"), [(None, "off"), ("on", "on"), ("off", "off")])
def test_page_threads_stand_down_while_splits_are_read_at_once(
    spark: Any,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    setting: str | None,
    expected: str,
) -> None:
    """Two or more splits searched on threads keep the cores busy: ``auto`` page threads
    are then off for each split (``on`` and ``off`` stand), and the answer is Spark's."""
    import indextables.search.companion.read as companion_read
    import indextables.search.read.splitorder as splitorder

    root = tmp_path_factory.mktemp("companion-splits")
    source, index = str(root / "src"), str(root / "idx")
    spark.range(300).selectExpr("id", "concat('word', id % 4) as message").repartition(
        3
    ).write.parquet(source)
    built = itp.sql(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' INDEXING MODES ('message':'text') "
        f"TARGET INPUT SIZE 1 AT LOCATION '{index}'",
    ).first()
    assert built.splits_created >= 2
    monkeypatch.setattr(splitorder, "READ_THREADS", 2)
    seen: list[str] = []
    real = companion_read.page_workers

    def recording(threads: Any = "auto") -> int:
        seen.append(threads)
        return real(threads)

    monkeypatch.setattr(companion_read, "page_workers", recording)
    options = {} if setting is None else {"spark.indextables.read.companionThreads": setting}
    found = itp.search(spark, index, "message:word1", options=options)
    expected_rows = rows(spark.read.parquet(source).where("message = 'word1'"))
    assert rows(found.select("id", "message")) == expected_rows
    assert len(seen) >= 2, seen
    assert set(seen) == {expected}, seen
