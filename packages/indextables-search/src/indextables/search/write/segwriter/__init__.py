"""A bulk writer of Tantivy segments from Arrow columns (the ``segments`` write feed).

Built in stages, each checked against tantivy-py before the next:

* :mod:`.tokenize`: the tokens of the index's analyzers (``default``/``simple``,
  ``whitespace``, ``raw``), identical to Tantivy's, with the Unicode tables read from
  tantivy-py (:mod:`.unicodeprobe`, :mod:`._unicodetables`); Cython kernels without
  the GIL and a pure twin (:mod:`.impl`).
* :mod:`.fieldnorm`: the ``.fieldnorm`` file from those tokens, byte for byte tantivy-py's.
* :mod:`.invert`: a field's tokens inverted (sorted terms, document frequencies, each
  term's documents, term frequencies and positions), the input of the postings files.
* :mod:`.postings`: each term's ``.idx`` and ``.pos`` bytes (``VInt`` tails, bitpacked
  128-entry blocks, skip data with BM25 block maxima), byte for byte tantivy-py's.
* :mod:`.invertedfiles`: a segment's ``.idx``, ``.pos``, ``.term`` (FST form) and
  ``.fieldnorm`` files for its text fields, byte for byte tantivy-py's.
* :mod:`.docstore`: the ``.store`` file of stored fields (LZ4 blocks as ``lz4_flex``
  makes them, :mod:`.lz4block`, or none; the skip index), byte for byte tantivy-py's.

* :mod:`.fastfields`: the ``.fast`` file (Tantivy's columnar format), byte for byte
  tantivy-py's.
* :mod:`.segment`, :mod:`.metajson`, :mod:`.numericterms`: a whole segment (non-text
  postings included) and its ``meta.json`` entry, which tantivy-py opens and answers
  like its own segment of the same rows.

Writes use it with ``indexWriter.feed=segments`` (:mod:`indextables.search.write.segfeed`);
the default feed still indexes through tantivy-py.
"""

from __future__ import annotations

from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.tokenize import Analyzer, Tokens, analyzer_for, tokenize

__all__ = ["Analyzer", "SegmentWriteError", "Tokens", "analyzer_for", "tokenize"]
