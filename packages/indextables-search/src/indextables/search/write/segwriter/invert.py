"""A field's tokens inverted: its sorted terms, each with its documents, frequencies and
positions (what the ``.term``, ``.idx`` and ``.pos`` files will be written from).

Terms sort bytewise (unsigned, shorter prefix first), as Tantivy's term dictionary
does; each term's documents ascend, and each document's positions ascend. The terms
are dictionary-encoded and their distinct values sorted (pyarrow); as the tokenizer
gives tokens in row then position order, a stable grouping by term rank puts every
token in place: the kernels' ``invert_tokens`` (Cython without the GIL: a counting
sort of the ranks, then each term's documents and frequencies in one pass; or its
numpy twin). Tokens in another order are first put in row then position order with
numpy's ``lexsort``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.write.segwriter import impl
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.tokenize import Tokens

__all__ = ["InvertedField", "invert"]


@dataclass(frozen=True, slots=True)
class InvertedField:
    """One field's inverted tokens.

    Attributes:
        terms: the distinct terms, sorted bytewise.
        doc_freq: per term, how many documents hold it.
        doc_starts: per term, where its documents start in ``docs`` (one more entry:
            the end).
        docs: the documents of each term in turn, ascending within a term.
        term_freqs: per (term, document), how often the term occurs there.
        positions: per occurrence, ordered by term, document, then position.
    """

    terms: pa.LargeBinaryArray
    doc_freq: pa.UInt32Array
    doc_starts: pa.Int64Array
    docs: pa.UInt32Array
    term_freqs: pa.UInt32Array
    positions: pa.UInt32Array


def invert(tokens: Tokens) -> InvertedField:
    """The inverted form of one field's tokens (document ids are the tokens' rows)."""
    count = len(tokens.terms)
    rows = tokens.rows.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    positions = tokens.positions.to_numpy(zero_copy_only=False).astype(np.uint32, copy=False)
    encoded = pc.dictionary_encode(tokens.terms)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    dictionary = encoded.dictionary
    sorted_terms = pc.sort_indices(dictionary).to_numpy(zero_copy_only=False)
    rank = np.empty(len(dictionary), dtype=np.uint32)
    rank[sorted_terms] = np.arange(len(dictionary), dtype=np.uint32)
    token_rank = rank[encoded.indices.to_numpy(zero_copy_only=False)] if count else rank[:0]
    kernels = impl.kernels()
    inverted = kernels.invert_tokens(token_rank, rows, positions, len(dictionary))
    if inverted is None:  # not the tokenizer's order: put the tokens in it first
        order = np.lexsort((positions, rows))
        token_rank, rows, positions = token_rank[order], rows[order], positions[order]
        inverted = kernels.invert_tokens(token_rank, rows, positions, len(dictionary))
    if inverted is None:  # pragma: no cover - lexsort's order is the tokenizer's
        raise SegmentWriteError("tokens could not be put in row then position order")
    starts, docs, freqs, placed = (
        np.frombuffer(part, dtype=dtype)
        for part, dtype in zip(inverted, ("<i8", "<u4", "<u4", "<u4"), strict=True)
    )
    terms = dictionary.take(pa.array(sorted_terms, pa.int64()))
    return InvertedField(
        terms=terms.cast(pa.large_binary()),
        doc_freq=pa.array(np.diff(starts).astype(np.uint32)),
        doc_starts=pa.array(starts.astype(np.int64)),
        docs=pa.array(docs.astype(np.uint32)),
        term_freqs=pa.array(freqs.astype(np.uint32)),
        positions=pa.array(placed.astype(np.uint32)),
    )
