"""Files of an unbundled split (an index directory): listing those of one kind, and
replacing one in place while the open index may still map it."""

from __future__ import annotations

import os
import uuid

__all__ = ["files_of_kind", "replace_by_rename"]


def files_of_kind(directory: str, suffix: str) -> list[str]:
    """The paths of the files in ``directory`` whose names end with ``suffix`` (e.g.
    ``".term"``, ``".store"``), in name order."""
    return [
        os.path.join(directory, name)
        for name in sorted(os.listdir(directory))
        if name.endswith(suffix)
    ]


def replace_by_rename(path: str, data: bytes) -> None:
    """Replace the file at ``path`` by one holding ``data``: written beside it under a
    unique name, then renamed over it (a reader that mapped the old file keeps it)."""
    staging = f"{path}.{uuid.uuid4().hex}.tmp"
    with open(staging, "wb") as handle:
        handle.write(data)
    os.replace(staging, path)
