"""A private split cache directory for each test session (never the user's default one).

A suite's conftest.py calls :func:`start` from ``pytest_configure`` and
:func:`stop` from ``pytest_unconfigure``. The directory is passed by the
environment variable the engine's :func:`default_cache_dir` honours, so Spark's
Python workers and scripts the tests start (subprocesses) use it too.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from indextables.search.splits.splitcache import CACHE_DIR_ENV

_sessions: list[tuple[str, str | None]] = []


def start() -> str:
    """Point the default split cache at a new private directory; its path."""
    directory = tempfile.mkdtemp(prefix="indextables-test-cache-")
    _sessions.append((directory, os.environ.get(CACHE_DIR_ENV)))
    os.environ[CACHE_DIR_ENV] = directory
    return directory


def stop() -> None:
    """Restore the environment and remove the session's directory."""
    directory, before = _sessions.pop()
    if before is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = before
    shutil.rmtree(directory, ignore_errors=True)
