"""write_table as delta-rs writes: save modes, schema evolution, safe upcasts, store options,
and SearchTable.history().

Oracles: Python models of the rows (the old rows with None in every added column),
pyarrow's own cast of the plain values for upcasts, and the count of each write's rows.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from indextables.search import CommitRecord, open_table, write_table
from indextables.search.errors import (
    ArgumentError,
    NotATableError,
    OptionError,
    SchemaMismatchError,
    TableExistsError,
    UnsupportedTypeError,
)
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.table.tableaccess import load_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import column, random_table, row_multiset


def _rows(uri: str, version: int | None = None) -> list[Any]:
    return row_multiset(open_table(uri, version=version).to_arrow().to_pylist())


def _unread(schema: pa.Schema) -> pa.RecordBatchReader:
    """A reader that fails the test if a batch is taken from it."""

    def batches() -> Iterator[pa.RecordBatch]:
        raise AssertionError("the data was read")
        yield  # pragma: no cover

    return pa.RecordBatchReader.from_batches(schema, batches())


# ---------------------------------------------------------------- modes


def test_error_mode_creates_a_new_table_and_refuses_an_existing_one(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = random_table(1, 50)
    first = write_table(uri, data, mode="error")
    assert first.rows == 50
    assert _rows(uri) == row_multiset(data.to_pylist())
    with pytest.raises(TableExistsError, match=re.escape(repr(uri))) as raised:
        write_table(uri, _unread(data.schema), mode="error")
    assert isinstance(raised.value, FileExistsError)
    assert open_table(uri).version == first.version
    assert _rows(uri) == row_multiset(data.to_pylist())


def test_ignore_mode_writes_a_new_table_and_leaves_an_existing_one(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = random_table(2, 40)
    first = write_table(uri, data, mode="ignore")
    assert (first.rows, first.files_added) == (40, 1)
    again = write_table(uri, _unread(data.schema), mode="ignore")
    assert (again.version, again.files_added, again.rows) == (first.version, 0, 0)
    assert open_table(uri).version == first.version
    assert _rows(uri) == row_multiset(data.to_pylist())


def test_append_and_overwrite_on_new_and_existing_tables(tmp_path: Path) -> None:
    for mode in ("append", "overwrite"):
        uri = str(tmp_path / mode)
        one, two = random_table(3, 30), random_table(4, 20)
        write_table(uri, one, mode=mode)
        assert _rows(uri) == row_multiset(one.to_pylist())
        write_table(uri, two, mode=mode)
        expected = one.to_pylist() + two.to_pylist() if mode == "append" else two.to_pylist()
        assert _rows(uri) == row_multiset(expected)
    default = str(tmp_path / "default")
    write_table(default, random_table(5, 5))
    write_table(default, random_table(6, 5))
    assert open_table(default).count() == 10  # the default mode appends


def test_a_bad_mode_or_schema_mode_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    data = pa.table({"a": [1]})
    with pytest.raises(ArgumentError, match="mode='errorifexists'"):
        write_table(str(tmp_path), data, mode="errorifexists")
    with pytest.raises(ArgumentError, match="schema_mode='overwrite'"):
        write_table(str(tmp_path), data, schema_mode="overwrite")
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- schema evolution


def _model(rows: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    return [{n: r.get(n) for n in names} for r in rows]


@pytest.mark.parametrize("seed", [11, 12])
def test_merge_adds_columns_old_splits_read_them_as_null_and_time_travel_keeps_the_old_schema(
    tmp_path: Path, seed: int
) -> None:
    uri = str(tmp_path / "t")
    rng = random.Random(seed)
    base = ("string", "int64", "double")
    first = random_table(seed, 60, base)
    v1 = write_table(uri, first).version
    old_schema = open_table(uri).schema
    # The second write lacks c_double and brings columns of several kinds.
    second = random_table(seed + 100, 40, ("string", "int64", "date", "struct", "bool"))
    second = second.drop_columns(["c_bool"]).append_column("c_new_bool", column(rng, "bool", 40))
    with pytest.raises(SchemaMismatchError, match=r"no column 'c_double'.*schema_mode=\"merge\""):
        write_table(uri, second)
    complete = second.append_column("c_double", pa.nulls(40, pa.float64()))
    added = re.escape("column(s) 'c_date', 'c_struct', 'c_new_bool' that the table")
    with pytest.raises(SchemaMismatchError, match=added + r".*schema_mode=\"merge\""):
        write_table(uri, complete)
    assert open_table(uri).version == v1
    v2 = write_table(uri, second, schema_mode="merge").version
    table = open_table(uri)
    names = [*first.schema.names, "c_date", "c_struct", "c_new_bool"]
    assert table.schema.names == names
    assert table.schema.field("c_date").type == pa.date32()
    expected = _model(first.to_pylist(), names) + _model(second.to_pylist(), names)
    assert _rows(uri) == row_multiset(expected)
    # conditions over the added columns: old rows are null there
    nulls = sum(r["c_new_bool"] is None for r in expected)
    assert table.count(where="c_new_bool IS NULL") == nulls
    trues = [r["id"] for r in expected if r["c_new_bool"] is True]
    got = table.search(where="c_new_bool = true", columns=["id"]).column("id").to_pylist()
    assert sorted(got) == sorted(trues)
    # time travel across the change
    before = open_table(uri, version=v1)
    assert before.schema == old_schema
    assert _rows(uri, v1) == row_multiset(first.to_pylist())
    assert arrow_schema(load_view(uri, {}, version=v2).schema_json).names == names


def test_merge_writes_nulls_for_missing_columns_and_refuses_what_cannot_be_null(
    tmp_path: Path,
) -> None:
    uri = str(tmp_path / "t")
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), ("s", pa.string()), ("p", pa.string())]
    )
    write_table(uri, pa.table({"id": [1], "s": ["a"], "p": ["x"]}, schema=schema), partition_by="p")
    with pytest.raises(SchemaMismatchError, match=r"no column 's'.*schema_mode=\"merge\""):
        write_table(uri, pa.table({"id": [2], "p": ["x"]}))
    with pytest.raises(SchemaMismatchError, match=r"no column 'id'.*not nullable"):
        write_table(uri, pa.table({"s": ["b"], "p": ["x"]}), schema_mode="merge")
    with pytest.raises(SchemaMismatchError, match=r"no column 'p'.*partition column"):
        write_table(uri, pa.table({"id": [2], "s": ["b"]}), schema_mode="merge")
    write_table(uri, pa.table({"id": [2], "p": ["y"]}), schema_mode="merge")
    got = sorted(open_table(uri).to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": 1, "s": "a", "p": "x"}, {"id": 2, "s": None, "p": "y"}]


def test_merge_matches_names_ignoring_case_and_keeps_the_tables_spelling(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"Host": ["a"], "n": [1]}))
    write_table(uri, pa.table({"host": ["b"], "N": [2], "Extra": [0.5]}), schema_mode="merge")
    table = open_table(uri)
    assert table.schema.names == ["Host", "n", "Extra"]
    got = sorted(table.to_arrow().to_pylist(), key=lambda r: r["n"])
    assert got == [{"Host": "a", "n": 1, "Extra": None}, {"Host": "b", "n": 2, "Extra": 0.5}]


# ---------------------------------------------------------------- upcasts

_UPCASTS = [
    (pa.int8(), pa.int64()),
    (pa.int16(), pa.int64()),
    (pa.int32(), pa.int64()),
    (pa.int8(), pa.int32()),
    (pa.int16(), pa.int32()),
    (pa.uint8(), pa.int64()),
    (pa.uint16(), pa.int64()),
    (pa.uint32(), pa.int64()),
    (pa.uint64(), pa.int64()),
    (pa.uint8(), pa.int16()),
    (pa.float32(), pa.float64()),
]


def _random_values(rng: random.Random, t: pa.DataType, n: int) -> pa.Array:
    if pa.types.is_integer(t):
        info_low = -(2 ** (t.bit_width - 1)) if pa.types.is_signed_integer(t) else 0
        info_high = (
            2 ** (t.bit_width - 1) - 1 if pa.types.is_signed_integer(t) else 2**t.bit_width - 1
        )
        high = min(info_high, 2**63 - 1)  # uint64 values that a long holds
        values = [info_low, high, 0, *(rng.randint(info_low, high) for _ in range(n - 3))]
    else:
        edges = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 3.4028234663852886e38]
        values = [*edges, *(rng.uniform(-1e6, 1e6) for _ in range(n - len(edges)))]
    mask = [rng.random() < 0.1 for _ in values]
    return pa.array([None if m else v for v, m in zip(values, mask, strict=True)], t)


@pytest.mark.parametrize(("given", "table_type"), _UPCASTS, ids=lambda t: str(t))
def test_safe_upcasts_read_back_as_pyarrows_cast(
    tmp_path: Path, given: pa.DataType, table_type: pa.DataType
) -> None:
    uri = str(tmp_path / "t")
    rng = random.Random(str(given) + str(table_type))
    n = 200
    first = pa.table(
        {"id": pa.array(range(n), pa.int64()), "v": _random_values(rng, table_type, n)}
    )
    write_table(uri, first)
    values = _random_values(rng, given, n)
    second = pa.table({"id": pa.array(range(n, 2 * n), pa.int64()), "v": values})
    write_table(uri, second)
    table = open_table(uri)
    assert table.schema.field("v").type == table_type
    got = table.to_arrow()
    assert got.schema.field("v").type == table_type
    expected = pa.concat_tables(
        [first, pa.table({"id": second.column("id"), "v": pc.cast(values, table_type)})]
    )
    assert row_multiset(got.to_pylist()) == row_multiset(expected.to_pylist())


@pytest.mark.parametrize(
    ("given", "table_type"),
    [
        (pa.int64(), pa.int32()),
        (pa.int32(), pa.int16()),
        (pa.uint32(), pa.int32()),
        (pa.float64(), pa.float32()),
        (pa.int64(), pa.float64()),
        (pa.string(), pa.int64()),
        (pa.timestamp("us", tz="UTC"), pa.timestamp("us")),
        (pa.timestamp("us"), pa.timestamp("us", tz="UTC")),
        (pa.date32(), pa.timestamp("us")),
        (pa.list_(pa.int32()), pa.list_(pa.int64())),
    ],
    ids=lambda t: str(t),
)
def test_unsafe_casts_are_refused_naming_the_column_and_both_types(
    tmp_path: Path, given: pa.DataType, table_type: pa.DataType
) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"id": [1], "col": pa.nulls(1, table_type)}))
    version = open_table(uri).version
    with pytest.raises(SchemaMismatchError, match=r"column 'col': the data's \S+ cannot") as raised:
        write_table(uri, pa.table({"id": [2], "col": pa.nulls(1, given)}), schema_mode="merge")
    assert isinstance(raised.value, OptionError)
    assert open_table(uri).version == version


def test_a_decimal_partition_column_takes_wider_decimals_only(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    amounts = [Decimal("-12.50"), Decimal("99999999.99"), None]
    first = pa.table({"id": [0, 1, 2], "amount": pa.array(amounts, pa.decimal128(10, 2))})
    write_table(uri, first, partition_by="amount")
    narrow = [Decimal("1.5"), Decimal("-9999.9")]
    write_table(uri, pa.table({"id": [3, 4], "amount": pa.array(narrow, pa.decimal128(5, 1))}))
    got = open_table(uri).to_arrow().sort_by("id").column("amount")
    assert got.type == pa.decimal128(10, 2)
    assert got.to_pylist() == [*amounts, Decimal("1.50"), Decimal("-9999.90")]
    for refused in (pa.decimal128(10, 3), pa.decimal128(12, 1)):
        data = pa.table({"id": [5], "amount": pa.array([Decimal("1")], refused)})
        with pytest.raises(SchemaMismatchError, match=re.escape("column 'amount': the data's")):
            write_table(uri, data)


def test_unsigned_columns_of_a_new_table_take_the_next_wider_type(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = pa.table(
        {
            "u8": pa.array([0, 255], pa.uint8()),
            "u16": pa.array([0, 65535], pa.uint16()),
            "u32": pa.array([0, 2**32 - 1], pa.uint32()),
            "u64": pa.array([0, 2**63 - 1], pa.uint64()),
            "nested": pa.array([[1], [2**32 - 1]], pa.list_(pa.uint32())),
        }
    )
    write_table(uri, data)
    table = open_table(uri)
    assert [f.type for f in table.schema] == [
        pa.int16(),
        pa.int32(),
        pa.int64(),
        pa.int64(),
        pa.list_(pa.field("element", pa.int64())),
    ]
    got = table.to_arrow().sort_by("u8").to_pylist()
    assert got == sorted(data.to_pylist(), key=lambda r: r["u8"])


def test_a_uint64_beyond_the_long_is_refused_naming_the_column(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = pa.table({"id": [1, 2], "big": pa.array([1, 2**63], pa.uint64())})
    with pytest.raises(UnsupportedTypeError, match="column 'big'"):
        write_table(uri, data)
    with pytest.raises(NotATableError):
        open_table(uri)


def test_polars_unsigned_and_narrow_columns_append_to_a_long_column(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"n": pa.array([1], pa.int64()), "x": [0.5]}))
    frame = pl.DataFrame(
        {
            "n": pl.Series([7, 4_000_000_000], dtype=pl.UInt32),
            "x": pl.Series([1.5, 2.5], dtype=pl.Float32),
        }
    )
    write_table(uri, frame)
    got = sorted(open_table(uri).to_arrow().to_pylist(), key=lambda r: r["n"])
    assert got == [{"n": 1, "x": 0.5}, {"n": 7, "x": 1.5}, {"n": 4_000_000_000, "x": 2.5}]


# ---------------------------------------------------------------- store options


def test_storage_options_are_store_option_names_in_every_call(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    data = pa.table({"a": [1, 2]})
    write_table(uri, data, storage_options={"max_attempts": 3, "storage.connect_timeout": "4"})
    table = open_table(uri, storage_options={"read_timeout": "30"})
    assert table.count() == 2
    assert table._options["storage.read_timeout"] == "30"
    with pytest.raises(OptionError, match=r"'storage\.max_attempts'.*different values"):
        open_table(
            uri, options={"storage.max_attempts": "2"}, storage_options={"max_attempts": "3"}
        )
    with pytest.raises(ArgumentError, match="storage_options"):
        open_table(uri, storage_options=["region"])  # type: ignore[arg-type]
    with pytest.raises(Exception, match="max_atempts"):
        write_table(uri, data, storage_options={"max_atempts": "3"})
    assert open_table(uri).count() == 2


# ---------------------------------------------------------------- history


def test_history_lists_every_version_newest_first_with_rows_added_and_removed(
    tmp_path: Path,
) -> None:
    uri = str(tmp_path / "t")
    rng = random.Random(7)
    model: list[tuple[str, int, int]] = []  # operation, rows added, rows removed
    live = 0
    start = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    for step in range(6):
        n = rng.randint(1, 30)
        data = pa.table({"a": pa.array(range(n), pa.int64()), "p": [f"p{step % 2}"] * n})
        if step and rng.random() < 0.35:
            write_table(uri, data, mode="overwrite")
            model.append(("UPDATE", n, live))
            live = n
        else:
            write_table(uri, data, partition_by="p")
            model.append(("WRITE", n, 0))
            live += n
    history = open_table(uri).history()
    assert [h.version for h in history] == list(range(len(model), -1, -1))
    create = history[-1]
    assert (create.operation, create.parameters) == ("CREATE", {"partitionBy": '["p"]'})
    got = [(h.operation, h.rows_added, h.rows_removed) for h in reversed(history[:-1])]
    assert got == model
    assert all(start <= h.timestamp <= dt.datetime.now(dt.UTC) for h in history)
    assert [h.version for h in open_table(uri).history(limit=2)] == [len(model), len(model) - 1]
    assert open_table(uri).history(limit=0) == []
    with pytest.raises(ArgumentError, match="limit"):
        open_table(uri).history(limit=-1)


def test_history_names_the_columns_a_schema_merge_added(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    write_table(uri, pa.table({"a": [1]}))
    write_table(uri, pa.table({"a": [2], "b": ["x"], "c": [1.5]}), schema_mode="merge")
    newest = open_table(uri).history(limit=1)[0]
    assert isinstance(newest, CommitRecord)
    assert newest.operation == "WRITE"
    assert json.loads(newest.parameters["addedColumns"]) == ["b", "c"]
    assert (newest.files_added, newest.rows_added) == (1, 1)


def test_a_schema_change_committed_meanwhile_is_a_conflict_never_overwritten(
    tmp_path: Path,
) -> None:
    from indextables.protocol.errors import CommitConflictError
    from indextables.search.table.tableaccess import table_handle

    uri = str(tmp_path / "t")
    read = write_table(uri, pa.table({"a": [1]})).version
    write_table(uri, pa.table({"a": [2], "b": ["x"]}), schema_mode="merge")  # meanwhile
    mine = json.dumps(
        {
            "type": "struct",
            "fields": [
                {"name": "a", "type": "long", "nullable": True, "metadata": {}},
                {"name": "c", "type": "double", "nullable": True, "metadata": {}},
            ],
        }
    )
    table = table_handle(uri, {})
    with pytest.raises(CommitConflictError, match="schema changed"):
        table.commit(read_version=read, schema_string=mine)
    assert open_table(uri).schema.names == ["a", "b"]


@pytest.mark.parametrize("mode", ["error", "ignore"])
def test_a_table_created_while_an_error_or_ignore_write_ran_is_never_appended_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    import indextables.search.write.tablewrite as tablewrite

    uri = str(tmp_path / "t")
    theirs = write_table(uri, pa.table({"a": [1, 2]}))
    # the write's check ran before the other writer created the table
    monkeypatch.setattr(tablewrite, "table_exists", lambda *_: False)
    if mode == "error":
        with pytest.raises(TableExistsError, match="became a table while this write ran"):
            write_table(uri, pa.table({"a": [3]}), mode=mode)
    else:
        result = write_table(uri, pa.table({"a": [3]}), mode=mode)
        assert (result.version, result.files_added, result.rows) == (theirs.version, 0, 0)
    assert open_table(uri).version == theirs.version
    assert sorted(open_table(uri).to_arrow().column("a").to_pylist()) == [1, 2]
