"""The data source through a real SparkSession: golden interop, writes, reads, search, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PySparkException

import indextables.pyspark as itp

pytestmark = [pytest.mark.spark, pytest.mark.integration]

GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
NAMES = sorted(p.name[: -len(".expected.json")] for p in GOLDEN.glob("*.expected.json"))
if not NAMES:  # a missing fixture fails the run; it never skips the golden tests
    raise RuntimeError(f"golden tables not found at {GOLDEN}")
FMT = "indextables"


def _rows(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.collect()]


@pytest.mark.parametrize("name", NAMES)
def test_golden_tables_read_exactly(
    spark: Any, name: str, expected: Any, sort_rows: Any, golden_copy: Any
) -> None:
    # A copy: a read may write a plan claim into the table's store (planguard).
    oracle = expected(name)
    rows = _rows(spark.read.format(FMT).load(str(golden_copy(name))))
    assert sort_rows(rows) == sort_rows(oracle["rows"])


@pytest.mark.parametrize("name", NAMES)
def test_golden_tables_searched_in_the_driver_exactly(
    spark: Any, name: str, expected: Any, sort_rows: Any, golden_copy: Any
) -> None:
    """``itp.search`` in the driver hands every column type to Spark as the read does."""
    oracle = expected(name)
    found = itp.search(
        spark, str(golden_copy(name)), options={"spark.indextables.search.mode": "local"}
    )
    assert "LocalRelation" in found._jdf.queryExecution().analyzed().toString()
    assert sort_rows(_rows(found)) == sort_rows(oracle["rows"])


@pytest.mark.parametrize("mode", ["local", "distributed"])
def test_query_on_a_reference_table(
    spark: Any, mode: str, expected: Any, sort_rows: Any, golden_copy: Any
) -> None:
    """Reference splits (SSTable term dictionaries) are searched through rebuilt copies."""
    oracle = expected("10_large_batch")
    table = str(golden_copy("10_large_batch"))
    options = {"spark.indextables.search.mode": mode}
    hits = itp.search(spark, table, 'text:"document_7" OR text:"document_42"', options=options)
    wanted = [r for r in oracle["rows"] if r["text"] in ("document_7", "document_42")]
    assert len(wanted) == 2
    assert sort_rows(_rows(hits)) == sort_rows(wanted)
    exact = spark.read.format(FMT).option("fieldmatch.text", "document_9").load(table)
    assert [r["id"] for r in _rows(exact)] == [
        r["id"] for r in oracle["rows"] if r["text"] == "document_9"
    ]


def test_append_to_golden_copy_keeps_old_rows(
    spark: Any, golden_copy: Any, expected: Any, sort_rows: Any
) -> None:
    table = golden_copy("04_partitioned")
    old = expected("04_partitioned")["rows"]
    new = spark.createDataFrame(
        [(6, "2024-01-04", "doc6", 60.0)], "id int, date string, text string, score double"
    )
    new.write.format(FMT).mode("append").save(str(table))
    rows = _rows(spark.read.format(FMT).load(str(table)))
    assert sort_rows(rows) == sort_rows(
        [*old, {"id": 6, "date": "2024-01-04", "text": "doc6", "score": 60.0}]
    )


def test_write_read_round_trip_with_partitions(spark: Any, logs: str) -> None:
    df = spark.read.format(FMT).load(logs)
    assert [f.name for f in df.schema.fields] == ["id", "day", "level", "message", "latency"]
    rows = sorted(_rows(df), key=lambda r: r["id"])
    assert len(rows) == 200
    assert rows[7] == {
        "id": 7,
        "day": "2024-01-02",
        "level": "INFO",
        "message": "request 7 timed out",
        "latency": 1.75,
    }


@pytest.mark.parametrize(
    ("options", "count"),
    [
        ({"query": "message:timed AND message:out"}, len([i for i in range(200) if i % 7 == 0])),
        ({"textsearch.message": "timed"}, len([i for i in range(200) if i % 7 == 0])),
        ({"fieldmatch.level": "ERROR"}, 20),
        ({"query": "level:ERROR AND message:timed"}, len([i for i in range(200) if i % 70 == 0])),
        ({"versionAsOf": "1"}, 100),
    ],
)
def test_search_options_and_time_travel(
    spark: Any, logs: str, options: dict[str, str], count: int
) -> None:
    assert spark.read.format(FMT).options(**options).load(logs).count() == count


@pytest.mark.parametrize("pushdown", ["true", "false"])
def test_filtered_then_unfiltered_on_one_dataframe(spark: Any, logs: str, pushdown: str) -> None:
    """The PySpark 4.3.0 plan-reuse defect (platform.md) must not change results."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", pushdown)
    try:
        df = spark.read.format(FMT).load(logs)
        assert df.where("id = 2").count() == 1
        assert len(df.where("level = 'ERROR' and day = '2024-01-01'").collect()) == 7
        assert df.count() == 200
        df.createOrReplaceTempView("logs_view")
        assert spark.sql("SELECT * FROM logs_view WHERE latency > 49").count() == 3
        assert spark.sql("SELECT count(*) AS n FROM logs_view").first()["n"] == 200
    finally:  # the session default (itp.register turns it on)
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


