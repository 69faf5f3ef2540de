"""Columns of a companion hit served from the split's fast fields instead of Parquet.

In HYBRID (and DISABLED) mode a companion split keeps integer and float
columns as Tantivy fast fields: column-oriented values read per document
without decompressing anything. A hit's value of such a column is the value
the build read from the same Parquet row, so it is taken from there and the
column's pages are not fetched (the needle's page reads fall by one column
each). Only types that a fast field holds exactly are served: Arrow signed
integers and ``uint8``-``uint32`` from an ``i64`` field, ``float32`` and
``float64`` from an ``f64`` field (Tantivy maps an f64 to a u64 bit for bit:
NaN, -0.0 and the infinities come back as written). Everything else
(decimals, dates, booleans, strings, ``uint64``, nested columns) stays with
the Parquet read. A document without a value (a file without the column, or
a null) reads as null, as the Parquet path gives it.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import tantivy

from indextables.search.schema.mapping import FieldKind, fast_read_type

__all__ = ["as_file_type", "fast_columns", "fast_values"]


def fast_columns(
    directory: str, identity: str, schema: pa.Schema, skip: Sequence[str] = ()
) -> dict[str, pa.DataType]:
    """The columns of ``schema`` (not in ``skip``, lowercase names) the split's fast
    fields hold exactly: column name -> the Arrow type its values are read as."""
    fields = _fast_numeric_fields(directory, identity)
    skipped = {name.lower() for name in skip}
    found: dict[str, pa.DataType] = {}
    for field in schema:
        if field.name.lower() in skipped:
            continue
        kind = fields.get(field.name)
        read_type = None if kind is None else fast_read_type(field.type, FieldKind(kind))
        if read_type is not None:
            found[field.name] = read_type
    return found


def as_file_type(values: pa.Array, file_type: pa.DataType) -> pa.Array | None:
    """``values`` (read from a fast field) as the file's column type, the type a Parquet
    read gives (None: a type a fast field does not hold exactly: read the file)."""
    kinds = (FieldKind.I64, FieldKind.F64)
    if any(fast_read_type(file_type, kind) == values.type for kind in kinds):
        return values.cast(file_type)
    return None


def fast_values(
    searcher: tantivy.Searcher, addresses: Sequence[Any], columns: Mapping[str, pa.DataType]
) -> dict[str, pa.Array]:
    """Per column of ``columns``, its values at ``addresses`` (in their order)."""
    return {
        name: pa.array(searcher.fast_field_values(name, list(addresses)), kind)
        for name, kind in columns.items()
    }


@functools.lru_cache(maxsize=64)
def _fast_numeric_fields(directory: str, identity: str) -> dict[str, str]:
    """The split's fast ``i64``/``f64`` fields (from its ``meta.json``), kept per content
    identity (never per inode: inode numbers are reused at once)."""
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as source:
        schema = json.load(source).get("schema", [])
    found: dict[str, str] = {}
    for entry in schema:
        kind, options = entry.get("type"), entry.get("options") or {}
        if kind in ("i64", "f64") and options.get("fast") and isinstance(entry.get("name"), str):
            found[entry["name"]] = kind
    return found
