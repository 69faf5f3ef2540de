"""One field's terms and their TermInfos, the form-neutral middle of every transcode."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FieldTerms"]


@dataclass(frozen=True, slots=True)
class FieldTerms:
    """A field's sorted terms with their postings/positions byte ranges.

    The five columns are parallel to ``keys``. tantivy writes each term's
    postings (and positions) right after the previous term's, which is what
    lets both dictionary forms store lengths instead of every start.
    """

    keys: list[bytes]
    doc_freq: list[int]
    postings_start: list[int]
    postings_len: list[int]
    positions_start: list[int]
    positions_len: list[int]

    @classmethod
    def from_columns(
        cls, keys: list[bytes], cols: tuple[list[int], list[int], list[int], list[int], list[int]]
    ) -> FieldTerms:
        """Build from the kernels' five-column tuple."""
        return cls(keys, *cols)

    def columns(self) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
        """The kernels' five-column tuple."""
        return (
            self.doc_freq,
            self.postings_start,
            self.postings_len,
            self.positions_start,
            self.positions_len,
        )

    def __len__(self) -> int:
        return len(self.keys)
