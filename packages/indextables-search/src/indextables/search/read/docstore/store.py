"""Parse a Tantivy ``.store`` file: footer and skip index into block checkpoints.

Layout (Tantivy ``src/store``): ``[compressed blocks][skip index][doc-store
footer (28 bytes)]``, optionally followed by the directory footer every
managed file carries (``[JSON][u32 len][u32 magic 1337]``).
"""

from __future__ import annotations

import bisect
import mmap
import struct
from dataclasses import dataclass, field
from typing import Any

from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.splits.vint import decode_vint

__all__ = ["COMPRESSORS", "StoreIndex", "read_store"]

COMPRESSORS = {0: "none", 1: "lz4", 4: "zstd"}
_DIRECTORY_FOOTER_MAGIC = 1337
_STORE_FOOTER_SIZE = 28


@dataclass(frozen=True, slots=True)
class StoreIndex:
    """A parsed doc store: the block data and one checkpoint per block."""

    data: bytes | memoryview
    version: int
    compressor: str
    doc_starts: tuple[int, ...]
    doc_ends: tuple[int, ...]
    byte_starts: tuple[int, ...]
    byte_ends: tuple[int, ...]
    #: The kernels' views of this store (``Checkpoints``), by kernel module name: built
    #: once, for every later decode of the store (see ``decode.checkpoints``).
    kernel_views: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def num_docs(self) -> int:
        return self.doc_ends[-1] if self.doc_ends else 0

    def block_of(self, doc_id: int) -> int:
        """The index of the block holding ``doc_id``."""
        if doc_id < 0 or doc_id >= self.num_docs:
            raise DocStoreError(f"doc_ids: {doc_id} outside the store's {self.num_docs} documents")
        return bisect.bisect_right(self.doc_starts, doc_id) - 1


def _vint(data: memoryview, pos: int, end: int) -> tuple[int, int]:
    return decode_vint(data, pos, end, error=DocStoreError, context="doc store skip index")


def _strip_directory_footer(raw: memoryview) -> memoryview:
    if len(raw) < 8:
        raise DocStoreError("store_bytes: too short to be a doc store")
    length, magic = struct.unpack_from("<II", raw, len(raw) - 8)
    if magic != _DIRECTORY_FOOTER_MAGIC:
        return raw
    if length + 8 > len(raw):
        raise DocStoreError("store_bytes: directory footer longer than the file")
    return raw[: len(raw) - 8 - length]


def read_store(store_bytes: bytes | bytearray | memoryview | mmap.mmap) -> StoreIndex:
    """Parse a segment's ``.store`` file bytes (with or without the directory footer).

    Any buffer works (an ``mmap`` of the file included); the blocks are not copied.
    """
    data = _strip_directory_footer(memoryview(store_bytes).cast("B"))
    if len(data) < _STORE_FOOTER_SIZE:
        raise DocStoreError("store_bytes: too short for the doc-store footer")
    footer_at = len(data) - _STORE_FOOTER_SIZE
    version, offset, comp_id = struct.unpack_from("<IQB", data, footer_at)
    if version not in (1, 2):
        raise DocStoreError(f"store_bytes: unsupported doc store version {version}")
    if comp_id not in COMPRESSORS:
        raise DocStoreError(f"store_bytes: unknown doc store compressor id {comp_id}")
    if offset > footer_at:
        raise DocStoreError("store_bytes: skip index offset past the footer")
    pos, end = offset, footer_at
    num_layers, pos = _vint(data, pos, end)
    layer_ends = []
    for _ in range(num_layers):
        layer_end, pos = _vint(data, pos, end)
        layer_ends.append(layer_end)
    doc_starts: list[int] = []
    doc_ends: list[int] = []
    byte_starts: list[int] = []
    byte_ends: list[int] = []
    if layer_ends:
        # The last layer is the leaf: one checkpoint per compressed block.
        layer_start = pos + (layer_ends[-2] if len(layer_ends) > 1 else 0)
        layer_end = pos + layer_ends[-1]
        if layer_end > end:
            raise DocStoreError("store_bytes: skip index layer past the footer")
        p = layer_start
        while p < layer_end:
            count, p = _vint(data, p, layer_end)
            if count == 0:
                continue
            doc, p = _vint(data, p, layer_end)
            byte, p = _vint(data, p, layer_end)
            for _ in range(count):
                ndocs, p = _vint(data, p, layer_end)
                nbytes, p = _vint(data, p, layer_end)
                # Documents follow on; blocks need not (a companion's stub store points
                # every checkpoint block at one shared block, see companion.stubstore).
                if doc_ends and doc != doc_ends[-1]:
                    raise DocStoreError("store_bytes: skip index checkpoints are not contiguous")
                doc_starts.append(doc)
                byte_starts.append(byte)
                doc += ndocs
                byte += nbytes
                doc_ends.append(doc)
                byte_ends.append(byte)
    if byte_ends and max(byte_ends) > offset:
        raise DocStoreError("store_bytes: a block runs into the skip index")
    return StoreIndex(
        data=data[:offset],
        version=version,
        compressor=COMPRESSORS[comp_id],
        doc_starts=tuple(doc_starts),
        doc_ends=tuple(doc_ends),
        byte_starts=tuple(byte_starts),
        byte_ends=tuple(byte_ends),
    )
