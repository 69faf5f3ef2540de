"""One split of a table read as Arrow batches, whether it holds its rows or indexes a source.

A companion split (it embeds ``_parquet_manifest.json``) is read from the source
table's Parquet files under ``companion_root``
(:func:`indextables.search.companion.read.read_companion_split`); any other split
by :func:`indextables.search.read.splitreader.read_split`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa

from indextables.search.companion.read import read_companion_split
from indextables.search.errors import CompanionError
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.docstore import DecodeSession
from indextables.search.read.docstore.pool import DecoderThreads
from indextables.search.read.snippets import Highlight
from indextables.search.read.splitreader import COMPANION_MANIFEST, SplitEntry, read_split
from indextables.search.read.topk import Ordering, Scoring

__all__ = ["read_any_split"]


def read_any_split(
    directory: str,
    entry: SplitEntry,
    schema: pa.Schema,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
    companion_root: str | None,
    companion_options: Mapping[str, str] | None = None,
    docstore_threads: DecoderThreads = "auto",
    companion_threads: DecoderThreads = "auto",
    cache_session: DecodeSession | None = None,
    scoring: Scoring | None = None,
    ordering: Ordering | None = None,
    highlight: Highlight | None = None,
) -> Iterator[pa.RecordBatch]:
    """The matching rows of one unbundled split (see the module docstring);
    ``docstore_threads``, ``cache_session``, ``scoring``, ``ordering`` and
    ``highlight`` as :func:`read_split`'s (a companion split ignores ``ordering``: its caller orders
    every hit; its snippets come from the source's text).

    Raises:
        CompanionError: a companion split of a table that is not a companion index,
            or ``scoring`` asked of a companion split.
    """
    if not os.path.exists(os.path.join(directory, COMPANION_MANIFEST)):
        yield from read_split(
            directory,
            entry,
            schema,
            search=search,
            conditions=conditions,
            docstore_threads=docstore_threads,
            cache_session=cache_session,
            scoring=scoring,
            ordering=ordering,
            highlight=highlight,
        )
        return
    if scoring is not None:
        raise CompanionError(
            f"split {entry.ref.path} is a companion split: ordering by _score is not "
            "available on companion indexes (their rows are read from the source's "
            "Parquet files, a read that does not carry Tantivy's scores)"
        )
    if companion_root is None:
        raise CompanionError(
            f"split {entry.ref.path} is a companion split, but its table's configuration "
            "does not say where the source is (indextables.companion.sourceTablePath)"
        )
    yield from read_companion_split(
        directory, entry, schema, search=search, conditions=conditions, root=companion_root,
        options=companion_options, threads=companion_threads, highlight=highlight,
    )  # fmt: skip
