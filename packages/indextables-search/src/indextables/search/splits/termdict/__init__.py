"""Term-dictionary codec: tantivy's FST and SSTable ``.term`` forms, transcoded either way.

A tantivy ``.term`` file is a composite file with one dictionary per indexed
field. tantivy-py (default features) reads and writes only the FST form
(dict type 1); the reference (tantivy with the ``quickwit`` feature) only the
SSTable form (dict type 2). Everything else in a segment is shared, so
rewriting the ``.term`` files is all it takes to open one side's split on the
other side.

Example:
    >>> from indextables.search.splits import termdict  # doctest: +SKIP
    >>> termdict.dictionary_kind(term_bytes)  # doctest: +SKIP
    'sstable'
    >>> fst_bytes = termdict.to_fst(term_bytes)  # doctest: +SKIP
"""

from __future__ import annotations

from indextables.search.splits.termdict.check import check_sstable_term_file, sstable_problems
from indextables.search.splits.termdict.errors import TermDictError
from indextables.search.splits.termdict.transcode import (
    DictionaryKind,
    dictionary_kind,
    to_fst,
    to_sstable,
)

__all__ = [
    "DictionaryKind",
    "TermDictError",
    "check_sstable_term_file",
    "dictionary_kind",
    "sstable_problems",
    "to_fst",
    "to_sstable",
]
