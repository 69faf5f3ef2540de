"""Every Arrow layout the libraries users have produce, on every read and write path.

Polars and deltalake (after DELETE, UPDATE and MERGE) write ``string_view`` and
``binary_view``; Polars' categoricals stream as dictionaries of views with unsigned
indices; Polars' ``to_arrow`` and ``write_parquet`` give large types; pyarrow users
hand over run-end encoded arrays and list views. pyarrow has no ``take`` for views or
run-end encoded arrays, so each path turns them into plain layouts first
(:mod:`indextables.search.schema.plainarrow`).

The oracle is always the input itself as Python values (``to_pylist``: pyarrow's
own decoding of each layout), or the source library's own reader (deltalake,
pyiceberg, DuckDB); the layouts are built by the libraries named.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from indextables.search import build_companion, open_table, write_table
from indextables.search.errors import (
    ArgumentError,
    CompanionSourceError,
    UnsupportedTypeError,
)
from indextables.search.polars import scan_indextables
from indextables.search.schema.plainarrow import is_plain, plain_array, plain_type

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffcases import OPTIONS, PARTITION_BY, STRING_LAYOUTS, cases, relayout, rows
from test_search_differential import check_case, oracle_ids

pytestmark = pytest.mark.filterwarnings(
    "ignore::indextables.search.query.casenotice.CaseMismatchWarning"
)

HUGE = "ü" * 40_000  # 80,000 UTF-8 bytes
TEXTS = ["", " ", "a", "A b", "日本語", "😀x", "naïve", "x\ny", "null", HUGE, "é" * 300]


def _rows_by_id(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda row: row["id"])


def _options(tmp_path: Path) -> dict[str, str]:
    return {"spark.indextables.cache.directoryPath": str(tmp_path / "cache")}


# -- the layouts, built from Python values ----------------------------------------------


def _strings(values: list[str | None]) -> pa.Array:
    return pa.array(values, pa.string())


def _view_dictionary(values: list[str | None], index: pa.DataType) -> pa.Array:
    encoded = _strings(values).dictionary_encode()
    return pa.DictionaryArray.from_arrays(
        encoded.indices.cast(index), encoded.dictionary.cast(pa.string_view())
    )


def _ree(values: list[Any], value_type: pa.DataType) -> pa.Array:
    """A run-end encoded array of ``values`` (runs of equal neighbours)."""
    ends: list[int] = []
    run_values: list[Any] = []
    for position, value in enumerate(values):
        if run_values and run_values[-1] == value and ends:
            ends[-1] = position + 1
        else:
            ends.append(position + 1)
            run_values.append(value)
    return pa.RunEndEncodedArray.from_arrays(
        pa.array(ends, pa.int32()), pa.array(run_values, value_type)
    )


def _list_view(
    values: list[list[Any] | None], item: pa.DataType, *, large: bool = False
) -> pa.Array:
    """A list view whose rows point backwards into its values (not a list's layout)."""
    flat: list[Any] = []
    offsets: list[int] = []
    sizes: list[int] = []
    for row in reversed(values):  # values stored in reverse row order
        offsets.append(len(flat))
        sizes.append(0 if row is None else len(row))
        flat.extend(row or [])
    offsets.reverse()
    sizes.reverse()
    mask = pa.array([row is None for row in values])
    kind, width = (pa.LargeListViewArray, pa.int64()) if large else (pa.ListViewArray, pa.int32())
    return kind.from_arrays(
        pa.array(offsets, width), pa.array(sizes, width), pa.array(flat, item), mask=mask
    )


STRING_VARIANTS: dict[str, Callable[[list[str | None]], pa.Array]] = {
    "string": _strings,
    "large_string": lambda v: _strings(v).cast(pa.large_string()),
    "string_view": lambda v: _strings(v).cast(pa.string_view()),
    "dictionary_int8": lambda v: (
        _strings(v).dictionary_encode().cast(pa.dictionary(pa.int8(), pa.string()))
    ),
    "dictionary_uint32_large": lambda v: (
        _strings(v).dictionary_encode().cast(pa.dictionary(pa.uint32(), pa.large_string()))
    ),
    "dictionary_uint8_view": lambda v: _view_dictionary(v, pa.uint8()),
    "dictionary_int64_view": lambda v: _view_dictionary(v, pa.int64()),
    "run_end_encoded": lambda v: _ree(v, pa.string()),
    "run_end_encoded_view": lambda v: _ree(v, pa.string_view()),
    "list_view": lambda v: _list_view([None if s is None else [s] for s in v], pa.string()),
    "large_list_view_of_views": lambda v: _list_view(
        [None if s is None else [s, None] for s in v], pa.string_view(), large=True
    ),
    "large_list_of_views": lambda v: pa.array(
        [None if s is None else [s] for s in v], pa.large_list(pa.string_view())
    ),
    "struct_of_views": lambda v: pa.array(
        [None if s is None else {"s": s, "b": s.encode()} for s in v],
        pa.struct([("s", pa.string_view()), ("b", pa.binary_view())]),
    ),
    "map_of_views": lambda v: pa.array(
        [None if s is None else [(s, s)] for s in v],
        pa.map_(pa.string_view(), pa.string_view()),
    ),
    "binary_view": lambda v: _strings(v).cast(pa.binary()).cast(pa.binary_view()),
    "large_binary": lambda v: _strings(v).cast(pa.large_binary()),
    "dictionary_binary": lambda v: _strings(v).cast(pa.binary()).dictionary_encode(),
}


def _null_pattern(rng: random.Random, n: int, pattern: str) -> list[bool]:
    if pattern == "none":
        return [False] * n
    if pattern == "all":
        return [True] * n
    return [rng.random() < 0.3 for _ in range(n)]


def _values(rng: random.Random, n: int, pattern: str) -> list[str | None]:
    nulls = _null_pattern(rng, n, pattern)
    return [None if null else rng.choice(TEXTS) for null in nulls]


# -- plain_array against pyarrow's own decoding -----------------------------------------


@pytest.mark.parametrize("variant", sorted(STRING_VARIANTS))
@pytest.mark.parametrize("pattern", ["none", "all", "random"])
def test_plain_arrays_hold_the_same_values_and_take_rows(variant: str, pattern: str) -> None:
    rng = random.Random(f"{variant}-{pattern}")
    for _ in range(4):
        n = rng.randint(1, 40)
        array = STRING_VARIANTS[variant](_values(rng, n, pattern))
        start = rng.randint(0, n - 1)
        for given in (array, array.slice(start), pa.chunked_array([array, array.slice(start)])):
            plain = plain_array(given)
            assert plain.type == plain_type(given.type)
            assert is_plain(plain.type)
            expected = given.to_pylist()
            assert plain.to_pylist() == expected
            positions = [rng.randrange(len(given)) for _ in range(7)] if len(given) else []
            assert plain.take(pa.array(positions, pa.int64())).to_pylist() == [
                expected[p] for p in positions
            ]


# -- write_table -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(STRING_VARIANTS))
def test_write_table_takes_every_layout_and_reads_it_back_equal(
    tmp_path: Path, variant: str
) -> None:
    rng = random.Random(variant)
    values = _values(rng, 30, "random")
    data = pa.table({"id": pa.array(range(30), pa.int64()), "c": STRING_VARIANTS[variant](values)})
    write_table(str(tmp_path / "t"), data)
    table = open_table(str(tmp_path / "t"), options=_options(tmp_path))
    assert is_plain(table.schema.field("c").type)
    expected = _rows_by_id(data)
    assert _rows_by_id(table.to_arrow()) == expected
    # rows served from search hits (the doc store and the Arrow copy, not a scan)
    hits = table.search("id:[3 TO 11]")
    assert _rows_by_id(hits) == [row for row in expected if 3 <= row["id"] <= 11]
    assert table.count("id:[3 TO 11]") == 9


@pytest.mark.parametrize("seed", range(6))
def test_write_table_random_layouts_nulls_and_strings_read_back_equal(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    n = rng.randint(5, 60)
    names = rng.sample(sorted(STRING_VARIANTS), 5)
    columns = {"id": pa.array(range(n), pa.int64())}
    for number, variant in enumerate(names):
        pattern = rng.choice(["none", "all", "random"])
        columns[f"c{number}"] = STRING_VARIANTS[variant](_values(rng, n, pattern))
    data = pa.table(columns)
    # in batches of several sizes, as a stream hands them over
    cut = rng.randint(1, n)
    reader = pa.RecordBatchReader.from_batches(
        data.schema, [*data.slice(0, cut).to_batches(), *data.slice(cut).to_batches()]
    )
    write_table(str(tmp_path / "t"), reader)
    table = open_table(str(tmp_path / "t"), options=_options(tmp_path))
    assert _rows_by_id(table.to_arrow()) == _rows_by_id(data), names
    low = rng.randrange(n)
    found = table.search(f"id:[{low} TO {n}]")
    assert _rows_by_id(found) == [r for r in _rows_by_id(data) if r["id"] >= low], names


def test_write_table_takes_polars_categoricals_views_and_large_types(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "id": list(range(6)),
            "cat": pl.Series(["a", "b", None, "a", "ü", ""], dtype=pl.Categorical),
            "enum": pl.Series(["x", "y", "x", None, "y", "x"], dtype=pl.Enum(["x", "y"])),
            "s": ["a", None, HUGE, "日本", "", "z"],
            "b": [b"a", None, b"", b"\x00", b"zz", b"q"],
            "l": [["a"], None, [], ["b", None], ["c"], ["d"]],
            "st": [{"x": "a"}, None, {"x": None}, {"x": "b"}, {"x": ""}, {"x": "c"}],
        }
    )
    expected = _rows_by_id(frame.to_arrow())
    # the C stream (views, dictionaries of views) and to_arrow (large types)
    for number, data in enumerate((frame, frame.to_arrow())):
        uri = str(tmp_path / f"t{number}")
        write_table(uri, data)
        table = open_table(uri, options=_options(tmp_path))
        assert _rows_by_id(table.to_arrow()) == expected
        assert _rows_by_id(table.search("cat:a")) == [r for r in expected if r["cat"] == "a"]
        read = scan_indextables(uri, options=_options(tmp_path)).collect()
        assert _rows_by_id(read.to_arrow()) == expected


@pytest.mark.parametrize("views", [False, True])
def test_write_table_takes_duckdb_results(tmp_path: Path, views: bool) -> None:
    duck = duckdb.connect()
    if views:  # DuckDB's Arrow output with string views and list views
        duck.execute("SET arrow_output_version = '1.5'")
        duck.execute("SET produce_arrow_string_view = true")
        duck.execute("SET arrow_output_list_view = true")
    query = (
        "SELECT i::BIGINT AS id, 'v' || i AS s, ('b' || i)::BLOB AS b, "
        "[i::VARCHAR, NULL, repeat('ü', i::BIGINT)] AS l, {'k': 'x' || i} AS st, "
        "(CASE WHEN i % 2 = 0 THEN 'p' ELSE 'q' END)::ENUM('p', 'q') AS e "
        "FROM range(20) t(i)"
    )
    relation = duck.sql(query)
    if views:
        assert "string_view" in str(relation.to_arrow_table().schema)
        assert "list_view" in str(duck.sql(query).to_arrow_table().schema)
    data = duck.sql(query).to_arrow_table()
    write_table(str(tmp_path / "t"), duck.sql(query))  # the relation's own Arrow stream
    table = open_table(str(tmp_path / "t"), options=_options(tmp_path))
    assert _rows_by_id(table.to_arrow()) == _rows_by_id(data)
    assert table.count("e:p") == 10
    assert _rows_by_id(table.search("id:[4 TO 6]")) == _rows_by_id(data)[4:7]


def test_write_table_names_a_column_of_a_run_end_encoded_type_spark_lacks(
    tmp_path: Path,
) -> None:
    data = pa.table({"id": [1, 2], "u": _ree([1, 1], pa.duration("s"))})
    with pytest.raises(UnsupportedTypeError, match="'u'"):
        write_table(str(tmp_path / "t"), data)


def _bad_view() -> pa.Array:
    """A string_view array whose first (long) view names a data buffer it does not have."""
    good = pa.array(["x" * 20, "b"], pa.string_view())
    views = bytearray(good.buffers()[1].to_pybytes())
    views[8:12] = (5).to_bytes(4, "little")  # the view's buffer index
    return pa.Array.from_buffers(
        pa.string_view(), 2, [None, pa.py_buffer(bytes(views)), good.buffers()[2]]
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: pa.DictionaryArray.from_arrays(
            pa.array([0, 7, 1], pa.int8()), pa.array(["a", "b"], pa.string_view()), safe=False
        ),
        lambda: pa.DictionaryArray.from_arrays(
            pa.array([0, 200], pa.uint8()), pa.array(["a"]), safe=False
        ),
        _bad_view,
    ],
    ids=["view_dictionary_index", "dictionary_index", "view_buffer"],
)
def test_write_table_refuses_inconsistent_arrays_naming_the_column(
    tmp_path: Path, make: Callable[[], pa.Array]
) -> None:
    """Decoding such arrays would read out of bounds: they are refused, never written."""
    data = pa.table({"bad": make()})
    with pytest.raises(ArgumentError, match="column 'bad'"):
        write_table(str(tmp_path / "t"), data)
    assert not (tmp_path / "t").exists()  # nothing committed, no split left


