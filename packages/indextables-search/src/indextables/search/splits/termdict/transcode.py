"""Whole ``.term`` files: detect their dictionary form and rewrite them to the other one."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Literal

from indextables.search.splits.termdict.composite import (
    FieldBlob,
    join_composite,
    split_composite,
    split_footer,
    with_footer,
)
from indextables.search.splits.termdict.errors import TermDictError
from indextables.search.splits.termdict.fstform import (
    DICT_TYPE_FST,
    decode_fst_dict,
    encode_fst_dict,
)
from indextables.search.splits.termdict.model import FieldTerms
from indextables.search.splits.termdict.sstform import (
    DICT_TYPE_SSTABLE,
    decode_sstable_dict,
    encode_sstable_dict,
)

__all__ = [
    "DictionaryKind",
    "decode_field",
    "dictionary_kind",
    "field_kind",
    "to_fst",
    "to_sstable",
]

DictionaryKind = Literal["fst", "sstable"]
_KINDS: dict[int, DictionaryKind] = {DICT_TYPE_FST: "fst", DICT_TYPE_SSTABLE: "sstable"}


def field_kind(blob: bytes) -> DictionaryKind:
    """The form of one field's dictionary, from its trailing u32 dict type."""
    if len(blob) < 4:
        raise TermDictError(f"field dictionary of {len(blob)} bytes has no dictionary type")
    dict_type = struct.unpack_from("<I", blob, len(blob) - 4)[0]
    try:
        return _KINDS[dict_type]
    except KeyError:
        raise TermDictError(f"unknown dictionary type {dict_type} (1 = FST, 2 = SSTable)") from None


def decode_field(blob: bytes) -> FieldTerms:
    """Decode one field's dictionary, whichever form it is in."""
    if field_kind(blob) == "fst":
        return decode_fst_dict(blob)
    return decode_sstable_dict(blob)


def dictionary_kind(data: bytes) -> DictionaryKind:
    """Return the dictionary form of a whole ``.term`` composite file.

    A file with no field (nothing indexed) reports ``"fst"``, the form that
    needs no rewrite for tantivy-py.

    Raises:
        TermDictError: the file is malformed or its fields mix both forms.
    """
    body, _footer = split_footer(data)
    kinds = {field_kind(blob.data) for blob in split_composite(body)}
    if len(kinds) > 1:
        raise TermDictError("the .term file mixes FST and SSTable field dictionaries")
    return kinds.pop() if kinds else "fst"


def _rewrite(data: bytes, target: DictionaryKind, encode: Callable[[FieldTerms], bytes]) -> bytes:
    body, footer = split_footer(data)
    blobs = split_composite(body)
    if all(field_kind(blob.data) == target for blob in blobs):
        return data  # already in the target form: nothing to rewrite
    rewritten_blobs = []
    for blob in blobs:
        if field_kind(blob.data) == target:
            rewritten_blobs.append(blob)
            continue
        try:
            rewritten = encode(decode_field(blob.data))
        except TermDictError as exc:
            raise TermDictError(f"field {blob.field}: {exc}") from exc
        rewritten_blobs.append(FieldBlob(blob.field, blob.idx, rewritten))
    return with_footer(join_composite(rewritten_blobs), footer)


def to_sstable(data: bytes) -> bytes:
    """Rewrite a whole ``.term`` composite file (any form) to the SSTable form.

    Each field becomes an SSTable v3 dictionary (dict type 2) laid out as the
    reference writes it; the file footer keeps its version and gets a new CRC.
    """
    return _rewrite(data, "sstable", encode_sstable_dict)


def to_fst(data: bytes) -> bytes:
    """Rewrite a whole ``.term`` composite file (any form) to the FST form (tantivy-py's)."""
    return _rewrite(data, "fst", encode_fst_dict)
