"""A field's terms within an edit distance, read from an unbundled split's term files.

The split cache holds every split in tantivy-py's form: each segment's ``.term``
file is a composite of one FST-form dictionary per indexed field (field id: its
place in ``meta.json``'s schema). :func:`split_near_terms` walks those FSTs with
:func:`~.termdict.fuzzywalk.fst_near_terms` (segment by segment, the results
merged), touching only the branches within the distance.

An opened Tantivy index is tied to its directory by :func:`remember_directory`
(:func:`~indextables.search.read.splitreader.open_split` calls it), so query
building, which is handed the index, finds the files: :func:`near_terms_of`.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from collections.abc import Callable
from typing import Any, Final

from indextables.search.boundedcache import BoundedCache
from indextables.search.splits.termdict.composite import FOOTER_MAGIC, split_composite
from indextables.search.splits.termdict.errors import TermDictError
from indextables.search.splits.termdict.fuzzywalk import fst_near_terms, merged_near_terms

__all__ = ["NearTerms", "directory_of", "near_terms_of", "remember_directory", "split_near_terms"]

NearTerms = Callable[[str, str, int, int], "list[str] | None"]
"""``(field, term, distance, most)`` -> the field's terms within ``distance`` of ``term``
(at most ``most + 1``), or None when the split's files cannot answer (the caller then
lists the terms through Tantivy)."""

_FST_TAIL: Final = struct.Struct("<QII")
_U32: Final = struct.Struct("<I")
_DICT_TYPE_FST: Final = 1

# id(index) -> (index, directory), the most recently tied ones (as many as the split
# reader keeps open): the index itself is kept so that an id reused by another object
# is never taken for it. A tie dropped only costs the walk (the caller lists terms).
_directories: BoundedCache[int, tuple[Any, str]] = BoundedCache(max_entries=128)


def remember_directory(index: Any, directory: str) -> None:
    """Tie the opened ``index`` to the split directory it was opened from."""
    _directories.put(id(index), (index, directory))


def directory_of(index: Any) -> str | None:
    """The split directory ``index`` was opened from (None: unknown)."""
    found = _directories.get(id(index))
    return None if found is None or found[0] is not index else found[1]


def near_terms_of(index: Any) -> NearTerms | None:
    """The near-terms reader of the split ``index`` was opened from (None: unknown)."""
    found = _directories.get(id(index))
    if found is None or found[0] is not index:
        return None
    directory = found[1]

    def near(field: str, term: str, distance: int, most: int) -> list[str] | None:
        return split_near_terms(directory, field, term, distance, most)

    return near


def split_near_terms(
    directory: str, field: str, term: str, distance: int, most: int
) -> list[str] | None:
    """The terms of ``field`` in the split at ``directory`` within ``distance`` edits of
    ``term``, in byte order, at most ``most + 1``; None when the files do not answer (no
    such field, a dictionary not in the FST form, a file not readable)."""
    try:
        with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
            meta = json.load(source)
        names = [str(entry.get("name")) for entry in meta.get("schema", [])]
        if field not in names:
            return None
        field_id = names.index(field)
        parts = []
        for segment in meta.get("segments", []):
            path = os.path.join(directory, str(segment["segment_id"]).replace("-", "") + ".term")
            fst = _field_fst(path, field_id)
            if fst is None:
                return None
            parts.append(fst_near_terms(fst, term, distance, most) if len(fst) else [])
        return merged_near_terms(parts, most)
    except (OSError, ValueError, KeyError, TermDictError):
        return None


def _field_fst(path: str, field_id: int) -> memoryview | None:
    """The FST of field ``field_id`` in the ``.term`` file at ``path`` (empty: the
    segment holds no term of it), or None when the dictionary is not the FST form."""
    with open(path, "rb") as source:
        size = os.fstat(source.fileno()).st_size
        if size < 8:
            raise TermDictError(f"{path}: too short for a term file")
        data = memoryview(mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ))
    if _U32.unpack_from(data, size - 4)[0] != FOOTER_MAGIC:
        raise TermDictError(f"{path}: no file footer")
    footer = _U32.unpack_from(data, size - 8)[0]
    body = data[: size - 8 - footer]
    for blob in split_composite(body):  # type: ignore[arg-type]
        if blob.field != field_id:
            continue
        dictionary = blob.data
        if len(dictionary) < _FST_TAIL.size:
            raise TermDictError(f"{path}: field {field_id}'s dictionary is too short")
        tis_len, _, kind = _FST_TAIL.unpack_from(dictionary, len(dictionary) - _FST_TAIL.size)
        if kind != _DICT_TYPE_FST:
            return None
        end = len(dictionary) - _FST_TAIL.size - tis_len
        if end < 0:
            raise TermDictError(f"{path}: field {field_id}'s TermInfoStore overruns it")
        return memoryview(dictionary)[:end]
    return memoryview(b"")
