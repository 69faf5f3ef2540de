"""A split field's terms and their document frequencies as one byte buffer.

A wildcard token ``*mid*`` or ``*suf`` (and the ``str.contains`` clauses of a literal)
matches the terms holding the literal (ending with it). Tantivy answers such a
regex by walking its automaton over every term of the field; here the field's terms
are joined once into one buffer, each followed by ``0xFF`` (a byte no UTF-8 text
holds), searched with ``bytes.find`` and each hit mapped back to its term by
bisecting the terms' start offsets. UTF-8 being self-synchronizing, a byte match of
the literal is a match of its characters. A buffer never changes: it remembers the
term positions of its latest literals (:data:`MAX_REMEMBERED`, each held by at most
:data:`MAX_REMEMBERED_HITS` terms), so a repeated question does not search again.

The terms are kept in code point order (which is UTF-8 byte order, Tantivy's term
order), each with its document frequency (summed over the split's segments, deleted
documents included, as the term dictionary records it), as running sums: the
documents of the terms in any range of that order, a prefix's range found by
bisection, are one subtraction.

Buffers are cached per split directory and field (:class:`BoundedCache`, at most
:data:`MAX_BUFFERS`, least recently used evicted first) within
:data:`BUFFER_BUDGET_BYTES` together (the buffer, its offsets and terms counted): a
buffer that would pass the budget evicts the largest others first (the earliest kept
first among equal sizes), and a buffer
larger than the budget is built for its query and not kept. A buffer is cached only
once built whole: reading the split's terms failing (:class:`OSError`) raises
:class:`~indextables.search.errors.SplitReadError` naming the split directory and
caches nothing.
"""

from __future__ import annotations

import array
import bisect
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from indextables.search.boundedcache import BoundedCache
from indextables.search.errors import SplitReadError

__all__ = [
    "BUFFER_BUDGET_BYTES",
    "MAX_BUFFERS",
    "TermBuffer",
    "cached_buffer",
    "clear_buffers",
    "infix_terms_of",
    "split_buffer",
]

SEPARATOR: Final = b"\xff"
BUFFER_BUDGET_BYTES: Final = 256 * 1024 * 1024
"""The most bytes the cached term buffers take together (a buffer larger than this is
built for its query and not kept)."""
MAX_BUFFERS: Final = 256
"""The most term buffers cached at once."""
MAX_REMEMBERED: Final = 16
"""The most literals a buffer remembers the holding terms of (the oldest forgotten first)."""
MAX_REMEMBERED_HITS: Final = 256
"""A literal held by more terms than this is searched again each time, not remembered
(a buffer's remembered positions take at most 16 x 256 x 8 bytes)."""


