"""A column's cut pages turned straight into an Arrow array, no Parquet decoder between.

A needle's hits in a column come back as pages cut down to them
(:mod:`.slimpages`: definition levels of the hit rows, their PLAIN values). For
the types whose Arrow layout is the PLAIN bytes themselves (32/64-bit integers,
dates, floats and doubles, strings and binaries, large or not), the cut pages of
a column are laid end to end as one array's buffers by one kernel call
(``_kernels.arrow_parts``; the pure twin when not built) instead of being written
as a small Parquet file for pyarrow to decode. The values are the stored bits
(NaN payloads, -0.0 and invalid UTF-8 alike: pyarrow's Parquet reader does not
validate UTF-8 either). Any other type, or a type the file stores another way
(a logical type pyarrow would convert), returns None: the small-file path then
decodes it as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from indextables.search.companion.slimpages import CutParts, PageCodec
from indextables.search.companion.thriftcompact import TStruct

try:
    from indextables.search.companion._kernels import arrow_parts
except ImportError:  # not built: the pure twin
    from indextables.search.companion._kernels_py import arrow_parts

__all__ = ["cut_array", "laid_out_raw"]

_INT32, _INT64, _FLOAT, _DOUBLE, _BYTE_ARRAY = 1, 2, 4, 5, 6
# converted types (SchemaElement field 6) and logical types (field 10, a union)
_UTF8, _DATE, _INT_32, _INT_64 = 0, 6, 17, 18
_STRING_LOGICAL, _DATE_LOGICAL, _INTEGER_LOGICAL = 1, 6, 10

_NONE: frozenset[int | None] = frozenset({None})
_STRINGS = (_BYTE_ARRAY, frozenset({None, _UTF8}), frozenset({None, _STRING_LOGICAL}), 0)
_BINARIES = (_BYTE_ARRAY, _NONE, _NONE, 0)

#: Arrow type -> (physical type, converted types and logical types it may carry, the
#: integer bit width a logical INTEGER must state).
_RAW: dict[pa.DataType, tuple[int, frozenset[int | None], frozenset[int | None], int]] = {
    pa.int32(): (_INT32, frozenset({None, _INT_32}), frozenset({None, _INTEGER_LOGICAL}), 32),
    pa.int64(): (_INT64, frozenset({None, _INT_64}), frozenset({None, _INTEGER_LOGICAL}), 64),
    pa.date32(): (_INT32, frozenset({None, _DATE}), frozenset({None, _DATE_LOGICAL}), 0),
    pa.float32(): (_FLOAT, _NONE, _NONE, 0),
    pa.float64(): (_DOUBLE, _NONE, _NONE, 0),
    pa.string(): _STRINGS,
    pa.large_string(): _STRINGS,
    pa.binary(): _BINARIES,
    pa.large_binary(): _BINARIES,
}
_LARGE = (pa.large_string(), pa.large_binary())


def laid_out_raw(arrow_type: pa.DataType, element: TStruct, codec: PageCodec) -> bool:
    """Whether a column read as ``arrow_type`` holds its PLAIN values' bytes as they
    are (its leaf's ``SchemaElement`` and the chunk's codec say how it is stored)."""
    wanted = _RAW.get(arrow_type)
    if wanted is None:
        return False
    physical, converted, logical, bits = wanted
    if codec.physical != physical or element.get(6) not in converted:
        return False
    union = element.get(10)
    kinds = list(union.fields) if isinstance(union, TStruct) else []
    kind = kinds[0] if len(kinds) == 1 else (None if not kinds else -1)
    if kind not in logical:
        return False
    if kind == _INTEGER_LOGICAL:
        integer = union.get(_INTEGER_LOGICAL)
        return isinstance(integer, TStruct) and integer.get(1) == bits and integer.get(2) is True
    return True


def cut_array(
    pages: Sequence[CutParts], arrow_type: pa.DataType, codec: PageCodec
) -> pa.Array | None:
    """The rows of the cut ``pages`` (in order) as one array of ``arrow_type``, which
    :func:`laid_out_raw` accepted (None: a page's parts disagree with its counts)."""
    large = arrow_type in _LARGE
    try:
        validity, values, data, nulls = arrow_parts(list(pages), codec.optional, codec.width, large)
    except ValueError:
        return None
    rows = sum(page[0] for page in pages)
    buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(values)]
    if data is not None:
        buffers.append(pa.py_buffer(data))
    return pa.Array.from_buffers(arrow_type, rows, buffers, null_count=nulls)
