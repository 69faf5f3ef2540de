"""BUILD INDEXTABLES COMPANION: its grammar, and companion reads compared with Spark's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indextables.pyspark.errors import SqlCommandError
from indextables.pyspark.sqlcommands.companioncmd import parse_companion


def test_the_reference_clauses_parse() -> None:
    args = parse_companion(
        "BUILD INDEXTABLES COMPANION FOR DELTA 's3://b/delta'\n"
        "  INDEXING MODES ('content':'text', 'status':'string')\n"
        "  FASTFIELDS MODE parquet_only TARGET INPUT SIZE 1G WRITER HEAP SIZE 512M\n"
        "  FROM VERSION 42 EXCLUDE COLUMNS ('raw', \"blob\")\n"
        "  WHERE year = '2024' AND month IN ('01', '02')\n"
        "  AT LOCATION 's3://b/index' DRY RUN;"
    )
    assert args == {
        "source": "s3://b/delta",
        "location": "s3://b/index",
        "source_format": "delta",
        "dry_run": True,
        "indexing_modes": {"content": "text", "status": "string"},
        "fast_field_mode": "PARQUET_ONLY",
        "target_input_size": 1024**3,
        "writer_heap_size": 512 * 1024**2,
        "from_version": 42,
        "exclude_columns": ["raw", "blob"],
        "where": "year = '2024' AND month IN ('01', '02')",
    }
    iceberg = parse_companion(
        "BUILD INDEXTABLES COMPANION FOR ICEBERG 'cat.ns.t' FROM SNAPSHOT 77 AT LOCATION '/i'"
    )
    assert (iceberg["source"], iceberg["from_version"]) == ("cat.ns.t", 77)
    plain = parse_companion("build tantivy4spark companion for parquet '/d' at location '/i'")
    assert plain == {"source": "/d", "location": "/i", "source_format": "parquet", "dry_run": False}


def test_the_streaming_clause_parses_before_or_after_where() -> None:
    base = "BUILD INDEXTABLES COMPANION FOR DELTA '/d' "
    first = parse_companion(
        base + "WITH STREAMING POLL INTERVAL 30 SECONDS WHERE p = 'a' AT LOCATION '/i'"
    )
    last = parse_companion(
        base + "WHERE p = 'a' with streaming poll interval 30 seconds AT LOCATION '/i'"
    )
    assert first == last
    assert (first["poll_seconds"], first["where"]) == (30, "p = 'a'")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("B FOR DELTA '/d'", "AT LOCATION"),
        ("B FOR HUDI '/d' AT LOCATION '/i'", "HUDI"),
        ("B FOR DELTA 't' FROM SNAPSHOT 3 AT LOCATION '/i'", "FROM SNAPSHOT"),
        ("B FOR ICEBERG 'n.t' FROM VERSION 3 AT LOCATION '/i'", "FROM VERSION"),
        ("B FOR DELTA 't' CATALOG 'uc' AT LOCATION '/i'", "CATALOG"),
        ("B FOR DELTA '/d' HASHED FASTFIELDS ('a') AT LOCATION '/i'", "HASHED"),
        ("B FOR DELTA '/d' INVALIDATE ALL PARTITIONS AT LOCATION '/i'", "INVALIDATE"),
        ("B FOR DELTA '/d' TARGET INPUT SIZE lots AT LOCATION '/i'", "TARGET INPUT SIZE"),
        ("B FOR DELTA '/d' INCLUDE COLUMNS (a) AT LOCATION '/i'", "quote"),
        ("B FOR DELTA '/d' INDEXING MODES ('a') AT LOCATION '/i'", "'column':'mode'"),
        ("B FOR DELTA '/d' FROM VERSION 1 FROM VERSION 2 AT LOCATION '/i'", "twice"),
        ("B FOR DELTA '/d' WITH STREAMING POLL INTERVAL 0 SECONDS AT LOCATION '/i'", "at least 1"),
        ("B FOR DELTA '/d' WITH STREAMING POLL INTERVAL 1.5 SECONDS AT LOCATION '/i'", "whole"),
        ("B FOR DELTA '/d' WITH STREAMING POLL INTERVAL 5 SECONDS AT LOCATION '/i' DRY RUN",
         "DRY RUN and WITH STREAMING"),
    ],
)  # fmt: skip
def test_bad_statements_name_the_clause(text: str, message: str) -> None:
    with pytest.raises(SqlCommandError, match=message):
        parse_companion(text.replace("B ", "BUILD INDEXTABLES COMPANION ", 1))


def rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(
        tuple(("nan" if v != v else v) if isinstance(v, float) else v for v in r)
        for r in frame.collect()
    )  # NaN as text: NaN != NaN


def test_companion_reads_equal_spark_over_the_parquet_source(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    spark.range(300).selectExpr(
        "id",
        "cast(id % 3 as int) as bucket",
        "case when id % 11 = 0 then null when id % 5 = 0 then '' "
        "else concat('request ', id, case when id % 7 = 0 then ' timed out' else ' ok' end) "
        "end as message",
        "case when id % 13 = 0 then double('NaN') when id % 17 = 0 then -0.0 "
        "when id % 19 = 0 then double('-Infinity') else id / 4.0 end as latency",
        "case when id % 4 = 0 then 'ERROR' else 'INFO' end as level",
    ).repartition(4).write.partitionBy("bucket").parquet(source)
    result = itp.sql(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' "
        f"INDEXING MODES ('message':'text') TARGET INPUT SIZE 2K AT LOCATION '{index}'",
    ).first()
    assert result.status == "success"
    assert result.parquet_files_indexed >= 12
    assert result.table_path == index
    again = itp.sql(
        spark, f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'"
    )
    assert again.first().status == "no_action"
    expected = spark.read.parquet(source)
    found = spark.read.format("indextables").load(index)
    assert sorted(found.columns) == sorted(expected.columns)
    columns = expected.columns
    assert rows(found.select(*columns)) == rows(expected.select(*columns))
    for where in ("latency > 10", "level = 'ERROR' AND bucket = 1", "message = ''", "latency = 0"):
        assert rows(found.where(where).select(*columns)) == rows(
            expected.where(where).select(*columns)
        ), where
    searched = spark.read.format("indextables").option("query", "message:timed").load(index)
    assert rows(searched.select("id")) == rows(
        expected.where("message like '%timed%'").select("id")
    )
    hits = itp.search(spark, index, "message:timed", where="bucket = 2")
    assert rows(hits.select("id")) == rows(
        expected.where("message like '%timed%' AND bucket = 2").select("id")
    )
    assert (
        itp.count(spark, index, query="message:timed")
        == expected.where("message like '%timed%'").count()
    )


def test_strip_indexing_modes_through_sql_equal_spark(spark: Any, tmp_path: Path) -> None:
    """INDEXING MODES 'text_uuid_strip' / 'text_custom_strip:<regex>': searches see the
    value with the matches removed; rows and filters see the source's value."""
    import indextables.pyspark as itp

    uuid = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    spark.range(120).selectExpr(
        "id",
        "case when id % 9 = 0 then null else concat('req ', "
        "case when id % 2 = 0 then '123e4567-e89b-12d3-a456-426614174000' else 'deadbeef' end, "
        "case when id % 3 = 0 then ' timed out' else ' ok' end) end as message",
        "concat('order ORD-', id % 7, case when id % 5 = 0 then ' late' else '' end) as note",
        "cast(id % 2 as int) as part",
    ).repartition(2).write.partitionBy("part").parquet(source)
    parsed = parse_companion(
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' INDEXING MODES "
        "('message':'text_uuid_strip', 'note':'text_custom_strip:ORD-[0-9]+') "
        f"AT LOCATION '{index}'"
    )
    assert parsed["indexing_modes"] == {
        "message": "text_uuid_strip",
        "note": "text_custom_strip:ORD-[0-9]+",
    }
    result = itp.sql(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' INDEXING MODES "
        "('message':'text_uuid_strip', 'note':'text_custom_strip:ORD-[0-9]+') "
        f"AT LOCATION '{index}'",
    ).first()
    assert result.status == "success"
    expected = spark.read.parquet(source)
    tokens = {
        "message": f"split(lower(regexp_replace(message, '{uuid}', ' ')), '[^a-z0-9]+')",
        "note": "split(lower(regexp_replace(note, 'ORD-[0-9]+', ' ')), '[^a-z0-9]+')",
    }
    for column, word in (("message", "timed"), ("message", "deadbeef"), ("message", "12d3"),
                         ("note", "ord"), ("note", "late")):  # fmt: skip
        found = spark.read.format("indextables").option("query", f"{column}:{word}").load(index)
        assert rows(found.select("id")) == rows(
            expected.where(f"array_contains({tokens[column]}, '{word}')").select("id")
        ), (column, word)
    whole = "req 123e4567-e89b-12d3-a456-426614174000 ok"
    found = spark.read.format("indextables").load(index).where(f"message = '{whole}'")
    assert rows(found.select("id")) == rows(expected.where(f"message = '{whole}'").select("id"))
    from indextables.search.errors import CompanionError

    with pytest.raises(CompanionError, match="exact_only is not supported"):
        itp.sql(
            spark,
            f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' INDEXING MODES "
            f"('message':'exact_only') AT LOCATION '{tmp_path / 'other'}'",
        )


