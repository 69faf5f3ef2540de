"""Counting a table's matching rows from the log or the index (``SearchTable.count``).

- Nothing but partition columns constrained (and no search): the sum of the
  log's ``num_records`` of the splits whose partition values satisfy the
  conditions; no split is opened.
- A count whose only condition is on an exact string field sums the matching
  terms' document frequencies on splits without deletes where the field is
  single-valued (:mod:`~indextables.search.aggregate.termcount`): no posting
  list is opened.
- Otherwise each split counts its matching documents with Tantivy, without
  fetching any (:func:`~indextables.search.query.indexexact.count`).
- When the index cannot answer exactly (a ``where`` conjunct that is not
  translated, a partition condition undecidable from the log, or a condition
  the index answers only as a superset on some split, see
  :mod:`~indextables.search.query.indexexact`), :func:`count_plan` raises
  :class:`~indextables.search.aggregate.aggmerge.NotExact` and the caller
  counts the rows its exact ``where`` filter keeps.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from indextables.search.aggregate.aggmerge import NotExact
from indextables.search.aggregate.tableplan import SplitRunner, TablePlan, run_splits
from indextables.search.aggregate.termcount import summed_count
from indextables.search.boundedcache import BoundedCache
from indextables.search.query.casenotice import notice_case_mismatch
from indextables.search.query.conditions import Condition
from indextables.search.query.indexexact import LIKE_OPS, exact_query, split_fully_indexed
from indextables.search.query.indexexact import count as index_count
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, open_split, split_traits
from indextables.search.schema.mapping import FieldSpec, specs_from_doc_mapping
from indextables.search.splits.entryid import content_identity

__all__ = ["count_plan", "count_split", "count_table"]


def count_table(
    plan: TablePlan, rows: Callable[[], int], *, runner: SplitRunner | None = None
) -> tuple[int, str]:
    """The plan's count and what answered it: ``"log"``, ``"index"`` or ``"rows"``.

    ``rows`` counts the rows the exact filter keeps (the fallback: the engine
    reads them, the Spark adapter asks Spark); ``runner`` runs the splits
    (:func:`~.tableplan.run_splits`).
    """
    try:
        return count_plan(plan, runner=runner)
    except NotExact:
        return rows(), "rows"


def count_plan(plan: TablePlan, *, runner: SplitRunner | None = None) -> tuple[int, str]:
    """The count of a plan from the log (``"log"``) or the index (``"index"``).

    Raises:
        NotExact: the index cannot answer exactly.
    """
    if not plan.decided:
        raise NotExact("a where conjunct is not answered exactly by the index")
    from_log = [s.num_records for s in plan.splits]
    if plan.search.is_empty and not plan.conditions and None not in from_log:
        return sum(n for n in from_log if n is not None), "log"
    counter = functools.partial(count_split, search=plan.search, conditions=plan.conditions)
    results = run_splits(plan, counter, runner=runner)
    if any(r is None for r in results):
        raise NotExact("a split cannot be counted exactly")
    return sum(r for r in results if r is not None), "index"


def count_split(
    directory: str,
    entry: SplitEntry,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
) -> int | None:
    """One split's matching rows, or None when the index cannot count them exactly."""
    identity = content_identity(directory)
    index, searcher = open_split(directory, identity=identity)
    if searcher.num_docs == 0:
        return 0
    fields = specs_from_doc_mapping(entry.doc_mapping_json) if entry.doc_mapping_json else {}
    summed = summed_count(
        directory,
        identity,
        index,
        searcher,
        fields,
        entry,
        search,
        conditions,
        lambda columns: split_fully_indexed(index, searcher, fields, entry.split_tags, columns),
    )
    if summed is not None:
        return summed
    key = _query_key(directory, identity, entry, search, conditions)
    query = _queries.get(key) if key is not None else None
    if query is None:
        query = _split_query(
            directory, identity, index, searcher, fields, entry, search, conditions
        )
        if key is not None:
            _queries.put(key, query)
    if query is _NOT_EXACT:
        return None
    found = index_count(searcher, query)
    if found == 0 and search.query:
        notice_case_mismatch(searcher, search.query, fields)
    return found


# A split's exact count query per (entry directory and its content identity, as
# open_split keys its searchers; split tags, doc mapping, search and its expansion limit,
# conditions): a repeated count parses and checks nothing again. Queries hold no index
# (no split is kept open).
_QUERIES = 256
_queries: BoundedCache[tuple[Any, ...], Any] = BoundedCache(max_entries=_QUERIES)
_NOT_EXACT: Any = object()


def _query_key(
    directory: str,
    identity: str,
    entry: SplitEntry,
    search: SearchSpec,
    conditions: Sequence[Condition],
) -> tuple[Any, ...] | None:
    key = (
        os.getpid(),
        directory,
        identity,  # as open_split keys its searchers: never an inode (they are reused)
        entry.doc_mapping_json,
        entry.split_tags,
        search.query,
        tuple(sorted(search.text_search.items())),
        tuple(sorted(search.field_match.items())),
        search.max_term_expansions,  # a wildcard refused under one limit is not under another
        tuple(conditions),
    )
    try:
        hash(key)
    except TypeError:
        return None  # an unhashable operand: not cached
    return key


def _split_query(
    directory: str,
    identity: str,
    index: Any,
    searcher: Any,
    fields: Mapping[str, FieldSpec],
    entry: SplitEntry,
    search: SearchSpec,
    conditions: Sequence[Condition],
) -> Any:
    """The split's exact query, or :data:`_NOT_EXACT`."""
    patterned = (c.column.lower() for c in conditions if c.op in LIKE_OPS and not c.path)
    fully_indexed = split_fully_indexed(index, searcher, fields, entry.split_tags, patterned)
    try:
        traits = split_traits(directory, identity=identity)
        return exact_query(
            index, searcher, fields, search, conditions, fully_indexed, traits.exact_dates
        )
    except NotExact:
        return _NOT_EXACT
