"""A companion hit's integer and float columns come from the split's fast fields.

The rows must be exactly those of the source (NaN, -0.0, infinities, extremes,
nulls, narrow integer and float types); the Parquet read is asked only for the
other columns (counted here: the test fails when the fast columns are still read
from the files' pages).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from test_companion import canonical, hostile

import indextables.search.companion.read as companion_read
from indextables.search import build_companion, open_table

NARROW = {"i32": pa.int32(), "i16": pa.int16(), "i8": pa.int8(), "f32": pa.float32()}


def _source(root: Path) -> None:
    rng = random.Random(2811)
    root.mkdir(parents=True)
    for number, first in enumerate((0, 300)):
        table = hostile(rng, first, 150)
        count = table.num_rows

        def maybe(value: Any) -> Any:
            return None if rng.random() < 0.2 else value

        extra = {
            "i32": [maybe(rng.choice([0, -1, 2**31 - 1, -(2**31)])) for _ in range(count)],
            "i16": [maybe(rng.choice([0, -(2**15), 2**15 - 1])) for _ in range(count)],
            "i8": [maybe(rng.choice([0, -128, 127])) for _ in range(count)],
            "f32": [
                maybe(rng.choice([0.0, -0.0, 1.5, float("nan"), float("-inf")]))
                for _ in range(count)
            ],
        }  # fmt: skip
        for name, values in extra.items():
            table = table.append_column(name, pa.array(values, NARROW[name]))
        # small pages: the hits fall in a few of many (the page-by-page path)
        pq.write_table(
            table, root / f"part-{number}.parquet", row_group_size=60, data_page_size=256,
            write_page_index=True,
        )  # fmt: skip


@pytest.fixture
def companion(tmp_path: Path) -> tuple[Any, pa.Table]:
    source = tmp_path / "src"
    _source(source)
    build_companion(
        str(source), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes={"msg": "text"}, fast_field_mode="HYBRID",
    )  # fmt: skip
    table = open_table(
        str(tmp_path / "idx"),
        options={"spark.indextables.cache.directoryPath": str(tmp_path / "cache")},
    )
    return table, ds.dataset(source, format="parquet").to_table()


class _Asked:
    """The columns the companion reader asks the Parquet pages for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.columns: set[str] = set()
        page_rows = companion_read.page_rows

        def asked(handle: Any, footer: Any, columns: Any, rows: Any, **kwargs: Any) -> Any:
            self.columns.update(columns)
            return page_rows(handle, footer, columns, rows, **kwargs)

        monkeypatch.setattr(companion_read, "page_rows", asked)


def _expected(rows: pa.Table, keep: Any) -> list[tuple[Any, ...]]:
    return canonical([r for r in rows.to_pylist() if keep(r)])


def test_fast_columns_are_not_read_from_parquet_and_rows_stay_exact(
    companion: tuple[Any, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    table, rows = companion
    asked = _Asked(monkeypatch)
    for word in ("hello", "timeout", "zürich"):
        found = table.search(f"msg:{word}")
        assert found.schema == table.schema
        expected = _expected(rows, lambda r, w=word: bool(r["msg"]) and w in r["msg"].split(" "))
        assert expected, word
        assert canonical(found) == expected, word
    found = table.search(where="id BETWEEN 100 AND 320")
    assert canonical(found) == _expected(rows, lambda r: 100 <= r["id"] <= 320)
    # id, n, x, i32, i16, i8, f32 are fast numbers held exactly; strings, booleans,
    # dates and timestamps are still read from the file
    assert asked.columns == {"s", "msg", "flag", "ts", "d"}


def test_a_projection_of_fast_columns_reads_no_page(
    companion: tuple[Any, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    table, rows = companion
    asked = _Asked(monkeypatch)
    found = table.search("msg:hello", columns=["x", "id", "f32"])
    wanted = [
        {"x": r["x"], "id": r["id"], "f32": r["f32"]}
        for r in rows.to_pylist()
        if r["msg"] and "hello" in r["msg"].split(" ")
    ]
    assert wanted
    assert canonical(found) == canonical(wanted)
    assert asked.columns == set()


@pytest.mark.parametrize(
    ("data_type", "kind", "expected"),
    [
        (pa.int8(), "I64", pa.int64()),
        (pa.uint32(), "I64", pa.int64()),
        (pa.int64(), "I64", pa.int64()),
        (pa.uint64(), "I64", None),  # past int64: not held exactly
        (pa.float32(), "F64", pa.float64()),
        (pa.float64(), "F64", pa.float64()),
        (pa.decimal128(10, 2), "F64", None),  # a companion's decimal: nearest doubles
        (pa.decimal128(38, 0), "I64", None),
        (pa.int32(), "F64", None),
        (pa.string(), "STRING", None),
        (pa.timestamp("us"), "DATE", None),
    ],
)
def test_one_rule_decides_what_fast_fields_hold_exactly(
    data_type: pa.DataType, kind: str, expected: pa.DataType | None
) -> None:
    """Companion reads (fast_columns, as_file_type) and table aggregations ask the same rule."""
    from indextables.search.aggregate.tableagg import _approximate
    from indextables.search.companion.fastcolumns import as_file_type
    from indextables.search.schema.mapping import FieldKind, fast_read_type

    field_kind = FieldKind[kind]
    assert fast_read_type(data_type, field_kind) == expected
    if field_kind in (FieldKind.I64, FieldKind.F64):
        assert _approximate(data_type, field_kind) is (expected is None)
        read = pa.array([1, None], pa.int64() if field_kind is FieldKind.I64 else pa.float64())
        converted = as_file_type(read, data_type)
        assert (converted is None) is (expected is None)
        if converted is not None:
            assert converted.type == data_type
            assert converted.to_pylist() == [1, None]