@dataclass(frozen=True)
class TermBuffer:
    """Every term of one field of one split, joined, in code point order (module doc).

    Attributes:
        joined: each term's UTF-8 bytes followed by ``0xFF``.
        starts: the offset of each term in ``joined``, then ``len(joined)``.
        terms: the terms, in code point order.
        totals: running document frequencies (``totals[i]``: the documents of
            ``terms[:i]`` summed), or empty when built without frequencies.
    """

    joined: bytes
    starts: tuple[int, ...]
    terms: tuple[str, ...]
    totals: tuple[int, ...] = ()
    _remembered: dict[tuple[str, bool], array.array[int]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, terms: Iterable[str]) -> TermBuffer:
        """The buffer of ``terms`` (each once), without document frequencies."""
        return cls._build(sorted(set(terms)), None)

    @classmethod
    def with_frequencies(cls, pairs: Iterable[tuple[str, int]]) -> TermBuffer:
        """The buffer of ``(term, document frequency)`` pairs (a term given twice: its
        frequencies summed)."""
        summed: dict[str, int] = {}
        for term, frequency in pairs:
            summed[term] = summed.get(term, 0) + int(frequency)
        kept = sorted(summed)
        return cls._build(kept, [summed[t] for t in kept])

    @classmethod
    def _build(cls, kept: list[str], frequencies: list[int] | None) -> TermBuffer:
        starts = [0]
        parts = []
        for term in kept:
            encoded = term.encode("utf-8") + SEPARATOR
            parts.append(encoded)
            starts.append(starts[-1] + len(encoded))
        totals: list[int] = []
        if frequencies is not None:
            running = 0
            totals.append(0)
            for frequency in frequencies:
                running += frequency
                totals.append(running)
        return cls(b"".join(parts), tuple(starts), tuple(kept), tuple(totals))

    @property
    def size(self) -> int:
        """About the bytes the buffer takes."""
        return (
            len(self.joined)
            + 8 * (len(self.starts) + len(self.totals))
            + sum(49 + len(t) for t in self.terms)
        )

    @property
    def counted(self) -> bool:
        """Whether the buffer holds the terms' document frequencies."""
        return bool(self.totals)

    @property
    def total(self) -> int:
        """The document frequencies of every term, summed (0 when not :attr:`counted`)."""
        return self.totals[-1] if self.totals else 0

    def holding(self, literal: str, *, suffix: bool, most: int) -> list[str]:
        """The terms holding ``literal`` (ending with it when ``suffix``), in term order,
        at most ``most``."""
        found: list[str] = []
        for at in self._holding_at(literal, suffix=suffix):
            if len(found) >= most:
                break
            found.append(self.terms[at])
        return found

    def _holding_at(self, literal: str, *, suffix: bool) -> Iterable[int]:
        """The positions of the terms holding ``literal``, in term order; a literal held
        by at most :data:`MAX_REMEMBERED_HITS` terms is remembered (the buffer never
        changes), the :data:`MAX_REMEMBERED` latest of them."""
        if not literal:
            return range(len(self.terms))
        key = (literal, suffix)
        remembered = self._remembered
        found = remembered.get(key)
        if found is not None:
            return found
        return self._search(key)

    def _search(self, key: tuple[str, bool]) -> Iterator[int]:
        literal, suffix = key
        needle = literal.encode("utf-8") + (SEPARATOR if suffix else b"")
        joined, starts = self.joined, self.starts
        hits: list[int] | None = []
        position = joined.find(needle)
        while position >= 0:
            at = bisect.bisect_right(starts, position) - 1
            if hits is not None:
                hits.append(at)
                if len(hits) > MAX_REMEMBERED_HITS:
                    hits = None
            yield at
            position = joined.find(needle, starts[at + 1])
        if hits is not None:
            remembered = self._remembered
            while len(remembered) >= MAX_REMEMBERED:
                try:
                    del remembered[next(iter(remembered))]
                except (KeyError, RuntimeError, StopIteration):
                    break  # another thread changed it: good enough
            remembered[key] = array.array("q", hits)

    def frequency_holding(self, literal: str, *, suffix: bool) -> int:
        """The documents of the terms holding ``literal`` (ending with it when ``suffix``),
        their frequencies summed."""
        if not literal:
            return self.total
        totals = self.totals
        return sum(totals[at + 1] - totals[at] for at in self._holding_at(literal, suffix=suffix))

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """``(low, high)``: ``terms[low:high]`` are the terms starting with ``prefix``."""
        low = bisect.bisect_left(self.terms, prefix)
        after = _successor(prefix)
        high = len(self.terms) if after is None else bisect.bisect_left(self.terms, after, low)
        return low, high

    def frequency_with_prefix(self, prefix: str) -> int:
        """The documents of the terms starting with ``prefix``, summed."""
        low, high = self.prefix_range(prefix)
        return self.totals[high] - self.totals[low] if self.totals else 0

    def frequency_of(self, term: str) -> int:
        """The document frequency of ``term`` (0 when the field does not hold it)."""
        at = bisect.bisect_left(self.terms, term)
        if at < len(self.terms) and self.terms[at] == term:
            return self.totals[at + 1] - self.totals[at]
        return 0

    def frequency_matching(self, pattern: re.Pattern[str], low: int, high: int) -> int:
        """The documents of the terms of ``terms[low:high]`` ``pattern`` matches whole."""
        totals, terms, full = self.totals, self.terms, pattern.fullmatch
        return sum(totals[at + 1] - totals[at] for at in range(low, high) if full(terms[at]))


