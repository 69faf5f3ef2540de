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

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PREFIX = "spark.indextables."


def session_settings(spark: SparkSession) -> dict[str, str]:
    """The session's ``spark.indextables.*`` settings (``spark.conf``)."""
    found = _settings_by_name(spark)
    if found is not None:
        return found
    every: Mapping[str, Any] = spark.conf.getAll
    return {str(k): str(v) for k, v in every.items() if str(k).lower().startswith(PREFIX)}


def _settings_by_name(spark: SparkSession) -> dict[str, str] | None:
    """The settings read in a few Py4J calls, or None where that path is unavailable.

    ``spark.conf.getAll`` walks the JVM's map one Py4J call per entry and ends
    on a Java exception that PySpark converts: ~20 ms per helper call, paid by
    every interactive search. Here the JVM joins every key into one string,
    and only the ``spark.indextables.*`` values are fetched one by one.
    """
    jvm = getattr(spark, "_jvm", None)
    jconf = getattr(getattr(spark, "conf", None), "_jconf", None)
    if jvm is None or jconf is None:
        return None  # Spark Connect: no JVM in this process
    try:
        settings = jconf.getAllAsJava()
        keys = str(_java_string(jvm).join(_SEPARATOR, settings.keySet()))
        names = keys.split(_SEPARATOR) if keys else []
        if len(names) != int(settings.size()):
            return None  # a key holding the separator: take the slow, exact path
        return {name: str(settings.get(name)) for name in names if name.lower().startswith(PREFIX)}
    except Exception:  # any Py4J surprise: the public path answers instead
        return None


_SEPARATOR = "\u0000"
# JVM view -> its java.lang.String class: resolving it walks the package names over Py4J
# (three round trips, ~1 ms a helper call)
_strings: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _java_string(jvm: Any) -> Any:
    found = _strings.get(jvm)
    if found is None:
        found = _strings[jvm] = jvm.java.lang.String
    return found


def session_options(
    spark: SparkSession, options: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """``options`` over the session's ``spark.indextables.*`` settings (options win).

    Example:
        >>> spark.conf.set("spark.indextables.aws.region", "eu-west-1")  # doctest: +SKIP
        >>> spark.read.format("indextables").options(**session_options(spark))  # doctest: +SKIP
    """
    from indextables.search.options import check_option_keys

    given = {str(k): str(v) for k, v in (options or {}).items()}
    check_option_keys(given)
    explicit = {k.lower() for k in given}
    merged = {k: v for k, v in session_settings(spark).items() if k.lower() not in explicit}
    merged.update(given)
    return merged
