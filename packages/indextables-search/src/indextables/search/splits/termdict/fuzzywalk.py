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

Terms come out in the dictionary's (byte) order, as tantivy lists them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from indextables.search.splits.termdict._kernels_py import _fst_header, _parse_node
from indextables.search.splits.termdict.errors import TermDictError

__all__ = ["fst_near_terms", "merged_near_terms"]

_EMPTY_ADDRESS: Final = 0
#: The most bytes of one UTF-8 character.
_UTF8_MAX: Final = 4


def fst_near_terms(fst: bytes | memoryview, term: str, distance: int, most: int) -> list[str]:
    """The keys of the tantivy-fst map ``fst`` within ``distance`` edits of ``term``, in
    key order, at most ``most + 1`` of them (one more than ``most`` says "too many").

    Keys that are not UTF-8 are never near (a fuzzy term searches text).

    Raises:
        TermDictError: a damaged FST.
    """
    if distance < 0:
        raise ValueError(f"distance={distance!r} must be >= 0")
    data: bytes = fst  # type: ignore[assignment]  # the walk only indexes and slices
    _, root = _fst_header(data)
    target = term
    size = len(target)
    first = list(range(size + 1))
    found: list[str] = []
    # Each entry: (node address, key bytes so far, bytes of an unfinished character,
    # the row of the characters so far, the row before it, the last character).
    todo: list[tuple[int, bytes, bytes, list[int], list[int] | None, str]] = [
        (root, b"", b"", first, None, "")
    ]
    while todo:
        addr, key, pending, row, before, last = todo.pop()
        final, _, transitions = _parse_node(data, addr)
        if final and not pending and row[size] <= distance:
            found.append(key.decode("utf-8"))
            if len(found) > most:
                return found
        for byte, _, child in reversed(transitions):
            if child != _EMPTY_ADDRESS and child >= addr:
                raise TermDictError(f"fst transition at {addr} points forward to {child}")
            grown = pending + bytes((byte,))
            char = _complete_char(grown)
            if char is None:
                if len(grown) < _UTF8_MAX:
                    todo.append((child, key + bytes((byte,)), grown, row, before, last))
                continue
            if char == "":
                continue  # not UTF-8: no key below is text
            step = _next_row(row, before, last, char, target)
            if min(step) <= distance:
                todo.append((child, key + bytes((byte,)), b"", step, row, char))
    return found


def merged_near_terms(parts: Iterable[list[str]], most: int) -> list[str]:
    """The terms of several segments' walks as one sorted list without repeats (by their
    UTF-8 bytes, the dictionary's order), at most ``most + 1`` of them."""
    merged = sorted({t for part in parts for t in part}, key=lambda t: t.encode("utf-8"))
    return merged[: most + 1]


def _complete_char(data: bytes) -> str | None:
    """The character ``data`` encodes, None while its UTF-8 is unfinished, "" when it is
    no UTF-8 at all."""
    lead = data[0]
    need = 1 if lead < 0x80 else 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4
    if lead >= 0xF5 or 0x80 <= lead < 0xC2:
        return ""
    if len(data) < need:
        if len(data) > 1 and not 0x80 <= data[-1] < 0xC0:
            return ""
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def _next_row(
    row: list[int], before: list[int] | None, last: str, char: str, term: str
) -> list[int]:
    """The optimal-string-alignment row of the prefix extended by ``char`` against every
    prefix of ``term`` (``row``: the prefix's row, ``before``: the row before it, ``last``:
    the prefix's last character)."""
    step = [row[0] + 1]
    for j, wanted in enumerate(term, 1):
        best = min(row[j] + 1, step[j - 1] + 1, row[j - 1] + (char != wanted))
        if before is not None and j > 1 and char == term[j - 2] and last == wanted:
            best = min(best, before[j - 2] + 1)
        step.append(best)
    return step