# -- companions over tables the libraries wrote ------------------------------------------


def _check_companion(index: str, expected: list[dict[str, Any]], options: dict[str, str]) -> None:
    """Every read of the companion equals ``expected`` (rows by id), hit rows included."""
    table = open_table(index, options=options)
    for field in table.schema:
        assert is_plain(field.type), field
    assert _rows_by_id(table.to_arrow()) == expected
    ids = [row["id"] for row in expected]
    low, high = ids[len(ids) // 4], ids[(3 * len(ids)) // 4]
    wanted = [row for row in expected if low <= row["id"] <= high]
    assert _rows_by_id(table.search(f"id:[{low} TO {high}]")) == wanted
    assert _rows_by_id(table.scan(f"id:[{low} TO {high}]").read_all()) == wanted
    assert table.count(f"id:[{low} TO {high}]") == len(wanted)
    first = expected[len(expected) // 2]
    assert _rows_by_id(table.search(f's:"{first["s"]}"')) == [
        row for row in expected if row["s"] == first["s"]
    ]
    scanned = scan_indextables(index, options=options, query=f"id:[{low} TO {high}]").collect()
    assert _rows_by_id(scanned.to_arrow()) == wanted
    # rows grouped by a string column (the matching rows' values read from the source)
    groups = table.aggregate(
        group_by="s", metrics={"n": "count", "top": ("max", "id")}, where="msg IS NOT NULL"
    )
    counted: dict[str, list[int]] = {}
    for row in expected:
        if row["msg"] is not None:
            counted.setdefault(row["s"], []).append(row["id"])
    assert {g["s"]: (g["n"], g["top"]) for g in groups.to_pylist()} == {
        k: (len(v), max(v)) for k, v in counted.items()
    }


def _frame(start: int, n: int, rng: random.Random) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"w{rng.randrange(5)}" for _ in ids], pa.string()),
            "msg": pa.array([rng.choice([*TEXTS[:-2], None]) for _ in ids], pa.string()),
            "b": pa.array([rng.choice([b"", b"\xff", None, b"ab"]) for _ in ids], pa.binary()),
            "tags": pa.array([[rng.choice(TEXTS[:5])] for _ in ids], pa.list_(pa.string())),
        }
    )


