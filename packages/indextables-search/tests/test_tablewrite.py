"""write_table: Arrow data in, a table Spark's data source would write, read back exactly."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from indextables.search import WriteResult, open_table, write_table
from indextables.search.errors import (
    ArgumentError,
    DuplicateColumnError,
    OptionError,
    UnsupportedTypeError,
)
from indextables.search.schema.schemajson import spark_json
from indextables.search.table.tableaccess import load_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
from writedata import (
    KINDS,
    PARTITION_KINDS,
    partition_column,
    random_table,
    row_multiset,
)


def _rows(uri: str) -> list[Any]:
    return row_multiset(open_table(uri).to_arrow().to_pylist())


def _log_schema(uri: Path) -> dict[str, Any]:
    return json.loads(load_view(str(uri), {}).schema_json)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_round_trip_every_type(tmp_path: Path, seed: int) -> None:
    data = random_table(seed, 300)
    result = write_table(str(tmp_path), data)
    assert result == WriteResult(version=result.version, files_added=1, rows=300)
    table = open_table(str(tmp_path))
    assert table.schema == data.schema
    assert _rows(str(tmp_path)) == row_multiset(data.to_pylist())
    assert load_view(str(tmp_path), {}).schema_json == spark_json(data.schema)


def test_hostile_values_survive_exactly(tmp_path: Path) -> None:
    data = pa.table(
        {
            "d": pa.array([-0.0, 0.0, math.nan, math.inf, -math.inf, None], pa.float64()),
            "s": pa.array(["", "x" * 200_000, "😀\u0301", "a\x00b", " ", None]),
            "day": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31)] + [None] * 4, pa.date32()),
        }
    )
    write_table(str(tmp_path), data)
    back = open_table(str(tmp_path)).to_arrow()
    assert row_multiset(back.to_pylist()) == row_multiset(data.to_pylist())
    signs = {math.copysign(1, v) for v in back.column("d").to_pylist() if v == 0}
    assert signs == {1.0, -1.0}


def test_append_then_overwrite(tmp_path: Path) -> None:
    uri = str(tmp_path)
    first, second = random_table(7, 50), random_table(8, 20)
    one = write_table(uri, first)
    two = write_table(uri, second, mode="append")
    assert (one.version + 1, two.rows) == (two.version, 20)
    assert _rows(uri) == row_multiset(first.to_pylist() + second.to_pylist())
    three = write_table(uri, second.slice(0, 5), mode="overwrite")
    assert three.version == two.version + 1
    assert _rows(uri) == row_multiset(second.slice(0, 5).to_pylist())
    assert open_table(uri, version=two.version).count() == 70


def test_empty_data_creates_the_table(tmp_path: Path) -> None:
    data = random_table(3, 0)
    result = write_table(str(tmp_path), data)
    assert (result.files_added, result.rows) == (0, 0)
    assert open_table(str(tmp_path)).to_arrow().num_rows == 0
    assert open_table(str(tmp_path)).schema == data.schema


@pytest.mark.parametrize("kind", PARTITION_KINDS)
def test_partitions_of_every_type(tmp_path: Path, kind: str) -> None:
    import random

    part = partition_column(random.Random(kind), kind, 120)
    data = random_table(11, 120, ("string", "double")).append_column("part", part)
    result = write_table(str(tmp_path), data, partition_by=["part"])
    view = load_view(str(tmp_path), {})
    assert view.partition_columns == ("part",)
    assert result.files_added == len(view.splits) >= 2
    assert open_table(str(tmp_path)).schema == data.schema
    assert _rows(str(tmp_path)) == row_multiset(data.to_pylist())


def test_partition_value_strings_are_the_references(tmp_path: Path) -> None:
    data = pa.table(
        {
            "d": pa.array([-0.0, 0.0, math.nan, math.inf, 1e10, None], pa.float64()),
            "v": pa.array(range(6), pa.int64()),
        }
    )
    write_table(str(tmp_path), data, partition_by="d")
    values = {s.partition_values["d"] for s in load_view(str(tmp_path), {}).splits}
    assert values == {"-0.0", "0.0", "NaN", "Infinity", "1.0E10", None}
    ts = pa.table(
        {
            "t": pa.array([1_500, -1], pa.timestamp("us", tz="Europe/Paris")),
            "v": pa.array([1, 2], pa.int64()),
        }
    )
    write_table(str(tmp_path / "ts"), ts, partition_by=["t"])
    values = {s.partition_values["t"] for s in load_view(str(tmp_path / "ts"), {}).splits}
    assert values == {"1970-01-01T00:00:00.001500Z", "1969-12-31T23:59:59.999999Z"}


def test_inputs_polars_batches_readers_and_c_streams(tmp_path: Path) -> None:
    import polars as pl

    data = pa.table({"s": ["a", None, "ü"], "n": pa.array([1, None, -3], pa.int64())})

    class Stream:
        def __arrow_c_stream__(self, requested_schema: object = None) -> object:
            return data.__arrow_c_stream__(requested_schema)

    inputs: dict[str, Any] = {
        "table": data,
        "batch": data.to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(data.schema, data.to_batches()),
        "stream": Stream(),
        "polars": pl.DataFrame({"s": ["a", None, "ü"], "n": [1, None, -3]}),
    }
    for name, given in inputs.items():
        uri = str(tmp_path / name)
        write_table(uri, given)
        assert open_table(uri).schema == data.schema, name
        assert _rows(uri) == row_multiset(data.to_pylist()), name


def test_types_converted_as_spark_converts_them(tmp_path: Path) -> None:
    ns = [1_999, -1, -1_001, None]
    data = pa.table(
        {
            "big": pa.array(["a", None, "b", ""], pa.large_string()),
            "dict": pa.array(["x", "y", None, "x"]).dictionary_encode(),
            "fixed": pa.array([b"ab", b"cd", None, b"\x00\x00"], pa.binary(2)),
            "ll": pa.array([[1], None, [], [2, 3]], pa.large_list(pa.int32())),
            "ns": pa.array(ns, pa.timestamp("ns", tz="America/New_York")),
            "ns_ntz": pa.array(ns, pa.timestamp("ns")),
            "sec": pa.array([1, -1, 0, None], pa.timestamp("s")),
            "ms": pa.array([1, -1, 0, None], pa.timestamp("ms", tz="+05:30")),
            "nested": pa.array(
                [{"t": 1_999}, {"t": -1}, None, {"t": None}],
                pa.struct([("t", pa.timestamp("ns", tz="UTC"))]),
            ),
        }
    )
    write_table(str(tmp_path), data)
    table = open_table(str(tmp_path))
    assert table.schema == pa.schema(
        {
            "big": pa.string(),
            "dict": pa.string(),
            "fixed": pa.binary(),
            "ll": pa.list_(pa.field("element", pa.int32())),
            "ns": pa.timestamp("us", tz="UTC"),
            "ns_ntz": pa.timestamp("us"),
            "sec": pa.timestamp("us"),
            "ms": pa.timestamp("us", tz="UTC"),
            "nested": pa.struct([("t", pa.timestamp("us", tz="UTC"))]),
        }
    )
    back = table.to_arrow().sort_by("big")
    ns_back = back.column("ns").cast(pa.int64()).to_pylist()
    floored = {1: 1_999 // 1000, -1: -1, -2: -2, None: None}  # floor, not truncation
    assert sorted(ns_back, key=repr) == sorted(floored.values(), key=repr)
    by_big = {r["big"]: r for r in back.to_pylist()}
    assert by_big["b"]["ns_ntz"] == dt.datetime(1969, 12, 31, 23, 59, 59, 999998)
    assert by_big["a"]["sec"] == dt.datetime(1970, 1, 1, 0, 0, 1)
    assert by_big["a"]["ms"] == dt.datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=dt.UTC)
    assert by_big[None]["nested"]["t"] == dt.datetime(
        1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC
    )
    assert by_big[""]["dict"] == "x"
    assert by_big[""]["fixed"] == b"\x00\x00"


@pytest.mark.parametrize(
    ("arrow_type", "path"),
    [
        (pa.float16(), "c"),
        (pa.date64(), "c"),
        (pa.time64("us"), "c"),
        (pa.duration("s"), "c"),
        (pa.struct([("inner", pa.float16())]), "c.inner"),
        (pa.list_(pa.time32("s")), "c[]"),
        (pa.map_(pa.string(), pa.duration("ms")), "c.<value>"),
        # Spark's decimals hold 38 digits: a table with this schema could not be opened.
        (pa.struct([("amount", pa.decimal256(40, 2))]), "c.amount"),
    ],
)
def test_types_spark_has_none_for_are_refused(
    tmp_path: Path, arrow_type: pa.DataType, path: str
) -> None:
    data = pa.table({"id": pa.array([1], pa.int64()), "c": pa.nulls(1, arrow_type)})
    with pytest.raises(UnsupportedTypeError, match=re.escape(f"column '{path}'")):
        write_table(str(tmp_path), data)
    assert not any(tmp_path.iterdir())


def test_a_narrow_decimal256_is_held_as_sparks_decimal(tmp_path: Path) -> None:
    amounts = pa.array(
        [{"amount": Decimal("-12.34")}, None], pa.struct([("amount", pa.decimal256(10, 2))])
    )
    write_table(str(tmp_path), pa.table({"id": pa.array([1, 2], pa.int64()), "c": amounts}))
    got = open_table(str(tmp_path)).to_arrow().sort_by("id")
    assert got.schema.field("c").type == pa.struct([("amount", pa.decimal128(10, 2))])
    assert got.column("c").to_pylist() == [{"amount": Decimal("-12.34")}, None]


def test_checks_at_planning(tmp_path: Path) -> None:
    uri = str(tmp_path)
    ok = pa.table({"a": [1, 2], "p": ["x", "y"]})
    with pytest.raises(DuplicateColumnError, match="'a' and 'A'"):
        write_table(uri, pa.table({"a": [1], "A": [2]}))
    with pytest.raises(DuplicateColumnError, match=re.escape("'s.k' and 's.K'")):
        write_table(uri, pa.table({"s": pa.array([{"k": 1, "K": 2}])}))
    with pytest.raises(OptionError, match=r"partitionBy names column.*nope"):
        write_table(uri, ok, partition_by=["nope"])
    with pytest.raises(OptionError, match="cannot name every column"):
        write_table(uri, ok, partition_by=["a", "p"])
    binary = ok.append_column("b", pa.array([b"1", b"2"]))
    with pytest.raises(OptionError, match="partitionBy column 'b' has type binary"):
        write_table(uri, binary, partition_by=["b"])
    hint = re.escape("did you mean 'spark.indextables.indexWriter.heapSize'")
    with pytest.raises(OptionError, match=hint):
        write_table(uri, ok, options={"spark.indextables.indexWriter.heapSiz": "64M"})
    with pytest.raises(OptionError, match="typemap"):
        write_table(uri, ok, options={"spark.indextables.indexing.typemap.p": "nonsense"})
    with pytest.raises(ArgumentError, match="mode="):
        write_table(uri, ok, mode="errorifexists")
    with pytest.raises(ArgumentError, match="data must be Arrow-streamable"):
        write_table(uri, [{"a": 1}])
    with pytest.raises(ArgumentError, match="partition_by"):
        write_table(uri, ok, partition_by=["p"], options={"partitionBy": "a"})
    assert not any(tmp_path.iterdir())  # nothing written by a refused write


def test_checks_against_the_existing_table(tmp_path: Path) -> None:
    uri = str(tmp_path)
    write_table(uri, pa.table({"a": [1, 2], "p": ["x", "y"]}), partition_by=["p"])
    with pytest.raises(OptionError, match="the data's string cannot be written to the table's"):
        write_table(uri, pa.table({"a": pa.array(["1"]), "p": ["x"]}))
    with pytest.raises(OptionError, match="differs from the table's partition columns"):
        write_table(uri, pa.table({"a": [1], "p": ["x"]}), partition_by=["a"])
    # no partition_by: the table's partitioning is kept
    write_table(uri, pa.table({"a": [3], "p": ["z"]}))
    values = {s.partition_values["p"] for s in load_view(uri, {}).splits}
    assert values == {"x", "y", "z"}


def test_indexing_options_are_the_data_sources(tmp_path: Path) -> None:
    uri = str(tmp_path)
    data = pa.table({"msg": ["quick brown fox", "lazy dog", None], "n": [1, 2, 3]})
    write_table(uri, data, options={"spark.indextables.indexing.typemap.msg": "text"})
    table = open_table(uri)
    assert table.search("msg:brown").column("n").to_pylist() == [1]
    configuration = load_view(uri, {}).configuration
    assert configuration["spark.indextables.indexing.typemap.msg"] == "text"
    # the recorded configuration is the table's: an append keeps msg a text field
    write_table(uri, pa.table({"msg": ["brown bear"], "n": [4]}))
    assert sorted(open_table(uri).search("msg:brown").column("n").to_pylist()) == [1, 4]


def test_decimal_partition_values(tmp_path: Path) -> None:
    data = pa.table(
        {
            "amount": pa.array([Decimal("0.00"), Decimal("-1.50"), None], pa.decimal128(5, 2)),
            "v": [1, 2, 3],
        }
    )
    write_table(str(tmp_path), data, partition_by=["amount"])
    values = {s.partition_values["amount"] for s in load_view(str(tmp_path), {}).splits}
    assert values == {"0.00", "-1.50", None}
    assert _rows(str(tmp_path)) == row_multiset(data.to_pylist())


def test_every_kind_is_covered() -> None:
    assert set(PARTITION_KINDS) - set(KINDS) == {"decimal"}


def test_the_docs_example_runs(tmp_path: Path) -> None:
    import os
    import subprocess

    root = Path(__file__).resolve().parents[3]
    section = (root / "docs/search.md").read_text().split("## Writing tables", 1)[1]
    block = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    script = tmp_path / "example.py"
    script.write_text(block)
    done = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["WriteResult(version=1, files_added=2, rows=3)", "3"]


def test_nested_nanoseconds_are_floored_in_lists_and_maps(tmp_path: Path) -> None:
    ns = pa.timestamp("ns")
    lists = pa.array([[1_999, -1], None, [], [None, -1_000]], pa.list_(ns))
    maps = pa.array([[("a", -1)], [("b", 2_001), ("c", None)], None, []], pa.map_(pa.string(), ns))
    data = pa.table({"id": [0, 1, 2, 3], "l": lists, "m": maps}).slice(1, 3)  # offsets too
    write_table(str(tmp_path), data)
    back = {r["id"]: r for r in open_table(str(tmp_path)).to_arrow().to_pylist()}
    micro = dt.timedelta(microseconds=1)
    epoch = dt.datetime(1970, 1, 1)
    assert back[1] == {"id": 1, "l": None, "m": [("b", epoch + 2 * micro), ("c", None)]}
    assert back[2] == {"id": 2, "l": [], "m": None}
    assert back[3] == {"id": 3, "l": [None, epoch - micro], "m": []}


def test_the_docstore_block_size_option(tmp_path: Path) -> None:
    from indextables.protocol.splitbundle import unbundle_split
    from indextables.search.errors import OptionError
    from indextables.search.read.docstore import read_store

    rows = pa.table(
        {"id": list(range(5000)), "s": [f"row {k} " + "x" * (k % 50) for k in range(5000)]}
    )
    key = "spark.indextables.indexWriter.docStoreBlockSize"
    stores = {}
    for size in ("16384", "4K"):
        uri = tmp_path / size
        write_table(str(uri), rows, options={key: size})
        (split,) = uri.glob("*.split")
        unbundled = tmp_path / f"{size}-files"
        unbundle_split(split.read_bytes(), unbundled, path=str(split))
        meta = json.loads((unbundled / "meta.json").read_text())
        want = 16384 if size == "16384" else 4096
        assert meta["index_settings"]["docstore_blocksize"] == want
        stores[size] = [read_store(p.read_bytes()) for p in unbundled.glob("*.store")]
        got = open_table(str(uri)).search(where="id >= 4990").sort_by("id")
        assert got.column("s").to_pylist() == rows.column("s").to_pylist()[4990:]
    blocks = {size: sum(len(s.doc_starts) for s in found) for size, found in stores.items()}
    assert blocks["4K"] >= 3 * blocks["16384"]
    with pytest.raises(OptionError, match="docStoreBlockSize"):
        write_table(str(tmp_path / "bad"), rows, options={key: "100"})
