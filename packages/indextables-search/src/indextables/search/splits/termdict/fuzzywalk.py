"""The terms of an FST-form dictionary within an edit distance of a term, by a pruned walk.

A fuzzy term (``f:helo~1``) stands for every term of the field within the
distance: optimal string alignment over characters (an insertion, a deletion, a
substitution or a transposition of two neighbouring characters, one edit each),
as Tantivy's fuzzy query and the reference count it. Listing every term and
measuring each costs the whole dictionary (a unique id in every row makes it
millions of terms per split); :func:`fst_near_terms` walks the FST depth first
instead, carrying the edit-distance row of the prefix walked so far, and leaves
a branch as soon as every cell of that row is past the distance: no extension of
that prefix can come back within it (a row's cells never drop below the row
before's minimum, a transposition included). Only the prefixes within the
distance of some prefix of the term are visited: a few thousand nodes for a short
term, whatever the dictionary's size.

Terms come out in the dictionary's (byte) order, as tantivy lists them. The walk
is a term-dictionary kernel (``fst_near``: compiled, and its pure twin in
``_kernels_py``, chosen by :mod:`.impl`).
"""

from __future__ import annotations

from collections.abc import Iterable

from indextables.search.splits.termdict import impl

__all__ = ["fst_near_terms", "merged_near_terms"]


def fst_near_terms(fst: bytes | memoryview, term: str, distance: int, most: int) -> list[str]:
    """The keys of the tantivy-fst map ``fst`` within ``distance`` edits of ``term``, in
    key order, at most ``most + 1`` of them (one more than ``most`` says "too many").

    Keys that are not UTF-8 are never near (a fuzzy term searches text).

    Raises:
        TermDictError: a damaged FST.
    """
    if distance < 0:
        raise ValueError(f"distance={distance!r} must be >= 0")
    keys = impl.kernels().fst_near(fst, term, distance, most)
    return [key.decode("utf-8") for key in keys]


def merged_near_terms(parts: Iterable[list[str]], most: int) -> list[str]:
    """The terms of several segments' walks as one sorted list without repeats (by their
    UTF-8 bytes, the dictionary's order), at most ``most + 1`` of them."""
    merged = sorted({t for part in parts for t in part}, key=lambda t: t.encode("utf-8"))
    return merged[: most + 1]
