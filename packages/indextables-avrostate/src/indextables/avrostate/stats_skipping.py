"""Column-wise evaluation of a predicate's ``may_match`` over per-entry min/max statistics.

Each comparison leaf needs only two compare-orders per entry (min and max
against the literal), computed by the decoder straight from the record
bytes; the leaf's verdict for each of the nine order pairs comes from the
predicate itself, so the semantics stay those of
:mod:`indextables.protocol.predicates`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indextables.protocol.predicates import (
    And,
    EqualTo,
    In,
    IsNotNull,
    IsNull,
    Not,
    Or,
    Predicate,
    StartsWith,
)
from indextables.protocol.state import PartitionBounds

if TYPE_CHECKING:
    from indextables.avrostate.entries import FileEntries

__all__ = ["verdicts"]

_PREFIX_END = "\uffff"
_ORDERS = (-1, 0, 1)


def _comparison(files: FileEntries, node: Predicate) -> list[bool]:
    column, value = node.column, node.value  # type: ignore[attr-defined]
    lows = files.compare_stat(column, value, maximum=False)
    highs = files.compare_stat(column, value, maximum=True)
    overlaps = node._overlaps  # type: ignore[attr-defined]
    table = {(lo, hi): bool(overlaps(lo, hi)) for lo in _ORDERS for hi in _ORDERS}
    return [
        True if lo is None or hi is None else table[lo, hi]
        for lo, hi in zip(lows, highs, strict=True)
    ]


def _starts_with(files: FileEntries, node: StartsWith) -> list[bool]:
    highs = files.compare_stat(node.column, node.prefix, maximum=True, plain=True)
    lows = files.compare_stat(node.column, node.prefix + _PREFIX_END, maximum=False, plain=True)
    return [
        True if lo is None or hi is None else not (hi < 0 or lo > 0)
        for lo, hi in zip(lows, highs, strict=True)
    ]


def _not(files: FileEntries, node: Not) -> list[bool]:
    child = node.child
    if not isinstance(child, EqualTo):
        return [True] * len(files)
    lows = files.compare_stat(child.column, child.value, maximum=False)
    highs = files.compare_stat(child.column, child.value, maximum=True)
    return [
        True if lo is None or hi is None else not (lo == 0 and hi == 0)
        for lo, hi in zip(lows, highs, strict=True)
    ]


def _per_entry(files: FileEntries, node: Predicate) -> list[bool]:
    """Fallback for node types without a column-wise form."""
    columns = sorted(node.columns())
    stats = [(c, *files.column_stats(c)) for c in columns]
    out = []
    for i in range(len(files)):
        bounds = {}
        for column, mins, maxs in stats:
            high = maxs[i]
            if high is not None and len(high) >= 32:
                high = None
            bounds[column] = PartitionBounds(mins[i], high)
        out.append(node.may_match(bounds))
    return out


def verdicts(files: FileEntries, node: Predicate) -> list[bool]:
    """Per entry: may its statistics satisfy ``node``?"""
    if isinstance(node, And):
        return [
            a and b
            for a, b in zip(verdicts(files, node.left), verdicts(files, node.right), strict=True)
        ]
    if isinstance(node, Or):
        return [
            a or b
            for a, b in zip(verdicts(files, node.left), verdicts(files, node.right), strict=True)
        ]
    if isinstance(node, Not):
        return _not(files, node)
    if isinstance(node, In):
        result = [False] * len(files)
        for value in node.values:
            leaf = _comparison(files, EqualTo(node.column, value))
            result = [a or b for a, b in zip(result, leaf, strict=True)]
        return result
    if isinstance(node, StartsWith):
        return _starts_with(files, node)
    if isinstance(node, IsNull | IsNotNull):
        return [True] * len(files)
    if hasattr(node, "_overlaps") and hasattr(node, "value"):
        return _comparison(files, node)
    return _per_entry(files, node)
