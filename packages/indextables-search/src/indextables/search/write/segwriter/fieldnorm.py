"""The ``.fieldnorm`` file: each document's token count of each field, on one byte.

Tantivy keeps, per field with ``fieldnorms`` and per document, the number of tokens
the field's analyzer indexed (after its filters: a token the length filter drops does
not count; a raw value counts 1, the empty value too; a document without the field
counts 0), encoded as Lucene's ``SmallFloat.intToByte4`` does: counts below 24 as
themselves, larger ones on a log scale of a 3-bit mantissa, rounded down to the
largest code whose value does not exceed the count. BM25 reads the count back as
that code's value.

The file is a composite file (one blob of ``max_doc`` bytes per field, in field
order, index 0) with Tantivy's footer (:mod:`..splits.termdict.composite`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pyarrow as pa

from indextables.search.splits.termdict.composite import FieldBlob, join_composite, with_footer
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.tokenize import Tokens

__all__ = ["FIELDNORM_VALUES", "FOOTER_JSON", "fieldnorm_file", "fieldnorm_ids", "token_counts"]

# Counts below this are their own code.
_FREE_VALUES: Final = 24
#: The footer tantivy-py 0.27 writes after every segment file (its CRC recomputed).
FOOTER_JSON: Final = (
    b'{"version":{"major":0,"minor":27,"patch":0,"index_format_version":7},"crc":0}'
)


def _int4_value(code: int) -> int:
    """The value of a 4-bit-mantissa code (Lucene's ``int4ToLong``)."""
    bits = code & 0x07
    shift = (code >> 3) - 1
    return bits if shift < 0 else (bits | 0x08) << shift


#: The count each of the 256 fieldnorm codes stands for, increasing.
FIELDNORM_VALUES: Final = tuple(
    code if code < _FREE_VALUES else _FREE_VALUES + _int4_value(code - _FREE_VALUES)
    for code in range(256)
)
_VALUES: Final = np.array(FIELDNORM_VALUES, dtype=np.uint64)


def fieldnorm_ids(counts: np.ndarray) -> bytes:
    """The fieldnorm code of each token count (one byte per document)."""
    if counts.size and int(counts.min()) < 0:
        raise SegmentWriteError("a negative token count has no fieldnorm")
    codes = np.searchsorted(_VALUES, counts.astype(np.uint64), side="right") - 1
    return codes.astype(np.uint8).tobytes()


def token_counts(tokens: Tokens, rows: int) -> np.ndarray:
    """How many tokens each of ``rows`` documents has in ``tokens`` (a field's tokens)."""
    row_ids = tokens.rows.to_numpy(zero_copy_only=False)
    if row_ids.size and (int(row_ids.max()) >= rows or int(row_ids.min()) < 0):
        raise SegmentWriteError(f"tokens of rows beyond the {rows} documents")
    return np.bincount(row_ids, minlength=rows).astype(np.uint64)


def fieldnorm_file(fields: Sequence[tuple[int, np.ndarray | pa.Array]], max_doc: int) -> bytes:
    """The ``.fieldnorm`` file of a segment of ``max_doc`` documents.

    Args:
        fields: (field id, token count per document) of every field with fieldnorms.
        max_doc: the segment's document count (each field's counts must have it).

    Raises:
        SegmentWriteError: field ids not increasing, or counts of another length.
    """
    blobs = []
    previous = -1
    for field, counts in fields:
        if field <= previous:
            raise SegmentWriteError(f"fieldnorm field ids not increasing ({previous}, {field})")
        previous = field
        values = counts.to_numpy(zero_copy_only=False) if isinstance(counts, pa.Array) else counts
        if len(values) != max_doc:
            raise SegmentWriteError(
                f"field {field}: {len(values)} fieldnorm counts for {max_doc} documents"
            )
        blobs.append(FieldBlob(field, 0, fieldnorm_ids(np.asarray(values))))
    return with_footer(join_composite(blobs), FOOTER_JSON)
