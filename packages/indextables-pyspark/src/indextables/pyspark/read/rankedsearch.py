"""Ranked, sorted and highlighted searches (``itp.search(order_by=, highlight=)``).

An ordered search keeps only its first ``limit`` rows, so it always runs in the
driver through the engine's :meth:`~indextables.search.SearchTable.search`: each
split gives its own first rows, merged into a buffer of ``limit`` rows (memory
bounded by ``limit``, whatever the number of hits); a highlighted search adds its
snippet columns there too. The answer is a DataFrame over those rows, the table's
columns then ``_score`` (float) and ``_snippet_<column>`` (string) when asked.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from indextables.pyspark.read.arrowframe import arrow_dataframe
from indextables.pyspark.read.datasource import IndexTablesDataSource, table_schema
from indextables.pyspark.read.searchargs import SearchArgs
from indextables.search import oplog
from indextables.search.read.snippets import snippet_name
from indextables.search.read.topk import SCORE
from indextables.search.searchtable import SearchTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["ranked_search"]


_LOG = logging.getLogger(__name__)


@oplog.logged(_LOG, "search", uri="args.path")
def ranked_search(
    spark: SparkSession,
    args: SearchArgs,
    *,
    limit: int | None,
    order_by: str | Sequence[str] | None,
    highlight: Sequence[str] | None,
    snippet_chars: int | None,
) -> DataFrame:
    """The rows of the search ``args`` in ``order_by`` (the first ``limit``) with the
    snippet columns of ``highlight``, as a DataFrame (see the module docstring).

    Raises:
        ArgumentError: bad ``order_by``/``highlight``/``snippet_chars`` (as
            :meth:`SearchTable.search` raises them), or ``order_by`` without ``limit``.
        CompanionError: ``_score`` on a companion index.
    """
    from pyspark.sql.types import FloatType, StringType, StructField, StructType

    read_options = args.read_options()
    view = IndexTablesDataSource(read_options).view()
    found = SearchTable(view, read_options).search(
        args.query,
        where=args.where,
        textsearch=args.textsearch,
        fieldmatch=args.fieldmatch,
        limit=limit,
        order_by=order_by,
        highlight=highlight,
        snippet_chars=snippet_chars,
    )
    fields = list(table_schema(view).fields)
    names = set(found.column_names)
    if SCORE in names:
        fields.append(StructField(SCORE, FloatType(), True))
    snippets = [n for n in found.column_names if n.startswith(snippet_name(""))]
    fields.extend(StructField(n, StringType(), True) for n in snippets)
    return arrow_dataframe(spark, found.combine_chunks().to_batches(), StructType(fields))
