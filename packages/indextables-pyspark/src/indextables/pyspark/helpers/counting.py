"""``itp.count``: the engine's count (:mod:`indextables.search.aggregate.tablecount`) on Spark.

The engine answers from the log (only partition columns constrained) or from
Tantivy's count per split; :mod:`.indexplan` runs large plans as Spark tasks.
When the index cannot answer exactly (a ``where`` conjunct that is not
translated, or one the index answers only as a superset on some split), the
count is Spark's over the normal read of the same pinned version: the answer
always equals ``spark.read ... .where().count()``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from indextables.pyspark.helpers.indexplan import plan
from indextables.search.aggregate.tablecount import count_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_LOG = logging.getLogger(__name__)


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
    found, source = count_table(
        index_plan.table,
        lambda: int(index_plan.spark_frame(spark, where).count()),
        runner=index_plan.runner(spark, "count"),
    )
    answered = "Spark read" if source == "rows" else source
    _LOG.debug("count of %s v%d answered from the %s", path, index_plan.version, answered)
    return found
