"""The differential test's own parts, without Spark: exact comparison, literals, reproducers."""

from __future__ import annotations

import datetime
import decimal
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from difftest.compare import difference, normalize, normalize_rows
from difftest.predicates import Pred, leaf, like_prefix, sql_literal, sql_string
from difftest.shrink import python_value, reproducer
from difftest.tables import Features, TablePlan, Write, may_be_refused, random_plan
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DecimalType,
    DoubleType,
    FloatType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def test_signed_zeros_differ_and_nans_are_one_value() -> None:
    assert normalize(-0.0, DoubleType()) != normalize(0.0, DoubleType())
    assert normalize(float("nan"), DoubleType()) == normalize(-float("nan"), DoubleType())
    assert normalize(-0.0, FloatType()) != normalize(0.0, FloatType())


def test_maps_compare_unordered_and_nested_values_exactly() -> None:
    mtype = MapType(StringType(), ArrayType(DoubleType()))
    assert normalize({"a": [1.0], "b": None}, mtype) == normalize(
        [("b", None), ("a", [1.0])], mtype
    )
    assert normalize({"a": [0.0]}, mtype) != normalize({"a": [-0.0]}, mtype)
    assert normalize({}, mtype) != normalize(None, mtype)


def test_difference_counts_duplicates() -> None:
    columns, types = ["x"], [LongType()]
    want = normalize_rows([{"x": 1}, {"x": 1}, {"x": 2}], columns, types)
    got = normalize_rows([{"x": 1}, {"x": 2}, {"x": 2}], columns, types)
    diff = difference(want, got)
    assert diff.missing == (((1,), 1),)
    assert diff.extra == (((2,), 1),)
    assert difference(want, Counter(want)).empty


def test_sql_literals_escape_what_sparks_parser_unescapes() -> None:
    assert sql_string("it's\n\\") == "'it\\'s\\n\\\\'"
    assert like_prefix("a%_\\") == "'a\\\\%\\\\_\\\\\\\\%'"
    assert sql_literal(-0.0, DoubleType()) == "CAST('-0.0' AS DOUBLE)"
    assert sql_literal(float("nan"), FloatType()) == "CAST('NaN' AS FLOAT)"
    assert sql_literal(None, LongType()) == "CAST(NULL AS bigint)"
    moment = datetime.datetime(1, 1, 1, 0, 0, 0, 5, tzinfo=datetime.UTC)
    assert sql_literal(moment, TimestampType()) == "TIMESTAMP '0001-01-01 00:00:00.000005'"


def test_filter_trees_shrink_to_their_parts() -> None:
    a, b, c = leaf("a = 1"), leaf("b = 2"), leaf("c = 3")
    tree = Pred("or", children=(Pred("and", children=(a, b)), Pred("not", children=(c,))))
    assert tree.render() == "((a = 1) AND (b = 2)) OR (NOT (c = 3))"
    smaller = {p.render() for p in tree.simpler()}
    assert {"(a = 1) AND (b = 2)", "NOT (c = 3)", "(a = 1) OR (NOT (c = 3))"} <= smaller


def test_reproducer_values_evaluate_back_to_the_same_values() -> None:
    values = [
        float("nan"),
        -0.0,
        float("-inf"),
        "x" * 100_000 + "\n'\\",
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=datetime.UTC),
        datetime.date(1, 1, 1),
        decimal.Decimal("1.50"),
        b"\x00\xff",
        {"k": [1, None]},
        (1,),
    ]
    scope = {"datetime": datetime, "decimal": decimal}
    for value in values:
        text = python_value(value)
        assert len(text) < 200
        again = eval(text, scope)  # the reproducer is Python source
        assert repr(again) == repr(value)


def test_reproducer_is_a_complete_script() -> None:
    schema = StructType([StructField("p", DoubleType()), StructField("s", StringType())])
    plan = TablePlan(
        seed=7,
        schema=schema,
        partition_by=("p",),
        options={},
        writes=(Write("append", ((-0.0, "a"), (0.0, None))),),
        features=Features(extreme_temporal=False, null_partitions=False),
    )
    from difftest.runner import Case, Failure

    failure = Failure(7, Case("read.pushdown", leaf("p = 0.0")), "missing 1", False, plan)
    script = reproducer(failure)
    compile(script, "reproducer", "exec")
    assert "partitionBy(*['p'])" in script
    assert "'spark.sql.python.filterPushdown.enabled', 'true'" in script
    assert ".where('p = 0.0')" in script


