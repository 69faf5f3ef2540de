"""The compact-protocol reader on real Parquet footers: pyarrow (dictionary on/off, page
index on/off, data pages v1/v2, codecs, nested columns, several row groups), DuckDB and
deltalake files. Each footer must decode to what ``pyarrow.parquet.ParquetFile.metadata``
says (rows, row groups, every column chunk's byte ranges, types, codecs, encodings),
point at real page headers and offset indexes, and encode back to the same bytes.
"""

from __future__ import annotations

import io
import math
import struct
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from indextables.search.companion.thriftcompact import TList, TStruct, decode_struct, encode_struct

PHYSICAL = [
    "BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY",
]  # fmt: skip
CODECS = {0: "UNCOMPRESSED", 1: "SNAPPY", 2: "GZIP", 3: "LZO", 4: "BROTLI", 6: "ZSTD"}
ENCODINGS = {
    0: "PLAIN", 2: "PLAIN_DICTIONARY", 3: "RLE", 4: "BIT_PACKED", 5: "DELTA_BINARY_PACKED",
    6: "DELTA_LENGTH_BYTE_ARRAY", 7: "DELTA_BYTE_ARRAY", 8: "RLE_DICTIONARY",
    9: "BYTE_STREAM_SPLIT",
}  # fmt: skip
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3


def _hostile(rows: int) -> pa.Table:
    floats = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e308, 5e-324, None]
    strings = ["", "a", "日本語", "🙂", None, "x" * 300, "zürich"]
    return pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "small": pa.array([i % 7 if i % 11 else None for i in range(rows)], pa.int32()),
            "score": pa.array([floats[i % len(floats)] for i in range(rows)], pa.float64()),
            "flag": pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(rows)]),
            "text": pa.array([strings[i % len(strings)] for i in range(rows)], pa.string()),
            "point": pa.array(
                [None if i % 9 == 0 else {"x": i, "label": strings[i % 3]} for i in range(rows)],
                pa.struct([("x", pa.int64()), ("label", pa.string())]),
            ),
            "tags": pa.array(
                [
                    None if i % 4 == 0 else [strings[j % len(strings)] for j in range(i % 4)]
                    for i in range(rows)
                ],
                pa.list_(pa.string()),
            ),
            "attrs": pa.array(
                [[("k", i)] if i % 3 else [] for i in range(rows)], pa.map_(pa.string(), pa.int64())
            ),
            "day": pa.array([i % 1000 for i in range(rows)], pa.date32()),
            "amount": pa.array([i * 7 - 10_000 for i in range(rows)], pa.decimal128(18, 3)),
        }
    )


PYARROW_VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "no-dictionary page-index v2 zstd": {
        "use_dictionary": False,
        "write_page_index": True,
        "data_page_version": "2.0",
        "compression": "zstd",
    },
    "dictionary page-index v1 small-pages gzip": {
        "write_page_index": True,
        "data_page_size": 512,
        "row_group_size": 700,
        "compression": "gzip",
    },
    "dictionary v2 brotli no-statistics": {
        "data_page_version": "2.0",
        "compression": "brotli",
        "write_statistics": False,
        "row_group_size": 999,
    },
    "plain uncompressed delta and byte-stream-split encodings": {
        "use_dictionary": False,
        "compression": "none",
        "write_page_index": True,
        "column_encoding": {
            "id": "DELTA_BINARY_PACKED",
            "score": "BYTE_STREAM_SPLIT",
            "text": "DELTA_LENGTH_BYTE_ARRAY",
        },
    },
    "dictionary on strings only, snappy, lz4 elsewhere": {
        "use_dictionary": ["text"],
        "compression": {"text": "snappy", "id": "lz4"},
        "write_page_index": True,
        "data_page_size": 256,
    },
}


def _footer(data: bytes) -> bytes:
    assert data[-4:] == b"PAR1"
    (length,) = struct.unpack("<i", data[-8:-4])
    return data[-8 - length : -8]


def _codec(code: int) -> str:
    # Arrow calls LZ4_RAW (7) "LZ4" and the Hadoop-framed LZ4 (5) "LZ4_HADOOP".
    return {**CODECS, 5: "LZ4_HADOOP", 7: "LZ4"}[code]


