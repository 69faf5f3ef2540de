"""Ordered top-k reads: ``order_by`` parsed and checked, and a bounded merge of the hits.

``order_by`` names fast fields, partition columns or ``_score`` (Tantivy's BM25
score of the split the row comes from), each ``ASC`` or ``DESC``. Values order as
Spark orders them: ``ASC`` puts nulls first, ``DESC`` puts them last, NaN is
greater than every other value, ``-0.0`` equals ``0.0``. Rows equal on every key
keep the order an unordered read gives them: split order, then the row's place
in its split (document address order for a searched split).

:class:`TopK` keeps the best ``k`` rows seen so far: waiting batches are merged
into that buffer and cut back to ``k`` rows, so memory is bounded by about ``2k``
rows plus ``_MIN_MERGE``, whatever the number of hits, and the hits are never
sorted together.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from indextables.protocol.statsfilter import STATS_TRUNCATION
from indextables.search.errors import ArgumentError
from indextables.search.query.conditions import Condition
from indextables.search.schema.mapping import FieldKind
from indextables.search.temporal import operand_micros

__all__ = [
    "MAX_TOP",
    "SCORE",
    "OrderKey",
    "Ordering",
    "Scoring",
    "TopK",
    "cutoff_condition",
    "cuts",
    "first_key_ceiling",
    "parse_order_by",
    "score_field",
]

SCORE = "_score"
# The largest k an ordered read keeps (its buffer holds k rows).
MAX_TOP = 1_000_000
_POSITION = "__topk_position"
# Positions of one split's rows (``TopK.add(split=...)``): split * span + row in split.
_SPLIT_SPAN = 1 << 40
# The fewest waiting rows merged into the kept ones (fewer merges for a small k).
_MIN_MERGE = 65536
_INTEGER = re.compile(r"-?[0-9]{1,19}")
_STATS_TRUNCATION = STATS_TRUNCATION
_ITEM = re.compile(r"^\s*(\S+?)(?:\s+(\S+))?\s*$")


@dataclass(frozen=True, slots=True)
class OrderKey:
    """One sort key: a column of the read (or ``_score``) and its direction."""

    column: str
    descending: bool


@dataclass(frozen=True, slots=True)
class Scoring:
    """A split read that scores its hits: each row gets ``_score`` (float32).

    Attributes:
        limit: only the split's best ``limit`` hits by score (ties: lower document
            address first, as Tantivy's collector keeps them); None: every hit.
    """

    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Ordering:
    """A split read that keeps only its first ``limit`` hits by ``keys`` (no exact
    ``where`` filter follows it), when it can read the keys' fast values."""

    keys: tuple[OrderKey, ...]
    limit: int


def score_field() -> pa.Field:
    """The ``_score`` column an ordered read by score adds."""
    return pa.field(SCORE, pa.float32())


def parse_order_by(
    order_by: Any,
    *,
    schema: pa.Schema,
    fields: Mapping[str, Any],
    partition_columns: Sequence[str],
) -> tuple[OrderKey, ...]:
    """The keys of ``order_by`` (``"ts DESC"``, ``"a ASC, b DESC"``, ``"_score"`` or a
    list of such items); columns named as the table's schema names them.

    ``_score`` alone defaults to ``DESC`` (best first), a column to ``ASC``.

    Raises:
        ArgumentError: not a string or list of strings, an empty key, an unknown
            column, a column without a fast field (not a partition column), a
            direction other than ASC/DESC, or a key named twice.
    """
    if isinstance(order_by, str):
        items = order_by.split(",")
    elif isinstance(order_by, Sequence) and all(isinstance(i, str) for i in order_by):
        items = [part for item in order_by for part in item.split(",")]
    else:
        raise ArgumentError(
            f"order_by={order_by!r} must be a string such as 'ts DESC, host ASC' or a list of them"
        )
    by_name = {f.name.lower(): f for f in schema}
    partitions = {c.lower() for c in partition_columns}
    keys: list[OrderKey] = []
    seen: set[str] = set()
    for item in items:
        if not item.strip():
            raise ArgumentError(f"order_by={order_by!r} has an empty key")
        found = _ITEM.match(item)
        if found is None:
            raise ArgumentError(
                f"order_by key {item.strip()!r} is not 'column', 'column ASC' or 'column DESC'"
            )
        name, direction = found.group(1), found.group(2)
        lowered = name.lower()
        if lowered == SCORE:
            column = SCORE
        else:
            arrow_field = by_name.get(lowered)
            if arrow_field is None:
                raise ArgumentError(
                    f"order_by names {name!r}, which the table does not have "
                    f"(columns: {', '.join(schema.names)}, or {SCORE})"
                )
            spec = fields.get(lowered)
            if lowered not in partitions and (spec is None or not spec.fast):
                raise ArgumentError(
                    f"order_by names {arrow_field.name!r}, which has no fast field: only fast "
                    "fields, partition columns and _score order a search (indexWriter.fastFields)"
                )
            if not _orderable(arrow_field.type):
                raise ArgumentError(
                    f"order_by names {arrow_field.name!r} of type {arrow_field.type}, "
                    "which has no order"
                )
            column = arrow_field.name
        if direction is None:
            descending = column == SCORE
        elif direction.upper() in ("ASC", "DESC"):
            descending = direction.upper() == "DESC"
        else:
            raise ArgumentError(
                f"order_by key {item.strip()!r} has direction {direction!r}: use ASC or DESC"
            )
        if column.lower() in seen:
            raise ArgumentError(f"order_by names {column!r} twice")
        seen.add(column.lower())
        keys.append(OrderKey(column, descending))
    return tuple(keys)


