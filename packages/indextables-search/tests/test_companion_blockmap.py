"""Reading a mapped Snappy page by its 64 KiB blocks (``companion.blockmap``).

The kernels (``snappy_blocks``, ``block_value_starts``, ``mapped_cut``) run in both
twins against plain references; whole reads of large pages (several blocks each:
long, empty and block-straddling strings, nulls, data pages v1 and v2) are read
again by the maps, with each twin, and compared with pyarrow's own decoding.
"""

from __future__ import annotations

import random
import struct
from array import array
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from companiontwins import TWINS, load, varint
from hypothesis import given, settings
from hypothesis import strategies as st

from indextables.search.companion import _kernels_py, blockmap, parquetpages, slimpages
from indextables.search.companion.parquetpages import FileKey, clear_footer_cache, footer_of

BLOCK = 1 << 16
SNAPPY = pa.Codec("snappy")


def offsets_of(found: tuple[int, bytes]) -> list[int]:
    return list(struct.unpack(f"<{len(found[1]) // 8}q", found[1]))


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    """Compressible and incompressible runs, from empty to several blocks."""
    pieces = draw(
        st.lists(
            st.one_of(
                st.binary(max_size=300),
                st.tuples(st.binary(min_size=1, max_size=12), st.integers(1, 20000)).map(
                    lambda t: t[0] * t[1]
                ),
            ),
            max_size=30,
        )
    )
    return b"".join(pieces)


