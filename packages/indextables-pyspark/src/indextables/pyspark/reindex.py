"""Searchable local copies of splits whose term dictionaries tantivy-py cannot read.

Splits written by the Scala reference (through Quickwit) keep their term
dictionaries as SSTables; tantivy-py is built with the FST dictionary and
fails on any term lookup in them, although it reads their stored documents
and fast fields. To search such a split, a host rebuilds it once from its
stored documents into a sibling directory of the split cache, with the schema
of the split's doc mapping (same field kinds and tokenizers), and searches
that copy from then on. The copy is built under a temporary name and renamed
into place, so concurrent tasks never see half of one; the cache's LRU
eviction treats it like any cached split.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
import uuid

import tantivy

from indextables.pyspark.errors import IndexTablesSparkError
from indextables.pyspark.mapping import create_index, specs_from_doc_mapping, tantivy_schema

SUFFIX = "-searchable"
_LOG = logging.getLogger(__name__)
_HEAP_BYTES = 64 << 20
_CHUNK = 10_000


def is_unreadable_dictionary(error: BaseException) -> bool:
    """True for tantivy-py's error on a term dictionary it cannot read (an SSTable)."""
    return isinstance(error, ValueError) and "SSTable" in str(error)


def searchable_copy(directory: str, *, doc_mapping_json: str | None, split_path: str) -> str:
    """The directory of a searchable copy of the split unbundled in ``directory``.

    Raises:
        IndexTablesSparkError: the split has no doc mapping to rebuild it from,
            or the copy does not hold every document of the split.
    """
    target = directory.rstrip(os.sep) + SUFFIX
    if os.path.isdir(target):
        with contextlib.suppress(OSError):
            now = time.time()
            os.utime(target, (now, now))
        return target
    if not doc_mapping_json:
        raise IndexTablesSparkError(
            f"split {split_path} uses an SSTable term dictionary (written by the Scala "
            "reference) and has no doc mapping to rebuild a searchable copy from"
        )
    staging = os.path.join(os.path.dirname(target), f".tmp-{uuid.uuid4().hex}")
    started = time.monotonic()
    _LOG.info("building a searchable copy of reference split %s", split_path)
    try:
        _rebuild(directory, staging, doc_mapping_json, split_path)
        try:
            os.rename(staging, target)
        except OSError:
            if not os.path.isdir(target):  # else another task built the same copy first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _LOG.info("searchable copy of %s built in %.1f s", split_path, time.monotonic() - started)
    return target


def _rebuild(source_dir: str, staging: str, doc_mapping_json: str, split_path: str) -> None:
    source = tantivy.Index.open(source_dir)
    searcher = source.searcher()
    total = searcher.num_docs
    specs = tuple(specs_from_doc_mapping(doc_mapping_json).values())
    schema = tantivy_schema(specs)
    os.makedirs(staging)
    # Fast date fields at microsecond precision: date ranges then match the stored values.
    copy = create_index(specs, staging, fast_dates=True)
    writer = copy.writer(_HEAP_BYTES, 1)
    if total:
        # search(limit=0) panics in tantivy-py: only search a non-empty split.
        hits = searcher.search(tantivy.Query.all_query(), limit=total, count=False).hits
        addresses = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))
        from_dict = tantivy.Document.from_dict
        for start in range(0, len(addresses), _CHUNK):
            for address in addresses[start : start + _CHUNK]:
                writer.add_document(from_dict(searcher.doc(address).to_dict(), schema))
    writer.commit()
    writer.wait_merging_threads()
    copy.reload()
    if copy.searcher().num_docs != total:
        raise IndexTablesSparkError(
            f"searchable copy of split {split_path} holds {copy.searcher().num_docs} of "
            f"its {total} documents"
        )
