"""The segment writer's error."""

from __future__ import annotations

from indextables.search.errors import IndexTablesSearchError

__all__ = ["SegmentWriteError"]


class SegmentWriteError(IndexTablesSearchError, ValueError):
    """Input the segment writer cannot take (bytes that are not UTF-8, broken offsets, an
    analyzer it does not implement); the message names the column and row."""
