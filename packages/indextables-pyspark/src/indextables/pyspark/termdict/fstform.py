"""One field's dictionary in the FST form (dict type 1, what tantivy-py reads and writes).

``[fst map: term -> ordinal][TermInfoStore][u64 TermInfoStore length][u32 1][u32 dict type 1]``
"""

from __future__ import annotations

import struct
from typing import Final

from indextables.pyspark.termdict import impl
from indextables.pyspark.termdict.errors import TermDictError
from indextables.pyspark.termdict.model import FieldTerms

__all__ = ["DICT_TYPE_FST", "decode_fst_dict", "encode_fst_dict"]

DICT_TYPE_FST: Final = 1
_FST_DICT_VERSION: Final = 1
_TAIL: Final = struct.Struct("<QII")


def decode_fst_dict(blob: bytes) -> FieldTerms:
    """Read one FST-form dictionary (dict type included)."""
    if len(blob) < _TAIL.size:
        raise TermDictError(f"FST dictionary of {len(blob)} bytes is shorter than its footer")
    tis_len, version, dict_type = _TAIL.unpack_from(blob, len(blob) - _TAIL.size)
    if dict_type != DICT_TYPE_FST:
        raise TermDictError(f"dictionary type {dict_type} is not the FST form (1)")
    if version != _FST_DICT_VERSION:
        raise TermDictError(f"FST dictionary version {version} is not 1")
    tis_start = len(blob) - _TAIL.size - tis_len
    if tis_start < 0:
        raise TermDictError(f"TermInfoStore length {tis_len} exceeds the dictionary")
    kernels = impl.kernels()
    keys, ordinals = kernels.fst_entries(blob[:tis_start])
    if ordinals != list(range(len(keys))):
        raise TermDictError("FST dictionary values are not the term ordinals 0..n-1")
    cols = kernels.tis_decode(blob[tis_start : len(blob) - _TAIL.size])
    if len(cols[0]) != len(keys):
        raise TermDictError(f"FST holds {len(keys)} terms but its TermInfoStore {len(cols[0])}")
    return FieldTerms.from_columns(keys, cols)


def encode_fst_dict(terms: FieldTerms) -> bytes:
    """Write one FST-form dictionary exactly as tantivy (without ``quickwit``) does."""
    kernels = impl.kernels()
    fst = kernels.fst_build(terms.keys, None)
    tis = kernels.tis_encode(terms.columns())
    return fst + tis + _TAIL.pack(len(tis), _FST_DICT_VERSION, DICT_TYPE_FST)
