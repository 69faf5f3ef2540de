"""One split's aggregation with Tantivy (``Searcher.aggregate``), as an exact group table.

The group keys of data columns become nested bucket aggregations (terms,
histogram, date_histogram, range) over fast fields, with the metrics
(``stats``, ``value_count``) inside the innermost bucket; partition keys are
constant per split and come from the log. Terms ask for as many buckets as
the split has documents, so no bucket is ever cut off.

Bucket aggregations skip documents without a value, while Spark groups nulls
together: for every set of data keys that can be null on the split, one more
aggregation runs over the documents where exactly those keys are missing
(``NOT exists``), with those keys set to null. Together the runs cover every
matching document once.

Anything the index would answer only approximately raises
:class:`~indextables.search.aggregate.aggmerge.NotExact`: a double column holding NaN,
an integer sum or bucket key beyond 2**53 (Tantivy computes them in f64), a
date column of a split indexed below microsecond precision or holding dates
clamped to Tantivy's span, or an aggregation Tantivy refuses.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.aggregate.aggmerge import GroupTable, NotExact, Partial, merge_tables
from indextables.search.aggregate.aggspec import (
    DateHistogram,
    GroupSpec,
    Histogram,
    Metric,
    MetricFn,
    RangeBuckets,
    Terms,
)
from indextables.search.query.conditions import Condition
from indextables.search.query.indexexact import count, exact_query, nan_free, split_fully_indexed
from indextables.search.query.searchoptions import SearchSpec
from indextables.search.read.convert import TANTIVY_MAX_MICROS, TANTIVY_MIN_MICROS
from indextables.search.read.splitreader import SplitEntry, open_split, split_traits
from indextables.search.schema import columntypes as ct
from indextables.search.schema.mapping import FieldKind, FieldSpec, specs_from_doc_mapping
from indextables.search.schema.partitionvalues import spark_value
from indextables.search.splits.entryid import content_identity

__all__ = ["AggPlan", "Level", "MetricPlan", "aggregate_split"]

_EXACT_F64 = float(1 << 53)
_MAX_F64 = sys.float_info.max  # Tantivy: f64::MAX, the start of a min
_EPOCH = datetime(1970, 1, 1)
_NAN = float("nan")
# Dates at (or within a second of) the ends of Tantivy's span may be clamped values.
_CLAMP_LOW_NS = float(TANTIVY_MIN_MICROS) * 1000 + 1e9
_CLAMP_HIGH_NS = float(TANTIVY_MAX_MICROS) * 1000 - 1e9


@dataclass(frozen=True, slots=True)
class Level:
    """One group key as a split computes it.

    Attributes:
        spec: the group key.
        data_type: the Spark type of its column.
        partition: True when the column is a partition column (constant per split).
        kind: the field kind of a data column.
    """

    spec: GroupSpec
    data_type: pa.DataType
    partition: bool
    kind: FieldKind | None = None


@dataclass(frozen=True, slots=True)
class MetricPlan:
    """One metric as a split computes it.

    Attributes:
        metric: the metric.
        data_type: its column's Spark type (None for a row count).
        partition: True when its column is a partition column.
        kind: the field kind of a data column.
    """

    metric: Metric
    data_type: pa.DataType | None
    partition: bool
    kind: FieldKind | None = None


@dataclass(frozen=True, slots=True)
class AggPlan:
    """What every split computes: its filter, group keys and metrics."""

    search: SearchSpec
    conditions: tuple[Condition, ...]
    levels: tuple[Level, ...]
    metrics: tuple[MetricPlan, ...]


def aggregate_split(directory: str, entry: SplitEntry, agg: AggPlan) -> GroupTable | None:
    """The split's group table, or None when the index cannot answer exactly."""
    try:
        return _aggregate(directory, entry, agg)
    except (NotExact, ValueError):  # ValueError: a partition value that does not parse
        return None


