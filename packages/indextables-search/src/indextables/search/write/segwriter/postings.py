"""The ``.idx`` and ``.pos`` bytes of a field's terms, as Tantivy writes them.

Each field's ``.idx`` blob starts with the field's total token count (u64, the sum of
its documents' counts, from which BM25 takes the average field length), then each
term's postings in term order:

* documents go in blocks of 128 while 128 remain: the block's documents as strictly
  increasing deltas less one (from the previous block's last document; the first
  block's first delta is the document itself), bitpacked at the block's bit width in
  ``BitPacker4x``'s layout (four interleaved lanes of 32 values each, LSB first, u32
  words); then, when the field records frequencies, the term frequencies less one,
  bitpacked the same way without deltas;
* the rest as ``VInt``: document deltas (from the last block's last document, or 0),
  then the frequencies. Tantivy's ``VInt`` sets the high bit on a number's *last* byte;
* a term in 128 documents or more is preceded by ``VInt`` the length of its skip data
  and the skip data, one entry per block: the block's last document (u32), its bit
  width with 0x40 set (strict deltas), and with frequencies the frequencies' bit width,
  with positions the block's frequency sum (u32), then the block's best BM25 pair
  (fieldnorm code, frequency capped at 255): the document maximising
  ``tf / (tf + 1.2 * (0.25 + 0.75 * fieldnorm / average))`` in f32, the last of equals;
  (0, 0) for a field without fieldnorms.

A term's ``.pos`` bytes: each document's positions as deltas (its first from 0), all
documents' in one sequence cut into blocks of 128 bitpacked as above (no deltas), the
rest ``VInt``; preceded by ``VInt`` the number of blocks and one bit-width byte each.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

import numpy as np

from indextables.search.splits.vint import encode_vint
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fieldnorm import FIELDNORM_VALUES

__all__ = [
    "BLOCK_LEN",
    "Bm25Norms",
    "bitpack",
    "field_header",
    "term_positions",
    "term_postings",
]

#: Documents (or positions) per bitpacked block.
BLOCK_LEN: Final = 128
_LANES: Final = 4
_K1: Final = np.float32(1.2)
_B: Final = np.float32(0.75)


class Bm25Norms:
    """A field's fieldnorm codes and Tantivy's f32 BM25 length norms, for block maxima.

    Args:
        fieldnorms: the field's fieldnorm code of each document of the segment.
        total_tokens: the field's total token count (the ``.idx`` header).
    """

    def __init__(self, fieldnorms: bytes, total_tokens: int) -> None:
        self.fieldnorms = fieldnorms
        values = np.array(FIELDNORM_VALUES, dtype=np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            average = np.float32(total_tokens) / np.float32(len(fieldnorms))
            self.norms = _K1 * ((np.float32(1.0) - _B) + (_B * values) / average)

    def block_max(self, docs: Sequence[int], term_freqs: Sequence[int]) -> tuple[int, int]:
        """The (fieldnorm code, frequency) of the block's best-scoring document."""
        best = (0, 0)
        best_score = None
        for doc, freq in zip(docs, term_freqs, strict=True):
            code = self.fieldnorms[doc]
            tf = np.float32(freq)
            score = tf / (tf + self.norms[code])
            if best_score is None or not score < best_score:
                best, best_score = (code, freq), score
        return best


def bitpack(values: Sequence[int], num_bits: int) -> bytes:
    """128 values of ``num_bits`` bits each in ``BitPacker4x``'s layout."""
    if num_bits == 0:
        return b""
    words = [0] * (_LANES * num_bits)
    for lane in range(_LANES):
        stream = 0
        for i in range(BLOCK_LEN // _LANES):
            stream |= values[_LANES * i + lane] << (i * num_bits)
        for w in range(num_bits):
            words[_LANES * w + lane] = (stream >> (32 * w)) & 0xFFFFFFFF
    return struct.pack(f"<{len(words)}I", *words)


def _bits(values: Sequence[int]) -> int:
    combined = 0
    for value in values:
        combined |= value
    return combined.bit_length()


def field_header(total_tokens: int) -> bytes:
    """The start of a field's ``.idx`` blob: its total token count."""
    return struct.pack("<Q", total_tokens)


def term_postings(
    docs: Sequence[int],
    term_freqs: Sequence[int] | None,
    *,
    positions: bool = False,
    norms: Bm25Norms | None = None,
) -> bytes:
    """One term's postings: ascending ``docs`` and, when recorded, their term frequencies.

    Args:
        docs: the term's documents, strictly ascending.
        term_freqs: their frequencies, None when the field records none.
        positions: the field records positions (the skip data then sums frequencies).
        norms: the field's fieldnorms (None: the field has none; block maxima are 0).

    Raises:
        SegmentWriteError: documents not strictly ascending, or frequencies not one per
            document.
    """
    if term_freqs is not None and len(term_freqs) != len(docs):
        raise SegmentWriteError(f"{len(term_freqs)} term frequencies for {len(docs)} documents")
    for k in range(1, len(docs)):
        if docs[k] <= docs[k - 1]:
            raise SegmentWriteError(f"postings documents not ascending at {docs[k]}")
    skip = bytearray()
    out = bytearray()
    last = 0
    start = 0
    while len(docs) - start >= BLOCK_LEN:
        block = docs[start : start + BLOCK_LEN]
        # The first block counts from "before 0" (its first delta is the document).
        first = block[0] if start == 0 else block[0] - last - 1
        deltas = [first] + [block[k] - block[k - 1] - 1 for k in range(1, BLOCK_LEN)]
        num_bits = _bits(deltas)
        out += bitpack(deltas, num_bits)
        last = block[-1]
        skip += struct.pack("<IB", last, num_bits | 0x40)
        if term_freqs is not None:
            freqs = term_freqs[start : start + BLOCK_LEN]
            minus_one = [f - 1 for f in freqs]
            tf_bits = _bits(minus_one)
            out += bitpack(minus_one, tf_bits)
            skip.append(tf_bits)
            if positions:
                skip += struct.pack("<I", sum(freqs))
            code, freq = norms.block_max(block, freqs) if norms is not None else (0, 0)
            skip += bytes([code, min(freq, 255)])
        start += BLOCK_LEN
    previous = last
    for doc in docs[start:]:
        encode_vint(doc - previous, out)
        previous = doc
    for freq in (term_freqs or [])[start:]:
        encode_vint(freq, out)
    if len(docs) < BLOCK_LEN:
        return bytes(out)
    head = bytearray()
    encode_vint(len(skip), head)
    return bytes(head + skip + out)


def term_positions(positions: Sequence[Sequence[int]]) -> bytes:
    """One term's ``.pos`` bytes from each of its documents' ascending positions.

    Raises:
        SegmentWriteError: a document's positions not ascending.
    """
    deltas: list[int] = []
    for doc_positions in positions:
        previous = 0
        for position in doc_positions:
            if position < previous:
                raise SegmentWriteError(f"positions not ascending at {position}")
            deltas.append(position - previous)
            previous = position
    widths = bytearray()
    body = bytearray()
    full = len(deltas) - len(deltas) % BLOCK_LEN
    for start in range(0, full, BLOCK_LEN):
        block = deltas[start : start + BLOCK_LEN]
        num_bits = _bits(block)
        widths.append(num_bits)
        body += bitpack(block, num_bits)
    for delta in deltas[full:]:
        encode_vint(delta, body)
    head = bytearray()
    encode_vint(len(widths), head)
    return bytes(head + widths + body)