def test_random_plans_are_the_same_in_every_process() -> None:
    """A seed names one table: no draw may depend on string hashing (PYTHONHASHSEED)."""
    script = (
        "import hashlib, sys; sys.path.insert(0, sys.argv[1]);"
        "from difftest.tables import random_plan;"
        "print(hashlib.sha256(repr(random_plan(5, rows_per_write=30)).encode()).hexdigest())"
    )
    here = str(Path(__file__).resolve().parent)
    digests = {
        subprocess.run(
            [sys.executable, "-c", script, here],
            env={**os.environ, "PYTHONHASHSEED": str(hash_seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in (1, 2)
    }
    assert len(digests) == 1


def test_random_plans_hold_hostile_values() -> None:
    plans = [random_plan(s, rows_per_write=20) for s in range(30)]
    written = [v for p in plans for w in p.writes for r in w.rows for v in r]
    assert any(isinstance(v, float) and v != v for v in written)
    assert any(isinstance(v, str) and len(v) > 100_000 for v in written)
    assert any(v == {} for v in written)
    assert any(p.features.extreme_temporal for p in plans)
    assert any(None in [r[-1] for w in p.writes for r in w.rows] for p in plans if p.partition_by)
    assert all(sum(w.mode == "overwrite" for w in p.writes) == 1 for p in plans)


def test_only_documented_types_may_be_refused() -> None:
    assert may_be_refused(StructType([StructField("d", DecimalType(5, 1))]))
    assert may_be_refused(ArrayType(BinaryType()))
    assert not may_be_refused(MapType(StringType(), ArrayType(LongType())))


def test_generators_draw_sign_bit_nan_and_special_query_operands() -> None:
    import math
    import random

    from difftest import values
    from difftest.runner import _special_query

    rng = random.Random(0)
    for data_type in (DoubleType(), FloatType()):
        drawn = [values.floating(rng, data_type) for _ in range(2000)]
        nan_signs = {math.copysign(1.0, v) for v in drawn if math.isnan(v)}
        assert nan_signs == {1.0, -1.0}, data_type
    queries = [_special_query(rng, "c_double", ["1.5", "-2.5"]) for _ in range(400)]
    texts = " ".join(text for text, _ in queries)
    for token in (":NaN", ":-NaN", '"', ":>", ":<=", "inf", "-inf", "-0.0", "* TO", "TO *", "1.5"):
        assert token in texts, token
    assert all("NaN" not in sql or "CAST('NaN' AS DOUBLE)" in sql for _, sql in queries)


def test_aggregate_oracle_by_plain_arithmetic() -> None:
    import math
    from datetime import datetime

    from difftest import aggoracle

    from indextables.search.aggregate.aggspec import (
        date_histogram,
        histogram,
        parse_metrics,
        range_,
    )

    inf, nan = float("inf"), float("nan")
    rows = [
        {"x": v, "i": i, "t": datetime(2024, 1, 1 + i % 2, 5)}
        for i, v in enumerate([-0.0, 0.0, nan, -nan, 1.25, -2.5, inf, None])
    ]
    metrics = parse_metrics({"n": "count", "s": ("sum", "x"), "hi": ("max", "x")})
    integral = {"i": True}
    nan_key = (aggoracle.key_of(nan),)
    by_bucket = aggoracle.expected_groups(rows, [histogram("x", 2.5)], metrics, integral)
    assert set(by_bucket) == {(0.0,), nan_key, (-2.5,), (inf,), (None,)}
    assert by_bucket[(0.0,)]["n"] == 3  # -0.0, 0.0 and 1.25
    assert by_bucket[nan_key]["n"] == 2  # both NaNs, whatever the sign bit
    assert aggoracle.matches(by_bucket[(0.0,)]["s"], 1.25)
    assert not aggoracle.matches(by_bucket[(0.0,)]["s"], 1.5)
    assert math.isnan(by_bucket[nan_key]["hi"])
    ranged = aggoracle.expected_groups(rows, [range_("x", [0, 2])], metrics, integral)
    assert {k: v["n"] for k, v in ranged.items()} == {
        ("*-0",): 1,
        ("0-2",): 3,
        ("2-*",): 3,
        (None,): 1,
    }
    total = aggoracle.expected_groups(rows, [], metrics, integral)[()]
    assert aggoracle.matches(total["s"], nan)  # NaN wins over every other value
    days = aggoracle.expected_groups(rows, [date_histogram("t", "1d")], metrics, integral)
    assert {k: v["n"] for k, v in days.items()} == {
        (datetime(2024, 1, 1),): 4,
        (datetime(2024, 1, 2),): 4,
    }
    longs = aggoracle.expected_groups(
        [{"i": -(1 << 63)}, {"i": 7}], [histogram("i", 1000)], [], {"i": True}
    )
    assert set(longs) == {(None,), (0,)}  # below the lowest long: null, as documented
    overflow = aggoracle.DoubleSum.of([1.7976931348623157e308] * 2 + [-1.7976931348623157e308])
    assert overflow.matches(inf)
    assert overflow.matches(1.7976931348623157e308)