@TWINS
@settings(max_examples=150, deadline=None)
@given(raw=payloads())
def test_snappy_blocks_decompress_alone(name: str, raw: bytes) -> None:
    twin = load(name)
    stream = SNAPPY.compress(raw).to_pybytes()
    found = twin.snappy_blocks(stream)
    assert found is not None  # pyarrow's (Google's) compressor keeps blocks independent
    assert found == _kernels_py.snappy_blocks(stream)
    total, _ = found
    assert total == len(raw)
    offsets = offsets_of(found)
    assert len(offsets) == -(-len(raw) // BLOCK)
    for block, begin in enumerate(offsets):
        end = offsets[block + 1] if block + 1 < len(offsets) else len(stream)
        size = min((block + 1) * BLOCK, len(raw)) - block * BLOCK
        alone = SNAPPY.decompress(varint(size) + stream[begin:end], size).to_pybytes()
        assert alone == raw[block * BLOCK : block * BLOCK + size]


def literal(data: bytes) -> bytes:
    length = len(data) - 1
    if length < 60:
        return bytes([length << 2]) + data
    size = (length.bit_length() + 7) // 8
    return bytes([(59 + size) << 2]) + length.to_bytes(size, "little") + data


def copy2(offset: int, length: int) -> bytes:
    return bytes([(length - 1) << 2 | 2]) + offset.to_bytes(2, "little")


@TWINS
def test_streams_whose_blocks_do_not_stand_alone_are_not_mapped(name: str) -> None:
    twin = load(name)
    head = literal(b"a" * BLOCK)  # exactly the first block
    # a copy in the second block reaching back into the first: valid Snappy, not mappable
    back = varint(BLOCK + 10) + head + copy2(20, 10)
    assert SNAPPY.decompress(back, BLOCK + 10).to_pybytes() == b"a" * (BLOCK + 10)
    assert twin.snappy_blocks(back) is None
    # a literal across the first block's end
    across = varint(BLOCK + 10) + literal(b"b" * (BLOCK + 10))
    assert twin.snappy_blocks(across) is None
    # a copy inside its own block is fine; so is a copy overlapping its output
    inside = varint(BLOCK + 30) + head + literal(b"xy") + copy2(2, 28)
    assert SNAPPY.decompress(inside, BLOCK + 30).to_pybytes() == b"a" * BLOCK + b"xy" * 15
    preamble = len(varint(BLOCK + 30))
    assert offsets_of(twin.snappy_blocks(inside)) == [preamble, preamble + len(head)]
    # damage: a stated size that differs, a copy of offset 0, truncation, no preamble end
    assert twin.snappy_blocks(varint(BLOCK + 31) + head + literal(b"xy") + copy2(2, 28)) is None
    assert twin.snappy_blocks(varint(12) + literal(b"ab") + copy2(0, 10)) is None
    assert twin.snappy_blocks(inside[:-1]) is None
    assert twin.snappy_blocks(b"\xff\xff") is None
    assert twin.snappy_blocks(varint(0)) == (0, b"")


@TWINS
@settings(max_examples=150, deadline=None)
@given(raw=payloads())
def test_snappy_inflate_decompresses_whole_streams(name: str, raw: bytes) -> None:
    """Small streams (decoded holding the GIL) and streams of several blocks (released)."""
    stream = SNAPPY.compress(raw).to_pybytes()
    assert bytes(load(name).snappy_inflate(stream, len(raw))) == raw


@TWINS
def test_a_stream_of_one_literal_inflates_to_a_view_of_it(name: str) -> None:
    """An incompressible input (a page of bit-packed indices) compresses to one literal:
    its output is that literal's bytes, handed back without a copy."""
    raw = random.Random(7).randbytes(14_000)
    stream = SNAPPY.compress(raw).to_pybytes()
    inflated = load(name).snappy_inflate(stream, len(raw))
    assert bytes(inflated) == raw
    assert inflated.obj is stream  # a view of the stream itself
    held = memoryview(bytearray(stream))[0:]  # a caller's view of its read buffer
    assert bytes(load(name).snappy_inflate(held, len(raw))) == raw
    compressible = b"abcd" * 5000
    stream = SNAPPY.compress(compressible).to_pybytes()
    assert bytes(load(name).snappy_inflate(stream, len(compressible))) == compressible


@TWINS
def test_snappy_inflate_refuses_damage(name: str) -> None:
    twin = load(name)
    head = literal(b"a" * BLOCK)
    back = varint(BLOCK + 10) + head + copy2(20, 10)  # across blocks: valid for a whole read
    assert bytes(twin.snappy_inflate(back, BLOCK + 10)) == b"a" * (BLOCK + 10)
    assert bytes(twin.snappy_inflate(varint(0), 0)) == b""
    for stream, size in [
        (back, BLOCK + 11),  # another stated size
        (varint(BLOCK + 11) + head + copy2(20, 10), BLOCK + 11),  # the stream ends first
        (back + b"\x00", BLOCK + 10),  # input left over
        (varint(12) + literal(b"ab") + copy2(0, 10), 12),  # a copy of offset 0
        (varint(12) + literal(b"ab") + copy2(3, 10), 12),  # a copy before the start
        (varint(3) + literal(b"abcd"), 3),  # a literal past the stated size
        (varint(5) + literal(b"abcd"), 5),  # one literal short of the stated size
        (varint(4) + literal(b"abcd") + b"\x00", 4),  # one literal, input left over
        (b"\xff\xff", 1),  # a preamble that never ends
        (varint(1 << 34) + copy2(1, 64), 1 << 34),  # a size no stream of its length makes
        (b"", 0),
    ]:
        with pytest.raises(ValueError, match="Snappy stream"):
            twin.snappy_inflate(stream, size)


def plain(values: list[bytes]) -> bytes:
    return b"".join(len(v).to_bytes(4, "little") + v for v in values)


@TWINS
@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.one_of(st.integers(0, 40), st.integers(0, 70000)), max_size=60),
    at=st.integers(0, 70000),
)
def test_block_value_starts_name_each_blocks_first_value(
    name: str, sizes: list[int], at: int
) -> None:
    twin = load(name)
    values = plain([b"v" * size for size in sizes])
    starts, position = [], at
    for size in sizes:
        starts.append(position)
        position += 4 + size
    blocks = -(-position // BLOCK) if position else 0
    pairs = struct.unpack(f"<{2 * blocks}q", twin.block_value_starts(values, at, blocks))
    for block in range(blocks):
        boundary = max(block * BLOCK, at)
        index = next((i for i, start in enumerate(starts) if start >= boundary), len(sizes))
        expected = starts[index] if index < len(sizes) else position
        assert pairs[2 * block : 2 * block + 2] == (index, expected)
    if values:
        with pytest.raises(ValueError):
            twin.block_value_starts(values[:-1], at, blocks)  # the last value runs past
    with pytest.raises(ValueError):
        twin.block_value_starts(values + b"\x00", at, blocks)  # bytes after the last value


def mapped(twin: Any, body: bytes) -> tuple[bytes, int, tuple[array[int], ...]]:
    """``body`` Snappy-compressed (pyarrow's compressor) and its map as ``mapped_cut``
    takes it: the stream, its size, and the blocks' offsets, first values, first offsets."""
    stream = SNAPPY.compress(body).to_pybytes()
    found = twin.snappy_blocks(stream)
    assert found is not None
    total, offsets = found
    blocks = len(offsets) // 8
    pairs = struct.unpack(f"<{2 * blocks}q", twin.block_value_starts(body, 0, blocks))
    arrays = (
        array("q", struct.unpack(f"<{blocks}q", offsets)),
        array("q", pairs[0::2]),
        array("q", pairs[1::2]),
    )
    return stream, total, arrays


@TWINS
@settings(max_examples=120, deadline=None)
@given(
    sizes=st.lists(st.one_of(st.integers(0, 60), st.integers(0, 90000)), min_size=1, max_size=80),
    data=st.data(),
)
def test_mapped_cut_takes_the_wanted_values(name: str, sizes: list[int], data: Any) -> None:
    twin = load(name)
    values = [bytes([65 + i % 26]) * size for i, size in enumerate(sizes)]
    body = plain(values)
    stream, total, arrays = mapped(twin, body)
    blocks, offsets = len(arrays[0]), arrays[0].tobytes()
    rows = array("q", sorted(data.draw(st.sets(st.integers(0, len(sizes) - 1), min_size=1))))
    cut = twin.mapped_cut(stream, *arrays, total, b"", rows, len(sizes), False)
    assert cut == _kernels_py.mapped_cut(stream, *arrays, total, b"", rows, len(sizes), False)
    homes = {max(i for i in range(blocks) if arrays[1][i] <= row) for row in rows}
    if 2 * len(homes) > blocks:
        assert cut is None
        return
    assert cut is not None
    assert cut == (b"", plain([values[row] for row in rows]), 0)
    # damage: the stream cut short before a wanted value, a row past the page
    last = max(rows)
    end = sum(4 + size for size in sizes[: last + 1])
    if end > 0 and end < len(body):
        shortened = SNAPPY.compress(body[: end - 1]).to_pybytes()
        short_blocks = twin.snappy_blocks(shortened)
        if short_blocks is not None and short_blocks[1] == offsets[: len(short_blocks[1])]:
            with pytest.raises(ValueError):
                twin.mapped_cut(shortened, *arrays, total, b"", rows, len(sizes), False)
    with pytest.raises(ValueError):
        twin.mapped_cut(stream, *arrays, total, b"", array("q", [len(sizes)]), len(sizes), False)


@TWINS
@pytest.mark.parametrize("seed", range(4))
def test_mapped_cut_copies_repeated_patterns_of_every_period(name: str, seed: int) -> None:
    """Copies shorter, equal to and longer than their distance (periods 1 to 40, the
    compiled twin's 8-byte moves), short literals up to the stream's last byte."""
    twin = load(name)
    rng = random.Random(seed)
    values = []
    for _ in range(400):
        period = rng.randint(1, 40)
        pattern = rng.randbytes(period)
        values.append(pattern * rng.randint(1, 3000 // period) + rng.randbytes(rng.randint(0, 20)))
    stream, total, arrays = mapped(twin, plain(values))
    assert len(arrays[0]) > 4
    for row in range(len(values)):
        cut = twin.mapped_cut(stream, *arrays, total, b"", array("q", [row]), len(values), False)
        assert cut == (b"", plain([values[row]]), 0), row


def long_strings(rng: random.Random, rows: int, nulls: bool) -> pa.Table:
    def cell(row: int) -> str | None:
        if nulls and rng.random() < 0.2:
            return None
        roll = rng.random()
        if roll < 0.01:
            return "L" * rng.randint(60000, 140000)  # straddles one or two block ends
        if roll < 0.05:
            return ""
        return f"row {row} " + "é日" * rng.randint(0, 40) + str(rng.random())

    schema = pa.schema([pa.field("s", pa.string(), nullable=nulls)])
    return pa.table({"s": pa.array([cell(r) for r in range(rows)], pa.string())}, schema=schema)


def use_twin(monkeypatch: pytest.MonkeyPatch, name: str) -> list[bool]:
    """Read mapped pages with twin ``name``; the list records each mapped read (True:
    by its blocks, False: decompressed whole)."""
    twin = load(name)
    for kernel in ("block_value_starts", "snappy_blocks"):
        monkeypatch.setattr(blockmap, kernel, getattr(twin, kernel))
    monkeypatch.setattr(blockmap, "COMPILED", True)
    outcomes: list[bool] = []

    def counting(*args: Any) -> Any:
        found = twin.mapped_cut(*args)
        outcomes.append(found is not None)
        return found

    monkeypatch.setattr(slimpages, "mapped_cut", counting)
    monkeypatch.setattr(slimpages, "snappy_inflate", twin.snappy_inflate)
    return outcomes


@TWINS
@pytest.mark.parametrize(
    ("seed", "version", "nulls"),
    [(1, "1.0", True), (2, "2.0", True), (3, "1.0", False), (4, "2.0", False)],
)
def test_mapped_pages_read_like_whole_pages(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    seed: int,
    version: str,
    nulls: bool,
) -> None:
    rng = random.Random(seed)
    table = long_strings(rng, 6000, nulls)
    path = tmp_path / "f.parquet"
    pq.write_table(
        table, path, use_dictionary=False, compression="snappy", data_page_version=version,
        data_page_size=1 << 20, write_page_index=True, row_group_size=4000,
    )  # fmt: skip
    monkeypatch.setattr(parquetpages, "DENSE_SHARE", 1.0)
    by_map = use_twin(monkeypatch, name)
    whole = pq.read_table(path).column("s")
    clear_footer_cache()
    stat = path.stat()
    key = FileKey(str(path), stat.st_size, stat.st_mtime_ns)
    with pafs.LocalFileSystem().open_input_file(str(path)) as handle:
        footer = footer_of(handle, key)
        for attempt in range(12):
            rows = sorted(rng.sample(range(table.num_rows), rng.choice([1, 2, 5, 30])))
            if attempt == 0:
                rows = sorted(set(range(0, table.num_rows, 97)))  # map every page first
            served = parquetpages.page_rows(handle, footer_of(handle, key), ["s"], rows)
            assert served.arrays["s"].to_pylist() == whole.take(rows).to_pylist(), attempt
        # each page's first, second and last rows alone (value 0, the first block)
        groups = footer.group_starts
        for (group, _), located in list(footer.offsets.items()):
            pages = located.pages
            for number, (_, _, first) in enumerate(pages):
                end = pages[number + 1][2] if number + 1 < len(pages) else None
                end = end if end is not None else footer.group_rows[group]
                for row in {first, min(first + 1, end - 1), end - 1}:
                    at = [groups[group] + row]
                    served = parquetpages.page_rows(handle, footer, ["s"], at)
                    assert served.arrays["s"].to_pylist() == whole.take(at).to_pylist(), at
    maps = [m for m in footer.page_maps.values() if m is not None]
    assert any(len(m.offsets) >= 3 for m in maps)  # large pages, mapped
    assert any(by_map)  # later reads took the hits from their blocks


@TWINS
def test_pages_whose_hits_fill_most_blocks_are_decompressed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    table = pa.table({"s": [f"value {i} " + "x" * 100 for i in range(4000)]})
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, use_dictionary=False, compression="snappy",
                   data_page_size=1 << 20, write_page_index=True)  # fmt: skip
    monkeypatch.setattr(parquetpages, "DENSE_SHARE", 1.0)
    monkeypatch.setattr(parquetpages, "SLIM_SHARE", 1)
    outcomes = use_twin(monkeypatch, name)
    clear_footer_cache()
    stat = path.stat()
    key = FileKey(str(path), stat.st_size, stat.st_mtime_ns)
    with pafs.LocalFileSystem().open_input_file(str(path)) as handle:
        for rows in ([5], list(range(0, 4000, 200)), [3999]):
            served = parquetpages.page_rows(handle, footer_of(handle, key), ["s"], rows)
            assert served.arrays["s"].to_pylist() == table.column("s").take(rows).to_pylist()
    assert outcomes == [False, True]  # spread hits: whole page; a lone hit: by its block


def test_a_footer_not_kept_maps_nothing(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"s": ["a" * 200] * 2000}), path, compression="snappy",
                   use_dictionary=False, write_page_index=True)  # fmt: skip
    with pafs.LocalFileSystem().open_input_file(str(path)) as handle:
        footer = footer_of(handle, FileKey(str(path), path.stat().st_size, None))
        served = parquetpages.page_rows(handle, footer, ["s"], [3])
    assert served.arrays["s"].to_pylist() == ["a" * 200]
    assert footer.page_maps is None


