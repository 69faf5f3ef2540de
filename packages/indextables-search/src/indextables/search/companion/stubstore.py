"""The companion split's stub doc store: every document empty, in a few kilobytes.

A companion split stores no field, yet Tantivy writes a ``.store`` holding one
empty document per row: a 1-byte document (``VInt(0)``) and its u32 offset in
LZ4 blocks of ~1,800 documents, ~4 bytes per row after compression (LZ4 cannot
shrink a counting sequence of offsets). That was a quarter of the split.

:func:`write_stub_stores` replaces each segment's store by one that reads the
same (every document empty, for tantivy-py's ``searcher.doc`` and
:mod:`indextables.search.read.docstore`; the reference reads stores with the
same Tantivy code, not run here) at a fixed size:

- one uncompressed block (compressor ``none``) of ``min(max_doc, 1024)``
  empty documents (5 KB);
- a skip index whose leaf layer has one checkpoint block per 1,024 documents
  (~9 bytes each),
  each checkpoint pointing at that same block (Tantivy restarts the doc and
  byte offsets at every checkpoint block, so blocks may be shared), and upper
  layers over it as Tantivy builds them (8 checkpoints per block);
- the doc-store footer (version 2, as the original's), its offset and compressor
  updated, and the original file footer with a fresh CRC.

Why ``none`` and not LZ4: Tantivy's segment merge copies a store's blocks and
re-serialises its checkpoints as if contiguous (``StoreWriter::stack``) when
the store has six checkpoints or more and the same compressor as the index
(``lz4`` here); with another compressor it re-reads every document instead
(``iter_raw``), which is right for shared blocks. So a merge by the reference
or by Tantivy writes an ordinary store of empty documents.
"""

from __future__ import annotations

import struct
from typing import Final

from indextables.search.read.docstore._kernels_py import lz4_decompress
from indextables.search.read.docstore.store import read_store
from indextables.search.splits.splitdir import files_of_kind, replace_by_rename
from indextables.search.splits.termdict.composite import split_footer, with_footer
from indextables.search.splits.vint import encode_vint, vint_bytes

__all__ = ["STUB_BLOCK_DOCS", "stub_store_bytes", "write_stub_stores"]

#: Documents in the stub's single block (and per leaf checkpoint).
STUB_BLOCK_DOCS: Final = 1024
_EMPTY_DOC: Final = vint_bytes(0)  # a document with no field values
_CHECKPOINT_PERIOD: Final = 8  # Tantivy's checkpoints per skip-index block
_STORE_FOOTER: Final = 28  # u32 version, u64 offset, u8 compressor, 15 reserved bytes
_NONE: Final = 0
_VERSION: Final = 2  # the doc-store version written (the only one read here as a source)


def _checkpoint_block(out: bytearray, checkpoints: list[tuple[int, int, int, int]]) -> None:
    """Tantivy's ``CheckpointBlock``: count, first doc, first byte, then (docs, bytes) pairs
    (contiguous within the block)."""
    encode_vint(len(checkpoints), out)
    encode_vint(checkpoints[0][0], out)
    encode_vint(checkpoints[0][2], out)
    for doc_start, doc_end, byte_start, byte_end in checkpoints:
        encode_vint(doc_end - doc_start, out)
        encode_vint(byte_end - byte_start, out)


def _skip_index(num_docs: int, block_len: int) -> bytes:
    """Layers from the coarsest down to the leaf, as ``SkipIndexBuilder`` serialises them."""
    leaf = bytearray()
    pointers = []  # (doc range, byte range in this layer) of each block of the layer
    for start in range(0, num_docs, STUB_BLOCK_DOCS):
        end = min(num_docs, start + STUB_BLOCK_DOCS)
        at = len(leaf)
        _checkpoint_block(leaf, [(start, end, 0, block_len)])
        pointers.append((start, end, at, len(leaf)))
    layers = [bytes(leaf)]
    while len(pointers) > 1:
        layer = bytearray()
        upper = []
        for i in range(0, len(pointers), _CHECKPOINT_PERIOD):
            group = pointers[i : i + _CHECKPOINT_PERIOD]
            at = len(layer)
            _checkpoint_block(layer, group)
            upper.append((group[0][0], group[-1][1], at, len(layer)))
        layers.append(bytes(layer))
        pointers = upper
    out = bytearray()
    encode_vint(len(layers), out)
    end = 0
    for layer_bytes in reversed(layers):
        end += len(layer_bytes)
        encode_vint(end, out)
    for layer_bytes in reversed(layers):
        out += layer_bytes
    return bytes(out)


def stub_store_bytes(num_docs: int, version: int) -> bytes:
    """The body of a stub store (no file footer) of ``num_docs`` empty documents."""
    in_block = min(num_docs, STUB_BLOCK_DOCS)
    block = (
        _EMPTY_DOC * in_block
        + struct.pack(f"<{in_block}I", *range(in_block))
        + struct.pack("<I", in_block)
    )
    skip = _skip_index(num_docs, len(block)) if num_docs else _skip_index_empty()
    footer = struct.pack("<IQB", version, len(block), _NONE) + bytes(_STORE_FOOTER - 13)
    return block + skip + footer


def _skip_index_empty() -> bytes:
    out = bytearray()
    encode_vint(0, out)
    return bytes(out)


def _only_empty_documents(data: bytes) -> int | None:
    """The store's document count when its first document is empty, else None."""
    index = read_store(data)
    if index.version != _VERSION or index.num_docs == 0 or index.compressor not in ("lz4", "none"):
        return None
    block = bytes(index.data[index.byte_starts[0] : index.byte_ends[0]])
    if index.compressor == "lz4":
        block = lz4_decompress(block[4:], struct.unpack_from("<I", block)[0])
    count = struct.unpack_from("<I", block, len(block) - 4)[0]
    if count < 1:
        return None
    first, *rest = struct.unpack_from(f"<{min(count, 2)}I", block, len(block) - 4 - 4 * count)
    end = rest[0] if rest else len(block) - 4 - 4 * count
    return index.num_docs if block[first:end] == _EMPTY_DOC else None


def write_stub_stores(directory: str) -> int:
    """Replace every ``.store`` of an index directory that holds only empty documents by
    its stub (each file replaced by a rename: the open index may still map the old one).

    Returns the bytes saved. A store whose first document is not empty (a field is
    stored), or that is already smaller than its stub (a few documents), is left alone.
    """
    saved = 0
    for path in files_of_kind(directory, ".store"):
        with open(path, "rb") as handle:
            data = handle.read()
        num_docs = _only_empty_documents(data)
        if num_docs is None:
            continue
        _, footer_json = split_footer(data)
        stub = with_footer(stub_store_bytes(num_docs, _VERSION), footer_json)
        if len(stub) >= len(data):
            continue
        replace_by_rename(path, stub)
        saved += len(data) - len(stub)
    return saved
