"""``spark.indextables.*`` session settings for the ``itp.*`` helpers.

PySpark's Python data source sees only ``.option()`` values: the JVM side has
no session-configuration support for Python sources, and the worker running
the source has no session. The helpers (``itp.search``, ``textsearch``,
``fieldmatch``, ``write``, ``sql``) run in the driver, so they read the
session's ``spark.indextables.*`` settings and pass them on as options, under
the options given to the call (an explicit option wins, whatever its case).
With ``spark.read`` / ``df.write`` directly, pass the same keys with
``.options(**session_options(spark))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PREFIX = "spark.indextables."


def session_settings(spark: SparkSession) -> dict[str, str]:
    """The session's ``spark.indextables.*`` settings (``spark.conf``)."""
    every: Mapping[str, Any] = spark.conf.getAll
    return {str(k): str(v) for k, v in every.items() if str(k).lower().startswith(PREFIX)}


def session_options(
    spark: SparkSession, options: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """``options`` over the session's ``spark.indextables.*`` settings (options win).

    Example:
        >>> spark.conf.set("spark.indextables.aws.region", "eu-west-1")  # doctest: +SKIP
        >>> spark.read.format("indextables").options(**session_options(spark))  # doctest: +SKIP
    """
    given = {str(k): str(v) for k, v in (options or {}).items()}
    explicit = {k.lower() for k in given}
    merged = {k: v for k, v in session_settings(spark).items() if k.lower() not in explicit}
    merged.update(given)
    return merged
