"""A segment's inverted-index files for its text fields: ``.idx``, ``.pos``, ``.term``
(FST form, as tantivy-py reads it) and ``.fieldnorm``, from Arrow string columns.

Per field, in field order: the tokens (:mod:`.tokenize`), their counts per document
(the fieldnorms, :mod:`.fieldnorm`), the inverted form (:mod:`.invert`), each term's
postings and positions (:mod:`.postings`) back to back, and the term dictionary mapping
each term to its document frequency and byte ranges. A term's postings range counts
from after the field's 8-byte total-token header; positions from the field's ``.pos``
blob start. Fields without positions have an empty ``.pos`` blob and record 0 as
their positions' start and length; a field without any token in the segment has
no ``.idx``, ``.pos`` or ``.term`` blob (its fieldnorms are still written). Fields
with fieldnorms off get no ``.fieldnorm`` blob (not yet compared with tantivy-py).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from indextables.search.splits.termdict.composite import FieldBlob, join_composite, with_footer
from indextables.search.splits.termdict.fstform import encode_fst_dict
from indextables.search.splits.termdict.model import FieldTerms
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fieldnorm import (
    FOOTER_JSON,
    fieldnorm_ids,
    token_counts,
)
from indextables.search.write.segwriter.invert import InvertedField, invert
from indextables.search.write.segwriter.postings import (
    Bm25Norms,
    FieldPostings,
    Record,
    field_header,
    field_postings,
)
from indextables.search.write.segwriter.tokenize import Analyzer, tokenize

__all__ = ["TextField", "field_terms", "inverted_files"]


@dataclass(frozen=True, slots=True)
class TextField:
    """One indexed text field of the segment.

    Attributes:
        field_id: its position in the schema.
        name: the column's name (for errors).
        analyzer: its analyzer.
        record: what its postings record: documents, with frequencies, with positions.
        fieldnorms: whether it has fieldnorms.
    """

    field_id: int
    name: str
    analyzer: Analyzer
    record: Record = "position"
    fieldnorms: bool = True


def field_terms(inverted: InvertedField, encoded: FieldPostings) -> FieldTerms:
    """The term dictionary's entries of a field: each term with its document frequency
    and its postings and positions byte ranges (no per-term Python objects)."""
    terms = inverted.terms
    count = len(terms)
    offsets = np.frombuffer(
        terms.buffers()[1], dtype="<i8", count=count + 1, offset=8 * terms.offset
    )
    data = terms.buffers()[2]
    first, last = (int(offsets[0]), int(offsets[-1])) if count else (0, 0)
    key_data = data.to_pybytes()[first:last] if data is not None and count else b""
    ends = (offsets[1:] - first).astype("<u8")

    def column(values: np.ndarray) -> array[int]:
        out = array("Q")
        out.frombytes(np.ascontiguousarray(values, dtype="<u8").tobytes())
        return out

    with_positions = bool(encoded.positions)
    return FieldTerms(
        key_data,
        column(ends),
        column(inverted.doc_freq.to_numpy(zero_copy_only=False)),
        column(encoded.postings_ends[:-1]),
        column(np.diff(encoded.postings_ends)),
        column(encoded.positions_ends[:-1] if with_positions else np.zeros(count)),
        column(np.diff(encoded.positions_ends) if with_positions else np.zeros(count)),
    )


def _field_files(
    column: pa.Array | pa.ChunkedArray, field: TextField, max_doc: int
) -> tuple[bytes, bytes, bytes, bytes | None, int]:
    """(idx blob, pos blob, term blob, fieldnorm codes or None, total tokens) of a field."""
    tokens = tokenize(column, field.analyzer, name=field.name)
    counts = token_counts(tokens, max_doc)
    total = len(tokens.rows)
    codes = fieldnorm_ids(counts) if field.fieldnorms else None
    norms = Bm25Norms(codes, total) if codes is not None and max_doc else None
    inverted = invert(tokens)
    encoded = field_postings(inverted, record=field.record, norms=norms)
    terms = field_terms(inverted, encoded)
    idx = field_header(total) + encoded.postings
    return idx, encoded.positions, encode_fst_dict(terms), codes, total


def inverted_files(
    columns: Sequence[pa.Array | pa.ChunkedArray], fields: Sequence[TextField], max_doc: int
) -> dict[str, bytes]:
    """The ``idx``, ``pos``, ``term`` and ``fieldnorm`` files of ``fields`` (by extension).

    Args:
        columns: each field's values, one per document (``max_doc`` each).
        fields: the fields, in increasing field id.
        max_doc: the segment's document count.

    Raises:
        SegmentWriteError: a column of another length, field ids out of order, or a
            value the tokenizer refuses.
    """
    if len(columns) != len(fields):
        raise SegmentWriteError(f"{len(columns)} columns for {len(fields)} fields")
    idx, pos, term, norms = [], [], [], []
    previous = -1
    for column, field in zip(columns, fields, strict=True):
        if field.field_id <= previous:
            raise SegmentWriteError(f"field ids not increasing ({previous}, {field.field_id})")
        previous = field.field_id
        if len(column) != max_doc:
            raise SegmentWriteError(
                f"column {field.name!r}: {len(column)} values for {max_doc} documents"
            )
        idx_blob, pos_blob, term_blob, codes, total = _field_files(column, field, max_doc)
        if total:  # a field without any token has no postings, positions or terms
            idx.append(FieldBlob(field.field_id, 0, idx_blob))
            term.append(FieldBlob(field.field_id, 0, term_blob))
            pos.append(FieldBlob(field.field_id, 0, pos_blob))  # empty without positions
        if codes is not None:
            norms.append(FieldBlob(field.field_id, 0, codes))
    return {
        "idx": with_footer(join_composite(idx), FOOTER_JSON),
        "pos": with_footer(join_composite(pos), FOOTER_JSON),
        "term": with_footer(join_composite(term), FOOTER_JSON),
        "fieldnorm": with_footer(join_composite(norms), FOOTER_JSON),
    }
