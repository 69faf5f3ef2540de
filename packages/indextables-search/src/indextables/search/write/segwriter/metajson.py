"""An index's ``meta.json`` listing segments the writer made, and Tantivy's ``.managed.json``.

The index directory already holds the ``meta.json`` of its empty index (what
:func:`indextables.search.schema.mapping.create_index` writes: index settings, the
schema as the doc mapping gives it, no segment). :func:`list_segments` adds one entry
per segment (``{"segment_id": <uuid with dashes>, "max_doc": n, "deletes": null}``) and
sets the opstamp as one commit of every document would (documents + 1), keeping the
rest as it is. ``.managed.json`` names every file Tantivy manages (the segments' files
and ``meta.json``), so a later Tantivy writer's garbage collection knows them.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from indextables.search.write.segwriter.errors import SegmentWriteError
from indextables.search.write.segwriter.segment import SEGMENT_EXTENSIONS

__all__ = ["META_FILE", "MANAGED_FILE", "SegmentEntry", "list_segments", "read_meta"]

META_FILE = "meta.json"
MANAGED_FILE = ".managed.json"


@dataclass(frozen=True, slots=True)
class SegmentEntry:
    """One segment of the index: its id (32 hex digits) and document count."""

    segment_id: str
    max_doc: int

    def to_json(self) -> dict[str, Any]:
        """The segment's ``meta.json`` entry."""
        try:
            dashed = str(uuid.UUID(hex=self.segment_id))
        except ValueError:
            raise SegmentWriteError(
                f"segment id {self.segment_id!r} is not 32 hex digits"
            ) from None
        if not 0 < self.max_doc < 1 << 31:
            raise SegmentWriteError(
                f"segment {self.segment_id}: max_doc {self.max_doc} out of range"
            )
        return {"segment_id": dashed, "max_doc": self.max_doc, "deletes": None}


def read_meta(directory: str) -> dict[str, Any]:
    """The index's ``meta.json``.

    Raises:
        SegmentWriteError: no ``meta.json`` there, or not a JSON object.
    """
    path = os.path.join(directory, META_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            meta = json.load(handle)
    except FileNotFoundError:
        raise SegmentWriteError(f"{path}: no meta.json (create the index first)") from None
    except ValueError as exc:
        raise SegmentWriteError(f"{path}: not JSON ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("schema"), list):
        raise SegmentWriteError(f"{path}: not an index's meta.json")
    return meta


def list_segments(directory: str, segments: Sequence[SegmentEntry]) -> dict[str, Any]:
    """Add ``segments`` to the index's ``meta.json`` and write ``.managed.json``.

    Returns the new ``meta.json`` content.

    Raises:
        SegmentWriteError: see :func:`read_meta`; a segment whose files are missing.
    """
    meta = read_meta(directory)
    entries = list(meta.get("segments") or [])
    for segment in segments:
        for ext in SEGMENT_EXTENSIONS:
            if not os.path.exists(os.path.join(directory, f"{segment.segment_id}.{ext}")):
                raise SegmentWriteError(f"segment {segment.segment_id}: no .{ext} file")
        entries.append(segment.to_json())
    meta["segments"] = entries
    documents = sum(int(entry["max_doc"]) for entry in entries)
    meta["opstamp"] = documents + 1 if entries else int(meta.get("opstamp", 0))
    _write_json(os.path.join(directory, META_FILE), json.dumps(meta, indent=2) + "\n")
    managed = [META_FILE]
    for entry in entries:
        hex_id = uuid.UUID(entry["segment_id"]).hex
        managed.extend(f"{hex_id}.{ext}" for ext in SEGMENT_EXTENSIONS)
    _write_json(os.path.join(directory, MANAGED_FILE), json.dumps(sorted(managed)))
    return meta


def _write_json(path: str, text: str) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