def test_companion_over_delta_after_delete_update_and_merge(tmp_path: Path) -> None:
    """deltalake's DELETE/UPDATE/MERGE rewrite files with string_view/binary_view columns."""
    rng = random.Random(44)
    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    write_deltalake(source, _frame(0, 60, rng))
    write_deltalake(source, _frame(100, 40, rng), mode="append")
    options = _options(tmp_path)

    def sync_and_check() -> None:
        build_companion(source, index, source_format="delta")
        expected = _rows_by_id(DeltaTable(source).to_pyarrow_table())
        _check_companion(index, expected, options)

    sync_and_check()
    DeltaTable(source).delete("id % 7 = 3")
    sync_and_check()
    DeltaTable(source).update({"msg": "'updated ü'", "s": "'w9'"}, predicate="id < 30")
    sync_and_check()
    incoming = _frame(110, 50, rng)
    (
        DeltaTable(source)
        .merge(incoming, predicate="t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    views = {
        str(field.type) for path in DeltaTable(source).file_uris() for field in pq.read_schema(path)
    }
    assert {"string_view", "binary_view"} <= views  # what the defect needs: really written
    sync_and_check()


def test_companion_over_delta_written_by_polars(tmp_path: Path) -> None:
    rng = random.Random(5)
    source, index = str(tmp_path / "src"), str(tmp_path / "idx")
    pl.from_arrow(_frame(0, 50, rng)).write_delta(source)
    options = _options(tmp_path)
    build_companion(source, index, source_format="delta")
    _check_companion(index, _rows_by_id(DeltaTable(source).to_pyarrow_table()), options)
    pl.from_arrow(_frame(50, 30, rng)).write_delta(source, mode="append")
    build_companion(source, index, source_format="delta")
    _check_companion(index, _rows_by_id(DeltaTable(source).to_pyarrow_table()), options)


@pytest.mark.parametrize("writer", ["polars", "duckdb", "pyarrow_views", "pyarrow_dictionary"])
@pytest.mark.parametrize("page_index", [False, True])
def test_companion_over_parquet_files_the_libraries_wrote(
    tmp_path: Path, writer: str, page_index: bool
) -> None:
    rng = random.Random(writer)
    data = _frame(0, 80, rng)
    source = tmp_path / "src"
    source.mkdir()
    path = source / "part-0.parquet"
    if writer == "polars":
        # large_string / large_binary / large_list columns
        pl.from_arrow(data).write_parquet(path, row_group_size=20, statistics=page_index)
    elif writer == "duckdb":
        duck = duckdb.connect()
        duck.register("data", data)
        duck.execute(f"COPY data TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 20)")
    else:
        if writer == "pyarrow_views":
            kinds = {"s": pa.string_view(), "msg": pa.string_view(), "b": pa.binary_view()}
            kinds["tags"] = pa.large_list(pa.string_view())
        else:
            kinds = {"s": pa.dictionary(pa.uint8(), pa.string()), "msg": pa.large_string()}
        written = pa.table(
            [data.column(n).cast(kinds.get(n, data.column(n).type)) for n in data.column_names],
            names=data.column_names,
        )
        pq.write_table(
            written, path, row_group_size=20, data_page_size=64, write_page_index=page_index
        )
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    _check_companion(str(tmp_path / "idx"), _rows_by_id(data), _options(tmp_path))


def test_companion_over_iceberg_written_by_pyiceberg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyiceberg.catalog import load_catalog

    properties = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    for key, value in properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__LAYOUTS__{key.upper()}", value)
    catalog = load_catalog("layouts", **properties)
    catalog.create_namespace("web")
    rng = random.Random(12)
    first = _frame(0, 40, rng)
    large = pa.schema(
        [
            pa.field(f.name, pa.large_list(pa.large_string()) if f.name == "tags" else
                     pa.large_binary() if f.name == "b" else
                     pa.large_string() if pa.types.is_string(f.type) else f.type)
            for f in first.schema
        ]
    )  # fmt: skip
    iceberg = catalog.create_table("web.events", schema=large)
    iceberg.append(first.cast(large))
    second = _frame(40, 25, rng)
    iceberg.append(second.cast(large))
    # given views, pyiceberg writes string_view/binary_view files
    views = pa.schema(
        [
            pa.field(f.name, pa.large_list(pa.string_view()) if f.name == "tags" else
                     pa.binary_view() if f.name == "b" else
                     pa.string_view() if pa.types.is_large_string(f.type) else f.type)
            for f in large
        ]
    )  # fmt: skip
    third = _frame(65, 30, rng)
    iceberg.append(third.cast(views))
    index = str(tmp_path / "idx")
    build_companion("layouts.web.events", index, source_format="iceberg")
    # pyiceberg's own scan cannot merge the files' string and string_view types: the
    # oracle is the rows appended
    expected = sorted(
        first.to_pylist() + second.to_pylist() + third.to_pylist(), key=lambda r: r["id"]
    )
    _check_companion(index, expected, _options(tmp_path))


def test_a_source_file_that_cannot_be_decoded_is_named(tmp_path: Path) -> None:
    """A damaged source file (same size, its pages overwritten) raises an error naming
    that file, not the companion split."""
    rng = random.Random(3)
    source = tmp_path / "src"
    source.mkdir()
    data = _frame(0, 200, rng)
    written = data.set_column(1, "s", data.column("s").cast(pa.string_view()))
    pq.write_table(written, source / "good.parquet", compression="snappy")
    pq.write_table(written, source / "bad.parquet", compression="snappy")
    build_companion(str(source), str(tmp_path / "idx"), source_format="parquet")
    metadata = pq.read_metadata(source / "bad.parquet")
    raw = bytearray((source / "bad.parquet").read_bytes())
    for group in range(metadata.num_row_groups):
        for column in range(metadata.num_columns):
            chunk = metadata.row_group(group).column(column)
            start = chunk.dictionary_page_offset or chunk.data_page_offset
            # past the page headers: the first page's header stays readable
            raw[start + 24 : start + chunk.total_compressed_size] = bytes(
                rng.randrange(256) for _ in range(chunk.total_compressed_size - 24)
            )
    (source / "bad.parquet").write_bytes(bytes(raw))
    table = open_table(str(tmp_path / "idx"), options=_options(tmp_path))
    with pytest.raises(CompanionSourceError, match=r"'bad\.parquet'"):
        table.search("id:[0 TO 10]")
    with pytest.raises(CompanionSourceError, match=r"'bad\.parquet'"):
        table.to_arrow()
    # and a build over it names it too
    with pytest.raises(CompanionSourceError, match=r"'bad\.parquet'"):
        build_companion(str(source), str(tmp_path / "idx2"), source_format="parquet")


# -- the differential cases over sources in other layouts -----------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_companion_differential_over_relaid_sources(tmp_path: Path, seed: int) -> None:
    """The engine differential's hostile rows, their strings, binaries and structs written
    in the layouts of :func:`diffcases.relayout` (views, large, dictionaries of any index
    type), answer the differential's cases as DuckDB does over the plain rows."""
    data = rows(seed, 160)
    parquet = [k for k in STRING_LAYOUTS if k != "view_dictionary"]  # Parquet holds none
    laid = relayout(data, seed, parquet, structs=False)
    relaid = [n for n in data.column_names if laid.schema.field(n) != data.schema.field(n)]
    assert relaid
    assert laid.select(relaid).to_pylist() == data.select(relaid).to_pylist()
    source = tmp_path / "src"
    source.mkdir()
    half = data.num_rows // 2
    for number, part in enumerate((data.slice(0, half), data.slice(half))):
        part = relayout(part, seed, parquet, structs=False)
        pq.write_table(
            part, source / f"part-{number}.parquet", row_group_size=17,
            write_page_index=number == 0, data_page_size=256,
        )  # fmt: skip
    build_companion(
        str(source), str(tmp_path / "idx"), source_format="parquet",
        indexing_modes={"t": "text", "ip": "ip"}, target_input_size=10**9,
    )  # fmt: skip
    table = open_table(str(tmp_path / "idx"), options=_options(tmp_path))
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.register("data", data)
    try:
        for case in cases(seed, 16, valued=()):
            try:
                check_case(table, data, case, oracle_ids(duck, data, case))
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}: {case}") from exc
    finally:
        duck.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_write_table_differential_over_relaid_rows(tmp_path: Path, seed: int) -> None:
    """The engine differential's table written by ``write_table`` from every layout of
    :func:`diffcases.relayout` (dictionaries of views too) answers its cases as DuckDB
    does over the plain rows."""
    data = rows(seed, 200)
    uri = str(tmp_path / "t")
    half = data.num_rows // 2
    for number, start in enumerate((0, half)):
        part = relayout(data.slice(start, half), seed + 10 * number)
        write_table(uri, part, partition_by=PARTITION_BY, options=OPTIONS)
    table = open_table(uri, options=_options(tmp_path))
    assert table.count() == data.num_rows
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.register("data", data)
    try:
        for case in cases(seed, 16):
            try:
                check_case(table, data, case, oracle_ids(duck, data, case))
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}: {case}") from exc
    finally:
        duck.close()
