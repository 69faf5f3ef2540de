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

__all__ = [
    "PATH_PROBLEMS",
    "check_new_key",
    "check_relative_path",
    "key_problem",
    "path_problem",
]

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


# Name prefix of the local store's temporary files (indextables-storage's
# ``keys.TEMP_MARKER``): the stores refuse a key with a segment starting with it.
_STORE_TEMP_MARKER: Final = ".indextables-tmp-"


def key_problem(path: str) -> str | None:
    """What keeps ``path`` from being a key every store accepts, or None.

    Stricter than :func:`path_problem` (what readers refuse): the stores
    (indextables-storage) also refuse empty segments (``a//b``, a trailing
    ``/``), ``.`` segments, NUL bytes, lone surrogates and their temporary-file names. Readers
    keep accepting such paths in existing logs; writers must not create them.
    """
    problem = path_problem(path)
    if problem is not None:
        return problem
    if "\x00" in path:
        return "holds a NUL byte"
    if not path.isascii():
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            return "holds a lone surrogate (not UTF-8)"
    for segment in path.split("/"):
        if segment == "":
            return "has an empty segment ('//' or a trailing '/')"
        if segment == ".":
            return "has a '.' segment"
        if segment.startswith(_STORE_TEMP_MARKER):
            return f"has a segment starting with the stores' reserved {_STORE_TEMP_MARKER!r}"
    return None


def check_new_key(path: str, *, file: str) -> str:
    """Return ``path`` if a writer may create it: safe (see :func:`check_relative_path`)
    and a key every store accepts (see :func:`key_problem`).

    Raises:
        UnsafePathError: naming the path and what is wrong with it.
    """
    problem = key_problem(path)
    if problem is not None:
        raise UnsafePathError(f"{file}: path {path!r} {problem}")
    return path