def _check_file(data: bytes) -> int:
    """Compare the decoded footer of the Parquet bytes ``data`` with pyarrow's reading;
    the number of column chunks checked."""
    footer = _footer(data)
    decoded, used = decode_struct(footer)
    assert used == len(footer)
    assert encode_struct(decoded) == footer  # lossless: unknown fields kept as they were
    metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    assert decoded.get(3) == metadata.num_rows
    assert decoded.get(1) in (1, 2)  # the footer format version
    groups: TList = decoded.get(4)
    assert len(groups.items) == metadata.num_row_groups
    leaves = [e for e in decoded.get(2).items if e.get(5) is None]  # no num_children: a leaf
    assert len(leaves) == metadata.num_columns
    checked = 0
    for number, group in enumerate(groups.items):
        expected = metadata.row_group(number)
        assert group.get(3) == expected.num_rows
        assert group.get(2) == expected.total_byte_size
        chunks: TList = group.get(1)
        assert len(chunks.items) == expected.num_columns
        for ordinal, chunk in enumerate(chunks.items):
            _check_chunk(data, chunk, expected.column(ordinal), expected.num_rows)
            assert PHYSICAL[leaves[ordinal].get(1)] == expected.column(ordinal).physical_type
            checked += 1
    return checked


def _check_chunk(data: bytes, chunk: TStruct, expected: Any, group_rows: int) -> None:
    meta: TStruct = chunk.get(3)
    assert PHYSICAL[meta.get(1)] == expected.physical_type
    assert ".".join(x.decode() for x in meta.get(3).items) == expected.path_in_schema
    assert _codec(meta.get(4)) == expected.compression
    assert sorted({ENCODINGS[e] for e in meta.get(2).items}) == sorted(set(expected.encodings))
    assert meta.get(5) == expected.num_values
    assert meta.get(6) == expected.total_uncompressed_size
    assert meta.get(7) == expected.total_compressed_size
    assert meta.get(9) == expected.data_page_offset
    dictionary = meta.get(11)
    if expected.has_dictionary_page:
        assert dictionary == expected.dictionary_page_offset
    else:
        assert dictionary is None or dictionary == 0
    # The chunk's byte range starts with its first page's header.
    start = dictionary if dictionary else meta.get(9)
    end = start + meta.get(7)
    assert 4 <= start < end <= len(data) - 8
    header, _ = decode_struct(memoryview(data)[start:end])
    first_kind = DICTIONARY_PAGE if dictionary else header.get(1)
    assert header.get(1) == first_kind
    assert header.get(1) in (DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2)
    # The offset index (Parquet's page index) names pages inside the chunk's range.
    assert (chunk.get(4) is not None) == expected.has_offset_index
    if expected.has_offset_index:
        offset, length = chunk.get(4), chunk.get(5)
        index, used = decode_struct(data[offset : offset + length])
        assert used == length
        pages = index.get(1).items
        assert pages[0].get(1) == meta.get(9)
        assert pages[0].get(3) == 0
        firsts = [p.get(3) for p in pages]
        assert firsts == sorted(set(firsts))
        assert firsts[-1] < max(group_rows, 1)
        last = pages[-1]
        assert last.get(1) + last.get(2) == end
        for page in pages:
            page_header, _ = decode_struct(memoryview(data)[page.get(1) : end])
            assert page_header.get(1) in (DATA_PAGE, DATA_PAGE_V2)
            assert page.get(2) == _header_size(data, page.get(1), end) + page_header.get(3)


def _header_size(data: bytes, start: int, end: int) -> int:
    return decode_struct(memoryview(data)[start:end])[1]


@pytest.mark.parametrize("variant", sorted(PYARROW_VARIANTS))
def test_pyarrow_footers_decode_as_pyarrow_reads_them(variant: str) -> None:
    sink = io.BytesIO()
    pq.write_table(_hostile(2500), sink, **PYARROW_VARIANTS[variant])
    data = sink.getvalue()
    assert _check_file(data) >= 12  # 12 leaves per row group


def test_page_versions_are_what_was_asked() -> None:
    for version, kind in (("1.0", DATA_PAGE), ("2.0", DATA_PAGE_V2)):
        sink = io.BytesIO()
        pq.write_table(_hostile(100), sink, data_page_version=version, use_dictionary=False)
        data = sink.getvalue()
        decoded, _ = decode_struct(_footer(data))
        for chunk in decoded.get(4).items[0].get(1).items:
            header, _ = decode_struct(memoryview(data)[chunk.get(3).get(9) :])
            assert header.get(1) == kind


def test_duckdb_footers_decode_as_pyarrow_reads_them(tmp_path: Path) -> None:
    arrow = _hostile(3000).drop_columns(["attrs"])
    target = tmp_path / "duck.parquet"
    with duckdb.connect() as connection:
        connection.register("source", arrow)
        connection.execute(
            f"COPY (SELECT * FROM source) TO '{target}' (FORMAT PARQUET, ROW_GROUP_SIZE 1024)"
        )
    assert _check_file(target.read_bytes()) >= 2 * 10  # two row groups of 10 leaves


def test_deltalake_footers_decode_as_pyarrow_reads_them(tmp_path: Path) -> None:
    write_deltalake(str(tmp_path / "delta"), _hostile(2000).drop_columns(["attrs"]))
    files = sorted((tmp_path / "delta").glob("*.parquet"))
    assert files
    for file in files:
        assert _check_file(file.read_bytes()) >= 10
