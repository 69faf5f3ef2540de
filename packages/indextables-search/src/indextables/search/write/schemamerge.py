"""The schema an append writes in: the table's columns, safe upcasts, new columns on merge.

A write to an existing table names its columns as the data does (matched to the
table's case-insensitively, as Spark and the index resolve names). Each data
column must hold the table column's Spark type, or one that widens to it
without loss (a *safe upcast*, as delta-rs casts an append to the table's schema):

* ``byte``/``short``/``int`` into a wider integer column (``long`` above all);
  unsigned Arrow integers arrive as the next wider signed type (``uint8`` as
  ``short``, ``uint16`` as ``int``, ``uint32`` as ``long``; ``uint64`` as ``long``,
  a value above the long's range refused when the rows are converted);
* ``float`` into ``double``;
* ``decimal(p,s)`` into ``decimal(P,S)`` when ``S >= s`` and ``P - S >= p - s``.

Anything else that differs is refused naming the column and both types. With
``schema_mode="merge"`` data columns the table lacks are added to its schema
(nullable: its existing rows have no value there) and table columns the data lacks
are written as nulls (when the column is nullable and no partition column).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from indextables.search.errors import SchemaMismatchError
from indextables.search.schema import columntypes as ct

__all__ = ["SchemaResolution", "is_safe_upcast", "resolve_schema"]

_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_MERGE_HINT = 'pass schema_mode="merge" to add it to the table\'s schema'


@dataclass(frozen=True, slots=True)
class SchemaResolution:
    """How a write's columns map onto the table.

    Attributes:
        schema: the schema the rows are written in: the table's columns (their
            names, types and nullability, in the table's order), then the added ones.
        added: names of the columns new to the table (empty: the schema stays).
    """

    schema: pa.Schema
    added: tuple[str, ...] = ()


def is_safe_upcast(given: pa.DataType, table: pa.DataType) -> bool:
    """True when every value of Spark type ``given`` is exactly a value of ``table``'s."""
    have, want = ct.type_name(given), ct.type_name(table)
    if have == want:
        return True
    if have in _INTEGER_BITS and want in _INTEGER_BITS:
        return _INTEGER_BITS[have] <= _INTEGER_BITS[want]
    if have == "float" and want == "double":
        return True
    if ct.is_decimal(given) and ct.is_decimal(table):
        return bool(
            table.scale >= given.scale
            and table.precision - table.scale >= given.precision - given.scale
        )
    return False


def resolve_schema(
    table: pa.Schema,
    data: pa.Schema,
    *,
    merge: bool,
    partition_columns: Sequence[str] = (),
    uri: str = "",
) -> SchemaResolution:
    """The schema ``data`` (Spark's Arrow types) is appended to ``table`` in.

    Raises:
        SchemaMismatchError: a column the table lacks (without ``merge``), a table
            column the data lacks (without ``merge``, or not nullable, or a partition
            column), a type that is no safe upcast; the message names the column.
    """
    where = f" at {uri}" if uri else ""
    given = {f.name.lower(): f for f in data}
    partitions = {c.lower() for c in partition_columns}
    fields: list[pa.Field] = []
    for column in table:
        key = column.name.lower()
        field = given.get(key)
        if field is None:
            if not merge or key in partitions or not column.nullable:
                why = (
                    "it is a partition column"
                    if key in partitions
                    else "it is not nullable"
                    if merge
                    else 'pass schema_mode="merge" to write nulls there'
                )
                raise SchemaMismatchError(
                    f"the data has no column {column.name!r} "
                    f"({ct.type_name(column.type)}) of the table{where}: {why}"
                )
        elif not is_safe_upcast(field.type, column.type):
            raise SchemaMismatchError(
                f"column {column.name!r}: the data's {ct.type_name(field.type)} cannot be "
                f"written to the table's {ct.type_name(column.type)}{where} (no safe upcast: "
                "only wider integers, float to double and wider decimals are; cast it first)"
            )
        fields.append(column)
    known = {f.name.lower() for f in table}
    added = [f for f in data if f.name.lower() not in known]
    if added and not merge:
        names = ", ".join(repr(f.name) for f in added)
        raise SchemaMismatchError(
            f"the data has column(s) {names} that the table{where} does not have; {_MERGE_HINT}"
        )
    fields += [f.with_nullable(True) for f in added]
    return SchemaResolution(pa.schema(fields), tuple(f.name for f in added))
