"""Paths in the log must stay inside the table root.

An ``add`` or ``remove`` path is relative to the table root. A path that is
absolute, names another scheme (``s3://``, ``file:``), or climbs out with
``..`` would let a crafted log make readers fetch, or purge delete, files that
belong to something else: decoders refuse them.
"""

from __future__ import annotations

import re

from indextables.protocol.errors import UnsafePathError

__all__ = ["check_relative_path"]

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
    problem = _problem(path)
    if problem is not None:
        raise UnsafePathError(f"{file}: path {path!r} {problem}")
    return path


def _problem(path: str) -> str | None:
    if not path:
        return "is empty"
    if path.startswith(("/", "\\")):
        return "is absolute"
    if _SCHEME.match(path):
        return "names a scheme or drive (only table-relative paths are allowed)"
    if any(part == ".." for part in re.split(r"[/\\]", path)):
        return "escapes the table root with '..'"
    return None
