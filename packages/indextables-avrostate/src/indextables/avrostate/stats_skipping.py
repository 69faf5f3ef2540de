"""Column-wise evaluation of a predicate's ``may_match`` over per-entry min/max statistics.

A comparison leaf needs two compare-orders per entry (min and max against
its literal). All literals of a column are compared in one pass by the
decoder, straight from the record bytes, into one code byte per entry and
literal (see :meth:`FileEntries.stat_codes`). A leaf turns its codes into a
mask with ``bytes.translate`` through a 256-byte table filled by the
predicate's own public hooks (:meth:`Comparison.overlaps` for each of the
nine order pairs, :meth:`StartsWith.orders_may_match`), and numeric leaves
use :meth:`NumberCompare.may_match_columns`, so the semantics stay those of
:mod:`indextables.protocol.predicates` while no Python code runs per entry.
Masks hold one byte (0 or 1) per entry; read as little-endian integers,
``And``/``Or`` are ``&``/``|`` over all entries at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Final, Protocol

from indextables.protocol.predicates import (
    And,
    Comparison,
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
from indextables.protocol.statsfilter import usable_max


class FileEntries(Protocol):
    """What the evaluator reads of the entries (``entries.FileEntries`` has it): statistics
    by column, without building entries. A protocol, so this module does not import
    ``entries`` (which imports this one)."""

    def stat_codes(self, column: str, literals: list[str], *, plain: bool = False) -> list[bytes]:
        """Per literal, each entry's min/max statistic ordered against it."""
        ...

    def column_stats(self, column: str) -> tuple[list[str | None], list[str | None]]:
        """Every entry's min and max statistic of ``column``."""
        ...

    def __len__(self) -> int:
        """The number of entries."""
        ...


__all__ = ["verdicts"]

# A stat code is 4 * min code + max code; a code is 0/1/2 for the order -1/0/1
# against the literal, 3 where there is no usable statistic.
_ORDER_OF_CODE: Final = (-1, 0, 1, None)
# (column, literal, plain order) -> one stat code per entry
_Codes = dict[tuple[str, str, bool], bytes]
_Verdict = Callable[[int | None, int | None], bool]


def _needs(node: Predicate, out: dict[tuple[str, bool], set[str]]) -> None:
    """Collect every (column, order kind) -> literals the tree compares against."""
    if isinstance(node, And | Or):
        for part in node.parts:
            _needs(part, out)
    elif isinstance(node, Not):
        if isinstance(node.child, EqualTo):
            out[node.child.column, False].add(node.child.value)
    elif isinstance(node, In):
        out[node.column, False].update(node.values)
    elif isinstance(node, StartsWith):
        upper = node.upper
        out[node.column, True].update((node.prefix,) if upper is None else (node.prefix, upper))
    elif isinstance(node, Comparison):
        out[node.column, False].add(node.value)


def _codes(files: FileEntries, node: Predicate) -> _Codes:
    needs: dict[tuple[str, bool], set[str]] = defaultdict(set)
    _needs(node, needs)
    found: _Codes = {}
    for (column, plain), literals in needs.items():
        ordered = sorted(literals)
        for literal, codes in zip(
            ordered, files.stat_codes(column, ordered, plain=plain), strict=True
        ):
            found[column, literal, plain] = codes
    return found


def _table(verdict: _Verdict) -> bytes:
    """A ``bytes.translate`` table: stat code -> 1 if ``verdict(min order, max order)``."""
    return bytes(
        verdict(_ORDER_OF_CODE[code >> 2], _ORDER_OF_CODE[code & 3]) if code < 16 else 1
        for code in range(256)
    )


def _mask(codes: bytes, verdict: _Verdict) -> int:
    return int.from_bytes(codes.translate(_table(verdict)), "little")


def _comparison(codes: _Codes, node: Comparison) -> int:
    overlaps = node.overlaps
    return _mask(
        codes[node.column, node.value, False],
        lambda lo, hi: bool(overlaps(lo, hi)),
    )


def _starts_with(codes: _Codes, node: StartsWith) -> int:
    # As StartsWith.may_match: the max against the prefix, the min against its upper bound.
    highs = codes[node.column, node.prefix, True]
    upper = node.upper
    rule = node.orders_may_match
    high_ok = _mask(highs, lambda _, hi: rule(hi, None))
    if upper is None:
        return high_ok
    return high_ok & _mask(codes[node.column, upper, True], lambda lo, _: rule(None, lo))


def _not(codes: _Codes, node: Not, everything: int) -> int:
    child = node.child
    if not isinstance(child, EqualTo):
        return everything
    return _mask(
        codes[child.column, child.value, False],
        lambda lo, hi: True if lo is None or hi is None else not (lo == 0 and hi == 0),
    )


def _bounded_stats(files: FileEntries, column: str) -> tuple[list[str | None], list[str | None]]:
    """Every entry's min and max of ``column``; a max the writer may have truncated is None."""
    mins, maxs = files.column_stats(column)
    return mins, [usable_max(h) for h in maxs]


def _column_wise(files: FileEntries, node: Predicate) -> int:
    """A single-column node with its own whole-column form (``may_match_columns``)."""
    (column,) = node.columns()
    verdicts: bytes = node.may_match_columns(*_bounded_stats(files, column))  # type: ignore[attr-defined]
    return int.from_bytes(verdicts, "little")


def _per_entry(files: FileEntries, node: Predicate) -> int:
    """Fallback for node types without a column-wise form."""
    stats = [(c, *_bounded_stats(files, c)) for c in sorted(node.columns())]
    out = bytearray()
    for i in range(len(files)):
        bounds = {column: PartitionBounds(mins[i], maxs[i]) for column, mins, maxs in stats}
        out.append(node.may_match(bounds))
    return int.from_bytes(out, "little")


def _eval(files: FileEntries, codes: _Codes, node: Predicate, everything: int) -> int:
    if isinstance(node, And | Or):
        # One loop over the parts of a chain (a chain is one node, however long).
        both = isinstance(node, And)
        result = everything if both else 0
        for part in node.parts:
            mask = _eval(files, codes, part, everything)
            result = result & mask if both else result | mask
        return result
    if isinstance(node, Not):
        return _not(codes, node, everything)
    if isinstance(node, In):
        result = 0
        for value in node.values:
            result |= _comparison(codes, EqualTo(node.column, value))
        return result
    if isinstance(node, StartsWith):
        return _starts_with(codes, node)
    if isinstance(node, IsNull | IsNotNull):
        return everything
    if isinstance(node, Comparison):
        return _comparison(codes, node)
    if hasattr(node, "may_match_columns") and len(node.columns()) == 1:
        return _column_wise(files, node)
    return _per_entry(files, node)


def verdicts(files: FileEntries, node: Predicate) -> bytes:
    """Per entry, 1 if its statistics may satisfy ``node``, else 0."""
    size = len(files)
    everything = int.from_bytes(b"\x01" * size, "little")
    return _eval(files, _codes(files, node), node, everything).to_bytes(size, "little")