def _aggregate(directory: str, entry: SplitEntry, agg: AggPlan) -> GroupTable:
    identity = content_identity(directory)
    index, searcher = open_split(directory, identity=identity)
    if searcher.num_docs == 0:
        return {}
    fields = specs_from_doc_mapping(entry.doc_mapping_json) if entry.doc_mapping_json else {}
    used = {lvl.spec.column.lower() for lvl in agg.levels if not lvl.partition}
    used.update(c.column.lower() for c in agg.conditions if not c.path)
    fully_indexed = split_fully_indexed(index, searcher, fields, entry.split_tags, used)
    exact_dates = split_traits(directory, identity=identity).exact_dates
    query = exact_query(
        index, searcher, fields, agg.search, agg.conditions, fully_indexed, exact_dates
    )
    _check_columns(directory, index, searcher, fields, agg, query)
    _check_strings(fields, agg, fully_indexed)
    constants = _partition_keys(entry, agg.levels)
    partitions = _partition_values(entry, agg.metrics)
    data = [i for i, level in enumerate(agg.levels) if not level.partition]
    nullable = [i for i in data if _has_missing(searcher, query, _field(fields, agg.levels[i]))]
    tables = []
    for size in range(len(nullable) + 1):
        for missing in itertools.combinations(nullable, size):
            run = _Run(searcher, fields, agg, constants, partitions, frozenset(missing))
            tables.append(run.table(_without(query, [agg.levels[i] for i in missing], fields)))
    return merge_tables(tables)


def _field(fields: Mapping[str, FieldSpec], level: Level) -> FieldSpec:
    spec = fields.get(level.spec.column.lower())
    if spec is None or not spec.fast:
        raise NotExact(f"column {level.spec.column!r} is not a fast field of this split")
    return spec


def _has_missing(searcher: tantivy.Searcher, query: tantivy.Query, spec: FieldSpec) -> bool:
    try:
        return count(searcher, _without(query, [], {}, names=[spec.name])) > 0
    except ValueError as error:
        raise NotExact(f"column {spec.name!r}: {error}") from None


def _without(
    query: tantivy.Query,
    levels: Sequence[Level],
    fields: Mapping[str, FieldSpec],
    *,
    names: Sequence[str] = (),
) -> tantivy.Query:
    """``query`` restricted to documents where the levels' (or ``names``') fields are missing."""
    missing = [*names, *(fields[lv.spec.column.lower()].name for lv in levels)]
    if not missing:
        return query
    clauses = [(tantivy.Occur.Must, query)]
    clauses += [(tantivy.Occur.MustNot, tantivy.Query.exists_query(n)) for n in missing]
    return tantivy.Query.boolean_query(clauses)


def _partition_keys(entry: SplitEntry, levels: Sequence[Level]) -> dict[int, Any]:
    values = {k.lower(): v for k, v in entry.partition_values.items()}
    out: dict[int, Any] = {}
    for i, level in enumerate(levels):
        if level.partition:
            out[i] = key_value(
                spark_value(values.get(level.spec.column.lower()), level.data_type), level
            )
    return out


def key_value(value: Any, level: Level) -> Any:
    """A key in the form group tables hold: timestamps as UTC epoch microseconds.

    Spark groups every NaN together and ``-0.0`` with ``0.0``: NaN keys are one
    shared object (a dict finds it by identity) and zeros lose their sign.
    """
    if isinstance(value, float):
        return _NAN if value != value else value + 0.0
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return (value - _EPOCH) // timedelta(microseconds=1)
    return value


def _partition_values(entry: SplitEntry, metrics: Sequence[MetricPlan]) -> dict[str, Any]:
    values = {k.lower(): v for k, v in entry.partition_values.items()}
    return {
        (m.metric.column or "").lower(): spark_value(
            values.get((m.metric.column or "").lower()), m.data_type
        )
        for m in metrics
        if m.partition and m.data_type is not None
    }