#: Field kinds whose range query (``query.tantivyquery``) bounds a key for :func:`cutoff_condition`.
_BOUNDED_KINDS = (FieldKind.I64, FieldKind.F64, FieldKind.DATE)


def cutoff_condition(
    keys: Sequence[OrderKey],
    cutoff: Any,
    *,
    fields: Mapping[str, Any],
    partition_columns: Sequence[str],
) -> Condition | None:
    """A condition every row that may still enter a full :class:`TopK` meets: the first
    key at or past ``cutoff`` (:meth:`TopK.cutoff`) toward the front, or None.

    Only a ``DESC`` first key on a fast integer, double or date field gives one: nulls
    order last there, and the index's range query matches a superset of the values at
    or above ``cutoff`` (NaN, ``-0.0`` and dates as :mod:`~.tantivyquery` widens them).
    Rows tied with ``cutoff`` stay: a later key or their position may still put them in.
    """
    if cutoff is None or isinstance(cutoff, bool):
        return None
    if not cuts(keys, fields=fields, partition_columns=partition_columns):
        return None
    return Condition(">=", keys[0].column, (cutoff,))


def cuts(
    keys: Sequence[OrderKey], *, fields: Mapping[str, Any], partition_columns: Sequence[str]
) -> bool:
    """Whether :func:`cutoff_condition` can bound the first key of ``keys``."""
    if not keys or not keys[0].descending or keys[0].column == SCORE:
        return False
    name = keys[0].column.lower()
    spec = fields.get(name)
    if name in {c.lower() for c in partition_columns} or spec is None:
        return False
    return bool(spec.fast and spec.kind in _BOUNDED_KINDS)


def first_key_ceiling(
    keys: Sequence[OrderKey], data_type: pa.DataType | None, max_values: Mapping[str, str] | None
) -> int | None:
    """The largest value a split's rows can hold in a ``DESC`` first key, from its max
    statistic: integer columns, and timestamps (statistics in epoch microseconds); None
    when unknown (no statistic, another form, a possibly truncated one, another kind:
    a double's max may leave NaN out)."""
    if not keys or not keys[0].descending or keys[0].column == SCORE or data_type is None:
        return None
    if not (pa.types.is_integer(data_type) or pa.types.is_timestamp(data_type)) or not max_values:
        return None
    text = max_values.get(keys[0].column)
    if text is None:
        lowered = keys[0].column.lower()
        text = next((v for k, v in max_values.items() if k.lower() == lowered), None)
    if text is None or len(text) >= _STATS_TRUNCATION or not _INTEGER.fullmatch(text):
        return None
    return int(text)


def comparable_cutoff(cutoff: Any) -> int | None:
    """:meth:`TopK.cutoff` as :func:`first_key_ceiling` compares it (None: not comparable)."""
    if isinstance(cutoff, bool):
        return None
    if isinstance(cutoff, int):
        return cutoff
    if isinstance(cutoff, dt.datetime):
        return operand_micros(cutoff)
    return None


def _orderable(data_type: pa.DataType) -> bool:
    return not (
        pa.types.is_nested(data_type)
        or pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
        or pa.types.is_fixed_size_binary(data_type)
    )


