"""Partition columns of every partitionable type: written, recorded, read back and pruned.

The oracle is Parquet written from the same DataFrame in the same session:
every read (pushdown on and off, ``itp.search`` local and distributed, the
streaming source) must return the same multiset of rows.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

import indextables.pyspark as itp
from indextables.pyspark.errors import OptionError
from indextables.pyspark.read.sparktypes import arrow_type
from indextables.pyspark.streamstart import run_stream
from indextables.search.query.filters import Condition, may_match_file
from indextables.search.query.partitionprune import partition_may_match, partition_predicate
from indextables.search.schema.partitionvalues import (
    java_double_string,
    java_float_string,
    log_string,
    partition_codes,
    partition_column,
    timestamp_string,
)

FMT = "indextables"
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
TZ = "spark.sql.session.timeZone"
MODE = "spark.indextables.search.mode"

# -- canonical strings (what the reference writes for the same value) -------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (1e10, "1.0E10"),
        (1e-5, "1.0E-5"),
        (0.001, "0.001"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (-1.5, "-1.5"),
        (123456.789, "123456.789"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (5e-324, "4.9E-324"),
        (2**53 + 0.0, "9.007199254740992E15"),
    ],
)
def test_doubles_are_written_as_java_writes_them(value: float, text: str) -> None:
    assert java_double_string(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1 / 3, "0.33333334"),
        (-0.0, "-0.0"),
        (3.4028234663852886e38, "3.4028235E38"),
        (16777216.0, "1.6777216E7"),
        (0.00123, "0.00123"),
    ],
)
def test_floats_are_written_as_java_writes_them(value: float, text: str) -> None:
    assert java_float_string(value) == text


@pytest.mark.parametrize(
    ("micros", "text"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59.999999Z"),
        (1_500_000, "1970-01-01T00:00:01.500Z"),
        (1_710_064_800_000_001, "2024-03-10T10:00:00.000001Z"),
        (-62_135_596_800_000_000, "0001-01-01T00:00:00Z"),
    ],
)
def test_timestamps_are_utc_instants(micros: int, text: str) -> None:
    assert timestamp_string(micros, utc=True) == text
    assert timestamp_string(micros, utc=False) == text[:-1]


def test_timestamp_string_does_not_depend_on_the_value_zone() -> None:
    moment = datetime(2024, 11, 3, 8, 30, 0, 250_000, tzinfo=UTC)
    kolkata = moment.astimezone(timezone(timedelta(hours=5, minutes=30)))
    assert log_string(moment) == log_string(kolkata) == "2024-11-03T08:30:00.250Z"


def test_writer_routes_each_row_to_exactly_one_value() -> None:
    column = pa.array([-0.0, 0.0, math.nan, None, 0.0, math.nan], type=pa.float64())
    codes, strings = partition_codes(column)
    routed = [strings[c] for c in codes.to_pylist()]
    assert routed == ["-0.0", "0.0", "NaN", None, "0.0", "NaN"]


@pytest.mark.parametrize(
    ("text", "arrow_type", "value"),
    [
        ("", pa.string(), None),
        ("", pa.int32(), None),
        (None, pa.float64(), None),
        ("-0.0", pa.float64(), -0.0),
        ("1.0E-5", pa.float32(), pa.scalar(1e-5, pa.float32()).as_py()),
        ("2024-03-10T10:00:00.000001Z", pa.timestamp("us", tz="UTC"), 1_710_064_800_000_001),
        ("2024-03-10 15:30:00+05:30", pa.timestamp("us", tz="UTC"), 1_710_064_800_000_000),
        ("1969-12-31T23:59:59.999999", pa.timestamp("us"), -1),
        ("1E-8", pa.decimal128(10, 8), Decimal("0.00000001")),
    ],
)
def test_log_strings_read_back_as_typed_values(
    text: str | None, arrow_type: pa.DataType, value: Any
) -> None:
    column = partition_column(text, arrow_type, 2)
    got = column.cast(pa.int64()).to_pylist() if pa.types.is_timestamp(arrow_type) else None
    if got is not None:
        assert got == [value, value]
    else:
        assert column.to_pylist() == [value, value]
        assert column.type == arrow_type


# -- pruning: a superset of Spark's answer ------------------------------------------------


def _keeps(op: str, value: str | None, data_type: Any, *operands: Any) -> bool:
    return partition_may_match(Condition(op, "p", operands), value, arrow_type(data_type))


@pytest.mark.parametrize(
    ("op", "value", "data_type", "operands", "kept"),
    [
        ("=", "-0.0", DoubleType(), (0.0,), True),
        ("=", "0.0", DoubleType(), (-0.0,), True),
        ("<", "-0.0", DoubleType(), (0.0,), False),
        ("=", "NaN", DoubleType(), (math.nan,), True),
        (">", "NaN", DoubleType(), (1e308,), True),
        (">=", "NaN", FloatType(), (math.inf,), True),
        ("<", "NaN", DoubleType(), (math.inf,), False),
        ("!=", "NaN", DoubleType(), (math.nan,), False),
        ("=", "0.1", FloatType(), (pa.scalar(0.1, pa.float32()).as_py(),), True),
        ("=", None, StringType(), ("a",), False),
        ("null", None, StringType(), (), True),
        ("null", "", StringType(), (), True),
        ("=", "", StringType(), ("",), False),
        ("notnull", "", IntegerType(), (), False),
        ("=", "007", StringType(), (7,), True),  # another type: left to Spark
        ("=", "007", StringType(), ("7",), False),
        ("=", "007", IntegerType(), (7,), True),
        ("in", "b", StringType(), ("a", "b"), True),
        ("prefix", "abc", StringType(), ("ab",), True),
        ("prefix", "abc", StringType(), ("b",), False),
        (
            "=",
            "2024-03-10T10:00:00Z",
            TimestampType(),
            (datetime(2024, 3, 10, 15, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),),
            True,
        ),
        ("<", "2024-03-10T10:00:00Z", TimestampType(), (datetime(2024, 3, 10, tzinfo=UTC),), False),
        ("=", "2024-03-10T10:00:00", TimestampNTZType(), (datetime(2024, 3, 10, 10),), True),
        ("=", "2024-03-10", DateType(), (datetime(2024, 3, 10, tzinfo=UTC),), True),
        ("=", "not-a-date", DateType(), (date(2024, 3, 10),), True),
        ("=", "5", LongType(), (6,), False),
    ],
)
def test_partition_pruning_keeps_every_split_spark_may_match(
    op: str, value: str | None, data_type: Any, operands: tuple[Any, ...], kept: bool
) -> None:
    assert _keeps(op, value, data_type, *operands) is kept


@pytest.mark.parametrize(
    ("op", "value", "operands"),
    [
        ("=", "-0.0", (0.0,)),
        ("=", "NaN", (math.nan,)),
        ("=", "0.1", (pa.scalar(0.1, pa.float32()).as_py(),)),
        ("=", "2024-03-10T10:00:00Z", (datetime(2024, 3, 10, 10, tzinfo=UTC),)),
        ("=", "007", (7,)),
        ("null", "", ()),
    ],
)
def test_untyped_pruning_keeps_what_a_typed_column_may_match(
    op: str, value: str, operands: tuple[Any, ...]
) -> None:
    assert partition_may_match(Condition(op, "p", operands), value) is True


def test_a_null_partition_left_out_of_the_entry_is_still_a_partition_column() -> None:
    kept = may_match_file(
        [Condition("=", "p", ("x",))],
        partition_values={},
        min_values=None,
        max_values=None,
        fields={},
        partition_types={"p": pa.string()},
    )
    assert kept is False


def test_manifest_predicates_only_where_the_protocol_order_is_exact() -> None:
    from indextables.protocol import predicates as p

    types = {"s": StringType(), "d": DoubleType(), "t": TimestampType(), "i": IntegerType()}
    conditions = [
        Condition("=", "s", ("2x",)),
        Condition("=", "d", (0.0,)),
        Condition("=", "t", (datetime(2024, 1, 1, tzinfo=UTC),)),
        Condition("in", "i", (7, 8)),
    ]
    arrow_types = {k: arrow_type(v) for k, v in types.items()}
    assert partition_predicate(conditions, ["s", "d", "t", "i"], arrow_types) == p.In(
        "i", ("7", "8")
    )
    # Bounds over "2x", "5", "10" in the protocol's order are [10, 10]: "2x" is outside.
    bounds = {"s": _bounds("10", "10")}
    assert p.EqualTo("s", "2x").may_match(bounds) is False  # why strings are never passed


def _bounds(low: str, high: str) -> Any:
    from indextables.protocol.state import PartitionBounds

    return PartitionBounds(low, high)


# -- end to end, against Parquet -----------------------------------------------------------

_LA = timezone(timedelta(hours=-8))
VALUES: dict[str, list[Any]] = {
    "string": ["", "007", "a", None, "7", "a/b", "x=y", "100%", "é ü", "sp ace", "10", "2x"],
    "int": [0, 7, -1, None, 2**31 - 1, -(2**31)],
    "bigint": [0, 2**53 + 1, -(2**63), None, 2**63 - 1],
    "smallint": [0, -5, 300, None],
    "tinyint": [0, -128, 127, None],
    "double": [-0.0, math.nan, 0.0, math.inf, -math.inf, 1e10, 1e-5, 0.1, None],
    "float": [0.0, math.nan, -0.0, math.inf, 0.1, 1e-5, None],
    "boolean": [True, False, None],
    "date": [date(2024, 1, 1), date(1969, 12, 31), date(1900, 1, 1), None],
    "timestamp": [
        datetime(2024, 3, 10, 9, 59, 59, 999_999, tzinfo=UTC),  # LA: just before the DST gap
        datetime(2024, 3, 10, 10, 0, tzinfo=UTC),
        datetime(2024, 11, 3, 8, 30, tzinfo=UTC),  # LA 01:30, first of two
        datetime(2024, 11, 3, 9, 30, tzinfo=UTC),  # LA 01:30, second
        datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
        datetime(1900, 1, 1, 0, 0, tzinfo=UTC),
        None,
    ],
    "timestamp_ntz": [
        datetime(2024, 3, 10, 2, 30),
        datetime(1969, 12, 31, 23, 59, 59, 999_999),
        datetime(2024, 1, 1, 0, 0, 0, 1000),
        None,
    ],
    "decimal(10,3)": [Decimal("1.500"), Decimal("-0.001"), Decimal("0.000"), None],
}


def _frame(spark: Any, type_name: str) -> Any:
    from pyspark.sql import functions as F

    values = VALUES[type_name]
    rows = [(i, f"row {i}", v) for i, v in enumerate(values * 2)]
    df = spark.createDataFrame(rows, f"id int, message string, p {_input_type(type_name)}")
    return df.withColumn("p", F.col("p").cast(type_name))


def _input_type(type_name: str) -> str:
    return {"float": "double", "tinyint": "int", "smallint": "int"}.get(type_name, type_name)


def _key(row: Any) -> str:
    return json.dumps(row.asDict(), sort_keys=True, default=repr)


def _rows(df: Any) -> list[str]:
    return sorted(_key(r) for r in df.collect())


def _filters(type_name: str) -> list[Any]:
    from pyspark.sql import functions as F

    p = F.col("p")
    present = [v for v in VALUES[type_name] if v is not None]
    out = [p.isNull(), p.isNotNull()]
    for value in present[:3]:
        lit = F.lit(value).cast(type_name)
        out += [p == lit, p < lit, p >= lit, ~(p == lit)]
    out.append(p.eqNullSafe(F.lit(present[-1]).cast(type_name)))
    out.append(p.isin(*[F.lit(v).cast(type_name) for v in present[:3]]))
    if type_name == "string":
        out += [p.startswith("a"), p > F.lit("5"), p <= F.lit("10")]
    return out


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: Any) -> dict[str, tuple[str, str]]:
    """Per type: an IndexTables table and a Parquet copy, both partitioned by ``p``."""
    root = tmp_path_factory.mktemp("partitions")
    out = {}
    for type_name in VALUES:
        df = _frame(spark, type_name).repartition(2)
        ours, parquet = str(root / f"it_{len(out)}"), str(root / f"pq_{len(out)}")
        df.write.format(FMT).mode("append").option("partitionBy", "p").save(ours)
        if type_name in ("double", "float"):
            # Spark's own partitioned write fails when -0.0 and 0.0 meet in one task (its
            # sort treats them as equal, so it reopens p=0.0): the oracle holds p as data.
            df.write.parquet(parquet)
        else:
            df.write.partitionBy("p").parquet(parquet)
        out[type_name] = (ours, parquet)
    return out


def _parquet(spark: Any, path: str, type_name: str) -> Any:
    return spark.read.schema(_frame(spark, type_name).schema).parquet(path)


def _matches(frames: list[Any]) -> list[list[int]]:
    """The ids each DataFrame returns, from one Spark job (a union tagged by position)."""
    from functools import reduce

    from pyspark.sql import functions as F

    tagged = [f.select(F.lit(i).alias("tag"), "id") for i, f in enumerate(frames)]
    found: list[list[int]] = [[] for _ in frames]
    for row in reduce(lambda a, b: a.unionAll(b), tagged).collect():
        found[row["tag"]].append(row["id"])
    return [sorted(ids) for ids in found]


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.parametrize("type_name", list(VALUES))
def test_every_partition_type_reads_as_parquet_with_and_without_pushdown(
    spark: Any, tables: dict[str, tuple[str, str]], type_name: str
) -> None:
    ours, parquet = tables[type_name]
    filters = _filters(type_name)
    # The oracle: Spark evaluating each filter on Parquet's rows (Parquet's own row-group
    # pushdown is off: its statistics miss -0.0 rows for p = 0.0).
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        oracle = _parquet(spark, parquet, type_name)
        expected_all = _rows(oracle)
        expected = _matches([oracle.where(c) for c in filters])
    finally:
        spark.conf.unset("spark.sql.parquet.filterPushdown")
    assert len(expected_all) == 2 * len(VALUES[type_name])
    for pushdown in ("false", "true"):
        spark.conf.set(PUSHDOWN, pushdown)
        try:
            assert _rows(spark.read.format(FMT).load(ours)) == expected_all
            got = _matches([spark.read.format(FMT).load(ours).where(c) for c in filters])
            for condition, want, have in zip(filters, expected, got, strict=True):
                assert have == want, (pushdown, str(condition))
        finally:
            spark.conf.unset(PUSHDOWN)


def _add_actions(path: str) -> list[Any]:
    from indextables.protocol import open_table
    from indextables.protocol.actions import AddAction, action_to_json
    from indextables.protocol.logreplay import read_version
    from indextables.storage import LocalStore

    store = LocalStore(path)
    actions = [a for v in range(open_table(path).version + 1) for a in read_version(store, v)]
    return [json.loads(action_to_json(a))["add"] for a in actions if isinstance(a, AddAction)]


@pytest.mark.spark
@pytest.mark.integration
def test_the_log_records_reference_strings_and_json_null(
    tables: dict[str, tuple[str, str]],
) -> None:
    recorded = {
        t: sorted({json.dumps(a["partitionValues"]["p"]) for a in _add_actions(tables[t][0])})
        for t in ("string", "double", "timestamp", "decimal(10,3)", "boolean")
    }
    assert "null" in recorded["string"]
    assert '""' in recorded["string"]
    assert {'"-0.0"', '"0.0"', '"NaN"', '"1.0E10"', '"1.0E-5"', "null"} <= set(recorded["double"])
    assert '"2024-03-10T09:59:59.999999Z"' in recorded["timestamp"]
    assert '"1900-01-01T00:00:00Z"' in recorded["timestamp"]
    assert {'"1.500"', '"-0.001"', '"0.000"'} <= set(recorded["decimal(10,3)"])
    assert recorded["boolean"] == ['"false"', '"true"', "null"]
    paths = {a["path"].split("/")[0] for a in _add_actions(tables["string"][0])}
    assert {"p=__HIVE_DEFAULT_PARTITION__", "p=a%2Fb", "p=x%3Dy", "p=100%25"} <= paths


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.parametrize("writer_zone", ["Asia/Kolkata", "America/Los_Angeles"])
def test_timestamp_partitions_do_not_depend_on_session_zones(
    spark: Any, tmp_path: Path, writer_zone: str
) -> None:
    from pyspark.sql import functions as F

    path = str(tmp_path / "t")
    spark.conf.set(TZ, writer_zone)
    try:
        _frame(spark, "timestamp").write.format(FMT).mode("append").option("partitionBy", "p").save(
            path
        )
    finally:
        spark.conf.set(TZ, "UTC")
    written = {a["partitionValues"]["p"] for a in _add_actions(path)}
    assert "2024-11-03T08:30:00Z" in written
    assert "2024-11-03T09:30:00Z" in written
    expected = _rows(_frame(spark, "timestamp"))
    for reader_zone in ("UTC", "America/Los_Angeles", "Asia/Kolkata"):
        spark.conf.set(TZ, reader_zone)
        spark.conf.set(PUSHDOWN, "true")
        try:
            table = spark.read.format(FMT).load(path)
            assert _rows(table) == expected
            for value in VALUES["timestamp"]:
                if value is None:
                    continue
                micros = (value - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
                literal = F.timestamp_micros(F.lit(micros))
                got = [r["id"] for r in table.where(F.col("p") == literal).collect()]
                want = [i for i, v in enumerate(VALUES["timestamp"] * 2) if v == value]
                assert sorted(got) == want, (reader_zone, value)
        finally:
            spark.conf.set(TZ, "UTC")
            spark.conf.unset(PUSHDOWN)


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.parametrize("mode", ["local", "distributed"])
@pytest.mark.parametrize(
    ("type_name", "where"),
    [
        ("string", "p IS NULL"),
        ("string", "p = ''"),
        ("string", "p = '007'"),
        ("string", "p IS NOT NULL AND p = 'a/b'"),
        ("double", "p = 0.0"),
        ("double", "p >= 0.0"),
        ("int", "p IS NULL"),
        ("int", "p = 7"),
        ("date", "p = '1969-12-31'"),
    ],
)
def test_search_where_on_partitions_matches_parquet(
    spark: Any, tables: dict[str, tuple[str, str]], type_name: str, where: str, mode: str
) -> None:
    ours, parquet = tables[type_name]
    got = itp.search(spark, ours, where=where, options={MODE: mode})
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")  # it misses -0.0 rows
    try:
        expected = _rows(_parquet(spark, parquet, type_name).where(where))
    finally:
        spark.conf.unset("spark.sql.parquet.filterPushdown")
    assert _rows(got.select("id", "message", "p")) == expected


@pytest.mark.spark
@pytest.mark.integration
def test_streaming_source_reads_null_and_special_partitions(
    spark: Any, tables: dict[str, tuple[str, str]]
) -> None:
    ours, parquet = tables["double"]
    run_stream(
        lambda: (
            spark.readStream.format(FMT)
            .option("startingVersion", "-1")
            .load(ours)
            .writeStream.format("memory")
            .queryName("partition_values_stream")
            .trigger(availableNow=True)
            .start()
        )
    )
    streamed = spark.table("partition_values_stream").select("id", "message", "p")
    assert _rows(streamed) == _rows(_parquet(spark, parquet, "double"))


@pytest.mark.spark
@pytest.mark.parametrize(
    ("ddl", "type_text"),
    [("array<int>", "array<int>"), ("binary", "binary"), ("struct<a:int>", "struct<a:int>")],
)
def test_unpartitionable_types_are_refused_at_planning(
    spark: Any, tmp_path: Path, ddl: str, type_text: str
) -> None:
    df = spark.createDataFrame([], f"id int, message string, bad {ddl}")
    with pytest.raises(Exception, match=rf"'bad'.*{type_text}") as info:
        df.write.format(FMT).mode("append").option("partitionBy", "bad").save(str(tmp_path))
    assert "OptionError" in str(info.value) or isinstance(info.value, OptionError)