@TWINS
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_a_mapped_dictionary_serves_pages_of_indices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, version: str
) -> None:
    rng = random.Random(11)
    words = [f"entry {i:05d} " + "é" * rng.randint(0, 90) for i in range(8000)]
    # the first rows name every word in order (word i gets dictionary index i), then
    # random words; rows 20001-20003 name entries out of the dictionary's order
    cells: list[str | None] = list(words)
    cells += [None if rng.random() < 0.1 else rng.choice(words) for _ in range(22000)]
    cells[20001:20004] = [words[7000], words[100], words[5000]]
    table = pa.table({"s": pa.array(cells, pa.string())})
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, compression="snappy", data_page_version=version,
                   data_page_size=16 * 1024, write_page_index=True)  # fmt: skip
    monkeypatch.setattr(parquetpages, "DENSE_SHARE", 1.0)
    outcomes = use_twin(monkeypatch, name)
    whole = table.column("s")
    clear_footer_cache()
    stat = path.stat()
    key = FileKey(str(path), stat.st_size, stat.st_mtime_ns)
    with pafs.LocalFileSystem().open_input_file(str(path)) as handle:
        footer = footer_of(handle, key)
        for rows in (
            [5],
            [17, 29000],
            [20001, 20002, 20003, 20005, 20008],
            list(range(0, 30000, 150)),
            [12345],
        ):
            served = parquetpages.page_rows(handle, footer, ["s"], rows)
            assert served.arrays["s"].to_pylist() == whole.take(rows).to_pylist(), rows
    # the dictionary (~830 KB: 13 blocks) was mapped on the first read; later reads
    # took few entries from their blocks, the spread read fell back to the whole page
    assert any(m is not None and len(m.offsets) >= 3 for m in footer.page_maps.values())
    assert True in outcomes, outcomes
    assert False in outcomes, outcomes


def test_a_page_of_one_block_is_not_mapped(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    table = pa.table({"s": [f"short {i}" for i in range(3000)]})  # ~30 KB: one block
    pq.write_table(table, path, compression="snappy", use_dictionary=False,
                   write_page_index=True)  # fmt: skip
    clear_footer_cache()
    stat = path.stat()
    key = FileKey(str(path), stat.st_size, stat.st_mtime_ns)
    with pafs.LocalFileSystem().open_input_file(str(path)) as handle:
        footer = footer_of(handle, key)
        for rows in ([4], [2999]):
            served = parquetpages.page_rows(handle, footer, ["s"], rows)
            assert served.arrays["s"].to_pylist() == table.column("s").take(rows).to_pylist()
    assert footer.page_maps
    assert all(m is None for m in footer.page_maps.values())
