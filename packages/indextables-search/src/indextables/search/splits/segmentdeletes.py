"""Deleting documents of an unbundled split in place, as Tantivy records deletes.

For each segment with new deletes: a new alive bitset (the existing one's deletes
OR-ed with the new ones) is written as ``<segment>.<opstamp>.del``, the old delete
file is dropped, and the segment's ``meta.json`` entry gets ``"deletes":
{"num_deleted_docs": n, "opstamp": o}``; the index's opstamp moves to ``o``, one
past the old one (as a Tantivy commit does). ``.managed.json`` lists the new file
names. No other file changes: nothing is re-indexed. Any Tantivy reader
(tantivy-py, the reference) then skips the deleted documents by itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from indextables.search.splits.delbitset import (
    AliveBitset,
    DeleteFileError,
    delete_file_name,
    encode_alive_bitset,
    parse_alive_bitset,
)

__all__ = ["SplitDeletes", "add_deletes", "segment_alive"]

_META = "meta.json"
_MANAGED = ".managed.json"


@dataclass(frozen=True, slots=True)
class SplitDeletes:
    """What :func:`add_deletes` did to one split.

    Attributes:
        opstamp: the index's new opstamp (the new delete files carry it).
        deleted: documents newly deleted.
        alive: documents still alive in the split.
    """

    opstamp: int
    deleted: int
    alive: int


def _read_meta(directory: str) -> dict[str, Any]:
    with open(os.path.join(directory, _META), encoding="utf-8") as handle:
        meta: dict[str, Any] = json.load(handle)
    return meta


def segment_alive(directory: str, segment: Mapping[str, Any]) -> AliveBitset:
    """The alive bitset of one ``meta.json`` segment entry (none deleted without a file).

    Raises:
        DeleteFileError: the delete file is missing, damaged or of another size.
    """
    max_doc = int(segment["max_doc"])
    deletes = segment.get("deletes")
    if not deletes:
        return AliveBitset(max_doc, frozenset())
    name = delete_file_name(str(segment["segment_id"]), int(deletes["opstamp"]))
    try:
        with open(os.path.join(directory, name), "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise DeleteFileError(f"delete file {name}: {error}") from None
    bitset = parse_alive_bitset(data, name=name)
    if bitset.max_doc != max_doc or bitset.num_deleted != int(deletes["num_deleted_docs"]):
        raise DeleteFileError(
            f"delete file {name}: {bitset.num_deleted} of {bitset.max_doc} documents deleted, "
            f"meta.json says {deletes['num_deleted_docs']} of {max_doc}"
        )
    return bitset


def add_deletes(directory: str, docs: Mapping[str, Iterable[int]]) -> SplitDeletes:
    """Delete ``docs`` (segment id as meta.json writes it -> doc ids) in the split at
    ``directory``; see the module's text.

    Raises:
        DeleteFileError: a segment id the split does not have, a doc id outside its
            segment, or an existing delete file that does not parse.
    """
    meta = _read_meta(directory)
    segments = meta.get("segments") or []
    known = {str(s.get("segment_id")) for s in segments}
    unknown = sorted(set(docs) - known)
    if unknown:
        raise DeleteFileError(f"segment {unknown[0]} is not in the split's meta.json")
    opstamp = int(meta.get("opstamp") or 0) + 1
    removed: list[str] = []
    written: list[str] = []
    deleted = alive = 0
    for segment in segments:
        segment_id = str(segment["segment_id"])
        old = segment_alive(directory, segment)
        wanted = docs.get(segment_id)
        new = old.with_deleted(wanted) if wanted is not None else old
        alive += new.max_doc - new.num_deleted
        if new.num_deleted == old.num_deleted:
            continue
        deleted += new.num_deleted - old.num_deleted
        if segment.get("deletes"):
            removed.append(delete_file_name(segment_id, int(segment["deletes"]["opstamp"])))
        name = delete_file_name(segment_id, opstamp)
        with open(os.path.join(directory, name), "wb") as handle:
            handle.write(encode_alive_bitset(new))
        written.append(name)
        segment["deletes"] = {"num_deleted_docs": new.num_deleted, "opstamp": opstamp}
    if not written:
        return SplitDeletes(int(meta.get("opstamp") or 0), 0, alive)
    for name in removed:
        os.remove(os.path.join(directory, name))
    meta["opstamp"] = opstamp
    with open(os.path.join(directory, _META), "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=2)
    _update_managed(directory, removed, written)
    return SplitDeletes(opstamp, deleted, alive)


def _update_managed(directory: str, removed: list[str], written: list[str]) -> None:
    path = os.path.join(directory, _MANAGED)
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as handle:
        names = json.load(handle)
    if not isinstance(names, list):
        return
    kept = [n for n in names if n not in set(removed)]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(sorted({*kept, *written}), handle)
