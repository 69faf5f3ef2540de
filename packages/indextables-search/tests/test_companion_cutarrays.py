"""Cut pages laid out as Arrow arrays (``companion.cutarrays``, ``arrow_parts``).

Both kernel twins against arrays pyarrow builds from the same Python values, on
random pages (nulls, empty values, fixed and variable width, large offsets), and
damage both must refuse alike. Which columns qualify is checked on footers pyarrow
writes for every flat type: only those whose Arrow layout is their PLAIN bytes.
"""

from __future__ import annotations

import datetime
import decimal
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from companiontwins import TWINS, load

from indextables.search.companion import cutarrays, parquetpages
from indextables.search.companion.parquetpages import FileKey, footer_of, page_rows
from indextables.search.companion.slimpages import PageCodec

WIDTHS = {pa.int32(): 4, pa.int64(): 8, pa.float32(): 4, pa.float64(): 8, pa.date32(): 4}


def _level_run(present: list[bool]) -> bytes:
    """Definition levels as RLE runs (the cut kernels write one bit-packed run: this
    checks the hybrid is read, not one writer's output)."""
    out = bytearray()
    index = 0
    while index < len(present):
        stop = index
        while stop < len(present) and present[stop] == present[index]:
            stop += 1
        header = (stop - index) << 1
        while header > 0x7F:
            out.append(header & 0x7F | 0x80)
            header >>= 7
        out.append(header)
        out.append(1 if present[index] else 0)
        index = stop
    return bytes(out)


def _page(rng: random.Random, arrow_type: pa.DataType, optional: bool) -> tuple[Any, list[Any]]:
    rows = rng.choice([0, 1, 7, 64, 300])
    values: list[Any] = []
    for _ in range(rows):
        if optional and rng.random() < 0.3:
            values.append(None)
        elif arrow_type in WIDTHS:
            values.append(rng.randbytes(WIDTHS[arrow_type]))
        else:
            values.append(rng.randbytes(rng.choice([0, 1, 5, 300])))
    present = [value is not None for value in values]
    if arrow_type in WIDTHS:
        body = b"".join(value for value in values if value is not None)
    else:
        body = b"".join(len(v).to_bytes(4, "little") + v for v in values if v is not None)
    levels = _level_run(present) if optional else b""
    return (rows, present.count(False), levels, body), values


@TWINS
@pytest.mark.parametrize(
    "arrow_type",
    [pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.date32(), pa.string(),
     pa.large_string(), pa.binary(), pa.large_binary()],
)  # fmt: skip
def test_arrow_parts_lay_pages_end_to_end(name: str, arrow_type: pa.DataType) -> None:
    twin = load(name)
    rng = random.Random(str(arrow_type))
    for trial in range(25):
        optional = trial % 3 != 0
        made = [_page(rng, arrow_type, optional) for _ in range(rng.randint(1, 4))]
        pages = [page for page, _ in made]
        values = [value for _, page_values in made for value in page_values]
        width = WIDTHS.get(arrow_type, 0)
        large = arrow_type in (pa.large_string(), pa.large_binary())
        validity, laid, data, nulls = twin.arrow_parts(pages, optional, width, large)
        assert nulls == values.count(None)
        assert (validity is None) == (nulls == 0)
        buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(laid)]
        if data is not None:
            buffers.append(pa.py_buffer(data))
        found = pa.Array.from_buffers(arrow_type, len(values), buffers, null_count=nulls)
        found.validate(full=arrow_type not in (pa.string(), pa.large_string()))
        assert found.is_valid().to_pylist() == [value is not None for value in values]
        if width:  # the stored bits (NaN payloads too); a null's slot zeroed
            assert laid == b"".join(value or bytes(width) for value in values), trial
        else:  # random bytes: compared as binary (no UTF-8 check, as pyarrow's reader)
            storage = pa.large_binary() if large else pa.binary()
            assert found.view(storage).to_pylist() == values, trial


