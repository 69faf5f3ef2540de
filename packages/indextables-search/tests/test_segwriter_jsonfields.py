"""The JSON-field parts of the segment writer on their own: the columns it refuses
(naming them) and the doc store kernel's raw width (its values as they are, the
framing of a JSON object) against its pure twin and a byte model."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from indextables.search.write.segwriter import _kernels_py
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.impl import kernels
from indextables.search.write.segwriter.jsonfields import json_column


@pytest.mark.parametrize(
    ("values", "arrow_type"),
    [
        ([["a", "b"]], pa.list_(pa.string())),
        ([{"x": 1}], pa.struct([("x", pa.int64())])),
        ([[math.nan]], pa.list_(pa.float64())),
        ([[math.inf, 1.0]], pa.list_(pa.float64())),
        ([[2**64 - 1]], pa.list_(pa.uint64())),
        ([[[1]]], pa.list_(pa.list_(pa.int64()))),
    ],
)
def test_columns_not_written_are_refused_naming_them(
    values: list[Any], arrow_type: pa.DataType
) -> None:
    with pytest.raises(SegmentWriteError, match="'col'"):
        json_column(pa.array(values, arrow_type), field="col")


def _raw_columns() -> tuple[bytes, bytes, list[bytes], list[bytes], list[bytes]]:
    rng = np.random.default_rng(4)
    rows = 300
    lengths = rng.integers(0, 40, rows)
    ends = np.concatenate([[0], np.cumsum(lengths)]).astype("<i8")
    data = rng.integers(0, 256, int(ends[-1]), dtype=np.uint8).tobytes()
    valid = (rng.random(rows) < 0.8).astype(np.uint8).tobytes()
    fixed = rng.integers(0, 256, 8 * rows, dtype=np.uint8).tobytes()
    heads = bytes([1, 0, 0, 0, 13, 2, 0, 0, 0, 2])
    return heads, bytes([255, 8]), [data, fixed], [ends.tobytes(), b""], [valid, bytes([1]) * rows]


def test_store_blocks_raw_width_twins() -> None:
    heads, widths, datas, offsets, valids = _raw_columns()
    for lz4 in (False, True):
        made = kernels().store_blocks(heads, widths, datas, offsets, valids, 300, 512, lz4)
        twin = _kernels_py.store_blocks(heads, widths, datas, offsets, valids, 300, 512, lz4)
        assert made == twin
    # Without compression the first document is its values as they are: no length.
    blocks, _ = _kernels_py.store_blocks(heads, widths, datas, offsets, valids, 300, 1 << 20, False)
    ends = np.frombuffer(offsets[0], "<i8")
    first = bytes([0x80 | (1 + valids[0][0])])  # VInt(values present)
    if valids[0][0]:
        first += heads[:5] + datas[0][ends[0] : ends[1]]
    first += heads[5:] + datas[1][:8]
    assert blocks.startswith(first)
