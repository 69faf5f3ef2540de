"""Parse a Tantivy ``.store`` file: footer and skip index into block checkpoints.

Layout (Tantivy ``src/store``): ``[compressed blocks][skip index][doc-store
footer (28 bytes)]``, optionally followed by the directory footer every
managed file carries (``[JSON][u32 len][u32 magic 1337]``).
"""

from __future__ import annotations

import bisect
import mmap
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from indextables.search.read.docstore.errors import DocStoreError
from indextables.search.splits.vint import decode_vint

__all__ = ["COMPRESSORS", "StoreIndex", "read_store"]

COMPRESSORS = {0: "none", 1: "lz4", 4: "zstd"}
_DIRECTORY_FOOTER_MAGIC = 1337
_STORE_FOOTER_SIZE = 28


def int64s(values: Sequence[int]) -> memoryview:
    """``values`` as a read-only view of C ``int64``s: the checkpoints' one form, which
    both kernel twins read in place (a view of ``int64``s is kept as it is)."""
    if (
        isinstance(values, memoryview)
        and values.format in ("q", "l")
        and values.itemsize == 8
        and values.ndim == 1
        and values.c_contiguous
    ):
        return values.toreadonly()
    try:
        return memoryview(array("q", values)).toreadonly()
    except (TypeError, OverflowError) as exc:
        raise DocStoreError(f"checkpoints: not 64-bit integers ({exc})") from exc


def _bounds(values: array[int]) -> tuple[memoryview, memoryview]:
    # Starts and ends of back-to-back ranges, both views of one array of n + 1 bounds.
    view = memoryview(values).toreadonly()
    return view[:-1], view[1:]


@dataclass(frozen=True, slots=True, eq=False)
class StoreIndex:
    """A parsed doc store: the block data and one checkpoint per block.

    The checkpoints (``doc_starts`` .. ``byte_ends``, block ``b`` holding documents
    ``doc_starts[b]`` to ``doc_ends[b] - 1`` in ``data[byte_starts[b]:byte_ends[b]]``)
    are read-only views of C ``int64`` arrays, kept once: starts and ends of
    back-to-back ranges are two views of one array of ``n + 1`` bounds, and the
    kernels' ``Checkpoints`` read them in place. Any sequence of ints given is
    turned into such a view. Equal when every field is; hashed by its shape.
    """

    data: bytes | memoryview
    version: int
    compressor: str
    doc_starts: Sequence[int]
    doc_ends: Sequence[int]
    byte_starts: Sequence[int]
    byte_ends: Sequence[int]
    #: Uncompressed bytes of the first block: the store's own block size (the writer
    #: closes every block but the last once it passes the size), 0 for no block.
    block_bytes: int = 0
    #: The kernels' views of this store (``Checkpoints``), by kernel module name: built
    #: once, for every later decode of the store (see ``decode.checkpoints``).
    kernel_views: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("doc_starts", "doc_ends", "byte_starts", "byte_ends"):
            object.__setattr__(self, name, int64s(getattr(self, name)))

    def _key(self) -> tuple[Any, ...]:
        return (
            self.version,
            self.compressor,
            self.block_bytes,
            self.doc_starts,
            self.doc_ends,
            self.byte_starts,
            self.byte_ends,
            self.data,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StoreIndex):
            return NotImplemented
        return self is other or self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.version, self.compressor, len(self.data), len(self.doc_starts)))

    @property
    def num_docs(self) -> int:
        return self.doc_ends[-1] if len(self.doc_ends) else 0

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
    # Appended straight into C arrays: no Python int kept per checkpoint.
    docs = array("q")
    byte_starts = array("q")
    byte_ends = array("q")
    if layer_ends:
        # The last layer is the leaf: one checkpoint per compressed block.
        layer_start = pos + (layer_ends[-2] if len(layer_ends) > 1 else 0)
        layer_end = pos + layer_ends[-1]
        if layer_end > end:
            raise DocStoreError("store_bytes: skip index layer past the footer")
        p = layer_start
        doc_end = -1
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
                if doc_end >= 0 and doc != doc_end:
                    raise DocStoreError("store_bytes: skip index checkpoints are not contiguous")
                docs.append(doc)
                byte_starts.append(byte)
                doc += ndocs
                byte += nbytes
                doc_end = doc
                byte_ends.append(byte)
        if docs:
            docs.append(doc_end)
    if byte_ends and max(byte_ends) > offset:
        raise DocStoreError("store_bytes: a block runs into the skip index")
    doc_starts, doc_ends = _bounds(docs or array("q", [0]))
    if byte_starts[1:] == byte_ends[:-1]:  # back to back (a stub store's are not)
        byte_starts.append(byte_ends[-1] if byte_ends else 0)
        starts, ends = _bounds(byte_starts)
    else:
        starts, ends = memoryview(byte_starts).toreadonly(), memoryview(byte_ends).toreadonly()
    return StoreIndex(
        data=data[:offset],
        version=version,
        compressor=COMPRESSORS[comp_id],
        doc_starts=doc_starts,
        doc_ends=doc_ends,
        byte_starts=starts,
        byte_ends=ends,
        block_bytes=_first_block_bytes(data, COMPRESSORS[comp_id], starts, ends),
    )


def _first_block_bytes(
    data: memoryview, compressor: str, starts: Sequence[int], ends: Sequence[int]
) -> int:
    # The first block's uncompressed size: its ``[u32 size]`` header, or its length when
    # stored raw (a header past its block is left for the decoder to reject).
    if not len(starts):
        return 0
    begin, end = starts[0], ends[0]
    if compressor == "none":
        return max(0, end - begin)
    if begin < 0 or end - begin < 4 or end > len(data):
        return 0
    return int(struct.unpack_from("<I", data, begin)[0])
