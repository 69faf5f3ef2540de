"""Which splits a read must open: one snapshot pruned by its conditions.

The same plan serves every reader: Spark's read tasks (``indextables.pyspark``)
and plain Python (:mod:`indextables.search.api`). Splits are dropped by partition
values (manifest bounds on the engine's side, then split by split) and by min/max
statistics; every rule keeps a superset of the rows the conditions keep, so a
dropped split holds no matching row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from indextables.protocol.predicates import Predicate
from indextables.search import oplog
from indextables.search.errors import IndexTablesSearchError
from indextables.search.options import parse_indexing
from indextables.search.query.conditions import Condition
from indextables.search.query.filters import file_matcher
from indextables.search.query.partitionprune import partition_predicate
from indextables.search.query.pruning import stats_predicate
from indextables.search.read.splitreader import SplitEntry
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import (
    FieldSpec,
    field_spec,
    field_specs,
    specs_from_doc_mapping,
)
from indextables.search.schema.schemajson import arrow_schema
from indextables.search.table.livesplits import LiveSplit, prune_entries, split_doc_mappings
from indextables.search.table.tableaccess import TableView, load_view

__all__ = [
    "partition_types",
    "plan_splits",
    "single_value_columns",
    "stat_fields",
    "view_doc_mappings",
    "view_fields",
]


def single_value_columns(schema: pa.Schema) -> frozenset[str]:
    """The (lowercase) names of ``float`` (32-bit) columns: their statistics are 32-bit floats."""
    return frozenset(f.name.lower() for f in schema if ct.is_float32(f.type))


def view_doc_mappings(view: TableView) -> set[str]:
    """The doc mappings of a view: its splits' and its schema registry's."""
    return split_doc_mappings(view.splits) | set(view.doc_mappings)


def stat_fields(view: TableView) -> dict[str, FieldSpec]:
    """The fields pruning may use: those whose name and kind every doc mapping agrees on."""
    mappings = view_doc_mappings(view)
    if not mappings:
        return view_fields(view)
    fields: dict[str, FieldSpec] = {}
    conflicting: set[str] = set()
    for mapping in sorted(mappings):
        for key, spec in specs_from_doc_mapping(mapping).items():
            seen = fields.setdefault(key, spec)
            if (seen.name, seen.kind) != (spec.name, spec.kind):
                conflicting.add(key)
    return {k: v for k, v in fields.items() if k not in conflicting}


def view_fields(view: TableView) -> dict[str, Any]:
    """The fields of the table's splits by lowercase name (later doc mappings win)."""
    mappings = view_doc_mappings(view)
    if not mappings:
        # No split yet: the field kinds follow from the schema and the indexing options
        # recorded in the table configuration at creation.
        indexing = parse_indexing(view.configuration)
        specs = field_specs(
            arrow_schema(view.schema_json), indexing, partition_columns=view.partition_columns
        )
        return {s.name.lower(): s for s in specs}
    fields: dict[str, Any] = {}
    for mapping in sorted(mappings):
        fields.update(specs_from_doc_mapping(mapping))
    return fields | _unwritten_fields(view, fields)


def _unwritten_fields(view: TableView, fields: Mapping[str, Any]) -> dict[str, FieldSpec]:
    """The schema's columns no doc mapping holds (a schema change added them and no split
    was written since), as the table's indexing options would index them. They are null
    in every row: each split searched lacks the field, so a clause on one matches nothing,
    and an ``order_by`` key or a group over one is null, as for an all-null column."""
    partitions = {c.lower() for c in view.partition_columns}
    unwritten = [
        f
        for f in arrow_schema(view.schema_json)
        if f.name.lower() not in fields and f.name.lower() not in partitions
    ]
    if not unwritten:
        return {}
    indexing = parse_indexing(view.configuration)
    specs: dict[str, FieldSpec] = {}
    for column in unwritten:
        try:
            specs[column.name.lower()] = field_spec(column.name, column.type, indexing)
        except IndexTablesSearchError:
            continue  # the options do not fit this column: it stays unsearchable
    return specs


def partition_types(view: TableView) -> dict[str, pa.DataType]:
    """Types of the partition columns, by lowercase name."""
    columns = {c.lower() for c in view.partition_columns}
    if not columns:
        return {}
    return {
        f.name.lower(): f.type for f in arrow_schema(view.schema_json) if f.name.lower() in columns
    }


def plan_splits(
    view: TableView,
    options: Mapping[str, str],
    conditions: Sequence[Condition],
) -> list[SplitEntry]:
    """The splits of ``view`` that may hold rows meeting every condition.

    ``options`` are the read options (store credentials), used when the engine
    prunes manifests by partition bounds or statistics before building entries.
    """
    schema = arrow_schema(view.schema_json)
    fields = stat_fields(view)
    types = partition_types(view)
    singles = single_value_columns(schema)
    matcher = file_matcher(
        conditions,
        partition_columns=view.partition_columns,
        fields=fields,
        single_columns=singles,
        partition_types=types,
    )
    with oplog.timed("plan"):
        planned, applied = _engine_pruned(view, options, conditions, fields, types, singles)
        # The engine's stats filter is the matcher's: its survivors need no second check.
        stats = None if applied == matcher.stats else matcher.stats
        entries = prune_entries(planned, partition_ok=matcher.partition_ok, stats=stats)
    # A planning view knows only the splits its pushed filters kept.
    considered = len(view.splits) if view.files_loaded else len(planned)
    oplog.note_planned(considered=considered, kept=len(entries))
    return entries


def _engine_pruned(
    view: TableView,
    options: Mapping[str, str],
    conditions: Sequence[Condition],
    fields: Mapping[str, FieldSpec],
    types: Mapping[str, pa.DataType],
    singles: frozenset[str],
) -> tuple[Sequence[LiveSplit], Predicate | None]:
    """The splits left after the engine's pruning, and the stats filter it applied.

    The engine drops splits by partition bounds (manifest level) and by min/max
    statistics (column-wise on avro states, before entries are built). A view
    whose splits are already loaded is reused unless partition pruning can skip
    whole manifests (its splits are pruned column-wise by the caller).
    """
    partition = partition_predicate(conditions, view.partition_columns, types)
    if view.files_loaded and partition is None:
        return view.splits, None
    stats = stats_predicate(conditions, fields, view.partition_columns, single_columns=singles)
    pruned = load_view(
        view.uri,
        options,
        version=view.version,
        partition_filter=partition,
        stats_filter=stats,
    )
    return pruned.splits, stats