def test_streaming_sync_through_sql_and_the_helper(spark: Any, tmp_path: Path) -> None:
    import threading

    import pyarrow as pa
    from deltalake import write_deltalake

    import indextables.pyspark as itp

    source, index = tmp_path / "delta", str(tmp_path / "idx")
    write_deltalake(str(source), pa.table({"id": [1, 2, 3], "msg": ["a b", "", None]}))
    statement = (
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' INDEXING MODES ('msg':'text') "
        f"WITH STREAMING POLL INTERVAL 1 SECONDS AT LOCATION '{index}'"
    )
    with pytest.raises(SqlCommandError, match="maxCycles"):
        itp.sql(spark, statement, options={"spark.indextables.companion.streaming.maxCycles": "x"})
    # Two cycles: the first syncs, the second sees the same commit and is skipped.
    result = itp.sql(
        spark, statement, options={"spark.indextables.companion.streaming.maxCycles": "2"}
    ).collect()
    assert [(r.status, r.parquet_files_indexed) for r in result] == [("success", 1)]
    stop = threading.Event()
    synced: list[int] = []

    def on_cycle(cycle: Any) -> None:
        if cycle.result is not None:
            synced.append(cycle.result.parquet_files_indexed)
        if cycle.number == 1:
            write_deltalake(str(source), pa.table({"id": [4], "msg": ["b c"]}), mode="append")
        if cycle.number == 3:
            stop.set()

    summary = itp.sync_companion_forever(
        spark, str(source), index, source_format="delta", poll_seconds=0.01, stop=stop,
        on_cycle=on_cycle,
    )  # fmt: skip
    assert (summary.cycles, summary.syncs, synced) == (3, 2, [0, 1])
    assert itp.count(spark, index, query="msg:b") == 2


