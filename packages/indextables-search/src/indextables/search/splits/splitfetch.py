"""Streaming one split from object storage into a local directory, in tantivy-py's form.

The footer comes in one ranged read (from the log's offsets); the file data
follows front to back in ranged reads of at most :data:`CHUNK_BYTES`, each
piece written to its file as it arrives, so a split is never held whole in
memory. Only ``.term`` files (one term dictionary per field, sized by the
number of terms) are held while they are rewritten to tantivy-py's FST form
(:mod:`indextables.search.splits.termdict`); every other file keeps the split's
bytes. The split cache (:mod:`indextables.search.splits.splitcache`) decides where
to and when.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final

from indextables.protocol.errors import CorruptFileError
from indextables.protocol.hotcache import parse_hotcache
from indextables.protocol.splitbundle import SPLIT_FIELDS, SplitFooter, read_split_footer
from indextables.protocol.store import ObjectStore
from indextables.search.errors import UnreadableSplitError
from indextables.search.splits.termdict import dictionary_kind, to_fst

__all__ = ["CHUNK_BYTES", "LocalWriteError", "SplitRef", "download"]

# Largest ranged read of a fetch: the memory a fetch needs besides one .term file.
CHUNK_BYTES: Final = 8 << 20


@dataclass(frozen=True, slots=True)
class SplitRef:
    """What a read task needs to fetch one split.

    Attributes:
        path: split path relative to the table root.
        size: file size in bytes.
        footer_start_offset: footer offset from the log, when recorded.
        footer_end_offset: footer end (the file size), when recorded.
    """

    path: str
    size: int
    footer_start_offset: int | None = None
    footer_end_offset: int | None = None


def download(
    store: ObjectStore,
    split: SplitRef,
    target: str,
    *,
    reserved: frozenset[str] = frozenset(),
    as_stored: bool = False,
) -> dict[str, int]:
    """Stream ``split`` into the directory ``target`` in tantivy-py's form.

    ``reserved`` are file names the caller keeps for itself (refused in a split).
    With ``as_stored`` the term dictionaries keep the split's own form (MERGE
    SPLITS re-bundles them unchanged).

    Returns:
        The size of every file written, by name.

    Raises:
        CorruptFileError: the footer, the file table or the length disagree with the log.
        UnreadableSplitError: the split stores documents with zstd.
    """
    footer = _footer(store, split)
    names = {n: r for n, r in footer.files.items() if n != SPLIT_FIELDS}
    for name in names:
        if "/" in name or "\\" in name or name in ("", ".", "..") or name in reserved:
            raise CorruptFileError(split.path, f"unsafe file name {name!r} in split")
    _check_doc_store(store, split, footer)
    stream = _RangeStream(store, split.path, footer.footer_start_offset)
    for name, (start, end) in sorted(names.items(), key=lambda item: item[1]):
        path = os.path.join(target, name)
        if name.endswith(".term"):
            data = stream.read(start, end)
            if not as_stored and dictionary_kind(data) == "sstable":
                data = to_fst(data)
            with _local(path), open(path, "wb") as handle:
                handle.write(data)
        else:
            # Unbuffered: each piece (at most one chunk) goes to the file as it arrives.
            with _local(path):
                raw = open(path, "wb", buffering=0)  # noqa: SIM115 (closed below)
            with raw:  # the store's errors inside copy pass through unchanged
                stream.copy(start, end, functools.partial(_write_all, raw, path))
    with _local(target):
        _check_hotcache(split, footer, target, [n for n in names if not n.endswith(".term")])
        return {name: os.path.getsize(os.path.join(target, name)) for name in names}


def _check_hotcache(split: SplitRef, footer: SplitFooter, target: str, names: list[str]) -> None:
    """Compare the files written with the hotcache's copies of their bytes (the whole of
    ``meta.json`` and ``.managed.json``, which carry no checksum, and the edges of the
    others); a split whose hotcache does not parse is not checked this way.

    Raises:
        CorruptFileError: a file disagrees with the hotcache.
    """
    if not footer.hotcache:
        return
    try:
        hotcache = parse_hotcache(footer.hotcache, path=split.path)
    except CorruptFileError:
        return
    for name in names:
        cached = hotcache.cached(name)
        if cached is None:
            continue
        with open(os.path.join(target, name), "rb") as written:
            for piece in cached.slices:
                written.seek(piece.start)
                expected = cached.data[piece.address : piece.address + piece.stop - piece.start]
                if written.read(piece.stop - piece.start) != expected:
                    raise CorruptFileError(
                        split.path,
                        f"{name} disagrees with the split's hotcache at bytes "
                        f"{piece.start}-{piece.stop}",
                    )


class LocalWriteError(Exception):
    """Writing a fetched file to the local disk failed (the split cache names its setting).

    Attributes:
        path: the local file.
        error: the operating system's error.
    """

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(f"{path}: {error}")
        self.path, self.error = path, error


@contextlib.contextmanager
def _local(path: str) -> Iterator[None]:
    """Raise a local disk failure in the block as :class:`LocalWriteError`."""
    try:
        yield
    except OSError as error:
        raise LocalWriteError(path, error) from error


def _write_all(raw: BinaryIO, path: str, piece: memoryview) -> None:
    while piece:
        # Only the local write is wrapped: the store's own errors pass through unchanged.
        with _local(path):
            written = raw.write(piece) or 0
        piece = piece[written:]


def _footer(store: ObjectStore, split: SplitRef) -> SplitFooter:
    start, end = split.footer_start_offset, split.footer_end_offset
    if start is not None and end is not None and end != split.size:
        raise CorruptFileError(
            split.path, f"log records footer end {end} but a size of {split.size} bytes"
        )
    footer = read_split_footer(
        store, split.path, footer_start_offset=start, footer_end_offset=split.size
    )
    if footer.footer_end_offset != split.size:
        raise CorruptFileError(
            split.path,
            f"split footer says {footer.footer_end_offset} bytes, the log {split.size}",
        )
    return footer


def _check_doc_store(store: ObjectStore, split: SplitRef, footer: SplitFooter) -> None:
    """Refuse, before fetching the rest, a split whose documents tantivy-py cannot decompress."""
    if "meta.json" not in footer.files:
        raise CorruptFileError(split.path, "split has no meta.json")
    start, end = footer.files["meta.json"]
    raw = None
    if footer.hotcache:
        with contextlib.suppress(CorruptFileError):
            cached = parse_hotcache(footer.hotcache, path=split.path).cached("meta.json")
            raw = cached.read(0, end - start) if cached is not None else None
    if raw is None:
        raw = store.get_range(split.path, start, end)
    try:
        settings = json.loads(raw).get("index_settings") or {}
    except (ValueError, AttributeError):
        raise CorruptFileError(split.path, "meta.json is not a JSON object") from None
    compression = str(settings.get("docstore_compression", "lz4"))
    if compression.startswith("zstd"):
        raise UnreadableSplitError(
            f"split {split.path} stores its documents with docstore_compression "
            f"{compression!r}, which tantivy-py cannot read (it reads lz4 and none); "
            "rewrite the table with the reference using lz4 doc stores"
        )


class _RangeStream:
    """Reads ``[0, limit)`` of an object front to back in ranged reads of bounded size."""

    def __init__(self, store: ObjectStore, key: str, limit: int) -> None:
        self.store, self.key, self.limit = store, key, limit
        self.chunk = memoryview(b"")
        self.chunk_start = 0

    def _fill(self, position: int) -> None:
        """Make the current chunk start at ``position``."""
        stop = min(self.limit, position + CHUNK_BYTES)
        self.chunk = memoryview(b"")  # drop the previous chunk before reading the next
        data = self.store.get_range(self.key, position, stop) if stop > position else b""
        if len(data) != stop - position:
            raise CorruptFileError(
                self.key, f"split is shorter than its footer says ({position + len(data)} bytes)"
            )
        self.chunk, self.chunk_start = memoryview(data), position

    def copy(self, start: int, end: int, write: Callable[[memoryview], object]) -> None:
        """Pass bytes ``[start, end)`` to ``write`` piece by piece."""
        position = start
        while position < end:
            offset = position - self.chunk_start
            if not 0 <= offset < len(self.chunk):
                self._fill(position)
                offset = 0
            piece = self.chunk[offset : offset + end - position]
            write(piece)
            position += len(piece)

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` as one object."""
        out = bytearray()
        self.copy(start, end, out.extend)
        return bytes(out)
