"""The error raised for a term dictionary that cannot be read or written."""

from __future__ import annotations

from indextables.search.errors import IndexTablesSearchError


class TermDictError(IndexTablesSearchError, ValueError):
    """A ``.term`` file (or one field's dictionary in it) is malformed or unsupported."""