def test_rows_deleted_by_a_deletion_vector_stay_out_of_every_spark_read(
    spark: Any, tmp_path: Path
) -> None:
    """The Databricks table vendored by the search package: values 0..9, 0 and 9 deleted."""
    import indextables.pyspark as itp

    fixture = Path(__file__).resolve().parents[2] / "indextables-search/tests/fixtures"
    source, index = fixture / "delta-table-with-dv-small", str(tmp_path / "idx")
    row = itp.sql(
        spark, f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}'"
    ).first()
    assert (row.status, row.parquet_files_indexed) == ("success", 1)
    frame = spark.read.format("indextables").load(index)
    assert sorted(r.value for r in frame.collect()) == list(range(1, 9))
    assert frame.count() == 8
    assert frame.where("value = 0 OR value = 9").count() == 0
    assert itp.count(spark, index) == 8
    assert itp.count(spark, index, query="value:9") == 0
    agg = itp.aggregate(spark, index, metrics={"n": "count", "s": ("sum", "value")}).first()
    assert (agg.n, agg.s) == (8, 36)


def test_a_smaller_layout_through_sql_options_equals_spark(spark: Any, tmp_path: Path) -> None:
    """indexrecordoption / fastonlyfields given as itp.sql options: filters on the
    fast-only columns equal Spark's over the source; a phrase on the text column built
    without positions fails naming the column and the option."""
    import indextables.pyspark as itp
    from indextables.search.errors import FieldLayoutError

    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    spark.range(400).selectExpr(
        "case when id % 29 = 0 then null when id % 31 = 0 then -9223372036854775808 "
        "when id % 37 = 0 then 9223372036854775807 else id end as id",
        "case when id % 13 = 0 then double('NaN') when id % 17 = 0 then -0.0 "
        "when id % 19 = 0 then double('-Infinity') when id % 23 = 0 then double('Infinity') "
        "when id % 11 = 0 then null else id / 4.0 end as latency",
        "timestamp_micros(1700000000000000 + id * 250001) as ts",
        "concat('request ', id, case when id % 7 = 0 then ' timed out' else ' ok' end) as message",
    ).repartition(3).write.parquet(source)
    options = {
        "spark.indextables.indexing.fastonlyfields": "id,latency,ts",
        "spark.indextables.indexing.indexrecordoption.message": "basic",
    }
    result = itp.sql(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' INDEXING MODES ('message':'text') "
        f"AT LOCATION '{index}'",
        options=options,
    ).first()
    assert result.status == "success"
    expected = spark.read.parquet(source)
    found = spark.read.format("indextables").load(index)
    columns = expected.columns
    for where in (
        "id = 9223372036854775807",
        "id < 0",
        "id IN (5, 6, -9223372036854775808)",
        "id BETWEEN 100 AND 120",
        "id IS NULL",
        "latency = 0.0",
        "latency > 50",
        "latency < -1",
        "latency IS NULL",
        "ts >= timestamp_micros(1700000000000000 + 300 * 250001)",
    ):
        assert _nullable_rows(found.where(where).select(*columns)) == _nullable_rows(
            expected.where(where).select(*columns)
        ), where
    assert (
        itp.count(spark, index, query="message:timed")
        == expected.where("message like '%timed%'").count()
    )
    with pytest.raises(FieldLayoutError, match=r"'message'.*indexrecordoption\.message"):
        itp.search(spark, index, 'message:"timed out"').collect()