def _check_columns(
    directory: str,
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    fields: Mapping[str, FieldSpec],
    agg: AggPlan,
    query: tantivy.Query,
) -> None:
    """Raise NotExact when a column's values would not come out of the index exactly."""
    keys = [lv for lv in agg.levels if not lv.partition]
    valued = [m for m in agg.metrics if m.metric.column and not m.partition]
    # Columns whose values (not just their presence) the aggregation computes with.
    computed = [lv.spec.column for lv in keys if not isinstance(lv.spec, Terms)]
    computed += [m.metric.column or "" for m in valued if m.metric.fn is not MetricFn.COUNT]
    dates = [lv.spec.column for lv in keys if lv.kind is FieldKind.DATE]
    for column in {c.lower() for c in [*(lv.spec.column for lv in keys), *computed]}:
        spec = fields.get(column)
        if spec is None or not spec.fast:
            raise NotExact(f"column {column!r} is not a fast field of this split")
    for m in valued:
        if (m.metric.column or "").lower() not in fields:
            raise NotExact(f"column {m.metric.column!r} is not in this split")
    checks: dict[str, Any] = {}
    for column in {c.lower() for c in computed}:
        spec = fields[column]
        if spec.kind is FieldKind.F64:
            nan_free(index, searcher, spec, query)
        elif spec.kind is FieldKind.I64:
            checks[spec.name] = {"stats": {"field": spec.name}}
    for column in {c.lower() for c in dates}:
        checks[fields[column].name] = {"stats": {"field": fields[column].name}}
    if dates:
        _check_precision(directory)
    widths = {
        fields[lv.spec.column.lower()].name: float(lv.spec.interval)
        for lv in keys
        if isinstance(lv.spec, Histogram)
    }
    for name in widths:
        checks[name] = {"stats": {"field": name}}
    if checks:
        found = _aggregate_json(searcher, query, checks)
        for name, stats in found.items():
            _check_range(fields[name.lower()], stats)
            if name in widths:
                _check_quotient(name, stats, widths[name])


def _check_quotient(name: str, stats: Mapping[str, Any], width: float) -> None:
    """Tantivy clamps histogram keys far from zero (and infinities): those go to Spark."""
    low, high = stats.get("min"), stats.get("max")
    if low is None or high is None:
        return
    if not (math.isfinite(low) and math.isfinite(high)):
        raise NotExact(f"column {name!r} holds infinities")
    if max(abs(low), abs(high)) / width >= _EXACT_F64:
        raise NotExact(f"column {name!r} holds values too far from zero for its histogram")


def _check_strings(
    fields: Mapping[str, FieldSpec], agg: AggPlan, fully_indexed: frozenset[str]
) -> None:
    """Terms of a string column only where the writer recorded every value as indexed.

    Tantivy 0.27's terms aggregation panics on a text fast field holding a
    value past its term length limit (it cuts the bytes inside a character).
    """
    for level in agg.levels:
        column = level.spec.column.lower()
        if not level.partition and fields[column].is_exact and column not in fully_indexed:
            raise NotExact(f"column {level.spec.column!r} may hold values too long to aggregate")


def _check_range(spec: FieldSpec, stats: Mapping[str, Any]) -> None:
    low, high = stats.get("min"), stats.get("max")
    if low is None or high is None:
        return
    if spec.kind is FieldKind.DATE:
        if low <= _CLAMP_LOW_NS or high >= _CLAMP_HIGH_NS:
            raise NotExact(f"column {spec.name!r} may hold clamped dates")
    elif max(abs(low), abs(high)) >= _EXACT_F64:
        raise NotExact(f"column {spec.name!r} holds integers beyond 2**53")


def _check_precision(directory: str) -> None:
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
        meta = json.load(source)
    for entry in meta.get("schema", ()):
        if entry.get("type") == "date":
            precision = entry.get("options", {}).get("precision", "seconds")
            if precision not in ("microseconds", "nanoseconds"):
                raise NotExact(f"date field {entry.get('name')!r} is indexed at {precision}")


def _aggregate_json(
    searcher: tantivy.Searcher, query: tantivy.Query, request: Mapping[str, Any]
) -> dict[str, Any]:
    try:
        found: dict[str, Any] = searcher.aggregate(query, dict(request))
    except ValueError as error:
        raise NotExact(f"Tantivy refused the aggregation: {error}") from None
    except BaseException as error:
        # A Rust panic surfaces as pyo3's PanicException (a BaseException): the
        # aggregation failed on this split's data, and Spark answers instead.
        if type(error).__name__ != "PanicException":
            raise
        raise NotExact(f"Tantivy failed the aggregation: {error}") from None
    return found


