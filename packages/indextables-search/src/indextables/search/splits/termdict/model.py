"""One field's terms and their TermInfos, the form-neutral middle of every transcode."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["FieldTerms"]


@dataclass(frozen=True, slots=True)
class FieldTerms:
    """A field's sorted terms with their postings/positions byte ranges.

    Keys are packed: ``key_data`` holds them back to back and ``key_ends`` each
    one's end offset, so a million terms are three objects, not a million. The
    five columns are parallel to the keys. tantivy writes each term's postings
    (and positions) right after the previous term's, which is what lets both
    dictionary forms store lengths instead of every start.
    """

    key_data: bytes
    key_ends: array[int]
    doc_freq: array[int]
    postings_start: array[int]
    postings_len: array[int]
    positions_start: array[int]
    positions_len: array[int]

    @classmethod
    def from_keys(cls, keys: Sequence[bytes], columns: Sequence[Sequence[int]]) -> FieldTerms:
        """Build from a list of keys and five sequences of values (tests, small inputs)."""
        ends = array("Q")
        total = 0
        for key in keys:
            total += len(key)
            ends.append(total)
        df, ps, pl, qs, ql = (array("Q", column) for column in columns)
        return cls(b"".join(keys), ends, df, ps, pl, qs, ql)

    @property
    def keys(self) -> list[bytes]:
        """The keys as a list (one object per key: for tests and small dictionaries)."""
        keys = []
        start = 0
        for end in self.key_ends:
            keys.append(self.key_data[start:end])
            start = end
        return keys

    def columns(self) -> tuple[array[int], array[int], array[int], array[int], array[int]]:
        """The kernels' five-column tuple."""
        return (
            self.doc_freq,
            self.postings_start,
            self.postings_len,
            self.positions_start,
            self.positions_len,
        )

    def __len__(self) -> int:
        return len(self.key_ends)
