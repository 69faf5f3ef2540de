"""The matching rows of a list of splits, split by split in order.

One place for what every read of several splits does: fetch the splits not on
disk in the background (:meth:`~indextables.search.splits.splitcache.SplitCache.directories`),
share one view of the doc-store block cache (its misses remembered together at the
end, only when they all fit), read each split (ordinary or companion:
:func:`~indextables.search.read.anysplit.read_any_split`), and hand the batches
over in split order, several splits read at once when asked
(:func:`~indextables.search.read.splitorder.ordered_batches`). A companion split
read beside others gets its page threads under ``auto`` turned off
(:func:`~indextables.search.companion.pagethreads.beside_splits`). Used by
``SearchTable.search`` and by the Spark adapter's ``itp.search`` and read tasks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from indextables.search import oplog
from indextables.search.companion.pagethreads import beside_splits
from indextables.search.options import ReadOptions
from indextables.search.query.conditions import Condition
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.anysplit import read_any_split
from indextables.search.read.bulkrows import search_session
from indextables.search.read.snippets import Highlight
from indextables.search.read.splitorder import ordered_batches, splits_at_once
from indextables.search.read.splitreader import SplitEntry
from indextables.search.read.topk import Ordering, Scoring
from indextables.search.splits.splitcache import SplitCache

__all__ = ["split_batches"]


def split_batches(
    uri: str,
    entries: Sequence[SplitEntry],
    *,
    open_store: Callable[[], Any],
    read: ReadOptions,
    schema: pa.Schema,
    search: SearchSpec,
    conditions: Sequence[Condition],
    companion_root: str | None,
    options: Mapping[str, str],
    parallel: bool,
    row_cap: int | None = None,
    stop_at: int | None = None,
    scoring: Scoring | None = None,
    ordering: Ordering | None = None,
    highlight: Highlight | None = None,
) -> Generator[pa.RecordBatch, None, None]:
    """Every batch of ``entries`` (splits of the table at ``uri``) in ``schema``, in order.

    ``open_store``: the table's object store, opened on need; ``read``: the read
    options (split cache, decoder and page threads); ``search``/``conditions``: the
    query; ``companion_root``: where a companion table's Parquet files are (None: not
    a companion); ``options``: the read's options (a companion source's storage).
    ``parallel``, ``row_cap`` and ``stop_at`` as :func:`ordered_batches` takes them
    (``read.split_threads`` splits at once at most);
    ``scoring``: each split's hits carry their ``_score``; ``ordering``: each split
    keeps its own first rows by the keys; ``highlight``: snippet columns (all three
    as :func:`read_any_split` takes them).

    Raises:
        RowCapExceeded: more than ``row_cap`` rows.
    """
    cache = SplitCache(read.cache_directory, read.cache_max_bytes)
    refs = [entry.ref for entry in entries]
    companion_threads = beside_splits(
        read.companion_threads,
        splits_at_once(
            len(entries), parallel=parallel, stop_at=stop_at, threads=read.split_threads
        ),
    )
    op = oplog.current()
    with search_session() as session, cache.directories(uri, refs, open_store) as directory:

        def fetched(number: int) -> str:
            with oplog.timed("fetch"):
                return directory(number)

        def batches(number: int) -> Iterator[pa.RecordBatch]:
            split = functools.partial(
                read_any_split,
                entry=entries[number],
                schema=schema,
                search=search,
                conditions=conditions,
                companion_root=companion_root,
                companion_options=options,
                docstore_threads=read.docstore_threads,
                companion_threads=companion_threads,
                cache_session=session,
                scoring=scoring,
                ordering=ordering,
                highlight=highlight,
            )
            found = cache.batches(uri, refs[number], open_store, split, directory=fetched(number))
            return oplog.split_read(op, refs[number].path, found)

        yield from ordered_batches(
            batches,
            len(entries),
            parallel=parallel,
            row_cap=row_cap,
            stop_at=stop_at,
            threads=read.split_threads,
        )
