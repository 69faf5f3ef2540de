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

The encoding runs in the segment writer's kernels (:mod:`.impl`: Cython without the
GIL, or the pure twin), a whole field per call (:func:`field_postings`); the per-term
functions call the same kernels on one term.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from indextables.search.write.segwriter import impl
from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.fieldnorm import FIELDNORM_VALUES
from indextables.search.write.segwriter.invert import InvertedField

__all__ = [
    "BLOCK_LEN",
    "Bm25Norms",
    "FieldPostings",
    "bitpack",
    "field_header",
    "field_postings",
    "term_positions",
    "term_postings",
]

#: Documents (or positions) per bitpacked block.
BLOCK_LEN: Final = 128
_LANES: Final = 4
_K1: Final = np.float32(1.2)
_B: Final = np.float32(0.75)
_RECORDS: Final = {"basic": 0, "freq": 1, "position": 2}
_NO_NORMS: Final = np.zeros(256, dtype=np.float32)

Record = Literal["basic", "freq", "position"]


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


@dataclass(frozen=True, slots=True)
class FieldPostings:
    """A field's encoded terms, back to back in term order.

    Attributes:
        postings: every term's ``.idx`` bytes (without the field's 8-byte header).
        postings_ends: int64, a leading 0 then where each term's postings end.
        positions: every term's ``.pos`` bytes (empty without positions).
        positions_ends: int64, a leading 0 then where each term's positions end (all
            0 without positions).
    """

    postings: bytes
    postings_ends: np.ndarray
    positions: bytes
    positions_ends: np.ndarray


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


def field_header(total_tokens: int) -> bytes:
    """The start of a field's ``.idx`` blob: its total token count."""
    return struct.pack("<Q", total_tokens)


def _u32(values: Sequence[int] | np.ndarray, what: str) -> np.ndarray:
    """``values`` as a contiguous uint32 array (refusing what does not fit)."""
    array = np.asarray(values)
    if array.dtype == np.uint32:
        return np.ascontiguousarray(array)
    if array.size == 0:
        return np.zeros(0, dtype=np.uint32)
    if array.dtype.kind not in "iu" or int(array.min()) < 0 or int(array.max()) > 0xFFFFFFFF:
        raise SegmentWriteError(f"{what} must be u32 integers")
    return array.astype(np.uint32)


def _codes(norms: Bm25Norms | None) -> np.ndarray:
    if norms is None:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer(norms.fieldnorms, dtype=np.uint8)


def _ends(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype="<i8").astype(np.int64, copy=False)


def field_postings(
    inverted: InvertedField, *, record: Record, norms: Bm25Norms | None = None
) -> FieldPostings:
    """Every term's postings (and, with ``record="position"``, positions) of a field.

    Args:
        inverted: the field's inverted tokens.
        record: what the field's postings record (documents, frequencies, positions).
        norms: the field's fieldnorms (None: the field has none; block maxima are 0).

    Raises:
        SegmentWriteError: an unknown ``record``, or inverted columns that disagree.
    """
    if record not in _RECORDS:
        raise SegmentWriteError(f"unknown postings record {record!r}")
    kernels = impl.kernels()
    starts = np.ascontiguousarray(inverted.doc_starts.to_numpy(zero_copy_only=False), np.int64)
    docs = _u32(inverted.docs.to_numpy(zero_copy_only=False), "documents")
    freqs = _u32(inverted.term_freqs.to_numpy(zero_copy_only=False), "term frequencies")
    codes = _codes(norms)
    values = np.ascontiguousarray(norms.norms, np.float32) if norms is not None else _NO_NORMS
    body, ends = kernels.postings(starts, docs, freqs, codes, values, _RECORDS[record])
    if record != "position":
        return FieldPostings(body, _ends(ends), b"", np.zeros(len(starts), np.int64))
    positions = _u32(inverted.positions.to_numpy(zero_copy_only=False), "positions")
    pos, pos_ends = kernels.positions(starts, freqs, positions)
    return FieldPostings(body, _ends(ends), pos, _ends(pos_ends))


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
            document (or 0).
    """
    if term_freqs is not None and len(term_freqs) != len(docs):
        raise SegmentWriteError(f"{len(term_freqs)} term frequencies for {len(docs)} documents")
    record = 0 if term_freqs is None else 2 if positions else 1
    doc_array = _u32(docs, "documents")
    freq_array = _u32(term_freqs if term_freqs is not None else [], "term frequencies")
    codes = _codes(norms)
    values = np.ascontiguousarray(norms.norms, np.float32) if norms is not None else _NO_NORMS
    body, _ = impl.kernels().postings(
        np.array([0, len(doc_array)], np.int64),
        doc_array,
        freq_array,
        codes,
        values,
        record,
    )
    return bytes(body)


def term_positions(positions: Sequence[Sequence[int]]) -> bytes:
    """One term's ``.pos`` bytes from each of its documents' ascending positions.

    Raises:
        SegmentWriteError: a document's positions not ascending.
    """
    freqs = _u32([len(doc_positions) for doc_positions in positions], "term frequencies")
    flat = _u32([p for doc_positions in positions for p in doc_positions], "positions")
    body, _ = impl.kernels().positions(np.array([0, len(freqs)], np.int64), freqs, flat)
    return bytes(body)
