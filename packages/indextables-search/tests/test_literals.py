"""Numeric literals in ``where`` as Spark types them: DECIMAL past 38 digits is
refused with this package's error naming the literal, suffixed literals (``D``, ``L``,
``BD``) are read with their type. Spark's own answers were checked with Spark 4 over Parquet
(tests/test_literals.py of the pyspark package runs the same cases through Spark)."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pytest

from indextables.search import open_table, write_table
from indextables.search.errors import QuerySyntaxError
from indextables.search.query.conditions import decimal_precision, translate_predicate

D_VALUES = [1.0, -2.5, math.nan, math.inf, 1e300, None, 0.0]
SCHEMA = pa.schema([("id", pa.int64()), ("d", pa.float64())])
FORTY_NINES = "9" * 40


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = str(tmp_path_factory.mktemp("literals"))
    ids = list(range(len(D_VALUES)))
    write_table(root, pa.table({"id": ids, "d": D_VALUES}, schema=SCHEMA))
    return root


def _below(limit: float) -> list[int]:
    """Ids whose d is below ``limit`` under Spark's order (NaN above everything)."""
    return [i for i, v in enumerate(D_VALUES) if v is not None and not math.isnan(v) and v < limit]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (f"d < {FORTY_NINES}D", _below(1e40)),
        (f"d < {FORTY_NINES}d", _below(1e40)),
        ("d < 1.5D", _below(1.5)),
        ("d < 1e301D", _below(1e301)),
        ("d <= 1BD", [*_below(1.0), 0]),
        ("d < 2.5bd", _below(2.5)),
        ("id < 3L", [0, 1, 2]),
        ("id = 2l", [2]),
    ],
)
def test_suffixed_literals_are_read_with_their_type(
    table: str, where: str, expected: list[int]
) -> None:
    translate_predicate(where, SCHEMA)  # no refusal: only unsuffixed and BD are decimals
    got = open_table(table).search(where=where, columns=["id"]).column("id").to_pylist()
    assert sorted(got) == sorted(expected)
    assert open_table(table).count(where=where) == len(expected)


@pytest.mark.parametrize(
    ("where", "literal", "reason"),
    [
        (f"d < {FORTY_NINES}", FORTY_NINES, "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"),
        (f"d < -{FORTY_NINES}", FORTY_NINES, "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"),
        (f"d < {FORTY_NINES}BD", FORTY_NINES + "BD", "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"),
        (
            "d > 1234567890123456789012345678901234567890.5",
            "1234567890123456789012345678901234567890.5",
            "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
        ),
        (
            "d > 12345678901234567890123456789012345678.5",  # 39 digits
            "12345678901234567890123456789012345678.5",
            "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
        ),
        (
            "id = 1 AND d > 0.000000000000000000000000000000000000000001",  # scale 42
            "0.000000000000000000000000000000000000000001",
            "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
        ),
        ("d < 1e50BD", "1e50BD", "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"),
        ("d < 1.5e400", "1.5e400", "INVALID_NUMERIC_LITERAL_RANGE"),
        ("d < 2e308D", "2e308D", "INVALID_NUMERIC_LITERAL_RANGE"),
    ],
)
def test_literals_spark_refuses_are_refused_naming_them(
    table: str, where: str, literal: str, reason: str
) -> None:
    with pytest.raises(QuerySyntaxError, match=reason) as raised:
        translate_predicate(where, SCHEMA)
    assert literal in str(raised.value)
    for call in (
        lambda: open_table(table).search(where=where),
        lambda: open_table(table).count(where=where),
    ):
        with pytest.raises(QuerySyntaxError) as raised:
            call()
        assert literal in str(raised.value)


def test_a_38_digit_decimal_with_a_fraction_is_accepted(table: str) -> None:
    where = "id < 1234567890123456789012345678901234567.5"  # 38 digits
    translate_predicate(where, SCHEMA)
    assert open_table(table).count(where=where) == len(D_VALUES)


@pytest.mark.parametrize(
    ("text", "precision"),
    [("123.45", 5), ("0.001", 3), ("0.00", 2), ("100", 3), ("0", 1), ("1e50", 51), ("-7.5", 2)],
)
def test_decimal_precision_follows_java_big_decimal(text: str, precision: int) -> None:
    assert decimal_precision(text) == precision


def test_no_table_needed_for_the_check(tmp_path: Path) -> None:
    assert translate_predicate("d < 1", SCHEMA)


BEYOND_LONG = "100000000000000000000"  # 10**20: Spark reads it as DECIMAL(21, 0)


@pytest.mark.parametrize(
    ("where", "keeps_all"),
    [
        (f"p <= {BEYOND_LONG}", True),
        (f"p < {BEYOND_LONG}.5", True),
        (f"p > -{BEYOND_LONG}", True),
        (f"p >= {BEYOND_LONG}", False),
        (f"p < -{BEYOND_LONG}", False),
        (f"n <= {BEYOND_LONG}", True),
        (f"n > {BEYOND_LONG}", False),
        (f"n >= -{BEYOND_LONG} AND p <= {BEYOND_LONG}", True),
    ],
)
def test_integer_order_beyond_long_folds_like_spark_null_rows_included(
    tmp_path: Path, where: str, keeps_all: bool
) -> None:
    """Spark (DecimalPrecision) folds ``int_column <op> decimal beyond long`` into TRUE or
    FALSE before any filter runs, so null rows pass a TRUE fold: neither partition pruning
    nor the index may drop them (a null partition was pruned here once)."""
    root = str(tmp_path / "t")
    data = pa.table(
        {
            "id": pa.array([0, 1, 2, 3], pa.int64()),
            "n": pa.array([5, None, -(2**63), 2**63 - 1], pa.int64()),
            "p": pa.array([1, None, -5, None], pa.int16()),
        }
    )
    write_table(root, data.slice(0, 2), partition_by=["p"])
    write_table(root, data.slice(2), partition_by=["p"])
    schema = pa.schema([("id", pa.int64()), ("n", pa.int64()), ("p", pa.int16())])
    assert translate_predicate(where, schema) == ()
    table = open_table(root)
    expected = [0, 1, 2, 3] if keeps_all else []
    assert sorted(table.search(where=where).column("id").to_pylist()) == expected
    assert table.count(where=where) == len(expected)
