"""A table path resolved once, in the process it was given to; executors never resolve it.

Spark hands a Python data source the path of ``.save("logs")`` / ``.load("logs")`` as
written. Left relative, each process would resolve it against its own working
directory: the driver's for the log, each executor's work directory for the splits
(``local-cluster`` and standalone executors run in ``work/app-*/<id>``). Spark's own
file sources resolve such a path against the driver's working directory; so does
:func:`absolute_table_path`, called where the path is given: the data source's planning
callbacks (a Python worker of the driver, in the driver's working directory) and the
``itp.*`` helpers and SQL commands (the caller's process, against its session's driver
JVM directory). The absolute path is what the plan and the tasks carry.

A planning worker of a session with its own artifacts (a Spark Connect session) runs
in a directory of that session, not the driver's: a relative path there is refused
(:func:`planning_table_path`) rather than written into a directory the session removes.
"""

from __future__ import annotations

import os
from typing import Any

from indextables.search.errors import OptionError
from indextables.storage.uris import scheme_of

__all__ = ["absolute_table_path", "planning_table_path"]

# Set by Spark for a Python worker of a session with isolated artifacts (Spark Connect):
# the worker then runs in that session's directory. "default" (or unset) otherwise.
_SESSION_ENV = "SPARK_JOB_ARTIFACT_UUID"


def absolute_table_path(path: str, spark: Any = None) -> str:
    """``path`` made absolute when it is a relative local path (``~`` expanded too); URIs
    (``s3://``, ``file:``...) and absolute paths as given.

    It is resolved against the working directory of ``spark``'s driver JVM when the
    session has one in this process (where Spark's file sources and the data source's
    planning resolve it, even after this process changed directory), else against this
    process's.
    """
    if not _needs_resolving(path):
        return path
    expanded = os.path.expanduser(path)
    base = _driver_directory(spark) if not os.path.isabs(expanded) else None
    return os.path.abspath(os.path.join(base, expanded) if base else expanded)


def planning_table_path(path: str) -> str:
    """:func:`absolute_table_path` in a data source callback on the driver.

    Raises:
        OptionError: a relative path in a session-isolated worker (Spark Connect),
            whose working directory is not the driver's.
    """
    if _needs_resolving(path) and os.environ.get(_SESSION_ENV, "default") != "default":
        raise OptionError(
            f"table path {path!r} is relative: over Spark Connect (a session with its own "
            "artifacts) Python workers do not run in the driver's working directory; give "
            "an absolute path or a URI (file:///..., s3://...)"
        )
    return absolute_table_path(path)


def _driver_directory(spark: Any) -> str | None:
    """The driver JVM's working directory (``user.dir``) of a classic session, else None."""
    context = getattr(spark, "_sc", None)
    jvm = getattr(context, "_jvm", None)
    if jvm is None:
        return None  # a Spark Connect client, or no session
    try:
        directory = jvm.java.lang.System.getProperty("user.dir")
    except Exception:  # a stopped session: this process's directory then
        return None
    return directory if isinstance(directory, str) and os.path.isabs(directory) else None


def _needs_resolving(path: str) -> bool:
    if scheme_of(path) != "file" or path[:5].lower() == "file:":
        return False
    return path.startswith("~") or not os.path.isabs(path)
