"""The error raised for a term dictionary that cannot be read or written."""

from __future__ import annotations

from indextables.pyspark.errors import IndexTablesSparkError


class TermDictError(IndexTablesSparkError, ValueError):
    """A ``.term`` file (or one field's dictionary in it) is malformed or unsupported."""
