"""A field's tokens inverted: its sorted terms, each with its documents, frequencies and
positions (what the ``.term``, ``.idx`` and ``.pos`` files will be written from).

Terms sort bytewise (unsigned, shorter prefix first), as Tantivy's term dictionary
does; each term's documents ascend, and each document's positions ascend. The sort is
pyarrow's (one ``sort_indices`` over term, row, position), the grouping numpy's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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


def _starts(changes: np.ndarray, size: int) -> np.ndarray:
    """Indices where a new run begins (``changes`` marks entries differing from the one before)."""
    return np.concatenate([[0], np.flatnonzero(changes) + 1, [size]]).astype(np.int64)


def invert(tokens: Tokens) -> InvertedField:
    """The inverted form of one field's tokens (document ids are the tokens' rows)."""
    table = pa.table({"t": tokens.terms, "r": tokens.rows, "p": tokens.positions})
    order = pc.sort_indices(
        table, sort_keys=[("t", "ascending"), ("r", "ascending"), ("p", "ascending")]
    )
    table = table.take(order)
    count = table.num_rows
    term_ids = table.column("t").combine_chunks().dictionary_encode().indices.to_numpy()
    rows = table.column("r").to_numpy()
    term_edges = _starts(term_ids[1:] != term_ids[:-1], count) if count else np.zeros(1, np.int64)
    doc_change = (term_ids[1:] != term_ids[:-1]) | (rows[1:] != rows[:-1])
    doc_edges = _starts(doc_change, count) if count else np.zeros(1, np.int64)
    doc_first = doc_edges[:-1]
    term_first = term_edges[:-1]
    # Each term's first posting is the posting starting at its first occurrence.
    doc_starts = np.searchsorted(doc_first, term_edges).astype(np.int64)
    terms = table.column("t").combine_chunks().take(pa.array(term_first))
    return InvertedField(
        terms=terms.cast(pa.large_binary()),
        doc_freq=pa.array(np.diff(doc_starts).astype(np.uint32)),
        doc_starts=pa.array(doc_starts),
        docs=pa.array(rows[doc_first].astype(np.uint32)),
        term_freqs=pa.array(np.diff(doc_edges).astype(np.uint32)),
        positions=table.column("p").combine_chunks().cast(pa.uint32()),
    )
