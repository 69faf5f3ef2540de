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
from typing import TYPE_CHECKING

from indextables.pyspark.helpers.indexplan import plan
from indextables.pyspark.read.searchargs import SearchArgs
from indextables.search import oplog
from indextables.search.aggregate.tablecount import count_table
from indextables.storage.redaction import redact_uri

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_LOG = logging.getLogger(__name__)


@oplog.logged(_LOG, "count", uri="args.path", fields=lambda found: {"rows": found})
def count(spark: SparkSession, args: SearchArgs) -> int:
    """How many rows of the table at ``args.path`` match the search and ``args.where``.

    Raises:
        OptionError, QuerySyntaxError, FieldKindError, NotATableError: as ``itp.search``.
    """
    index_plan = plan(args)
    found, source = count_table(
        index_plan.table,
        lambda: int(index_plan.spark_frame(spark, args.where).count()),
        runner=index_plan.runner(spark, "count"),
    )
    answered = "Spark read" if source == "rows" else source
    oplog.note_fields(source=answered)
    shown = redact_uri(args.path)
    _LOG.debug("count of %s v%d answered from the %s", shown, index_plan.version, answered)
    return found
