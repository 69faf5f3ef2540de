"""Page-level row fetch of companion reads (``companion.parquetpages``), differential.

Random hostile data written by pyarrow with tiny data pages (many pages per
column chunk), several row groups, dictionary and plain encodings, both data
page versions and several codecs, nulls and nested columns. The oracle is
pyarrow reading the whole file and taking the same rows.
"""

from __future__ import annotations

import decimal
import math
import random
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from indextables.search.companion import _kernels_py, cutarrays, parquetpages
from indextables.search.companion.manifest import ParquetFileEntry, ParquetManifest
from indextables.search.companion.parquetpages import (
    FileKey,
    clear_footer_cache,
    footer_of,
    page_rows,
)
from indextables.search.companion.read import _FileRows
from indextables.search.companion.thriftcompact import decode_struct, encode_struct
from indextables.search.schema.plainarrow import plain_array

FLOATS = [0.0, -0.0, 1.5, -1.5, math.nan, math.inf, -math.inf, 1.7976931348623157e308, 5e-324]
INTS = [0, 1, -1, 2**63 - 1, -(2**63), 2**31, -(2**31) - 1]
STRINGS = ["", "a", "é", "日本語", "x\ny", "\u0000", "🙂", "a longer string " * 3]
FLAT = [
    "i8", "u32", "i64", "f32", "f64", "s_dict", "s_plain", "ls", "bin", "fixed", "dec",
    "d", "ts_us", "ts_ms_tz", "t", "flag", "cat", "dur",
]  # fmt: skip
NESTED = ["st", "li", "mp", "ls_st"]


def hostile(rng: random.Random, rows: int) -> pa.Table:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    base = datetime(2024, 1, 1, tzinfo=UTC)
    column: dict[str, pa.Array] = {
        "i8": pa.array([maybe(rng.randint(-128, 127)) for _ in range(rows)], pa.int8()),
        "u32": pa.array([maybe(rng.randint(0, 2**32 - 1)) for _ in range(rows)], pa.uint32()),
        "i64": pa.array([maybe(rng.choice(INTS)) for _ in range(rows)], pa.int64()),
        "f32": pa.array([maybe(rng.choice(FLOATS[:7])) for _ in range(rows)], pa.float32()),
        "f64": pa.array([maybe(rng.choice(FLOATS)) for _ in range(rows)], pa.float64()),
        "s_dict": pa.array([maybe(rng.choice(STRINGS)) for _ in range(rows)], pa.string()),
        "s_plain": pa.array(
            [maybe(rng.choice(STRINGS) + str(rng.random())) for _ in range(rows)], pa.string()
        ),
        "ls": pa.array([maybe(rng.choice(STRINGS)) for _ in range(rows)], pa.large_string()),
        "bin": pa.array([maybe(rng.randbytes(rng.randint(0, 9))) for _ in range(rows)]),
        "fixed": pa.array([maybe(rng.randbytes(4)) for _ in range(rows)], pa.binary(4)),
        "dec": pa.array(
            [maybe(decimal.Decimal(rng.randint(-(10**20), 10**20)) / 1000) for _ in range(rows)],
            pa.decimal128(24, 3),
        ),
        "d": pa.array(
            [maybe(date(1, 1, 1) + timedelta(days=rng.randint(0, 3_000_000))) for _ in range(rows)],
            pa.date32(),
        ),
        "ts_us": pa.array(
            [maybe(rng.randint(-(10**15), 10**15)) for _ in range(rows)], pa.timestamp("us")
        ),
        "ts_ms_tz": pa.array(
            [
                maybe(base + timedelta(milliseconds=rng.randint(-(10**9), 10**9)))
                for _ in range(rows)
            ],
            pa.timestamp("ms", tz="Europe/Zurich"),
        ),
        "t": pa.array(
            [
                maybe(time(rng.randint(0, 23), rng.randint(0, 59), 0, rng.randint(0, 999_999)))
                for _ in range(rows)
            ],
            pa.time64("us"),
        ),
        "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(rows)], pa.bool_()),
        "cat": pa.array([maybe(rng.choice(STRINGS)) for _ in range(rows)]).dictionary_encode(),
        "dur": pa.array(
            [maybe(rng.randint(-(10**12), 10**12)) for _ in range(rows)], pa.duration("us")
        ),
        "st": pa.array(
            [
                maybe({"a": maybe(rng.randint(0, 9)), "b": maybe(rng.choice(STRINGS))})
                for _ in range(rows)
            ],
            pa.struct([("a", pa.int32()), ("b", pa.string())]),
        ),
        "li": pa.array(
            [
                maybe([maybe(rng.randint(0, 99)) for _ in range(rng.randint(0, 4))])
                for _ in range(rows)
            ],
            pa.list_(pa.int64()),
        ),
        "mp": pa.array(
            [
                maybe([(str(k), maybe(rng.randint(0, 9))) for k in range(rng.randint(0, 3))])
                for _ in range(rows)
            ],
            pa.map_(pa.string(), pa.int32()),
        ),
        "ls_st": pa.array(
            [
                maybe([{"x": maybe(rng.random())} for _ in range(rng.randint(0, 3))])
                for _ in range(rows)
            ],
            pa.list_(pa.struct([("x", pa.float64())])),
        ),
    }
    return pa.table(column)