class TopK:
    """The first ``k`` rows by ``keys`` of the batches added, ties in arrival order.

    Batches wait until they hold as many rows as the kept ones (at least
    ``_MIN_MERGE``), then are merged and cut back to ``k``: at most about ``2k``
    rows plus one batch are held, and each row takes part in a bounded number of
    merges whatever ``k`` is.
    """

    def __init__(self, keys: Sequence[OrderKey], k: int) -> None:
        self._keys = tuple(keys)
        self._k = k
        self._kept: pa.Table | None = None
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._seen = 0
        self._split_rows: dict[int, int] = {}

    def cutoff(self) -> Any:
        """The first key's value in the ``k``-th kept row once ``k`` rows are kept: a row
        whose first key orders after it can never be kept. None while fewer rows are
        kept, when that value is null or NaN, or has no Python value."""
        self._merge()
        if self._kept is None or self._kept.num_rows < self._k or not self._k:
            return None
        try:
            value = self._kept.column(self._keys[0].column)[self._k - 1].as_py()
        except (ValueError, OverflowError, pa.ArrowException):
            return None  # a date beyond Python's years
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return value

    def add(self, batch: pa.RecordBatch, *, split: int | None = None) -> None:
        """Take ``batch`` (holding every key column) into account.

        ``split``: the place of the batch's split in the unordered read, when splits
        are added out of that order (ties then still go by split, then by arrival
        within the split); every batch of one ``TopK`` gives one or none.
        """
        if not batch.num_rows or not self._k:
            return
        if split is None:
            first = self._seen
        else:
            first = split * _SPLIT_SPAN + self._split_rows.get(split, 0)
            self._split_rows[split] = self._split_rows.get(split, 0) + batch.num_rows
        positions = pa.array(range(first, first + batch.num_rows), pa.int64())
        self._seen += batch.num_rows
        self._pending.append(pa.Table.from_batches([batch]).append_column(_POSITION, positions))
        self._pending_rows += batch.num_rows
        if self._pending_rows >= max(self._k, _MIN_MERGE):
            self._merge()

    def result(self) -> pa.Table | None:
        """The kept rows, best first (without the position column); None when none."""
        self._merge()
        if self._kept is None:
            return None
        return self._kept.drop_columns([_POSITION])

    def _merge(self) -> None:
        if not self._pending:
            return
        tables = [self._kept, *self._pending] if self._kept is not None else self._pending
        table = pa.concat_tables(tables)
        self._pending, self._pending_rows = [], 0
        self._kept = table.take(self._best(table, self._k)).combine_chunks()

    def _best(self, table: pa.Table, k: int) -> pa.Array:
        """The indices of the first ``k`` rows of ``table`` in order."""
        columns: dict[str, pa.Array] = {}
        sort_keys: list[tuple[str, str]] = []
        for number, key in enumerate(self._keys):
            rank, value = _rank_and_value(table.column(key.column).combine_chunks())
            order = "descending" if key.descending else "ascending"
            columns[f"r{number}"], columns[f"v{number}"] = rank, value
            sort_keys += [(f"r{number}", order), (f"v{number}", order)]
        columns["p"] = table.column(_POSITION).combine_chunks()
        sort_keys.append(("p", "ascending"))
        keys = pa.table(columns)
        if keys.num_rows <= k:
            return pc.sort_indices(keys, sort_keys=sort_keys)
        chosen = pc.select_k_unstable(keys, k=k, sort_keys=sort_keys)
        return chosen.take(pc.sort_indices(keys.take(chosen), sort_keys=sort_keys))


def _rank_and_value(values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Spark's order of one key as two columns: a class (null 0, a value 1, NaN 2),
    then the value (null for null and NaN, -0.0 read as 0.0)."""
    if isinstance(values, pa.DictionaryArray):
        values = values.dictionary_decode()
    valid = pc.is_valid(values)
    rank = pc.if_else(valid, pa.scalar(1, pa.int8()), pa.scalar(0, pa.int8()))
    if pa.types.is_floating(values.type):
        nan = pc.fill_null(pc.is_nan(values), False)
        rank = pc.if_else(nan, pa.scalar(2, pa.int8()), rank)
        values = pc.if_else(
            nan, pa.scalar(None, values.type), pc.add(values, 0.0).cast(values.type)
        )
    return rank, values
