"""Paths in the log must stay inside the table root.

An ``add`` or ``remove`` path is relative to the table root. A path that is
absolute, names another scheme (``s3://``, ``file:``), or climbs out with
``..`` would let a crafted log make readers fetch, or purge delete, files that
belong to something else: decoders refuse them.
"""

from __future__ import annotations

import re
from typing import Final

from indextables.protocol.errors import UnsafePathError

__all__ = ["PATH_PROBLEMS", "check_relative_path", "path_problem"]

# What can be wrong with a path, in the order the checks run (the compiled
# avro-state decoder reports these same texts by index).
PATH_PROBLEMS: Final = (
    "is empty",
    "is absolute",
    "names a scheme or drive (only table-relative paths are allowed)",
    "escapes the table root with '..'",
)

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def check_relative_path(path: str, *, file: str) -> str:
    """Return ``path`` if it is a safe table-relative path.

    Args:
        path: the path as written in the log.
        file: the log file it came from, for the error message.

    Raises:
        UnsafePathError: the path is empty, absolute, has a scheme or a
            drive letter, or has a ``..`` segment.
    """
    problem = path_problem(path)
    if problem is not None:
        raise UnsafePathError(f"{file}: path {path!r} {problem}")
    return path


def path_problem(path: str) -> str | None:
    """What makes ``path`` unsafe (one of :data:`PATH_PROBLEMS`), or None when it is safe."""
    if not path:
        return PATH_PROBLEMS[0]
    if path.startswith(("/", "\\")):
        return PATH_PROBLEMS[1]
    if _SCHEME.match(path):
        return PATH_PROBLEMS[2]
    if any(part == ".." for part in re.split(r"[/\\]", path)):
        return PATH_PROBLEMS[3]
    return None
