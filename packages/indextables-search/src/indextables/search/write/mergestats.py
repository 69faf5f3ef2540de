"""The statistics and tags of a merged split, from its sources' log entries (no row is read).

Each source's ``minValues``/``maxValues`` strings were formatted from its exact
bounds (:mod:`.stats`), and formatting keeps order (a 32-character prefix of
the least string is the least prefix), so the merged bound is the source string
whose value is least (greatest), compared as the column's kind: numbers as
numbers (NaN above every number, as Spark orders doubles), dates as their
``YYYY-MM-DD`` text, timestamps as epoch microseconds, strings by code point.
A column some source records no bound for (all its values null, or dates
beyond years 1-9999) gets none: a missing statistic only costs pruning, a
wrong one would drop rows.

A column is fully indexed in the merged split (its split tag) when it is in
every source; a text column kept every token (:mod:`~indextables.search.query.tokenskept`)
when every source says so with the same tokenizer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from indextables.search.query.tantivyquery import fully_indexed_columns, fully_indexed_tag
from indextables.search.query.tokenskept import merged_tokens_kept, tokens_kept_tag
from indextables.search.schema.mapping import FieldKind, FieldSpec

# A bound's sort key: (rank, value); NaN ranks above every number.
_Key = tuple[int, Any]


def merged_bounds(
    specs: Sequence[FieldSpec],
    minimums: Sequence[Mapping[str, str] | None],
    maximums: Sequence[Mapping[str, str] | None],
) -> tuple[dict[str, str], dict[str, str]]:
    """The merged ``minValues`` and ``maxValues`` of sources with these bounds."""
    kinds = {s.name: s.kind for s in specs}
    low: dict[str, str] = {}
    high: dict[str, str] = {}
    names = set.intersection(*(set(m or {}) for m in (*minimums, *maximums))) if minimums else set()
    for name in sorted(names):
        key = _sort_key(kinds.get(name))
        if key is None:
            continue
        try:
            lows = [(key(m[name]), m[name]) for m in minimums if m is not None]
            highs = [(key(m[name]), m[name]) for m in maximums if m is not None]
        except (ValueError, TypeError):
            continue  # a bound that does not parse as its kind: record none
        low[name] = min(lows, key=lambda pair: pair[0])[1]
        high[name] = max(highs, key=lambda pair: pair[0])[1]
    return low, high


def merged_tags(
    specs: Sequence[FieldSpec], tags: Sequence[Sequence[str] | None]
) -> tuple[str, ...] | None:
    """The merged split's tags: the columns fully indexed in every source, and the text
    columns every source kept every token of."""
    common = frozenset.intersection(*(fully_indexed_columns(t) for t in tags)) if tags else None
    columns = [s.name for s in specs if common and s.name.lower() in common]
    whole = merged_tokens_kept(tags)
    kept = {s.name: whole[s.name.lower()] for s in specs if s.name.lower() in whole}
    found: tuple[str, ...] = (fully_indexed_tag(columns),) if columns else ()
    found += (tokens_kept_tag(kept),) if kept else ()
    return found or None


def _sort_key(kind: FieldKind | None) -> Callable[[str], _Key] | None:
    if kind is FieldKind.I64:
        return lambda text: (0, int(text))
    if kind is FieldKind.F64:
        return _double_key
    if kind in (FieldKind.STRING, FieldKind.TEXT):
        return lambda text: (0, text)
    if kind is FieldKind.DATE:
        return _temporal_key
    return None


def _double_key(text: str) -> _Key:
    value = float(text)
    return (1, 0.0) if math.isnan(value) else (0, value)


def _temporal_key(text: str) -> _Key:
    # A date column records YYYY-MM-DD, a timestamp column epoch microseconds.
    return (1, text) if "-" in text[1:] else (0, int(text))
