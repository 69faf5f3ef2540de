"""Tantivy's column index (``columnar/src/column_index``): which rows have values, byte for byte.

A column index starts with its cardinality code:

* ``0`` full: every row has exactly one value; nothing follows;
* ``1`` optional: every row has at most one value; then the optional index;
* ``2`` multivalued: then the optional index of the rows with values, the start
  offsets of those rows' values (and the total at the end) as u64 column values
  (bitpacked or linear, :func:`.columnar_codecs.column_values`), and ``u32`` the
  optional index's length.

The optional index: ``VInt`` the row count, then per block of 65,536 rows holding at
least one non-null row, either the rows' u16 offsets in the block (sparse, under 5,120
rows) or 1,024 mini-blocks of ``[u64 bit set][u16 rows before it in the block]``
(dense); then per block ``[u16 block id][u16 rows - 1]`` and ``u16`` the block count.
"""

from __future__ import annotations

import itertools
import struct
from typing import Final

import numpy as np
import numpy.typing as npt

from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter.columnar_codecs import column_values

__all__ = ["FULL", "MULTIVALUED", "OPTIONAL", "multivalued_index", "optional_index"]

FULL: Final = 0
OPTIONAL: Final = 1
MULTIVALUED: Final = 2
_BLOCK_ROWS: Final = 1 << 16
_DENSE_THRESHOLD: Final = 5120
_MINI: Final = 64


def _optional_body(rows: npt.NDArray[np.uint32], num_rows: int) -> bytes:
    out = bytearray()
    encode_vint(num_rows, out)
    if len(rows) == 0:
        out += b"\x00\x00"
        return bytes(out)
    block_ids = rows >> np.uint32(16)
    starts = np.flatnonzero(np.diff(block_ids, prepend=np.uint32(block_ids[0]) + 1))
    bounds = [*starts.tolist(), len(rows)]
    metas = bytearray()
    for start, stop in itertools.pairwise(bounds):
        block_id = int(block_ids[start])
        in_block = (rows[start:stop] & np.uint32(0xFFFF)).astype("<u2")
        count = stop - start
        if count < _DENSE_THRESHOLD:
            out += in_block.tobytes()
        else:
            present = np.zeros(_BLOCK_ROWS, dtype=np.uint8)
            present[in_block] = 1
            words = np.packbits(present, bitorder="little").view("<u8")
            ones = np.unpackbits(words.view(np.uint8)).reshape(-1, _MINI).sum(axis=1)
            ranks = (np.cumsum(ones) - ones).astype("<u2")
            mini = np.zeros(len(words), dtype=[("bits", "<u8"), ("rank", "<u2")])
            mini["bits"] = words
            mini["rank"] = ranks
            out += mini.tobytes()
        metas += struct.pack("<HH", block_id, count - 1)
    out += metas
    out += struct.pack("<H", (len(bounds) - 1) & 0xFFFF)
    return bytes(out)


def optional_index(rows: npt.NDArray[np.uint32], num_rows: int) -> bytes:
    """The column index (cardinality 1) of a column whose rows ``rows`` (sorted) have a value."""
    return bytes((OPTIONAL,)) + _optional_body(rows, num_rows)


def multivalued_index(counts: npt.NDArray[np.uint32], num_rows: int) -> bytes:
    """The column index (cardinality 2) of a column with ``counts[row]`` values per row."""
    rows = np.flatnonzero(counts).astype(np.uint32)
    offsets = np.zeros(len(rows) + 1, dtype=np.uint64)
    np.cumsum(counts[rows], out=offsets[1:])
    optional = _optional_body(rows, num_rows)
    return (
        bytes((MULTIVALUED,))
        + optional
        + column_values(offsets, linear=True)
        + struct.pack("<I", len(optional))
    )
