"""``itp.count`` and ``itp.aggregate``: from the log and the index, equal to Spark's answers."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import indextables.pyspark as itp
from indextables.pyspark.errors import OptionError
from indextables.pyspark.helpers import indexplan

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytestmark = [pytest.mark.spark, pytest.mark.integration]

GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"
NAMES = sorted(p.name[: -len(".expected.json")] for p in GOLDEN.glob("*.expected.json"))
if not NAMES:
    raise RuntimeError(f"golden tables not found at {GOLDEN}")
LOG_ROWS = [
    {
        "id": i,
        "day": f"2024-01-0{i % 3 + 1}",
        "level": "ERROR" if i % 10 == 0 else "INFO",
        "timed": i % 7 == 0,
        "latency": i / 4,
    }
    for i in range(200)
]


@pytest.fixture
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the answer would come from reading rows through Spark."""

    def refuse(self: Any, spark: Any, where: Any) -> Any:
        raise AssertionError("fell back to reading rows")

    monkeypatch.setattr(indexplan.IndexPlan, "spark_frame", refuse)


def _analyzed(df: Any) -> str:
    return str(df._jdf.queryExecution().analyzed().toString())


# -- count ----------------------------------------------------------------


@pytest.mark.usefixtures("no_fallback")
def test_count_of_partitions_reads_only_the_log(
    spark: Any, logs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.aggregate import tablecount

    def opened(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a split was opened")

    monkeypatch.setattr(tablecount, "run_splits", opened)
    assert itp.count(spark, logs) == 200
    assert itp.count(spark, logs, where="day = '2024-01-02'") == 67
    assert itp.count(spark, logs, where="day IN ('2024-01-01', '2024-01-03')") == 133
    assert itp.count(spark, logs, where="day > '2024-01-05'") == 0


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"query": "message:timed"}, sum(1 for r in LOG_ROWS if r["timed"])),
        ({"textsearch": {"message": "timed"}}, sum(1 for r in LOG_ROWS if r["timed"])),
        ({"fieldmatch": {"level": "ERROR"}}, 20),
        ({"where": "level = 'ERROR'"}, 20),
        (
            {"where": "latency > 10 AND day = '2024-01-02'"},
            sum(1 for r in LOG_ROWS if r["latency"] > 10 and r["day"] == "2024-01-02"),
        ),
        ({"where": "id IN (1, 2, 3, 500) AND level = 'INFO'"}, 3),
        ({"where": "latency <= 0"}, 1),
    ],
)
def test_count_from_the_index(spark: Any, logs: str, kwargs: dict[str, Any], expected: int) -> None:
    assert itp.count(spark, logs, **kwargs) == expected


@pytest.mark.parametrize(
    "where",
    [
        "lower(level) = 'error' OR id = 5",
        "level <> 'ERROR'",
        "level > 'E'",
        "id = '7'",
    ],
)
def test_count_outside_the_exact_grammar_equals_spark(spark: Any, logs: str, where: str) -> None:
    expected = spark.read.format("indextables").load(logs).where(where).count()
    assert itp.count(spark, logs, where=where) == expected


def test_count_distributed_equals_local(spark: Any, logs: str) -> None:
    options = {"spark.indextables.search.mode": "distributed"}
    assert itp.count(spark, logs, query="message:timed", options=options) == 29
    options = {"spark.indextables.search.localMaxSplits": "1"}
    assert itp.count(spark, logs, where="level = 'ERROR'", options=options) == 20