def _successor(prefix: str) -> str | None:
    """The least string above every string starting with ``prefix`` (None: there is none,
    every string from ``prefix`` on starts with it)."""
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return None
    return stripped[:-1] + chr(ord(stripped[-1]) + 1)


_lock = threading.Lock()
_buffers: BoundedCache[tuple[str, int, int, str], TermBuffer] = BoundedCache(
    max_entries=MAX_BUFFERS
)
_sizes: dict[tuple[str, int, int, str], int] = {}


def _key(directory: str, field: str) -> tuple[str, int, int, str]:
    stat = os.stat(os.path.join(directory, "meta.json"))
    return (directory, stat.st_size, stat.st_mtime_ns, field)


def cached_buffer(
    directory: str, field: str, pairs: Iterable[tuple[str, int]] | None = None
) -> TermBuffer:
    """The term buffer of ``field`` in the split at ``directory``, built from ``pairs``
    (the field's every term and its document frequency) when not cached. The key holds
    ``meta.json``'s size and modification time, so a directory rewritten in place is
    read again.

    Raises:
        KeyError: not cached and no ``pairs`` given.
        OSError: ``meta.json`` cannot be read, or reading ``pairs`` failed (then nothing
            is cached).
    """
    key = _key(directory, field)
    found = _buffers.get(key)
    if found is not None:
        return found
    if pairs is None:
        raise KeyError(key)
    built = TermBuffer.with_frequencies(pairs)  # whole before anything is kept
    _keep(key, built)
    return built


def _keep(key: tuple[str, int, int, str], built: TermBuffer) -> None:
    size = built.size
    if size > BUFFER_BUDGET_BYTES:
        return
    with _lock:
        _buffers.put(key, built)
        _sizes[key] = size
        for gone in [k for k in _sizes if k not in _buffers]:  # evicted by count
            del _sizes[gone]
        excess = sum(_sizes.values()) - BUFFER_BUDGET_BYTES
        doomed: set[tuple[str, int, int, str]] = set()
        # Largest first; among equals, the first kept first (a stable sort of _sizes' order).
        for other in sorted((k for k in _sizes if k != key), key=lambda k: -_sizes[k]):
            if excess <= 0:
                break
            doomed.add(other)
            excess -= _sizes.pop(other)
        if doomed:
            _buffers.evict_if(doomed.__contains__)


def held_bytes() -> int:
    """The bytes the cached buffers take together."""
    with _lock:
        return sum(_sizes.values())


def clear_buffers() -> None:
    """Forget every cached buffer."""
    with _lock:
        _buffers.clear()
        _sizes.clear()


def split_buffer(index: Any, directory: str, field: str) -> TermBuffer:
    """The (cached) term buffer of ``field`` of the split ``index``, opened from
    ``directory``, with document frequencies.

    Raises:
        SplitReadError: the split's ``meta.json`` or its terms cannot be read (an
            :class:`OSError`), naming the directory; nothing is cached.
        ValueError: the split has no indexed text field ``field`` (Tantivy's error).
    """
    try:
        try:
            return cached_buffer(directory, field)
        except KeyError:
            pairs = index.searcher().terms_with_prefix(field, "")
            return cached_buffer(directory, field, pairs)
    except OSError as error:
        raised = SplitReadError(
            f"the split at {directory!r} cannot be read: its terms of field {field!r} "
            f"failed: {error}"
        )
        raised.entry = directory
        raise raised from error


def infix_terms_of(index: Any) -> Callable[[str, str, bool, int], list[str] | None]:
    """The terms of a field of the opened split ``index`` holding a literal (ending with it
    when ``suffix``), at most ``most``, from the cached buffer; None for an index not
    opened from a split directory, or a field the split does not index as text.

    The returned function raises :class:`~indextables.search.errors.SplitReadError` when
    the split cannot be read (:func:`split_buffer`)."""
    from indextables.search.splits.nearterms import directory_of

    def terms(name: str, literal: str, suffix: bool, most: int) -> list[str] | None:
        directory = directory_of(index)
        if directory is None:
            return None
        try:
            buffer = split_buffer(index, directory, name)
        except ValueError as error:
            if isinstance(error, SplitReadError):
                raise
            return None
        return buffer.holding(literal, suffix=suffix, most=most)

    return terms
