"""Spark's pushed filters -> the engine's :class:`~indextables.search.query.conditions.Condition`.

A condition describes a *superset* of the rows its filter keeps: the reader hands
every filter back to Spark as unhandled, so Spark always re-checks the rows, and a
condition only narrows what is read. A filter that cannot be translated exactly is
not used.
"""

from __future__ import annotations

from collections.abc import Iterable

from indextables.search.query.conditions import Condition
from pyspark.sql import datasource as ds

__all__ = ["translate", "translate_all"]

_OPS: dict[type, str] = {
    ds.EqualTo: "=",
    ds.EqualNullSafe: "=",
    ds.LessThan: "<",
    ds.LessThanOrEqual: "<=",
    ds.GreaterThan: ">",
    ds.GreaterThanOrEqual: ">=",
}


def translate(spark_filter: ds.Filter) -> Condition | None:
    """The condition for one Spark filter, or None when it is not usable."""
    if isinstance(spark_filter, ds.Not):
        child = spark_filter.child
        if isinstance(child, ds.EqualTo) and len(child.attribute) == 1 and child.value is not None:
            return Condition("!=", child.attribute[0], (child.value,))
        return None
    attribute: tuple[str, ...] = tuple(getattr(spark_filter, "attribute", ()))
    if len(attribute) > 1:
        return _nested(spark_filter, attribute)
    if len(attribute) != 1:
        return None
    column = attribute[0]
    op = _OPS.get(type(spark_filter))
    if op is not None:
        value = spark_filter.value  # type: ignore[attr-defined]
        return None if value is None else Condition(op, column, (value,))
    if isinstance(spark_filter, ds.In):
        values = tuple(v for v in spark_filter.value if v is not None)
        return Condition("in", column, values)
    if isinstance(spark_filter, ds.IsNull):
        return Condition("null", column)
    if isinstance(spark_filter, ds.IsNotNull):
        return Condition("notnull", column)
    if isinstance(spark_filter, ds.StringStartsWith):
        return Condition("prefix", column, (spark_filter.value,))
    if isinstance(spark_filter, ds.StringEndsWith):
        return Condition("suffix", column, (spark_filter.value,))
    if isinstance(spark_filter, ds.StringContains):
        return Condition("contains", column, (spark_filter.value,))
    return None


def _nested(spark_filter: ds.Filter, attribute: tuple[str, ...]) -> Condition | None:
    """``=`` / IN on a field inside a struct column (Spark hands its path as the attribute)."""
    column, path = attribute[0], attribute[1:]
    if isinstance(spark_filter, ds.EqualTo | ds.EqualNullSafe) and spark_filter.value is not None:
        return Condition("=", column, (spark_filter.value,), path)
    if isinstance(spark_filter, ds.In):
        values = tuple(v for v in spark_filter.value if v is not None)
        return Condition("in", column, values, path)
    return None


def translate_all(filters: Iterable[ds.Filter]) -> tuple[Condition, ...]:
    """Conditions for every translatable filter (the rest are left to Spark alone)."""
    return tuple(c for c in (translate(f) for f in filters) if c is not None)