class _Run:
    """One aggregation run: the documents where exactly the ``missing`` data keys are null."""

    def __init__(
        self,
        searcher: tantivy.Searcher,
        fields: Mapping[str, FieldSpec],
        agg: AggPlan,
        constants: Mapping[int, Any],
        partitions: Mapping[str, Any],
        missing: frozenset[int],
    ) -> None:
        self.partitions = partitions
        self.searcher = searcher
        self.fields = fields
        self.agg = agg
        self.keys = {**constants, **dict.fromkeys(missing)}
        self.bucketed = [i for i in range(len(agg.levels)) if i not in self.keys]

    def table(self, query: tantivy.Query) -> GroupTable:
        request = self._request(0)
        if not self.bucketed:
            total = count(self.searcher, query)
            if total == 0:
                return {}
            found = _aggregate_json(self.searcher, query, request) if request else {}
            return {self._key({}): self._partials(total, found)}
        found = _aggregate_json(self.searcher, query, request)
        table: GroupTable = {}
        self._walk(found, 0, {}, table)
        return table

    def _request(self, depth: int) -> dict[str, Any]:
        if depth == len(self.bucketed):
            return self._metric_aggs()
        level = self.agg.levels[self.bucketed[depth]]
        name = self.fields[level.spec.column.lower()].name
        body = {f"g{depth}": _bucket_agg(level, name, self.searcher.num_docs)}
        inner = self._request(depth + 1)
        if inner:
            body[f"g{depth}"]["aggs"] = inner
        return body

    def _metric_aggs(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for j, plan in enumerate(self.agg.metrics):
            column = plan.metric.column
            if column is None or plan.partition:
                continue
            name = self.fields[column.lower()].name
            kind = "value_count" if plan.metric.fn is MetricFn.COUNT else "stats"
            out[f"m{j}"] = {kind: {"field": name}}
        return out

    def _walk(
        self, found: Mapping[str, Any], depth: int, keys: dict[int, Any], table: GroupTable
    ) -> None:
        level_index = self.bucketed[depth]
        level = self.agg.levels[level_index]
        result = found[f"g{depth}"]
        if result.get("sum_other_doc_count", 0):
            raise NotExact("a terms aggregation left buckets out")
        for position, bucket in enumerate(result["buckets"]):
            if bucket["doc_count"] == 0:
                continue
            here = {**keys, level_index: _bucket_key(level, bucket, position)}
            if depth + 1 < len(self.bucketed):
                self._walk(bucket, depth + 1, here, table)
            else:
                key = self._key(here)
                parts = self._partials(bucket["doc_count"], bucket)
                seen = table.get(key)
                table[key] = (
                    parts
                    if seen is None
                    else tuple(a.merge(b) for a, b in zip(seen, parts, strict=True))
                )

    def _key(self, bucketed: Mapping[int, Any]) -> tuple[Any, ...]:
        merged = {**self.keys, **bucketed}
        return tuple(merged[i] for i in range(len(self.agg.levels)))

    def _partials(self, doc_count: int, found: Mapping[str, Any]) -> tuple[Partial, ...]:
        return tuple(
            _partial(plan, doc_count, found.get(f"m{j}"), self.partitions)
            for j, plan in enumerate(self.agg.metrics)
        )


def _bucket_agg(level: Level, name: str, num_docs: int) -> dict[str, Any]:
    spec = level.spec
    if isinstance(spec, Terms):
        return {"terms": {"field": name, "size": max(num_docs, 1), "min_doc_count": 1}}
    if isinstance(spec, Histogram):
        return {"histogram": {"field": name, "interval": spec.interval, "min_doc_count": 1}}
    if isinstance(spec, DateHistogram):
        interval = f"{spec.interval_us // 1000}ms"
        return {"date_histogram": {"field": name, "fixed_interval": interval, "min_doc_count": 1}}
    assert isinstance(spec, RangeBuckets)
    # Spark compares -0.0 equal to 0.0, Tantivy below it: an edge at zero is -0.0 there.
    edges: list[int | float] = [-0.0 if e == 0 else e for e in spec.edges]
    if level.kind is FieldKind.I64:
        edges = _integer_edges(spec)
    ranges: list[dict[str, Any]] = [{"to": edges[0]}]
    ranges += [{"from": a, "to": b} for a, b in itertools.pairwise(edges)]
    ranges.append({"from": edges[-1]})
    return {"range": {"field": name, "ranges": ranges}}


def _integer_edges(spec: RangeBuckets) -> list[int | float]:
    """Edges an integer fast field compares exactly: fractional ones rounded up.

    Tantivy rounds a fractional edge on an i64 field; for integers ``x < e`` is
    ``x < ceil(e)`` (and ``x >= e`` is ``x >= ceil(e)``). Edges that round to
    the same integer would give Tantivy an empty range: Spark answers those.
    """
    edges: list[int | float] = []
    for edge in spec.edges:
        if isinstance(edge, float) and abs(edge) < _EXACT_F64:
            edges.append(math.ceil(edge))
        else:
            edges.append(edge)
    if any(b <= a for a, b in itertools.pairwise(edges)):
        raise NotExact(f"range({spec.column!r}): fractional edges round to the same integer")
    return edges


def _bucket_key(level: Level, bucket: Mapping[str, Any], position: int) -> Any:
    spec = level.spec
    raw: Any = bucket["key"]
    if isinstance(spec, RangeBuckets):
        return spec.labels[position]
    if isinstance(spec, Histogram):
        value = float(raw) + 0.0  # -0.0 -> 0.0, as Spark's floor gives
        if level.kind is FieldKind.I64 and isinstance(spec.interval, int):
            return int(value)
        return value
    if isinstance(spec, DateHistogram):
        micros = round(float(raw)) * 1000
        return _date_key(micros, level.data_type)
    if level.kind is FieldKind.BOOL:
        return bool(raw)
    if level.kind is FieldKind.DATE:
        moment = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
        micros = (moment.replace(tzinfo=None) - _EPOCH) // timedelta(microseconds=1)
        return _date_key(micros, level.data_type)
    if level.kind is FieldKind.I64:
        return int(raw)
    return raw


def _date_key(micros: int, data_type: pa.DataType) -> Any:
    if ct.is_date(data_type):
        return (_EPOCH + timedelta(microseconds=micros)).date()
    return micros


def _partial(
    plan: MetricPlan, doc_count: int, found: Mapping[str, Any] | None, partitions: Mapping[str, Any]
) -> Partial:
    metric = plan.metric
    if metric.column is None:
        return Partial(count=doc_count)
    if plan.partition:
        # Only count(partition column) is planned on the index: its value is constant here.
        return Partial(count=doc_count if partitions[metric.column.lower()] is not None else 0)
    assert found is not None
    if metric.fn is MetricFn.COUNT:
        return Partial(count=int(found["value"]))
    values = int(found["count"])
    if values == 0:
        return Partial()
    low, high, total = found["min"], found["max"], found["sum"]
    if plan.kind is FieldKind.I64:
        if max(abs(low), abs(high)) * values >= _EXACT_F64:
            raise NotExact(f"sum of {metric.column!r} may pass 2**53")
        return Partial(values, int(total), int(low), int(high))
    low, high = float(low), float(high)
    # Tantivy starts a max at f64::MIN (the most negative finite double) and a min at
    # f64::MAX: over values of -inf (and maybe -1.797e308) only, the max shows -1.797e308
    # whatever they are; the sum and count stay exact.
    if (metric.fn is MetricFn.MAX and high == -_MAX_F64 and low == -math.inf) or (
        metric.fn is MetricFn.MIN and low == _MAX_F64 and high == math.inf
    ):
        raise NotExact(f"{metric.column!r}: Tantivy's {metric.fn.value} over infinities")
    if low == -math.inf or high == math.inf:
        # Tantivy's compensated sum turns an infinity followed by another value into
        # NaN. The values hold no NaN (checked), so the sum is the infinity min/max
        # show, or NaN when both signs are there, as plain addition gives.
        total = (
            low + high
            if low == -math.inf and high == math.inf
            else low
            if low == -math.inf
            else high
        )
    return Partial(values, float(total), low, high)
