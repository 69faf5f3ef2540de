"""Pushed filters: the public names of the read path, and a split's pruning check.

The three jobs live in their own modules and are re-exported here:

- :mod:`indextables.pyspark.conditions`: Spark filter / SQL ``where`` -> condition;
- :mod:`indextables.pyspark.tantivyquery`: condition -> Tantivy query;
- :mod:`indextables.pyspark.pruning`: condition -> the protocol's stats filter.

Partition values are pruned by :mod:`indextables.pyspark.partitionprune`.
Every condition describes a *superset* of the rows the Spark filter keeps:
the reader hands every filter back to Spark as unhandled, so Spark always
re-checks the rows, and a condition may only drop rows that surely do not
match.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from indextables.pyspark.conditions import (
    COMPARISONS,
    Condition,
    translate,
    translate_all,
    translate_predicate,
)
from indextables.pyspark.mapping import FieldSpec
from indextables.pyspark.partitionprune import partition_may_match, partition_predicate
from indextables.pyspark.pruning import stats_may_match, stats_node, stats_predicate
from indextables.pyspark.tantivyquery import conjunction, to_query
from pyspark.sql.types import DataType

__all__ = [
    "COMPARISONS",
    "Condition",
    "conjunction",
    "may_match_file",
    "partition_predicate",
    "stats_node",
    "stats_predicate",
    "to_query",
    "translate",
    "translate_all",
    "translate_predicate",
]


def may_match_file(
    conditions: Iterable[Condition],
    *,
    partition_values: Mapping[str, str | None],
    min_values: Mapping[str, str] | None,
    max_values: Mapping[str, str] | None,
    fields: Mapping[str, FieldSpec],
    single_columns: Collection[str] = frozenset(),
    partition_types: Mapping[str, DataType] | None = None,
) -> bool:
    """False only when a split's partition values or min/max statistics prove no row matches.

    Statistics go through the protocol's model, as the engine's stats filter
    does (:func:`~indextables.pyspark.pruning.stats_may_match`). Partition
    values go through :func:`~indextables.pyspark.partitionprune.partition_may_match`
    with the column's Spark type from ``partition_types`` (lowercase names).
    """
    lowered = {k.lower(): v for k, v in partition_values.items()}
    types = partition_types or {}
    data: list[Condition] = []
    for condition in conditions:
        if condition.path:
            continue  # a field inside a struct: neither a partition value nor a statistic
        column = condition.column.lower()
        if column in lowered or column in types:
            if not partition_may_match(condition, lowered.get(column), types.get(column)):
                return False
        else:
            data.append(condition)
    return stats_may_match(
        data,
        fields,
        min_values=min_values,
        max_values=max_values,
        single_columns=single_columns,
    )
