"""``itp.count``: the number of rows a search returns, from the log or the index.

- Nothing but partition columns constrained: the sum of the log's
  ``num_records`` of the splits whose partition values satisfy the filter
  (no split is opened).
- Otherwise each split counts its matching documents with Tantivy, without
  fetching any (:func:`~indextables.search.query.indexexact.count`).
- When the index cannot answer exactly (a ``where`` conjunct that is not
  translated, or one the index answers only as a superset on some split, see
  :mod:`.indexexact`), the count is Spark's over the normal read of the same
  pinned version: the answer always equals ``spark.read ... .where().count()``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from indextables.pyspark.indexplan import IndexPlan, plan, run_splits, split_fields
from indextables.search.aggregate.aggmerge import NotExact
from indextables.search.query.casenotice import notice_case_mismatch
from indextables.search.query.conditions import Condition
from indextables.search.query.indexexact import count as index_count
from indextables.search.query.indexexact import exact_query, split_fully_indexed
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.splitreader import SplitEntry, open_split, split_traits

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def count(
    spark: SparkSession,
    path: str,
    *,
    where: str | None = None,
    query: str | None = None,
    textsearch: Mapping[str, str] | None = None,
    fieldmatch: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
    version: int | None = None,
    timestamp: Any = None,
) -> int:
    """How many rows of the table at ``path`` match the search and ``where``.

    Arguments are those of ``itp.search``; ``version`` / ``timestamp`` (epoch
    ms, ISO-8601 or datetime) time-travel like ``versionAsOf`` / ``timestampAsOf``.

    Raises:
        OptionError, QuerySyntaxError, FieldKindError, NotATableError: as ``itp.search``.
    """
    index_plan = plan(
        path,
        where=where,
        query=query,
        textsearch=textsearch,
        fieldmatch=fieldmatch,
        options=options,
        version=version,
        timestamp=timestamp,
    )
    try:
        return count_planned(spark, index_plan)
    except NotExact:
        return int(index_plan.spark_frame(spark, where).count())


def count_planned(spark: SparkSession, index_plan: IndexPlan) -> int:
    """The count of a plan from the log or the index.

    Raises:
        NotExact: the index cannot answer exactly.
    """
    if not index_plan.exact_where or any(s.decided is None for s in index_plan.splits):
        raise NotExact("a where conjunct is not answered exactly by the index")
    from_log = [s.num_records for s in index_plan.splits]
    if index_plan.search.is_empty and not index_plan.conditions and None not in from_log:
        return sum(n for n in from_log if n is not None)
    counter = functools.partial(
        count_split, search=index_plan.search, conditions=index_plan.conditions
    )
    results = run_splits(spark, index_plan, counter, what="count")
    if any(r is None for r in results):
        raise NotExact("a split cannot be counted exactly")
    return sum(r for r in results if r is not None)


def count_split(
    directory: str,
    entry: SplitEntry,
    *,
    search: SearchSpec,
    conditions: Sequence[Condition],
) -> int | None:
    """One split's matching rows, or None when the index cannot count them exactly."""
    index, searcher = open_split(directory)
    if searcher.num_docs == 0:
        return 0
    fields = split_fields(entry)
    prefixed = (c.column.lower() for c in conditions if c.op == "prefix" and not c.path)
    fully_indexed = split_fully_indexed(index, searcher, fields, entry.split_tags, prefixed)
    try:
        traits = split_traits(directory)
        query = exact_query(
            index, searcher, fields, search, conditions, fully_indexed, traits.exact_dates
        )
    except NotExact:
        return None
    count = index_count(searcher, query)
    if count == 0 and search.query:
        notice_case_mismatch(searcher, search.query, fields)
    return count
