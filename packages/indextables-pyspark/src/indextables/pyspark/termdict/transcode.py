"""Whole ``.term`` files: detect their dictionary form and rewrite them to the other one."""

from __future__ import annotations

from typing import Literal

__all__ = ["DictionaryKind", "dictionary_kind", "to_fst", "to_sstable"]

DictionaryKind = Literal["fst", "sstable"]


def dictionary_kind(data: bytes) -> DictionaryKind:
    """Return the dictionary form of a whole ``.term`` composite file."""
    raise NotImplementedError


def to_sstable(data: bytes) -> bytes:
    """Rewrite a whole ``.term`` composite file (any form) to the SSTable form."""
    raise NotImplementedError


def to_fst(data: bytes) -> bytes:
    """Rewrite a whole ``.term`` composite file (any form) to the FST form."""
    raise NotImplementedError
