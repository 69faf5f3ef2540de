"""Arrow layouts that some kernels lack -> the plain layouts every kernel takes.

Libraries hand over the same values in several Arrow layouts: Polars and
deltalake (after DELETE/UPDATE/MERGE) write ``string_view``/``binary_view``,
Polars' categoricals are dictionaries of views with unsigned indices, DuckDB
may produce list views, and a run-end encoded array can come from any pyarrow
user. pyarrow's ``take`` and ``filter`` have no kernel for views or run-end
encoded arrays, and a cast cannot decode a dictionary of views or a run-end
encoded array. Every read and write path therefore turns such columns into
their *plain* form once, on entry:

* ``string_view`` -> ``string``, ``binary_view`` -> ``binary``;
* ``list_view`` -> ``list``, ``large_list_view`` -> ``large_list``;
* a dictionary (any index type) -> its decoded values, a run-end encoded
  array -> its decoded values;
* inside structs, lists, large and fixed-size lists and maps, the same.

The values, nulls and field names are kept; every other type (``large_string``,
``large_binary``, ``large_list``...) is already plain and left as it is.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from indextables.search.schema import columntypes as ct

__all__ = ["is_plain", "plain_array", "plain_schema", "plain_type"]

_VIEWS = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


def is_plain(t: pa.DataType) -> bool:
    """True when ``t`` holds no view, dictionary or run-end encoded layout (at any depth)."""
    types = pa.types
    if types.is_dictionary(t) or types.is_run_end_encoded(t) or t in _VIEWS:
        return False
    if types.is_list_view(t) or types.is_large_list_view(t):
        return False
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t):
        return is_plain(t.value_type)
    if types.is_map(t):
        return is_plain(t.key_type) and is_plain(t.item_type)
    if types.is_struct(t):
        return all(is_plain(f.type) for f in ct.fields_of(t))
    return True


def plain_type(t: pa.DataType) -> pa.DataType:
    """The plain form of ``t`` (see the module docstring); ``t`` itself when plain."""
    if is_plain(t):
        return t
    types = pa.types
    if t in _VIEWS:
        return _VIEWS[t]
    if types.is_dictionary(t) or types.is_run_end_encoded(t):
        return plain_type(t.value_type)
    if types.is_list_view(t) or types.is_list(t) or types.is_fixed_size_list(t):
        return pa.list_(_plain_field(t.value_field))
    if types.is_large_list_view(t) or types.is_large_list(t):
        return pa.large_list(_plain_field(t.value_field))
    if types.is_map(t):
        item = _plain_field(t.item_field)
        return pa.map_(_plain_field(t.key_field), item, keys_sorted=t.keys_sorted)
    return pa.struct([_plain_field(f) for f in ct.fields_of(t)])


def _plain_field(f: pa.Field) -> pa.Field:
    return f.with_type(plain_type(f.type))


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every field's type in its plain form (names, nullability and
    metadata kept)."""
    if all(is_plain(f.type) for f in schema):
        return schema
    return pa.schema([_plain_field(f) for f in schema], metadata=schema.metadata)


def plain_array(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``array`` in its plain form: the same values and nulls, of :func:`plain_type`."""
    if is_plain(array.type):
        return array
    if isinstance(array, pa.ChunkedArray):
        chunks = [plain_array(chunk) for chunk in array.chunks]
        return pa.chunked_array(chunks, type=plain_type(array.type))
    return _plain(array)


def _plain(array: pa.Array) -> pa.Array:
    t = array.type
    if is_plain(t):
        return array
    types = pa.types
    if t in _VIEWS:
        return array.cast(_VIEWS[t])
    if types.is_dictionary(t):
        # take over the plain dictionary: a view dictionary has no take kernel
        return _plain(array.dictionary).take(array.indices)
    if types.is_run_end_encoded(t):
        if not is_plain(t.value_type):  # no decode kernel for views: plain values first
            whole = pa.RunEndEncodedArray.from_arrays(array.run_ends, _plain(array.values))
            array = whole.slice(array.offset, len(array))
        return _plain(pc.run_end_decode(array))
    if array.offset:  # a slice: rebuild from a copy whose offsets and children start at 0
        array = pa.concat_arrays([array])
    mask = array.is_null() if array.null_count else None
    if types.is_list_view(t) or types.is_large_list_view(t):
        return _list_of_views(array, mask)
    if types.is_fixed_size_list(t):
        return _plain(array.cast(pa.list_(t.value_field)))
    if types.is_list(t) or types.is_large_list(t):
        kind = pa.LargeListArray if types.is_large_list(t) else pa.ListArray
        values = _plain(array.values)
        return kind.from_arrays(array.offsets, values, type=plain_type(t), mask=mask)
    if types.is_map(t):
        keys, items = _plain(array.keys), _plain(array.items)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=plain_type(t), mask=mask)
    children = [_plain(child) for child in array.flatten()]
    return pa.StructArray.from_arrays(children, fields=list(plain_type(t)), mask=mask)


def _list_of_views(array: pa.Array, mask: pa.Array | None) -> pa.Array:
    """A list view as a list (pyarrow's own cast left invalid offsets when a view
    started before the one above it): each row's values taken in order."""
    t = array.type
    large = pa.types.is_large_list_view(t)
    width = pa.int64() if large else pa.int32()
    values = _plain(array.values)
    sizes = pc.if_else(array.is_valid(), array.sizes, pa.scalar(0, width))
    ends = pc.cumulative_sum(sizes)
    total = pc.sum(sizes).as_py() or 0
    offsets = pa.concat_arrays([pa.array([0], width), ends.cast(width)])
    if total:
        # each taken value's row: its start in ``values`` minus its start in the result
        shift = pc.subtract(array.offsets.cast(pa.int64()), pc.subtract(ends, sizes))
        keep = pc.greater(sizes, 0)
        runs = pa.RunEndEncodedArray.from_arrays(
            ends.filter(keep).cast(pa.int64()), shift.filter(keep)
        )
        positions = pc.add(pa.array(range(total), pa.int64()), pc.run_end_decode(runs))
        flat = values.take(positions)
    else:
        flat = values.slice(0, 0)
    kind = pa.LargeListArray if large else pa.ListArray
    return kind.from_arrays(offsets, flat, type=plain_type(t), mask=mask)
