"""A split field's terms as one byte buffer, for infix and suffix terms without a regex walk.

A wildcard token ``*mid*`` or ``*suf`` (and the ``str.contains`` clauses of a literal)
matches the terms holding the literal (ending with it). Tantivy answers such a
regex by walking its automaton over every term of the field; here the field's terms
are joined once into one buffer, each followed by ``0xFF`` (a byte no UTF-8 text
holds), searched with ``bytes.find`` and each hit mapped back to its term by
bisecting the terms' start offsets. UTF-8 being self-synchronizing, a byte match of
the literal is a match of its characters.

Buffers are cached per split directory and field, least recently used evicted
first, within :data:`BUFFER_BUDGET_BYTES` (the buffer and its offsets counted).
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "BUFFER_BUDGET_BYTES",
    "TermBuffer",
    "cached_buffer",
    "clear_buffers",
    "infix_terms_of",
]

SEPARATOR: Final = b"\xff"
BUFFER_BUDGET_BYTES: Final = 256 * 1024 * 1024
"""The most bytes the cached term buffers take together (a buffer larger than this is
built for its query and not kept)."""


@dataclass(frozen=True)
class TermBuffer:
    """Every term of one field of one split, joined (module doc)."""

    joined: bytes
    starts: tuple[int, ...]  # offset of each term in ``joined``, then len(joined)
    terms: tuple[str, ...]

    @classmethod
    def of(cls, terms: Iterable[str]) -> TermBuffer:
        kept = tuple(terms)
        starts = [0]
        parts = []
        for term in kept:
            encoded = term.encode("utf-8") + SEPARATOR
            parts.append(encoded)
            starts.append(starts[-1] + len(encoded))
        return cls(b"".join(parts), tuple(starts), kept)

    @property
    def size(self) -> int:
        return len(self.joined) + 8 * len(self.starts) + sum(49 + len(t) for t in self.terms)

    def holding(self, literal: str, *, suffix: bool, most: int) -> list[str]:
        """The terms holding ``literal`` (ending with it when ``suffix``), in term order,
        at most ``most``."""
        needle = literal.encode("utf-8") + (SEPARATOR if suffix else b"")
        if not literal:
            return list(self.terms[:most])
        found: list[str] = []
        joined, starts = self.joined, self.starts
        position = joined.find(needle)
        while position >= 0 and len(found) < most:
            at = bisect.bisect_right(starts, position) - 1
            found.append(self.terms[at])
            position = joined.find(needle, starts[at + 1])
        return found


_lock = threading.Lock()
_buffers: OrderedDict[tuple[str, int, int, str], TermBuffer] = OrderedDict()
_held = [0]


def cached_buffer(directory: str, field: str, terms: Iterable[str] | None = None) -> TermBuffer:
    """The term buffer of ``field`` in the split at ``directory``, built from ``terms``
    (the field's every term, in order) when not cached. The key holds ``meta.json``'s
    size and modification time, so a directory rewritten in place is read again."""
    stat = os.stat(os.path.join(directory, "meta.json"))
    key = (directory, stat.st_size, stat.st_mtime_ns, field)
    with _lock:
        found = _buffers.get(key)
        if found is not None:
            _buffers.move_to_end(key)
            return found
    if terms is None:
        raise KeyError(key)
    built = TermBuffer.of(terms)
    size = built.size
    if size > BUFFER_BUDGET_BYTES:
        return built
    with _lock:
        if key not in _buffers:
            _buffers[key] = built
            _held[0] += size
        while _held[0] > BUFFER_BUDGET_BYTES and _buffers:
            _, dropped = _buffers.popitem(last=False)
            _held[0] -= dropped.size
    return built


def clear_buffers() -> None:
    """Forget every cached buffer."""
    with _lock:
        _buffers.clear()
        _held[0] = 0


def infix_terms_of(index: Any) -> Callable[[str, str, bool, int], list[str] | None]:
    """The terms of a field of the opened split ``index`` holding a literal (ending with it
    when ``suffix``), at most ``most``, from the cached buffer; None for an index not
    opened from a split directory."""
    from indextables.search.splits.nearterms import directory_of

    def terms(name: str, literal: str, suffix: bool, most: int) -> list[str] | None:
        directory = directory_of(index)
        if directory is None:
            return None
        try:
            buffer = cached_buffer(directory, name)
        except KeyError:
            every = (term for term, _ in index.searcher().terms_with_prefix(name, ""))
            buffer = cached_buffer(directory, name, every)
        except OSError:
            return None
        return buffer.holding(literal, suffix=suffix, most=most)

    return terms
