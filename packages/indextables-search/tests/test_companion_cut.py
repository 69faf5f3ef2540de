"""The companion's page-cutting kernels (``companion._kernels`` and its pure twin).

Both twins run every test (a missing Cython build fails, never skips): the
RLE/bit-packed hybrid decoder against a plain reference encoder/decoder, and
whole page cuts against pyarrow's own decoding of the page's file.
"""

from __future__ import annotations

import math
import struct
from array import array
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from companiontwins import TWINS, load, varint
from hypothesis import example, given, settings
from hypothesis import strategies as st

from indextables.search.companion import cutarrays, parquetpages, slimpages
from indextables.search.companion.parquetpages import FileKey, clear_footer_cache, footer_of


def encode_hybrid(runs: list[tuple[bool, list[int]]], width: int) -> tuple[bytes, list[int]]:
    """Reference encoder: each run bit-packed (padded to groups of 8) or RLE (one
    value repeated); returns the bytes and the values a reader sees, in order."""
    out = bytearray()
    seen: list[int] = []
    for packed, values in runs:
        if packed:
            padded = values + [0] * (-len(values) % 8)
            bits = 0
            for number, value in enumerate(padded):
                bits |= value << (number * width)
            out += varint(len(padded) // 8 << 1 | 1)
            out += bits.to_bytes(len(padded) * width // 8, "little")
            seen += padded
        else:
            out += varint(len(values) << 1)
            out += values[0].to_bytes((width + 7) // 8, "little") if values else b""
            if not values and width:
                out += bytes((width + 7) // 8)
            seen += values
    return bytes(out), seen


@st.composite
def hybrids(draw: st.DrawFn) -> tuple[bytes, int, list[int], list[int]]:
    width = draw(st.integers(0, 32))
    value = st.integers(0, (1 << width) - 1)
    runs: list[tuple[bool, list[int]]] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            runs.append((True, draw(st.lists(value, min_size=1, max_size=40))))
        else:
            runs.append((False, [draw(value)] * draw(st.integers(1, 300))))
    data, seen = encode_hybrid(runs, width)
    wanted = sorted(draw(st.sets(st.integers(0, len(seen) - 1), max_size=30)))
    return data, width, seen, wanted


@TWINS
@settings(max_examples=300)
@given(case=hybrids())
@example(case=(b"\x03" + b"\xff" * 32, 32, [2**32 - 1] * 8, [0, 7]))
def test_hybrid_decoder_equals_a_reference(name: str, case: Any) -> None:
    twin = load(name)
    data, width, seen, wanted = case
    found = struct.unpack(f"<{len(wanted)}q", twin.hybrid_at(data, width, array("q", wanted)))
    assert list(found) == [seen[i] for i in wanted]


@TWINS
def test_hybrid_decoder_refuses_damage(name: str) -> None:
    twin = load(name)
    data, _ = encode_hybrid([(True, [1, 2, 3]), (False, [5] * 10)], 3)
    with pytest.raises(ValueError):  # past the last run
        twin.hybrid_at(data, 3, array("q", [18]))
    with pytest.raises(ValueError):  # a bit-packed run cut short
        twin.hybrid_at(data[:2], 3, array("q", [0]))
    with pytest.raises(ValueError):
        twin.hybrid_at(data, 33, array("q", [0]))
    with pytest.raises(ValueError):  # an endless varint
        twin.hybrid_at(b"\xff" * 12, 3, array("q", [0]))
    assert twin.hybrid_at(b"", 40, array("q", [])) == b""


@TWINS
def test_cut_page_refuses_bad_rows_and_indices(name: str) -> None:
    twin = load(name)
    values = b"".join(struct.pack("<i", v) for v in range(10))
    for rows in ([3, 3], [4, 2], [10], [-1]):
        with pytest.raises(ValueError):
            twin.cut_page(b"", values, array("q", rows), 10, optional=False,
                          dictionary_encoded=False, width=4)  # fmt: skip
    # an index (7) past a dictionary of 2 values
    indices = b"\x03" + encode_hybrid([(False, [7] * 10)], 3)[0]
    with pytest.raises(ValueError):
        twin.cut_page(b"", indices, array("q", [1]), 10, optional=False, dictionary_encoded=True,
                      width=4, dictionary=values[:8], dictionary_count=2)  # fmt: skip
    level, body, nulls = twin.cut_page(b"", values, array("q", [0, 9]), 10, optional=False,
                                       dictionary_encoded=False, width=4)  # fmt: skip
    assert (level, body, nulls) == (b"", values[:4] + values[36:], 0)


# -- whole pages, against pyarrow's decoding ---------------------------------------

TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float": (pa.float32(), st.floats(width=32)),
    "double": (pa.float64(), st.floats()),
    "string": (pa.string(), st.text(max_size=12)),
    "binary": (pa.binary(), st.binary(max_size=12)),
    "large_string": (pa.large_string(), st.text(max_size=12)),
    "date": (pa.date32(), st.dates()),
    "fixed": (pa.binary(3), st.binary(min_size=3, max_size=3)),
    "int96": (pa.timestamp("ns"), st.integers(-(2**62), 2**62)),
}


def _same(found: list[Any], expected: list[Any]) -> bool:
    def canon(v: Any) -> Any:
        return ("nan" if math.isnan(v) else v.hex()) if isinstance(v, float) else v

    return [canon(v) for v in found] == [canon(v) for v in expected]


@st.composite
def pages(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(TYPES)))
    arrow_type, values = TYPES[kind]
    optional = draw(st.booleans())
    count = draw(st.integers(1, 400))
    if optional:
        nulls = draw(st.sampled_from([0.0, 0.3, 0.9, 1.0]))
        cells = draw(st.lists(st.one_of(values, st.none()) if nulls else values,
                              min_size=count, max_size=count))  # fmt: skip
        if nulls == 1.0:
            cells = [None] * count
    else:
        few = draw(st.lists(values, min_size=1, max_size=5))
        cells = draw(st.lists(st.one_of(values, st.sampled_from(few)),
                              min_size=count, max_size=count))  # fmt: skip
    rows = sorted(draw(st.sets(st.integers(0, count - 1), min_size=1, max_size=12)))
    return {
        "kind": kind,
        "table": pa.table(
            {"c": pa.array(cells, arrow_type)},
            schema=pa.schema([pa.field("c", arrow_type, nullable=optional)]),
        ),
        "rows": rows,
        "dictionary": draw(st.booleans()),
        "version": draw(st.sampled_from(["1.0", "2.0"])),
        "codec": draw(st.sampled_from(["none", "snappy", "zstd", "gzip"])),
        "page": draw(st.sampled_from([64, 512, 1 << 20])),
    }


@TWINS
@settings(max_examples=120)
@given(case=pages())
def test_cut_pages_equal_pyarrows_decoding(
    name: str, case: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    twin = load(name)
    path = tmp_path_factory.mktemp("cut") / "f.parquet"
    table = case["table"]
    pq.write_table(
        table, path, use_dictionary=case["dictionary"], data_page_version=case["version"],
        compression=case["codec"], data_page_size=case["page"], write_page_index=True,
        use_deprecated_int96_timestamps=case["kind"] == "int96",
    )  # fmt: skip
    whole = pq.read_table(path).column("c")
    cut: list[bool] = []
    real = parquetpages.cut_parts

    def counting(*args: Any) -> bytes | None:
        found = real(*args)
        cut.append(found is not None)
        return found

    saved = (slimpages.cut_page, parquetpages.cut_parts, parquetpages.SLIM_SHARE,
             parquetpages.DENSE_SHARE, cutarrays.arrow_parts)  # fmt: skip
    slimpages.cut_page = twin.cut_page
    cutarrays.arrow_parts = twin.arrow_parts
    parquetpages.cut_parts = counting
    parquetpages.SLIM_SHARE = 1  # cut every page, whatever its share of hits
    parquetpages.DENSE_SHARE = 1.0  # and serve the column by pages however many hold hits
    try:
        clear_footer_cache()
        with pa.OSFile(str(path)) as handle:
            footer = footer_of(handle, FileKey(str(path), path.stat().st_size, None))
            served = parquetpages.page_rows(handle, footer, ["c"], case["rows"])
    finally:
        (slimpages.cut_page, parquetpages.cut_parts, parquetpages.SLIM_SHARE,
         parquetpages.DENSE_SHARE, cutarrays.arrow_parts) = saved  # fmt: skip
    expected = whole.take(pa.array(case["rows"], pa.int64()))
    column = served.arrays.get("c")
    assert column is not None, served.rest
    assert column.type == expected.type
    if pa.types.is_timestamp(expected.type):  # nanoseconds: compared as integers
        column, expected = column.cast(pa.int64()), expected.cast(pa.int64())
    assert _same(column.to_pylist(), expected.to_pylist())
    assert cut  # pages were cut
    assert all(cut), cut  # every hit page was cut, none decoded whole