@TWINS
@pytest.mark.parametrize(
    ("pages", "optional", "width"),
    [
        ([(2, 0, b"", b"\x01\x00\x00\x00a")], False, 0),  # one value short
        ([(1, 0, b"", b"\x01\x00\x00\x00ab")], False, 0),  # a byte left over
        ([(1, 0, b"", b"\x05\x00\x00\x00ab")], False, 0),  # a length past the page
        ([(1, 0, b"", b"abc")], False, 4),  # a fixed value short
        ([(2, 1, b"\x04\x01", b"abcdabcd")], True, 4),  # levels say 2 present, nulls 1
        ([(3, 0, b"\x04\x01", b"abcdabcd")], True, 4),  # levels cover 2 of 3 rows
        ([(1, 2, b"", b"")], False, 4),  # more nulls than rows
        ([(-1, 0, b"", b"")], False, 4),  # rows below zero
    ],
)
def test_arrow_parts_refuses_damage_alike(
    name: str, pages: list[Any], optional: bool, width: int
) -> None:
    with pytest.raises(ValueError):
        load(name).arrow_parts(pages, optional, width, False)


def test_only_types_stored_as_their_plain_bytes_are_laid_out(tmp_path: Path) -> None:
    rows = 4
    table = pa.table(
        {
            "i8": pa.array([1] * rows, pa.int8()),
            "u32": pa.array([1] * rows, pa.uint32()),
            "u64": pa.array([1] * rows, pa.uint64()),
            "i32": pa.array([1] * rows, pa.int32()),
            "i64": pa.array([1] * rows, pa.int64()),
            "f32": pa.array([1.0] * rows, pa.float32()),
            "f64": pa.array([1.0] * rows, pa.float64()),
            "f16": pa.array([1.0] * rows, pa.float64()).cast(pa.float16()),
            "d": pa.array([datetime.date(2024, 1, 1)] * rows),
            "ts": pa.array([1] * rows, pa.timestamp("us")),
            "t32": pa.array([1] * rows, pa.time32("ms")),
            "dec": pa.array([decimal.Decimal("1.5")] * rows, pa.decimal128(9, 1)),
            "s": pa.array(["a"] * rows),
            "ls": pa.array(["a"] * rows, pa.large_string()),
            "b": pa.array([b"a"] * rows),
            "lb": pa.array([b"a"] * rows, pa.large_binary()),
            "fixed": pa.array([b"ab"] * rows, pa.binary(2)),
            "cat": pa.array(["a"] * rows).dictionary_encode(),
            "sv": pa.array(["a"] * rows, pa.string_view()),
            "bv": pa.array([b"a"] * rows, pa.binary_view()),
            "dur": pa.array([1] * rows, pa.duration("s")),
        }
    )
    path = tmp_path / "f.parquet"
    pq.write_table(table, path)
    with pa.OSFile(str(path)) as handle:
        footer = footer_of(handle, FileKey(str(path), path.stat().st_size, None))
    chunks = footer.meta.get(4).items[0].get(1).items
    raw = set()
    for column, (leaf, element) in footer.leaves.items():
        codec = PageCodec.of(chunks[leaf].get(3), element)
        if codec is not None and cutarrays.laid_out_raw(footer.schema.field(column).type,
                                                        element, codec):  # fmt: skip
            raw.add(column)
    # dictionaries and views are served in their plain layouts: strings and binaries
    assert raw == {"i32", "i64", "f32", "f64", "d", "s", "ls", "b", "lb", "cat", "sv", "bv"}


def test_strings_come_back_as_stored_like_pyarrows_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow's Parquet reader does not check UTF-8; neither does the laid-out path."""
    rng = random.Random(7)
    stored = [rng.choice([b"ok", b"\xff\xfe", b"", b"\xc3", "é".encode()]) for _ in range(5000)]
    binary = pa.array(stored, pa.binary())
    strings = pa.Array.from_buffers(pa.string(), len(stored), binary.buffers())
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"s": strings}), path, data_page_size=1024, use_dictionary=False,
                   write_page_index=True)  # fmt: skip
    rows = sorted(rng.sample(range(len(stored)), 20))
    laid: list[pa.DataType] = []
    real = cutarrays.cut_array

    def recording(pages: Any, arrow_type: pa.DataType, codec: Any) -> pa.Array | None:
        laid.append(arrow_type)
        return real(pages, arrow_type, codec)

    monkeypatch.setattr(parquetpages, "cut_array", recording)
    with pa.OSFile(str(path)) as handle:
        footer = footer_of(handle, FileKey(str(path), path.stat().st_size, None))
        served = page_rows(handle, footer, ["s"], rows)
    assert laid == [pa.string()]
    whole = pq.read_table(path).column("s").combine_chunks()
    expected = whole.take(pa.array(rows)).view(pa.binary()).to_pylist()
    assert served.arrays["s"].view(pa.binary()).to_pylist() == expected == [stored[r] for r in rows]
