"""The ``.idx`` and ``.pos`` bytes of a field's terms (so far: terms below one block).

Each field's ``.idx`` blob starts with the field's total token count (u64, the sum of
its documents' counts, from which BM25 takes the average field length), then each
term's postings in term order. A term in fewer than 128 documents has no skip data and
no bitpacked block: its documents as ``VInt`` deltas (the first from 0), then, when the
field records frequencies, its term frequencies as ``VInt``. Tantivy's ``VInt`` sets the
high bit on a number's *last* byte.

A term's ``.pos`` bytes: ``VInt`` the number of full 128-position blocks and their bit
widths, the blocks, then the remaining positions as ``VInt``; each document's
positions are deltas, its first from 0. With fewer than 128 positions in all that is
``VInt(0)`` and the deltas.

Terms in 128 documents or more, or with 128 positions or more, need the bitpacked
blocks (and skip data with block-max scores) that are not written yet: such a term
is refused with :class:`SegmentWriteError`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter.errors import SegmentWriteError

__all__ = ["BLOCK_LEN", "field_header", "term_positions", "term_postings"]

#: Documents (or positions) per bitpacked block.
BLOCK_LEN: Final = 128


def field_header(total_tokens: int) -> bytes:
    """The start of a field's ``.idx`` blob: its total token count."""
    return struct.pack("<Q", total_tokens)


def term_postings(docs: Sequence[int], term_freqs: Sequence[int] | None) -> bytes:
    """One term's postings: ascending ``docs`` and, when recorded, their term frequencies.

    Raises:
        SegmentWriteError: 128 documents or more (blocks are not written yet), documents
            not strictly ascending, or frequencies not one per document.
    """
    if len(docs) >= BLOCK_LEN:
        raise SegmentWriteError(
            f"a term in {len(docs)} documents needs 128-document blocks (not written yet)"
        )
    if term_freqs is not None and len(term_freqs) != len(docs):
        raise SegmentWriteError(f"{len(term_freqs)} term frequencies for {len(docs)} documents")
    out = bytearray()
    previous = 0
    for k, doc in enumerate(docs):
        if doc < previous or (k and doc == previous):
            raise SegmentWriteError(f"postings documents not ascending at {doc}")
        encode_vint(doc - previous, out)
        previous = doc
    for freq in term_freqs or ():
        encode_vint(freq, out)
    return bytes(out)


def term_positions(positions: Sequence[Sequence[int]]) -> bytes:
    """One term's ``.pos`` bytes from each of its documents' ascending positions.

    Raises:
        SegmentWriteError: 128 positions or more (blocks are not written yet), or a
            document's positions not ascending.
    """
    total = sum(len(p) for p in positions)
    if total >= BLOCK_LEN:
        raise SegmentWriteError(
            f"a term with {total} positions needs 128-position blocks (not written yet)"
        )
    out = bytearray()
    encode_vint(0, out)
    for doc_positions in positions:
        previous = 0
        for position in doc_positions:
            if position < previous:
                raise SegmentWriteError(f"positions not ascending at {position}")
            encode_vint(position - previous, out)
            previous = position
    return bytes(out)