CODECS = ["snappy", "zstd", "none", "gzip"]
SPECIAL = {"f32": "BYTE_STREAM_SPLIT", "u32": "DELTA_BINARY_PACKED", "bin": "DELTA_BYTE_ARRAY"}


def write(
    path: Path,
    table: pa.Table,
    rng: random.Random,
    *,
    page_index: bool = True,
    seed: int | None = None,
) -> None:
    """``table`` with tiny pages; ``seed`` picks the codec and page version (else ``rng``),
    and an odd seed some encodings pages are not cut in (decoded whole)."""
    codec = rng.choice(CODECS) if seed is None else CODECS[seed % 4]
    version = rng.choice(["1.0", "2.0"]) if seed is None else ["1.0", "2.0"][seed // 4 % 2]
    pq.write_table(
        table,
        path,
        row_group_size=rng.choice([37, 150, 1000]),
        data_page_size=rng.choice([64, 256, 1024]),
        write_batch_size=rng.choice([7, 16, 64]),
        use_dictionary=[
            "s_dict",
            "cat",
            "i64",
            "st.b",
            rng.choice(["i8", "f64", "s_plain", "ls", "fixed", "dec", "d"]),
        ],
        column_encoding=SPECIAL if seed is not None and seed % 2 else None,
        compression=codec,
        data_page_version=version,
        write_page_index=page_index,
    )


def same(found: pa.Array | pa.ChunkedArray, expected: pa.Array | pa.ChunkedArray) -> bool:
    """Equal values and types; floats by bits (NaN equal to NaN, -0.0 not 0.0)."""
    if found.type != expected.type:
        return False

    def canon(v: Any) -> Any:
        if isinstance(v, float):
            return "nan" if math.isnan(v) else v.hex()
        if isinstance(v, dict):
            return {k: canon(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [canon(x) for x in v]
        return v

    return canon(found.to_pylist()) == canon(expected.to_pylist())


def open_footer(path: Path) -> tuple[pa.NativeFile, Any]:
    handle = pafs.LocalFileSystem().open_input_file(str(path))
    key = FileKey(str(path), path.stat().st_size, path.stat().st_mtime_ns)
    return handle, footer_of(handle, key)


@pytest.fixture
def every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve columns page by page however many of their pages hold hits."""
    monkeypatch.setattr(parquetpages, "DENSE_SHARE", 1.0)


@pytest.mark.parametrize("seed", range(8))  # every codec, data pages v1 and v2
@pytest.mark.usefixtures("every_page")
def test_page_rows_equal_a_whole_file_read(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    table = hostile(rng, rng.choice([300, 1200]))
    path = tmp_path / "f.parquet"
    write(path, table, rng, seed=seed)
    cut: list[bool] = []
    cut_page = parquetpages.cut_parts

    def counting(*args: Any) -> bytes | None:
        found = cut_page(*args)
        cut.append(found is not None)
        return found

    monkeypatch.setattr(parquetpages, "cut_parts", counting)
    direct: set[pa.DataType] = set()
    laid_out = parquetpages.cut_array

    def recording(pages: Any, arrow_type: pa.DataType, codec: Any) -> pa.Array | None:
        found = laid_out(pages, arrow_type, codec)
        if found is not None:
            direct.add(arrow_type)
        return found

    monkeypatch.setattr(parquetpages, "cut_array", recording)
    whole = pq.read_table(path)
    columns = whole.column_names
    handle, footer = open_footer(path)
    with handle:
        assert pq.ParquetFile(path).metadata.row_group(0).num_rows < table.num_rows or (
            footer.metadata.num_row_groups == 1
        )
        for count in (1, 3, 40, table.num_rows):
            rows = sorted(rng.sample(range(table.num_rows), count))
            if count == 3:
                rows = [rows[2], rows[0], rows[1], rows[0]]  # any order, repeats
            served = page_rows(handle, footer, columns, rows)
            # Every flat column is served page by page; nested ones by row groups.
            assert set(served.arrays) == set(FLAT), served.rest
            assert set(served.rest) == set(NESTED)
            indices = pa.array(rows, pa.int64())
            for name, array in served.arrays.items():
                # served in plain layouts: a dictionary column as its values
                expected = plain_array(whole.column(name)).take(indices)
                assert same(array, expected), (seed, name, count)
    # Pages with few hits were cut down to them (every flat type but BOOLEAN can be,
    # in PLAIN and dictionary encodings; others are decoded whole).
    assert any(cut)
    assert all(cut) == (seed % 2 == 0), cut
    # Columns whose every hit page was cut and whose Arrow layout is their PLAIN bytes
    # came straight from the cut pages (cutarrays); the comparisons above cover them.
    assert {pa.int64(), pa.float64(), pa.string(), pa.large_string()} <= direct, direct
    if seed % 2 == 0:  # no BYTE_STREAM_SPLIT floats, no DELTA_BYTE_ARRAY binaries
        assert {pa.float32(), pa.binary()} <= direct, direct


class CountingFile:
    """A file handle that counts the bytes read through ``read_at``."""

    def __init__(self, handle: pa.NativeFile) -> None:
        self.handle = handle
        self.read = 0
        self.calls = 0

    def read_at(self, size: int, offset: int) -> bytes:
        self.read += size
        self.calls += 1
        return bytes(self.handle.read_at(size, offset))


def test_one_row_reads_only_its_pages(tmp_path: Path) -> None:
    rng = random.Random(99)
    table = pa.table(
        {
            "id": pa.array(range(200_000), pa.int64()),
            "s": pa.array([f"row {i} {rng.random()}" for i in range(200_000)]),
        }
    )
    path = tmp_path / "big.parquet"
    pq.write_table(table, path, data_page_size=8 * 1024, write_page_index=True,
                   use_dictionary=False)  # fmt: skip
    size = path.stat().st_size
    clear_footer_cache()
    handle, footer = open_footer(path)
    with handle:
        counting = CountingFile(handle)
        served = page_rows(counting, footer, ["id", "s"], [123_456])  # type: ignore[arg-type]
        assert served.rest == ()
        assert served.arrays["id"].to_pylist() == [123_456]
        assert served.arrays["s"].to_pylist() == [table.column("s")[123_456].as_py()]
        # Offset indexes and two pages: a few kilobytes of a multi-megabyte file.
        assert counting.read < size / 50, (counting.read, size)
        again = CountingFile(handle)
        page_rows(again, footer, ["id", "s"], [5])  # type: ignore[arg-type]
        assert again.calls <= 2  # offset indexes are kept: the pages only (coalesced)


def test_a_file_without_an_offset_index_is_left_to_row_groups(tmp_path: Path) -> None:
    rng = random.Random(5)
    table = hostile(rng, 200)
    path = tmp_path / "f.parquet"
    write(path, table, rng, page_index=False)
    handle, footer = open_footer(path)
    with handle:
        served = page_rows(handle, footer, table.column_names, [0, 7, 199])
    assert served.arrays == {}
    assert served.rest == tuple(table.column_names)


def test_hits_in_nearly_every_page_are_left_to_row_groups(tmp_path: Path) -> None:
    table = pa.table({"id": pa.array(range(5000), pa.int64())})
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, data_page_size=1024, write_page_index=True, use_dictionary=False)
    handle, footer = open_footer(path)
    with handle:
        assert page_rows(handle, footer, ["id"], list(range(0, 5000, 7))).rest == ("id",)
        served = page_rows(handle, footer, ["id"], [4321])
        assert served.rest == ()
        assert served.arrays["id"].to_pylist() == [4321]


def test_a_few_hits_in_every_page_are_still_cut(tmp_path: Path) -> None:
    """Pages cut down to their hits do not make a column dense (a needle at scale)."""
    table = pa.table({"id": pa.array(range(5000), pa.int64()), "s": [f"v{i}" for i in range(5000)]})
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, data_page_size=512, write_batch_size=128,
                   write_page_index=True, use_dictionary=False)  # fmt: skip
    handle, footer = open_footer(path)
    with handle:
        firsts = [p[2] for p in footer_offsets(handle, footer, path)]
        rows = [first + 3 for first in firsts]  # one hit in every page
        served = page_rows(handle, footer, ["id", "s"], rows)
    assert len(firsts) > 20
    assert served.rest == ()
    assert served.arrays["id"].to_pylist() == rows
    assert served.arrays["s"].to_pylist() == [f"v{i}" for i in rows]


def footer_offsets(handle: Any, footer: Any, path: Path) -> list[tuple[int, int, int]]:
    """The ``id`` column's page locations (offset, size, first row) in row group 0."""
    page_rows(handle, footer, ["id"], [0])  # loads the offset index
    return list(footer.offsets[(0, footer.leaves["id"][0])].pages)


@pytest.mark.parametrize("page_index", [True, False])
@pytest.mark.usefixtures("every_page")
def test_file_rows_mix_page_and_row_group_columns(tmp_path: Path, page_index: bool) -> None:
    """The companion reader's per-file fetch: flat columns by pages, nested ones by row groups."""
    rng = random.Random(11 + page_index)
    table = hostile(rng, 900)
    path = tmp_path / "part-0.parquet"
    write(path, table, rng, page_index=page_index)
    whole = pq.read_table(path)
    manifest = ParquetManifest(
        fast_field_mode="disabled",
        segment_row_ranges=(),
        parquet_files=(ParquetFileEntry("part-0.parquet", path.stat().st_size, 0, 900),),
        column_mapping=(),
        total_rows=900,
    )
    reader = _FileRows(manifest, pafs.LocalFileSystem(), str(tmp_path), whole.schema, {})
    rows = sorted(rng.sample(range(900), 60))
    batch = reader.rows(0, rows)
    expected = whole.take(pa.array(rows, pa.int64()))
    for name in whole.column_names:
        assert same(batch.column(name), expected.column(name)), name
    every = pa.Table.from_batches(list(reader.whole_file(0)))
    for name in whole.column_names:
        assert same(every.column(name), whole.column(name)), name


def test_byte_array_kernel_and_its_twin_agree() -> None:
    kernels = [_kernels_py]
    try:
        from indextables.search.companion import _kernels  # type: ignore[attr-defined]

        kernels.append(_kernels)
    except ImportError:
        pass
    data = b"".join(
        len(v).to_bytes(4, "little") + v for v in [b"", b"abc", "é🙂".encode(), b"x" * 300]
    )
    for kernel in kernels:
        for count in range(5):
            starts = memoryview(kernel.byte_array_starts(data, count)).cast("q").tolist()
            assert starts == [0, 4, 11, 21, 325][: count + 1], (kernel, count)
        for broken in (data[:-1], data + b"\x09"):
            with pytest.raises(ValueError):
                kernel.byte_array_starts(broken, 5)


def test_footer_round_trips_through_the_thrift_codec(tmp_path: Path) -> None:
    rng = random.Random(3)
    path = tmp_path / "f.parquet"
    write(path, hostile(rng, 300), rng)
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    raw = data[-8 - length : -8]
    meta, used = decode_struct(raw)
    assert used == length
    assert encode_struct(meta) == raw


def test_footers_are_kept_per_file_version(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), path, write_page_index=True)
    clear_footer_cache()
    size = path.stat().st_size
    with pafs.LocalFileSystem().open_input_file(str(path)) as handle:
        first = footer_of(handle, FileKey(str(path), size, 1))
        assert footer_of(handle, FileKey(str(path), size, 1)) is first
        assert footer_of(handle, FileKey(str(path), size, 2)) is not first
        unversioned = FileKey(str(path), size, None)
        assert footer_of(handle, unversioned) is not footer_of(handle, unversioned)


@pytest.mark.usefixtures("every_page")
def test_cut_pages_with_the_pure_twin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from indextables.search.companion import slimpages

    monkeypatch.setattr(slimpages, "byte_array_starts", _kernels_py.byte_array_starts)
    monkeypatch.setattr(slimpages, "cut_page", _kernels_py.cut_page)
    monkeypatch.setattr(cutarrays, "arrow_parts", _kernels_py.arrow_parts)
    rng = random.Random(42)
    table = hostile(rng, 600)
    path = tmp_path / "f.parquet"
    write(path, table, rng, seed=4)  # snappy, data pages v2
    whole = pq.read_table(path)
    rows = sorted(rng.sample(range(600), 25))
    handle, footer = open_footer(path)
    with handle:
        served = page_rows(handle, footer, whole.column_names, rows)
    indices = pa.array(rows, pa.int64())
    assert set(served.arrays) == set(FLAT)
    for name, array in served.arrays.items():
        assert same(array, plain_array(whole.column(name)).take(indices)), name


@pytest.mark.usefixtures("every_page")
def test_the_dictionary_is_read_only_for_a_cut_page_of_indices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indextables.search.companion import slimpages

    # distinct strings overflow a small dictionary: the chunk's first pages hold
    # dictionary indices, the rest PLAIN values
    table = pa.table({"s": [f"value {i:06d} " + "x" * (i % 50) for i in range(20000)]})
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, dictionary_pagesize_limit=16 * 1024, data_page_size=8 * 1024,
                   write_page_index=True)  # fmt: skip
    read: list[int] = []
    real = slimpages.read_dictionary

    def counting(*args: Any) -> Any:
        read.append(1)
        return real(*args)

    monkeypatch.setattr(parquetpages, "read_dictionary", counting)
    handle, footer = open_footer(path)
    with handle:
        pages = footer.offsets
        for rows, dictionary in (([19990], False), ([3, 19990], True)):
            read.clear()
            served = page_rows(handle, footer, ["s"], rows)
            assert served.arrays["s"].to_pylist() == table.column("s").take(rows).to_pylist()
            assert bool(read) == dictionary, (rows, pages)
