"""Parquet page headers read by the kernel (``_kernels.page_header``) and its pure twin.

Every page of files pyarrow writes (data pages v1 and v2, dictionary pages, every
codec the cut reads, statistics on and off, page CRCs on and off) is read by both
twins and by the footer's Thrift parser (:mod:`.thriftcompact`): the same fields and
header length. Damaged headers (truncated, bytes changed) raise ValueError in both
twins alike, or give the same fields. The cut page's header written directly equals
``encode_struct`` of the same struct.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indextables.search.companion import _kernels_py, slimpages
from indextables.search.companion.thriftcompact import (
    BOOL_TRUE,
    I32,
    STRUCT,
    TStruct,
    decode_struct,
    encode_struct,
)

CODECS = ["none", "snappy", "gzip", "brotli", "zstd", "lz4"]


def kernel() -> Any:
    from indextables.search.companion import _kernels  # type: ignore[attr-defined]

    return _kernels


def pages_of(data: bytes) -> list[bytes]:
    """The bytes from each page's start to the end of its column chunk."""
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    found = []
    for group in range(meta.num_row_groups):
        for column in range(meta.num_columns):
            chunk = meta.row_group(group).column(column)
            position = chunk.dictionary_page_offset or chunk.data_page_offset
            if chunk.dictionary_page_offset is not None:
                position = min(position, chunk.data_page_offset)
            end = position + chunk.total_compressed_size
            while position < end:
                header, used = decode_struct(data[position:end])
                found.append(data[position:end])
                position += used + header.get(3)
    return found


def by_thrift(page: bytes) -> tuple[Any, ...]:
    """The fields ``page_header`` returns, read through the footer's Thrift parser."""
    header, used = decode_struct(page)
    kind = header.get(1)
    sizes = (header.get(2), header.get(3))
    if kind == 0:
        info = header.get(5)
        return used, kind, *sizes, info.get(1), info.get(2), info.get(3), None, None, True
    if kind == 2:
        info = header.get(7)
        return used, kind, *sizes, info.get(1), info.get(2), None, None, None, True
    info = header.get(8)
    return (
        used, kind, *sizes, info.get(1), info.get(4), None, info.get(5), info.get(6),
        info.get(7, True),
    )  # fmt: skip


@st.composite
def written(draw: st.DrawFn) -> bytes:
    rows = draw(st.integers(1, 400))
    strings = draw(st.lists(st.text(max_size=6) | st.none(), min_size=1, max_size=20))
    table = pa.table(
        {
            "s": pa.array([strings[i % len(strings)] for i in range(rows)], pa.string()),
            "i": pa.array([None if i % 5 == 0 else i * 7919 for i in range(rows)], pa.int64()),
            "f": pa.array([float(i) / 3 for i in range(rows)], pa.float64()),
            "b": pa.array([i % 3 == 0 for i in range(rows)], pa.bool_()),
        }
    )
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        compression=draw(st.sampled_from(CODECS)),
        data_page_version=draw(st.sampled_from(["1.0", "2.0"])),
        use_dictionary=draw(st.booleans()),
        write_statistics=draw(st.booleans()),
        write_page_checksum=draw(st.booleans()),
        data_page_size=draw(st.sampled_from([64, 512, 1 << 20])),
        row_group_size=draw(st.sampled_from([50, 1000])),
    )
    return sink.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=written())
def test_both_twins_read_every_page_header_as_thrift_does(data: bytes) -> None:
    pages = pages_of(data)
    assert pages
    for page in pages:
        expected = by_thrift(page)
        assert _kernels_py.page_header(page) == expected
        assert kernel().page_header(page) == expected
        assert kernel().page_header(memoryview(page)) == expected


def outcome(module: Any, data: bytes) -> Any:
    try:
        return module.page_header(data)
    except ValueError as exc:
        return ("ValueError", str(exc))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=written(),
    cut=st.integers(0, 200),
    flips=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 255)), max_size=4),
)
def test_damaged_headers_behave_alike_in_both_twins(
    data: bytes, cut: int, flips: list[tuple[int, int]]
) -> None:
    page = bytearray(pages_of(data)[0])
    for position, value in flips:
        if position < len(page):
            page[position] = value
    for damaged in (bytes(page), bytes(page[: min(cut, len(page))])):
        assert outcome(kernel(), damaged) == outcome(_kernels_py, damaged)


@pytest.mark.parametrize(
    "damaged",
    [
        b"",
        b"\x00",  # no type
        b"\x15\x00\x00",  # a data page without its data page header
        b"\x15\x00\x15\x02\x15\x02\x55\x00",  # its header field is an i32, not a struct
        b"\x15\x00\x15\x02\x15\x02\x2c\x15",  # truncated inside the data page header
        b"\x15\x80\x80\x80\x80\x10\x00",  # type over the i32 range
        b"\x1d\x00",  # an unknown compact type
        b"\x19\xf5\xff\xff\xff\xff\x0f",  # a list header claiming too many elements
        b"\x15\x00" + b"\x1c" * 70,  # structs nested past the limit
    ],
)
def test_known_damage_raises_value_error_in_both_twins(damaged: bytes) -> None:
    for module in (kernel(), _kernels_py):
        with pytest.raises(ValueError, match="page header is damaged"):
            module.page_header(damaged)


def test_unknown_fields_and_page_types_are_passed_over() -> None:
    header = TStruct(
        {
            1: (I32, 1),  # INDEX_PAGE: no header this module reads
            2: (I32, 7),
            3: (I32, 5),
            4: (I32, -3),  # crc
            15: (STRUCT, TStruct({1: (BOOL_TRUE, True)})),
        }
    )
    data = encode_struct(header) + b"tail"
    for module in (kernel(), _kernels_py):
        assert module.page_header(data) == (
            len(data) - 4,
            1,
            7,
            5,
            None,
            None,
            None,
            None,
            None,
            True,
        )


@pytest.mark.parametrize(
    ("count", "nulls", "levels"), [(0, 0, 0), (1, 0, 2), (3000, 2999, 376), (2**31 - 1, 5, 2**20)]
)
def test_the_cut_page_header_is_the_thrift_encoding(count: int, nulls: int, levels: int) -> None:
    level_bytes, body = b"\x01" * levels, b"xyz"
    info = TStruct(
        {
            1: (I32, count), 2: (I32, nulls), 3: (I32, count), 4: (I32, 0),
            5: (I32, levels), 6: (I32, 0), 7: (BOOL_TRUE, False),
        }
    )  # fmt: skip
    size = levels + 3
    header = TStruct({1: (I32, 3), 2: (I32, size), 3: (I32, size), 8: (STRUCT, info)})
    assert slimpages._encode(count, nulls, level_bytes, body) == (
        encode_struct(header) + level_bytes + body
    )