def test_sql_temporary_view_select_insert_overwrite(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    spark.createDataFrame([(1, "a")], "id long, name string").write.format(FMT).mode("append").save(
        path
    )
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW tv USING indextables OPTIONS (path '{path}')")
    spark.sql("INSERT INTO tv VALUES (2, 'b')")
    assert sorted(r.id for r in spark.sql("SELECT id FROM tv").collect()) == [1, 2]
    spark.sql("INSERT OVERWRITE tv VALUES (3, 'c')")
    assert [tuple(r) for r in spark.sql("SELECT * FROM tv").collect()] == [(3, "c")]


def test_overwrite_replaces_rows(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "o")
    spark.range(5).write.format(FMT).mode("append").save(path)
    spark.range(3).write.format(FMT).mode("overwrite").save(path)
    assert spark.read.format(FMT).load(path).count() == 3
    assert spark.read.format(FMT).option("versionAsOf", "1").load(path).count() == 5


def _error_of(action: Any) -> str:
    with pytest.raises(PySparkException) as caught:
        action()
    return str(caught.value)


def test_unsupported_column_type_is_a_clear_error(spark: Any, tmp_path: Path) -> None:
    df = spark.sql("SELECT cast(1.5 as decimal(10,2)) AS amount")
    message = _error_of(lambda: df.write.format(FMT).mode("append").save(str(tmp_path / "d")))
    assert "column 'amount' has type 'decimal(10,2)'" in message


def test_bad_option_value_fails_before_tasks(spark: Any, tmp_path: Path) -> None:
    df = spark.range(1)
    writer = (
        df.write.format(FMT).mode("append").option("spark.indextables.indexing.typemap.id", "text")
    )
    assert "does not fit" in _error_of(lambda: writer.save(str(tmp_path / "b")))


def test_unparsable_query_is_a_clear_error(spark: Any, logs: str) -> None:
    df = spark.read.format(FMT).option("query", "message:(unclosed").load(logs)
    assert "is not a valid Tantivy query" in _error_of(df.count)


def test_textsearch_on_exact_field_is_a_planning_error(spark: Any, logs: str) -> None:
    df = spark.read.format(FMT).option("textsearch.level", "ERROR").load(logs)
    assert "needs a tokenized text field" in _error_of(df.count)


def test_path_that_is_not_a_table(spark: Any, tmp_path: Path) -> None:
    message = _error_of(lambda: spark.read.format(FMT).load(str(tmp_path / "nothing")))
    assert "is not an IndexTables table" in message


def test_protocol_too_new(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "p"
    spark.range(1).write.format(FMT).mode("append").save(str(path))
    log = path / "_transaction_log"
    newest = max(int(p.name[:20]) for p in log.glob("*.json") if p.name[:20].isdigit())
    action = {"protocol": {"minReaderVersion": 99, "minWriterVersion": 99}}
    (log / f"{newest + 1:020d}.json").write_text(json.dumps(action) + "\n")
    message = _error_of(lambda: spark.read.format(FMT).load(str(path)).count())
    assert "99" in message


def test_overwrite_keeps_files_appended_after_it_was_planned(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa

    from indextables.pyspark.read.datasource import plan_write
    from indextables.pyspark.writing.writer import IndexTablesWriter

    path = str(tmp_path / "t")
    schema = "id long, word string"
    spark.createDataFrame([(1, "old")], schema).write.format(FMT).mode("append").save(path)
    df = spark.createDataFrame([(3, "replacement")], schema)
    writer = IndexTablesWriter(plan_write(path, {}, df.schema), overwrite=True)
    # Another job appends between the overwrite's planning and its commit.
    spark.createDataFrame([(2, "concurrent")], schema).write.format(FMT).mode("append").save(path)
    batch = pa.RecordBatch.from_pydict(
        {"id": [3], "word": ["replacement"]},
        schema=pa.schema([("id", pa.int64()), ("word", pa.string())]),
    )
    writer.commit([writer.write(iter([batch]))])
    rows = _rows(spark.read.format(FMT).load(path))
    assert sorted(r["word"] for r in rows) == ["concurrent", "replacement"]


@pytest.mark.parametrize(
    ("options", "per_task"),
    [
        ({}, 4),
        ({"query": "message:timed"}, 16),
        ({"query": "message:timed", "spark.indextables.read.splitsPerTask": "1"}, 1),
    ],
)
def test_selective_reads_plan_fewer_larger_tasks(
    logs: str, options: dict[str, str], per_task: int
) -> None:
    import math

    from indextables.pyspark.read.datasource import IndexTablesDataSource
    from indextables.search.table.tableaccess import load_view

    n = len(load_view(logs, {}).splits)
    assert n > 4  # two appends x three days, at least
    source = IndexTablesDataSource({"path": logs, **options})
    planned = source.reader(source.schema()).partitions()
    assert len(planned) == math.ceil(n / per_task)
    assert sorted(s.ref.path for t in planned for s in t.splits) == sorted(
        s.entry.ref.path for s in load_view(logs, {}).splits
    )


@pytest.mark.parametrize("options", [{"query": "message:timed"}, {}])
def test_a_selective_task_searches_its_splits_at_once_and_keeps_their_order(
    logs: str, options: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search task reads its splits on the process's split readers; a full read streams
    them one by one.

    Either way the task's rows are those of its splits read one after the other.
    """
    import dataclasses

    from indextables.pyspark.read.datasource import IndexTablesDataSource
    from indextables.search.read import splitorder

    pools: list[Any] = []
    read_ahead = splitorder.ahead

    def counted(pool: Any, *args: Any, **kwargs: Any) -> Any:
        pools.append(pool)
        return read_ahead(pool, *args, **kwargs)

    monkeypatch.setattr(splitorder, "ahead", counted)
    monkeypatch.setattr(splitorder, "READ_THREADS", 3)
    source = IndexTablesDataSource({"path": logs, **options})
    reader = source.reader(source.schema())
    (task,) = reader.partitions() if options else reader.partitions()[:1]
    assert len(task.splits) > 2
    assert task.selective == bool(options)
    rows = [r for batch in reader.read(task) for r in batch.to_pylist()]
    assert pools == ([splitorder._readers.get()] if options else [])
    one_by_one = [
        r
        for split in task.splits
        for batch in reader.read(dataclasses.replace(task, splits=(split,)))
        for r in batch.to_pylist()
    ]
    assert rows == one_by_one
    if options:
        assert rows
        assert all("timed" in r["message"] for r in rows)


@pytest.mark.parametrize("checkpointed", [False, True])
def test_statistics_filters_prune_splits_before_planning(
    spark: Any, tmp_path: Path, checkpointed: bool
) -> None:
    """Four appends of disjoint id/name ranges: a filter on either plans only its split."""
    from pyspark.sql import datasource as ds

    from indextables.pyspark.read.datasource import IndexTablesDataSource
    from indextables.search.query.filters import stats_predicate
    from indextables.search.schema.mapping import specs_from_doc_mapping
    from indextables.search.table.tableaccess import load_view, table_handle

    path = str(tmp_path / "ranges")
    for start in range(0, 200, 50):
        spark.range(start, start + 50).selectExpr(
            "id", "concat('n', lpad(cast(id as string), 4, '0')) as name"
        ).coalesce(1).write.format(FMT).mode("append").save(path)
    if checkpointed:
        table_handle(path, {}).checkpoint()
    splits = load_view(path, {}).splits
    assert len(splits) == 4
    fields = specs_from_doc_mapping(str(splits[0].doc_mapping_json))
    cases = [
        ([ds.GreaterThan(("id",), 149)], list(range(150, 200))),
        ([ds.EqualTo(("name",), "n0077")], [77]),
        ([ds.In(("id",), (3, 199))], [3, 199]),
    ]
    for filters, ids in cases:
        source = IndexTablesDataSource({"path": path})
        reader = source.reader(source.schema())
        assert not reader.view.files_loaded  # the file list is read after the push
        assert list(reader.push_filters(filters)) == filters  # all handed back to Spark
        planned = [s.ref.path for task in reader.partitions() for s in task.splits]
        assert len(planned) == len({i // 50 for i in ids})
        # The engine itself left out the other splits (not only the per-split check).
        predicate = stats_predicate(reader.conditions, fields, ())
        assert predicate is not None
        assert len(load_view(path, {}, stats_filter=predicate).splits) == len(planned)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        df = spark.read.format(FMT).load(path)
        assert sorted(r.id for r in df.where("id > 149").collect()) == list(range(150, 200))
        assert [r.id for r in df.where("name = 'n0077'").collect()] == [77]
        assert df.where("id > 149 and name < 'n0160'").count() == 10
        assert df.count() == 200
    finally:  # the session default (itp.register turns it on)
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