@pytest.mark.usefixtures("no_fallback")
def test_session_placement_runs_splits_as_described_spark_tasks(
    spark: Any, logs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's search mode reaches itp.count/aggregate: splits run as Spark tasks
    (the engine's runner is the adapter's) under a job description naming the table."""
    from pyspark import SparkContext

    runs: list[tuple[str, int]] = []
    original = indexplan.SparkTasks.__call__

    def recorded(self: Any, plan: Any, fn: Any) -> Any:
        runs.append((self.what, len(plan.splits)))
        return original(self, plan, fn)

    described: list[str] = []
    set_description = SparkContext.setJobDescription

    def describe(self: Any, value: str) -> None:
        described.append(value)
        set_description(self, value)

    monkeypatch.setattr(indexplan.SparkTasks, "__call__", recorded)
    monkeypatch.setattr(SparkContext, "setJobDescription", describe)
    local = itp.count(spark, logs, query="message:timed")
    assert runs == []  # a small plan runs in the driver
    spark.conf.set("spark.indextables.search.mode", "distributed")
    try:
        assert itp.count(spark, logs, query="message:timed") == local == 29
        rows = itp.aggregate(spark, logs, group_by="level", metrics={"n": "count"}).collect()
        # An explicit option wins over the session's setting.
        itp.count(spark, logs, where="id > 3", options={"spark.indextables.search.mode": "local"})
    finally:
        spark.conf.unset("spark.indextables.search.mode")
    assert {r["level"]: r["n"] for r in rows} == {"ERROR": 20, "INFO": 180}
    assert [what for what, _ in runs] == ["count", "aggregate"]
    assert all(n > 0 for _, n in runs)
    assert len(described) == 2
    assert all(logs in d and "splits" in d for d in described), described


def test_count_time_travel(spark: Any, logs: str) -> None:
    assert itp.count(spark, logs, version=1) == 100
    assert itp.count(spark, logs, version=1, where="level = 'ERROR'") == 10
    assert itp.count(spark, logs, options={"versionAsOf": "1"}) == 100
    with pytest.raises(OptionError, match="not both"):
        itp.count(spark, logs, version=1, timestamp=0)


# -- aggregate ------------------------------------------------------------


@pytest.mark.usefixtures("no_fallback")
def test_aggregate_terms_from_the_index(spark: Any, logs: str) -> None:
    df = itp.aggregate(
        spark,
        logs,
        group_by=["day", "level"],
        metrics={
            "n": "count",
            "total": ("sum", "id"),
            "lo": ("min", "latency"),
            "avg": ("avg", "latency"),
        },
        where="id < 150",
    )
    assert "LocalRelation" in _analyzed(df)
    assert df.schema.simpleString() == (
        "struct<day:string,level:string,n:bigint,total:bigint,lo:double,avg:double>"
    )
    expected: dict[tuple[str, str], list[Any]] = {}
    for r in LOG_ROWS:
        if r["id"] < 150:
            expected.setdefault((r["day"], r["level"]), []).append(r)
    got = {(row["day"], row["level"]): row for row in df.collect()}
    assert set(got) == set(expected)
    for key, rows in expected.items():
        assert got[key]["n"] == len(rows)
        assert got[key]["total"] == sum(r["id"] for r in rows)
        assert got[key]["lo"] == min(r["latency"] for r in rows)
        assert got[key]["avg"] == pytest.approx(sum(r["latency"] for r in rows) / len(rows))


@pytest.mark.usefixtures("no_fallback")
def test_aggregate_buckets_from_the_index(spark: Any, logs: str) -> None:
    df = itp.aggregate(
        spark,
        logs,
        group_by=[itp.histogram("id", 50), itp.range("latency", [0, 10.5, 30], name="band")],
        metrics={"n": "count", "hi": ("max", "id")},
        query="message:timed",
    )
    rows = {(r["id"], r["band"]): (r["n"], r["hi"]) for r in df.collect()}
    expected: dict[tuple[int, str], list[int]] = {}
    for r in LOG_ROWS:
        if r["timed"]:
            band = (
                "*-0"
                if r["latency"] < 0
                else "0-10.5"
                if r["latency"] < 10.5
                else ("10.5-30" if r["latency"] < 30 else "30-*")
            )
            expected.setdefault((r["id"] // 50 * 50, band), []).append(r["id"])
    assert rows == {k: (len(v), max(v)) for k, v in expected.items()}


def test_aggregate_global_row_over_no_rows(spark: Any, logs: str) -> None:
    df = itp.aggregate(spark, logs, metrics={"n": "count", "s": ("sum", "id")}, where="id > 9999")
    assert [tuple(r) for r in df.collect()] == [(0, None)]


def test_aggregate_time_travel(spark: Any, logs: str) -> None:
    df = itp.aggregate(spark, logs, group_by="level", metrics={"n": "count"}, version=1)
    assert {r["level"]: r["n"] for r in df.collect()} == {"ERROR": 10, "INFO": 90}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"group_by": "message", "metrics": {"n": "count"}},
            "spark.indextables.indexing.fastfields=message",
        ),
        ({"metrics": {"n": ("count", "message")}}, "has no fast field"),
        ({"group_by": "nope", "metrics": {"n": "count"}}, "column 'nope'"),
        ({"metrics": {"s": ("sum", "level")}}, "needs a numeric column"),
        (
            {"group_by": [itp.date_histogram("id", "1d")], "metrics": {"n": "count"}},
            "needs a date or timestamp",
        ),
    ],
)
def test_aggregate_planning_errors(
    spark: Any, logs: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        itp.aggregate(spark, logs, **kwargs)


# -- splits without the writer's fully-indexed record (the reference's) ------


@pytest.fixture
def unrecorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Aggregate as if no split recorded its fully-indexed columns (as reference splits)."""
    from indextables.search.query import indexexact

    monkeypatch.setattr(indexexact, "FULLY_INDEXED_TAG", "no split has this tag")


def _strings_table(spark: Any, path: str, values: list[str | None]) -> None:
    rows = [(i, v) for i, v in enumerate(values)]
    df = spark.createDataFrame(rows, "id long, host string")
    options = {"spark.indextables.indexing.fastfields": "host,id"}
    df.coalesce(1).write.format("indextables").options(**options).mode("append").save(path)


@pytest.mark.usefixtures("unrecorded", "no_fallback")
def test_terms_on_unrecorded_splits_are_checked_and_answered_by_the_index(
    spark: Any, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    values = ["a", "b", "a", None, "", "é" * 100, "a"]
    _strings_table(spark, path, values)
    got = {
        r["host"]: r["n"]
        for r in itp.aggregate(spark, path, group_by="host", metrics={"n": "count"}).collect()
    }
    assert got == dict(Counter(values))
    counted = itp.aggregate(
        spark, path, group_by="host", metrics={"n": "count"}, where="host LIKE 'a%'"
    ).collect()
    assert [(r["host"], r["n"]) for r in counted] == [("a", 3)]
    assert itp.count(spark, path, where="host LIKE 'a%'") == 3  # a prefix: exact after the check


@pytest.mark.usefixtures("unrecorded")
def test_a_value_left_out_of_the_index_sends_terms_to_spark(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.query.tantivyquery import MAX_TERM_BYTES

    path = str(tmp_path / "t")
    long_value = "é" * (MAX_TERM_BYTES // 2 + 1)  # past the limit, cut inside a character
    values = ["a", long_value, "a", None]
    _strings_table(spark, path, values)
    fallbacks = []
    original = indexplan.IndexPlan.spark_frame

    def recorded(self: Any, spark: Any, where: Any) -> Any:
        fallbacks.append(where)
        return original(self, spark, where)

    monkeypatch.setattr(indexplan.IndexPlan, "spark_frame", recorded)
    rows = itp.aggregate(spark, path, group_by="host", metrics={"n": "count"}).collect()
    assert fallbacks  # the check refused the index: Spark answered
    assert {r["host"]: r["n"] for r in rows} == dict(Counter(values))


def test_indexed_everywhere_counts_values_against_indexed_terms(tmp_path: Path) -> None:
    import pyarrow as pa
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from indextables.pyspark.read.sparktypes import arrow_schema
    from indextables.search.options import parse_indexing
    from indextables.search.query.indexexact import indexed_everywhere
    from indextables.search.query.tantivyquery import MAX_TERM_BYTES
    from indextables.search.read.splitreader import open_split
    from indextables.search.schema.mapping import field_specs, specs_from_doc_mapping
    from indextables.search.splits.splitcache import SplitCache, SplitRef
    from indextables.search.write.splitwriter import SplitWriter
    from indextables.storage import LocalStore

    schema = StructType([StructField("id", LongType()), StructField("host", StringType())])
    specs = field_specs(
        arrow_schema(schema), parse_indexing({"spark.indextables.indexing.fastfields": "id,host"})
    )
    answers = []
    for name, values in (("short", ["x", "", None]), ("long", ["x", "y" * (MAX_TERM_BYTES + 1)])):
        store = LocalStore(str(tmp_path / name))
        writer = SplitWriter(store, specs, (), heap_size=20 << 20, batch_size=5)
        rows = [{"id": i, "host": v} for i, v in enumerate(values)]
        writer.write([pa.RecordBatch.from_pylist(rows, schema=arrow_schema(schema))])
        (add,) = writer.finish()
        ref = SplitRef(add.path, add.size, add.footer_start_offset, add.footer_end_offset)
        directory = SplitCache(str(tmp_path / "cache"), 1 << 30).fetch(store, store.uri, ref)
        index, searcher = open_split(directory)
        fields = specs_from_doc_mapping(add.doc_mapping_json)
        answers.append(indexed_everywhere(index, searcher, fields["host"]))
        assert not indexed_everywhere(index, searcher, fields["id"])  # not a string field
    assert answers == [True, False]


# -- golden reference tables ------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_golden_counts_and_aggregates(spark: Any, name: str, golden_copy: Any) -> None:
    expected = json.loads((GOLDEN / f"{name}.expected.json").read_text())
    path = str(golden_copy(name))
    rows = expected["rows"]
    assert itp.count(spark, path) == expected["numRows"] == len(rows)
    schema = json.loads(expected["metadata"]["schemaString"])
    kinds = {f["name"]: f["type"] for f in schema["fields"]}
    partitions = expected["metadata"]["partitionColumns"]
    key = (
        partitions[0] if partitions else next((n for n, t in kinds.items() if t == "string"), None)
    )
    numeric = next((n for n, t in kinds.items() if t in ("integer", "long")), None)
    if key is not None:
        value = next((r[key] for r in rows if r.get(key) is not None), None)
        if value is not None:
            where = f"{key} = '{value}'"
            assert itp.count(spark, path, where=where) == sum(1 for r in rows if r[key] == value)
        metrics: dict[str, Any] = {"n": "count"}
        if numeric is not None:
            metrics["s"] = ("sum", numeric)
        got = {
            r[key]: r for r in itp.aggregate(spark, path, group_by=key, metrics=metrics).collect()
        }
        groups = Counter(r.get(key) for r in rows)
        assert {k: r["n"] for k, r in got.items()} == dict(groups)
        if numeric is not None:
            for k in groups:
                assert got[k]["s"] == sum(r[numeric] for r in rows if r.get(key) == k)


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize("name", NAMES)
def test_golden_string_terms_come_from_the_index(spark: Any, name: str, golden_copy: Any) -> None:
    """Reference splits record no fully-indexed columns: the per-split check answers instead."""
    expected = json.loads((GOLDEN / f"{name}.expected.json").read_text())
    schema = json.loads(expected["metadata"]["schemaString"])
    partitions = expected["metadata"]["partitionColumns"]
    strings = [f["name"] for f in schema["fields"] if f["type"] == "string"]
    strings = [n for n in strings if n not in partitions]
    assert strings, f"{name} has no string data column"
    path = str(golden_copy(name))
    for column in strings:
        got = itp.aggregate(spark, path, group_by=column, metrics={"n": "count"}).collect()
        want = Counter(r.get(column) for r in expected["rows"])
        assert {r[column]: r["n"] for r in got} == dict(want)


# -- differential: random data against Spark over the Parquet copy -----------


_SCALAR = (
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "boolean",
    "string",
    "date",
    "timestamp",
)
_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double")
_INTEGRAL_TYPES = ("tinyint", "smallint", "int", "bigint")


def _index_filters(rng: Any, types: dict[str, str], pools: dict[str, list[Any]]) -> list[str]:
    """Filters the index translates exactly: comparisons of integral columns with literals."""
    columns = [c for c, t in types.items() if t in ("tinyint", "smallint", "int", "bigint")]
    out = []
    for _ in range(6):
        column = rng.choice(columns)
        values = [v for v in pools[column] if v is not None] or [0]
        value = rng.choice(values)
        op = rng.choice(["=", "<", ">=", "IS NULL", "IS NOT NULL"])
        out.append(f"`{column}` {op}" if "NULL" in op else f"`{column}` {op} {value}")
    return out


def _collected(frame: Any) -> list[dict[str, Any]]:
    """``frame``'s rows as dicts, timestamps read as epoch microseconds and made naive UTC
    datetimes here (PySpark cannot make a datetime of year 1 from a timestamp)."""
    from difftest.aggoracle import from_micros
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    stamps = [f.name for f in frame.schema.fields if isinstance(f.dataType, TimestampType)]
    columns = [
        F.unix_micros(F.col(f"`{f.name}`")).alias(f.name)
        if f.name in stamps
        else F.col(f"`{f.name}`")
        for f in frame.schema.fields
    ]
    rows = [r.asDict() for r in frame.select(*columns).collect()]
    for row in rows:
        for name in stamps:
            row[name] = None if row[name] is None else from_micros(row[name])
    return rows


def _expected_types(groups: Any, metrics: Any, types: dict[str, str]) -> list[tuple[str, str]]:
    """The output columns and Spark types documented for ``itp.aggregate`` (docs/pyspark.md)."""
    from indextables.search.aggregate.aggspec import Histogram, MetricFn, RangeBuckets

    out = []
    for group in groups:
        kind = types[group.column]
        if isinstance(group, Histogram):
            whole = kind in _INTEGRAL_TYPES and isinstance(group.interval, int)
            kind = "bigint" if whole else "double"
        elif isinstance(group, RangeBuckets):
            kind = "string"
        out.append((group.name, kind))
    for metric in metrics:
        kind = types[metric.column] if metric.column else "bigint"
        if metric.fn is MetricFn.COUNT:
            kind = "bigint"
        elif metric.fn is MetricFn.SUM:
            kind = "bigint" if kind in _INTEGRAL_TYPES else "double"
        elif metric.fn is MetricFn.AVG:
            kind = "double"
        out.append((metric.name, kind))
    return out


@pytest.mark.parametrize("seed", [3, pytest.param(11, marks=pytest.mark.slow)])
def test_differential_against_spark(
    spark: Any, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from difftest import aggoracle, paths
    from difftest.predicates import column_pools, random_filter
    from difftest.runner import build
    from difftest.tables import FASTFIELDS, random_plan
    from pyspark.sql.types import DecimalType, NumericType

    from indextables.search.aggregate.aggspec import parse_group_by, parse_metrics

    drawn = random_plan(seed, rows_per_write=40, writes=3)
    # A given fastfields lists every fast field (so most columns would be refused at
    # planning); the planning error is tested elsewhere, the index path here.
    options = {k: v for k, v in drawn.options.items() if k != FASTFIELDS}
    built = build(spark, dataclasses.replace(drawn, options=options), tmp_path)
    plan = built.plan
    parquet = paths.parquet(spark, built.parquet, plan.schema)
    rng = random.Random(seed)
    pools = column_pools(plan)
    types = {f.name: f.dataType.simpleString() for f in plan.schema.fields}
    wheres = [None, *(random_filter(rng, plan, pools, depth=1).render() for _ in range(6))]
    wheres += [f"{p} IS NOT NULL" for p in plan.partition_by]
    # Filters drawn to be translatable, so that filtered answers come from the index.
    translatable = _index_filters(rng, types, pools)
    wheres += translatable
    fallbacks: list[Any] = []
    original = indexplan.IndexPlan.spark_frame

    def recorded(self: Any, spark: Any, where: Any) -> Any:
        fallbacks.append(where)
        return original(self, spark, where)

    monkeypatch.setattr(indexplan.IndexPlan, "spark_frame", recorded)
    paths: list[tuple[str, str | None, str]] = []  # (case, where, "index" or "fallback")
    failures = []
    for where in wheres:
        want = (parquet.where(where) if where else parquet).count()
        before = len(fallbacks)
        got = itp.count(spark, built.table, where=where)
        paths.append(("count", where, "fallback" if len(fallbacks) > before else "index"))
        if got != want:
            failures.append(f"count where={where!r}: {got} != {want}")
    scalars = [c for c, t in types.items() if t in _SCALAR and c != "id"]
    numeric = [c for c, t in types.items() if t in _NUMERIC]
    # Every numeric column of the plan (tinyint and smallint too) is aggregated.
    assert numeric == [
        f.name
        for f in plan.schema.fields
        if isinstance(f.dataType, NumericType) and not isinstance(f.dataType, DecimalType)
    ], types
    metrics: dict[str, Any] = {"n": "count"}
    floats = [c for c in numeric[2:] if types[c] in ("float", "double")]
    for c in numeric[:2] + floats[:1]:
        # A long sum may overflow in one of Spark's summation orders and not in another.
        for fn in ("min", "max", "avg") if types[c] == "bigint" else ("sum", "min", "max", "avg"):
            metrics[f"{fn}_{c}"] = (fn, c)
    groupings: list[list[Any]] = [[], *([c] for c in scalars[:6])]
    groupings += [[a, b] for a, b in itertools.pairwise(scalars)][:2]
    groupings += [[itp.histogram(c, 1000 if "float" not in types[c] else 2.5)] for c in numeric]
    groupings += [[itp.range(c, [-10, -0.5, 0, 2.5, 10])] for c in numeric]
    groupings += [
        [itp.date_histogram(c, "1d")] for c, t in types.items() if t in ("date", "timestamp")
    ]
    counted = numeric[0] if numeric else "id"
    from_index = 0
    refusals: list[str] = []
    for number, group_by in enumerate(groupings):
        # 1 in 4: a translatable filter, counting; 3 in 4: a random filter, every metric.
        drawn_where = translatable[number % len(translatable)]
        where = (drawn_where if number % 4 == 1 else wheres[1]) if number % 2 else None
        # Extreme values (sums past 2**53, NaN) send a whole aggregation to Spark: every
        # other one (those filtered by a translatable filter) counts only, so the index
        # path is exercised, filtered, on every table.
        wanted = metrics if number % 4 == 3 else {"n": "count", "c": ("count", counted)}
        try:
            df = itp.aggregate(spark, built.table, group_by=group_by, metrics=wanted, where=where)
        except OptionError as error:
            refusals.append(str(error))
            continue
        answered = "LocalRelation" in _analyzed(df)
        from_index += answered
        paths.append((f"aggregate {group_by}", where, "index" if answered else "fallback"))
        source = parquet.where(where) if where else parquet
        groups, specs = parse_group_by(group_by), parse_metrics(wanted)
        typed = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
        assert typed == _expected_types(groups, specs, types), group_by
        # The oracle: plain arithmetic over the Parquet copy's rows (difftest.aggoracle).
        needed = sorted({g.column for g in groups} | {m.column for m in specs if m.column})
        rows = _collected(source.select(*(f"`{c}`" for c in needed)))
        integral = {c: types[c] in _INTEGRAL_TYPES for c in needed}
        expected_groups = aggoracle.expected_groups(rows, groups, specs, integral)
        got_rows = _collected(df)
        got = {tuple(aggoracle.key_of(row[g.name]) for g in groups): row for row in got_rows}
        if len(got_rows) != len(got) or set(got) != set(expected_groups):
            failures.append(
                f"groups {group_by} where={where!r} ({paths[-1][2]}): "
                f"{sorted(map(str, got))} != {sorted(map(str, expected_groups))}"
            )
            continue
        for keys, expected in expected_groups.items():
            for name, value in expected.items():
                if not aggoracle.matches(value, got[keys][name]):
                    failures.append(
                        f"aggregate {group_by} where={where!r} key={keys} {name}: "
                        f"{got[keys][name]!r} != {value!r} ({paths[-1][2]})"
                    )
    assert all("spark.indextables.indexing.fastfields" in r for r in refusals), refusals
    assert not failures, "\n".join(failures[:5])
    assert from_index > 0, "no aggregate came from the index"
    filtered = [p for _, where, p in paths if where is not None]
    drawn = [p for _, where, p in paths if where in translatable]
    # Most answers with a translatable filter come from the index, and some filtered
    # ones always do: the comparison above is then not Spark against Spark.
    assert drawn.count("index") * 2 > len(drawn), paths
    assert "index" in filtered, paths


def test_aggregate_distributed_equals_local(spark: Any, logs: str) -> None:
    kwargs: dict[str, Any] = {
        "group_by": ["day", itp.histogram("latency", 12.5)],
        "metrics": {"n": "count", "s": ("sum", "id"), "hi": ("max", "latency")},
        "where": "level = 'INFO'",
    }
    local = [tuple(r) for r in itp.aggregate(spark, logs, **kwargs).collect()]
    options = {"spark.indextables.search.mode": "distributed"}
    spread = itp.aggregate(spark, logs, options=options, **kwargs)
    assert "LocalRelation" in _analyzed(spread)
    assert [tuple(r) for r in spread.collect()] == local


def test_nan_and_signed_zero_follow_spark(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = str(tmp_path / "nan")
    values = [1.5, float("nan"), -0.0, 0.0, None, -2.0, float("-inf")]
    rows = [(i, "a" if i % 2 else "b", v) for i, v in enumerate(values)]
    df = spark.createDataFrame(rows, "id long, k string, x double")
    df.write.format("indextables").mode("append").save(path)
    table = spark.read.format("indextables").load(path)
    for where in ("x > 0", "x <= 0", "x = 0", "x < 1", "x >= -2", "x IS NULL"):
        assert itp.count(spark, path, where=where) == table.where(where).count(), where
    metrics = {"c": ("count", "x"), "hi": ("max", "x"), "lo": ("min", "x")}
    got = {r["k"]: r for r in itp.aggregate(spark, path, group_by="k", metrics=metrics).collect()}
    oracle = table.groupBy("k").agg(
        F.count("x").alias("c"), F.max("x").alias("hi"), F.min("x").alias("lo")
    )
    for expected in oracle.collect():
        row = got[expected["k"]]
        assert row["c"] == expected["c"]
        for name in ("hi", "lo"):
            a, b = row[name], expected[name]
            assert (math.isnan(a) and math.isnan(b)) or a == b, (row, expected)
    zero = itp.aggregate(
        spark,
        path,
        group_by=[itp.range("x", [0])],
        metrics={"n": "count"},
        where="x IS NOT NULL AND id < 5",
    )
    assert {r[0]: r[1] for r in zero.collect()} == {"0-*": 4}  # NaN and -0.0 are not < 0


def test_signed_zero_range_edge_from_the_index(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "zero")
    rows = [(i, v) for i, v in enumerate([-0.0, 0.0, -1.0, 2.0, None])]
    frame = spark.createDataFrame(rows, "id long, x double")
    frame.write.format("indextables").mode("append").save(path)
    zero = itp.aggregate(spark, path, group_by=[itp.range("x", [0])], metrics={"n": "count"})
    assert "LocalRelation" in _analyzed(zero)
    assert [tuple(r) for r in zero.collect()] == [(None, 1), ("*-0", 1), ("0-*", 3)]


# -- exact buckets and sums: infinities, fractional edges, extreme longs ------


def _single_split(spark: Any, path: str, rows: list[tuple[Any, ...]], ddl: str) -> None:
    frame = spark.createDataFrame(rows, ddl).coalesce(1)
    frame.write.format("indextables").mode("append").save(path)


@pytest.mark.usefixtures("no_fallback")
def test_sum_and_avg_keep_infinities_followed_by_other_values(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "inf")
    inf = float("inf")
    values = [("a", -inf), ("a", 1.0), ("b", inf), ("b", 2.0), ("c", -inf), ("c", inf)]
    values += [("c", 3.0), ("d", 4.0), ("d", None)]
    rows = [(i, k, v, 86_400_000_000 * (i % 2)) for i, (k, v) in enumerate(values)]
    _single_split(spark, path, rows, "id long, k string, x double, t long")
    metrics = {"s": ("sum", "x"), "a": ("avg", "x")}
    # Plain arithmetic: one infinity wins over finite values; both signs give NaN.
    expected: dict[str, float] = {"a": -inf, "b": inf, "c": float("nan"), "d": 4.0}

    def same(a: float, b: float) -> bool:
        return (math.isnan(a) and math.isnan(b)) or a == b

    grouped = itp.aggregate(spark, path, group_by="k", metrics=metrics).collect()
    assert "LocalRelation" in _analyzed(itp.aggregate(spark, path, group_by="k", metrics=metrics))
    for row in grouped:
        assert same(row["s"], expected[row["k"]]), row
        assert same(row["a"], expected[row["k"]]), row
    for key in ("a", "b"):
        (row,) = itp.aggregate(spark, path, metrics=metrics, where=f"k = '{key}'").collect()
        assert same(row["s"], expected[key]), row
        assert same(row["a"], expected[key]), row
    ranged = itp.aggregate(
        spark, path, group_by=[itp.range("id", [2, 4])], metrics=metrics
    ).collect()
    by_band = {r[0]: r["s"] for r in ranged}
    assert same(by_band["*-2"], -inf), by_band
    assert same(by_band["2-4"], inf), by_band


def test_range_with_fractional_edges_on_an_integer_column(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "frac")
    values = list(range(-4, 6))
    _single_split(spark, path, [(v, v * 10) for v in values], "i long, j int")
    # The last edges round up to the same integer: Spark answers those.
    for edges in ([0, 2.5], [-2.5, 0.5, 1.5, 3], [2.2, 2.7, 4]):
        spec = itp.range("i", edges)
        df = itp.aggregate(spark, path, group_by=[spec], metrics={"n": "count"})
        assert ("LocalRelation" in _analyzed(df)) == (edges != [2.2, 2.7, 4]), edges
        got = {r[0]: r[1] for r in df.collect()}
        want: Counter[str] = Counter()
        for v in values:
            position = sum(1 for e in edges if v >= e)  # from <= v < to
            want[spec.labels[position]] += 1
        assert got == dict(want), edges


def test_histogram_of_longs_near_the_lowest_long(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "low")
    low, high = -(1 << 63), (1 << 63) - 1
    values = [low, low + 5, -1001, 7, high, None]
    _single_split(spark, path, list(enumerate(values)), "id long, v long")
    df = itp.aggregate(spark, path, group_by=[itp.histogram("v", 1000)], metrics={"n": "count"})
    got = [tuple(r) for r in df.collect()]
    # Keys floor(v / 1000) * 1000 below the lowest long are not representable: null.
    assert got == [(None, 3), (-2000, 1), (0, 1), (high - high % 1000, 1)]


# -- differential: random extreme values against plain arithmetic -------------

_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _extreme_rows(rng: Any, size: int) -> list[tuple[Any, ...]]:
    """Rows with infinities among finite doubles (no NaN), longs near +/-2**63, small ints."""
    inf = float("inf")
    rows = []
    for i in range(size):
        x = rng.choice([inf, -inf, None, *([rng.choice([-2.5, 0.5, 1.0, 3.0, 1e6])] * 3)])
        big = rng.choice([_LONG_MIN, _LONG_MIN + 1, _LONG_MAX, None, rng.randint(-3000, 3000)])
        rows.append((i, rng.choice("abc"), rng.randint(-5, 5), x, big))
    return rows


def _edges(rng: Any) -> list[float]:
    """Ascending bucket edges, some fractional, none rounding to the same integer."""
    start = rng.choice([-4.5, -3, -2.5, -1])
    edges = [start]
    for _ in range(rng.randint(0, 3)):
        edges.append(math.floor(edges[-1]) + rng.choice([1.5, 2, 2.5, 3]))
    return edges


def _band(value: Any, edges: list[float], labels: tuple[str, ...]) -> Any:
    return None if value is None else labels[sum(1 for e in edges if value >= e)]


def _arith_sum(values: list[float]) -> Any:
    return sum(values) if values else None  # Python adds infinities as IEEE does


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize("seed", [5, 6])
def test_differential_extremes_against_arithmetic(spark: Any, tmp_path: Path, seed: int) -> None:
    """Fractional range edges, infinities among other values, longs near -2**63."""
    import random

    rng = random.Random(seed)
    rows = _extreme_rows(rng, 60)
    path = str(tmp_path / "t")
    frame = spark.createDataFrame(rows, "id long, k string, i int, x double, big long")
    frame.repartition(2).write.format("indextables").mode("append").save(path)
    frame.coalesce(1).write.format("indextables").mode("append").save(path)
    data = rows + rows  # two writes of the same rows
    failures = []
    for _ in range(4):
        edges = _edges(rng)
        spec = itp.range("i", edges)
        want: dict[Any, list[float]] = {}
        for row in data:
            want.setdefault(_band(row[2], edges, spec.labels), [])
            if row[3] is not None:
                want[_band(row[2], edges, spec.labels)].append(row[3])
        counts = Counter(_band(row[2], edges, spec.labels) for row in data)
        metrics = {"n": "count", "s": ("sum", "x")}
        got = itp.aggregate(spark, path, group_by=[spec], metrics=metrics).collect()
        got_map = {r[0]: (r["n"], r["s"]) for r in got}
        expected = {key: (counts[key], _arith_sum(want[key])) for key in counts}
        if sorted(map(str, got_map.items())) != sorted(map(str, expected.items())):
            failures.append(f"range {edges}: {got_map} != {expected}")
    by_key: dict[str, list[float]] = {}
    for row in data:
        by_key.setdefault(row[1], []).extend([row[3]] if row[3] is not None else [])
    metrics = {"s": ("sum", "x"), "a": ("avg", "x")}
    for row in itp.aggregate(spark, path, group_by="k", metrics=metrics).collect():
        values = by_key[row["k"]]
        total = _arith_sum(values)
        mean = None if total is None else total / len(values)
        if str((row["s"], row["a"])) != str((total, mean)):
            failures.append(f"k={row['k']}: {(row['s'], row['a'])} != {(total, mean)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("seed", [5, 6])
def test_differential_long_histogram_against_arithmetic(
    spark: Any, tmp_path: Path, seed: int
) -> None:
    import random

    rng = random.Random(seed)
    rows = _extreme_rows(rng, 40)
    path = str(tmp_path / "t")
    frame = spark.createDataFrame(rows, "id long, k string, i int, x double, big long")
    frame.write.format("indextables").mode("append").save(path)
    for interval in (7, 1000, 1 << 40, rng.randint(2, 5000)):
        df = itp.aggregate(
            spark, path, group_by=[itp.histogram("big", interval)], metrics={"n": "count"}
        )
        keys = []
        for row in rows:
            key = None if row[4] is None else row[4] // interval * interval
            keys.append(key if key is None or key >= _LONG_MIN else None)  # documented: null
        assert {r[0]: r[1] for r in df.collect()} == dict(Counter(keys)), interval