def _nullable_rows(frame: Any) -> list[tuple[Any, ...]]:
    """Rows with nulls, sortable: NaN as text, -0.0 as 0.0 (Spark compares them equal)."""
    found = [
        tuple(("nan" if v != v else v + 0.0) if isinstance(v, float) else v for v in r)
        for r in frame.collect()
    ]
    return sorted(found, key=repr)


def test_decimal_columns_read_and_filter_as_spark_does(spark: Any, tmp_path: Path) -> None:
    """A decimal source column (indexed as the reference does, as doubles) reads back exact
    and filters equal Spark's over the source, with neighbours one double apart."""
    import indextables.pyspark as itp

    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    spark.range(300).selectExpr(
        "id",
        "case when id % 11 = 0 then null "
        "when id % 3 = 0 then cast('12345678901234567.88' as decimal(38,2)) "
        "when id % 3 = 1 then cast('12345678901234567.89' as decimal(38,2)) "
        "else cast(id / 7 as decimal(38,2)) end as price",
    ).repartition(2).write.parquet(source)
    result = itp.sql(
        spark, f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'"
    ).first()
    assert result.status == "success"
    expected = spark.read.parquet(source)
    found = spark.read.format("indextables").load(index)
    assert found.schema["price"].dataType.simpleString() == "decimal(38,2)"
    for where in (
        None,
        "price = 12345678901234567.89",
        "price > 12345678901234567.88",
        "price < 12345678901234568",
        "price IN (1.00, 12345678901234567.88)",
        "price IS NULL",
    ):
        want = expected if where is None else expected.where(where)
        got = found if where is None else found.where(where)
        assert sorted(got.collect()) == sorted(want.collect()), where
        if where:
            assert itp.count(spark, index, where=where) == want.count(), where


def test_the_companion_threads_read_option_through_spark(spark: Any, tmp_path: Path) -> None:
    import indextables.pyspark as itp

    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    spark.range(4000).selectExpr(
        "id",
        "concat('request ', id, case when id % 37 = 0 then ' timed out' else ' ok' end) as message",
        "case when id % 9 = 0 then null else concat('host-', id % 50) end as host",
    ).coalesce(1).write.option("parquet.page.size", "1024").parquet(source)
    itp.sql(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' "
        f"INDEXING MODES ('message':'text') AT LOCATION '{index}'",
    )
    expected = rows(
        spark.read.parquet(source).where("message like '%timed%'").select("id", "message", "host")
    )
    key = "spark.indextables.read.companionThreads"
    for value in ("on", "off", "auto"):
        found = spark.read.format("indextables").option(key, value).option("query", "message:timed")
        assert rows(found.load(index).select("id", "message", "host")) == expected, value
    with pytest.raises(Exception, match=r"(?i)read\.companionthreads"):
        spark.read.format("indextables").option(key, "sometimes").load(index).collect()
