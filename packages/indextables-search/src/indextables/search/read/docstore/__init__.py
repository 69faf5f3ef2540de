"""Bulk decoder of Tantivy's document store into Arrow columns (bulk row retrieval).

Self-contained (pyarrow, zstandard and the stdlib only): ``read_store`` parses a
segment's ``.store`` file, ``decode_docs`` decodes a set of documents into a
``pyarrow.RecordBatch``. Kernels: Cython ``_kernels`` or the pure twin
``_kernels_py``, chosen by ``INDEXTABLES_DOCSTORE_IMPL`` (see ``impl``).
"""

from __future__ import annotations

from indextables.search.read.docstore.decode import (
    BlockCache,
    DecodeSession,
    FieldKind,
    FieldSpec,
    StorePart,
    decode_docs,
    decode_parts,
    decode_runs,
)
from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.read.docstore.store import StoreIndex, read_store

__all__ = [
    "BlockCache",
    "DecodeSession",
    "DocStoreError",
    "FieldKind",
    "FieldSpec",
    "StoreIndex",
    "StorePart",
    "decode_docs",
    "decode_parts",
    "decode_runs",
    "read_store",
]
