"""Column-wise evaluation of a predicate's ``may_match`` over per-entry min/max statistics.

A comparison leaf needs two compare-orders per entry (min and max against
its literal). All literals of a column are compared in one walk over the
records by the decoder, straight from the record bytes; each leaf's verdict
for the nine order pairs comes from the predicate itself, so the semantics
stay those of :mod:`indextables.protocol.predicates`.
"""

from __future__ import annotations

from collections import defaultdict
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
# (column, literal, plain order) -> (min orders, max orders)
_Orders = dict[tuple[str, str, bool], tuple[list[int | None], list[int | None]]]


def _is_comparison(node: Predicate) -> bool:
    return hasattr(node, "_overlaps") and hasattr(node, "value") and hasattr(node, "column")


def _needs(node: Predicate, out: dict[tuple[str, bool], set[str]]) -> None:
    """Collect every (column, order kind) -> literals the tree compares against."""
    if isinstance(node, And | Or):
        _needs(node.left, out)
        _needs(node.right, out)
    elif isinstance(node, Not):
        if isinstance(node.child, EqualTo):
            out[node.child.column, False].add(node.child.value)
    elif isinstance(node, In):
        out[node.column, False].update(node.values)
    elif isinstance(node, StartsWith):
        out[node.column, True].update((node.prefix, node.prefix + _PREFIX_END))
    elif _is_comparison(node):
        out[node.column, False].add(node.value)  # type: ignore[attr-defined]


def _orders(files: FileEntries, node: Predicate) -> _Orders:
    needs: dict[tuple[str, bool], set[str]] = defaultdict(set)
    _needs(node, needs)
    found: _Orders = {}
    for (column, plain), literals in needs.items():
        ordered = sorted(literals)
        for literal, pair in zip(
            ordered, files.stat_orders(column, ordered, plain=plain), strict=True
        ):
            found[column, literal, plain] = pair
    return found


def _comparison(orders: _Orders, node: Predicate) -> list[bool]:
    lows, highs = orders[node.column, node.value, False]  # type: ignore[attr-defined]
    overlaps = node._overlaps  # type: ignore[attr-defined]
    table = {(lo, hi): bool(overlaps(lo, hi)) for lo in _ORDERS for hi in _ORDERS}
    return [
        True if lo is None or hi is None else table[lo, hi]
        for lo, hi in zip(lows, highs, strict=True)
    ]


def _starts_with(orders: _Orders, node: StartsWith) -> list[bool]:
    highs = orders[node.column, node.prefix, True][1]
    lows = orders[node.column, node.prefix + _PREFIX_END, True][0]
    return [
        True if lo is None or hi is None else not (hi < 0 or lo > 0)
        for lo, hi in zip(lows, highs, strict=True)
    ]


def _not(orders: _Orders, node: Not, size: int) -> list[bool]:
    child = node.child
    if not isinstance(child, EqualTo):
        return [True] * size
    lows, highs = orders[child.column, child.value, False]
    return [
        True if lo is None or hi is None else not (lo == 0 and hi == 0)
        for lo, hi in zip(lows, highs, strict=True)
    ]


def _per_entry(files: FileEntries, node: Predicate) -> list[bool]:
    """Fallback for node types without a column-wise form."""
    stats = [(c, *files.column_stats(c)) for c in sorted(node.columns())]
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


def _eval(files: FileEntries, orders: _Orders, node: Predicate) -> list[bool]:
    size = len(files)
    if isinstance(node, And | Or):
        left = _eval(files, orders, node.left)
        right = _eval(files, orders, node.right)
        if isinstance(node, And):
            return [a and b for a, b in zip(left, right, strict=True)]
        return [a or b for a, b in zip(left, right, strict=True)]
    if isinstance(node, Not):
        return _not(orders, node, size)
    if isinstance(node, In):
        result = [False] * size
        for value in node.values:
            leaf = _comparison(orders, EqualTo(node.column, value))
            result = [a or b for a, b in zip(result, leaf, strict=True)]
        return result
    if isinstance(node, StartsWith):
        return _starts_with(orders, node)
    if isinstance(node, IsNull | IsNotNull):
        return [True] * size
    if _is_comparison(node):
        return _comparison(orders, node)
    return _per_entry(files, node)


def verdicts(files: FileEntries, node: Predicate) -> list[bool]:
    """Per entry: may its statistics satisfy ``node``?"""
    return _eval(files, _orders(files, node), node)
