"""Decimal source columns in a companion, as the reference indexes them (an ``f64`` field).

The index holds the nearest doubles, which several decimals share; every answer
must still be the source's exact one. The oracle is DuckDB over the source's rows as
delta-rs / pyarrow read them. Values include neighbours that round to the same
double, 38-digit extremes, zero at several scales, negatives and nulls.
"""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from indextables.search import build_companion, open_table
from indextables.search.errors import OptionError, UnsupportedTypeError
from indextables.search.schema.mapping import FieldKind, specs_from_doc_mapping

# Neighbours 0.01 apart above 2**53 round to one double; 38 digits at scale 2.
PRICES = [
    Decimal("0.10"),
    Decimal("0.20"),
    Decimal("0.30"),
    Decimal("-0.01"),
    Decimal("0.00"),
    Decimal("12345678901234567.88"),
    Decimal("12345678901234567.89"),
    Decimal("12345678901234568.00"),
    Decimal("999999999999999999999999999999999999.99"),
    Decimal("-999999999999999999999999999999999999.99"),
]
RATES = [Decimal("0"), Decimal("1.000001"), Decimal("-1.000001"), Decimal("0.000001")]


def _rows(seed: int, count: int) -> pa.Table:
    """``count`` rows with ids from ``seed * 1000``."""
    rng = random.Random(seed)

    def maybe(values: list[Decimal]) -> Decimal | None:
        return None if rng.random() < 0.15 else rng.choice(values)

    return pa.table(
        {
            "id": pa.array(range(seed * 1000, seed * 1000 + count), pa.int64()),
            "price": pa.array([maybe(PRICES) for _ in range(count)], pa.decimal128(38, 2)),
            "rate": pa.array([maybe(RATES) for _ in range(count)], pa.decimal128(7, 6)),
            "word": pa.array([rng.choice(["alpha", "beta"]) for _ in range(count)], pa.string()),
        }
    )


@pytest.fixture(scope="module")
def delta(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, pa.Table]:
    root = tmp_path_factory.mktemp("decimals")
    source = root / "src"
    for seed in (1, 2):
        write_deltalake(str(source), _rows(seed, 150), mode="append")
    result = build_companion(str(source), str(root / "idx"), source_format="delta")
    assert (result.status, result.parquet_files_indexed) == ("success", 2)
    rows = DeltaTable(str(source)).to_pyarrow_table()
    table = open_table(str(root / "idx"), options={
        "spark.indextables.cache.directoryPath": str(root / "cache")})  # fmt: skip
    duck = duckdb.connect()
    duck.register("source_rows", rows)
    return table, duck, rows


def _ids(duck: Any, where: str) -> list[int]:
    return sorted(r[0] for r in duck.sql(f"select id from source_rows where {where}").fetchall())


def test_a_decimal_column_gets_the_references_f64_field(delta: tuple[Any, Any, pa.Table]) -> None:
    table, _, rows = delta
    specs = specs_from_doc_mapping(table._view.splits[0].entry.doc_mapping_json)
    for name in ("price", "rate"):
        assert (specs[name].kind, specs[name].indexed, specs[name].fast) == (
            FieldKind.F64, True, True,
        ), name  # fmt: skip
    # Reads return the source's exact decimals, in the source's type.
    assert table.schema.field("price").type == pa.decimal128(38, 2)
    got = table.to_arrow(columns=["id", "price", "rate"]).sort_by("id")
    assert got.equals(rows.select(["id", "price", "rate"]).sort_by("id"))


WHERES = [
    "price = 12345678901234567.89",
    "price > 12345678901234567.88",
    "price >= 12345678901234567.89",
    "price < 12345678901234568",
    "price > 12345678901234567",
    "price = 12345678901234568",
    "price IN (0.3, 12345678901234567.88, -1)",
    "price != 0.3",
    "price <= -0.01",
    "price = 0",
    "price > 999999999999999999999999999999999999.98",
    "price IS NULL",
    "price IS NOT NULL AND rate < 0",
    "rate = 0.000001",
    "rate BETWEEN -1 AND 1",
    "NOT (rate > 0) OR price < 0.2",
]


@pytest.mark.parametrize("where", WHERES)
def test_conditions_on_decimals_equal_the_source(
    delta: tuple[Any, Any, pa.Table], where: str
) -> None:
    table, duck, _ = delta
    want = _ids(duck, where)
    assert sorted(r["id"] for r in table.search(where=where, columns=["id"]).to_pylist()) == want
    assert table.count(where=where) == len(want)
    assert table.count("word:alpha", where=where) == len(
        _ids(duck, f"({where}) AND word = 'alpha'")
    )


def test_aggregations_over_decimals_are_exact(delta: tuple[Any, Any, pa.Table]) -> None:
    table, duck, _ = delta
    got = table.aggregate(
        metrics={"lo": ("min", "price"), "hi": ("max", "price"), "n": ("count", "price")}
    ).to_pylist()
    (want,) = (
        duck.sql("select min(price) lo, max(price) hi, count(price) n from source_rows")
        .to_arrow_table()
        .to_pylist()
    )
    assert got == [want]
    grouped = table.aggregate(group_by=["price"], metrics={"n": "count"}).to_pylist()
    expected = (
        duck.sql("select price, count(*) n from source_rows group by price")
        .to_arrow_table()
        .to_pylist()
    )
    assert sorted(grouped, key=repr) == sorted(expected, key=repr)
    # Sum and average are not computed by the engine for decimals: a clear refusal.
    with pytest.raises(OptionError, match=r"'price' is decimal\(38,2\)"):
        table.aggregate(metrics={"s": ("sum", "price")})


def test_a_tantivy_query_searches_the_doubles(delta: tuple[Any, Any, pa.Table]) -> None:
    # As in the reference: the query language sees the field's f64 approximation.
    table, duck, _ = delta
    found = table.search("price:[0.2 TO 0.3]", columns=["id"]).to_pylist()
    assert sorted(r["id"] for r in found) == _ids(duck, "price BETWEEN 0.2 AND 0.3")


def test_a_decimal_wider_than_spark_holds_is_refused_by_name(tmp_path: Path) -> None:
    # Spark has no decimal of 40 digits: the table's schema could not be read back.
    source = tmp_path / "src"
    source.mkdir()
    wide = pa.array([Decimal("1.5"), None], pa.decimal256(40, 2))
    pq.write_table(pa.table({"id": [1, 2], "wide": wide}), source / "a.parquet")
    with pytest.raises(UnsupportedTypeError, match=r"'wide'.*decimal\(40,2\).*38 digits"):
        build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    assert not (tmp_path / "idx").exists()
