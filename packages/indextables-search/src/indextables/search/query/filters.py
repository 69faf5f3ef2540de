"""Pushed filters: the public names of the read path, and a split's pruning check.

The three jobs live in their own modules and are re-exported here:

- :mod:`indextables.search.query.conditions`: SQL ``where`` -> condition (Spark's filters:
  ``indextables.pyspark.read.sparkfilters``);
- :mod:`indextables.search.query.tantivyquery`: condition -> Tantivy query;
- :mod:`indextables.search.query.pruning`: condition -> the protocol's stats filter.

Partition values are pruned by :mod:`indextables.search.query.partitionprune`.
Every condition describes a *superset* of the rows the Spark filter keeps:
the reader hands every filter back to Spark as unhandled, so Spark always
re-checks the rows, and a condition may only drop rows that surely do not
match.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from indextables.protocol.predicates import Predicate
from indextables.protocol.statsfilter import bounds_of
from indextables.search.query.conditions import (
    COMPARISONS,
    Condition,
    translate_predicate,
)
from indextables.search.query.partitionprune import partition_may_match, partition_predicate
from indextables.search.query.pruning import stats_node, stats_predicate
from indextables.search.query.tantivyquery import conjunction, to_query
from indextables.search.schema.mapping import FieldSpec

__all__ = [
    "COMPARISONS",
    "Condition",
    "FileMatcher",
    "conjunction",
    "file_matcher",
    "may_match_file",
    "partition_predicate",
    "stats_node",
    "stats_predicate",
    "to_query",
    "translate_predicate",
]


@dataclass(frozen=True, slots=True)
class FileMatcher:
    """A split check prepared once per planning: partition values, then statistics.

    Attributes:
        partition_ok: False when a split's partition values prove no row matches;
            None when no condition is on a partition column.
        stats: the protocol stats filter of the other conditions, or None.
    """

    partition_ok: Callable[[Mapping[str, str | None]], bool] | None
    stats: Predicate | None

    def may_match(
        self,
        partition_values: Mapping[str, str | None],
        min_values: Mapping[str, str] | None,
        max_values: Mapping[str, str] | None,
    ) -> bool:
        """False only when one split's values or statistics prove no row matches."""
        if self.partition_ok is not None and not self.partition_ok(partition_values):
            return False
        stats = self.stats
        return stats is None or stats.may_match(bounds_of(min_values, max_values, stats.columns()))


def file_matcher(
    conditions: Iterable[Condition],
    *,
    partition_columns: Collection[str],
    fields: Mapping[str, FieldSpec],
    single_columns: Collection[str] = frozenset(),
    partition_types: Mapping[str, pa.DataType] | None = None,
) -> FileMatcher:
    """The check of :func:`may_match_file` for splits of ``partition_columns``, built once.

    A condition on a partition column (or on a column of ``partition_types``,
    lowercase names) is checked against partition values with
    :func:`~indextables.search.query.partitionprune.partition_may_match`; the
    others go into one protocol stats filter.
    """
    types = partition_types or {}
    columns = {c.lower() for c in partition_columns} | set(types)
    partition: list[Condition] = []
    data: list[Condition] = []
    for condition in conditions:
        if condition.path:
            continue  # a field inside a struct: neither a partition value nor a statistic
        (partition if condition.column.lower() in columns else data).append(condition)

    def partition_ok(values: Mapping[str, str | None]) -> bool:
        lowered = {k.lower(): v for k, v in values.items()}
        return all(
            partition_may_match(c, lowered.get(c.column.lower()), types.get(c.column.lower()))
            for c in partition
        )

    stats = stats_predicate(data, fields, (), single_columns=single_columns)
    return FileMatcher(partition_ok if partition else None, stats)


def may_match_file(
    conditions: Iterable[Condition],
    *,
    partition_values: Mapping[str, str | None],
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    fields: Mapping[str, FieldSpec],
    single_columns: Collection[str] = frozenset(),
    partition_types: Mapping[str, pa.DataType] | None = None,
) -> bool:
    """False only when a split's partition values or min/max statistics prove no row matches.

    Statistics go through the protocol's model, as the engine's stats filter
    does (:func:`~indextables.search.query.pruning.stats_may_match`). Partition
    values go through :func:`~indextables.search.query.partitionprune.partition_may_match`
    with the column's Spark type from ``partition_types`` (lowercase names);
    a column counts as a partition column when the split has a value for it
    or ``partition_types`` names it.
    """
    matcher = file_matcher(
        conditions,
        partition_columns=tuple(partition_values),
        fields=fields,
        single_columns=single_columns,
        partition_types=partition_types,
    )
    return matcher.may_match(partition_values, min_values, max_values)
