"""String and binary columns as Arrow views, the layout Polars holds them in.

Polars keeps every string column as ``string_view`` and every binary column as
``binary_view``: ``pl.from_arrow`` of a ``string``/``large_string`` column copies
each value into new view buffers. pyarrow's cast to a view keeps the column's
data buffer and writes only the 16-byte views (a value of 12 bytes or fewer is
inlined in its view), and ``pl.from_arrow`` imports views without a copy: a
table handed to Polars is cast here first. The views themselves are still
written (16 bytes a value): on an idle machine the cast costs about what
Polars' own conversion does (which runs on several threads); on a loaded one
it is cheaper (200,000 log rows at load 2: ~10 ms of conversion to ~4 ms).

Only top-level columns are cast; the values, nulls and chunks are kept, and a
column whose cast pyarrow lacks is left as it is (Polars converts it then).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["view_type", "with_string_views"]


def view_type(data_type: pa.DataType) -> pa.DataType | None:
    """The view type of a string or binary ``data_type`` (None for any other type)."""
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return pa.string_view()
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        return pa.binary_view()
    return None


def with_string_views(table: pa.Table) -> pa.Table:
    """``table`` with its string and binary columns cast to views, chunk by chunk."""
    fields: list[pa.Field] = []
    columns: list[pa.ChunkedArray] = []
    changed = False
    for field, column in zip(table.schema, table.columns, strict=True):
        target = view_type(field.type)
        if target is not None:
            try:
                column = column.cast(target)
            except pa.ArrowNotImplementedError:
                target = None
        if target is not None:
            field = field.with_type(target)
            changed = True
        fields.append(field)
        columns.append(column)
    if not changed:
        return table
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))
