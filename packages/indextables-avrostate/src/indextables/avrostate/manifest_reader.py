"""Reading manifest files (``manifests/manifest-*.avro``) of FileEntry records.

The container is split into blocks, each block decompressed and scanned by
the selected decoder (see :mod:`~indextables.avrostate.impl`). Blocks in which
no entry survives the tombstones and the partition filter are dropped at
once, so a pruned read holds only what it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from typing import Any

from indextables.avrostate import impl
from indextables.avrostate._decode_common import Columns, DecodeError, Plan, compile_plan
from indextables.avrostate.container import parse_container
from indextables.avrostate.entries import BlockRef, FileEntries
from indextables.avrostate.errors import CorruptAvroFileError
from indextables.protocol.state import FileEntry

__all__ = ["PartitionCache", "read_manifest", "read_manifest_entries"]

PartitionCache = dict[Any, tuple[dict[str, str], bool]]
"""Raw partition-map bytes -> (decoded map, filter verdict); share it across one read."""


def read_manifest_entries(
    data: bytes,
    *,
    path: str,
    pv_filter: Callable[[Mapping[str, str]], bool] | None = None,
    tombstones: Container[str] | None = None,
    pv_cache: PartitionCache | None = None,
) -> FileEntries:
    """Decode a manifest into lazy entries.

    Args:
        data: the whole manifest file.
        path: its name, for error messages.
        pv_filter: keep only entries whose partition values it accepts.
        tombstones: paths to drop.
        pv_cache: a cache shared by the manifests of one read (equal
            partition maps become one object and are filtered once).

    Raises:
        CorruptAvroFileError: the file or one of its records does not decode.
    """
    container = parse_container(data, path=path)
    plan = compile_plan(container.schema, path=path)
    decoder = impl.decoder()
    cache: PartitionCache = {} if pv_cache is None else pv_cache
    columns = Columns()
    block_starts: list[int] = []
    blocks: list[BlockRef] = []
    for count, raw in container.decompressed():
        before = len(columns.paths)
        try:
            kept = decoder.scan_block(raw, count, plan, cache, pv_filter, tombstones, columns)
        except DecodeError as exc:
            raise CorruptAvroFileError(path, f"block does not decode: {exc}") from exc
        if kept:
            block_starts.append(before)
            blocks.append(BlockRef(raw, plan, path))
    return FileEntries(columns, block_starts, blocks)


def read_manifest(data: bytes, *, path: str) -> list[FileEntry]:
    """Decode every entry of a manifest eagerly (tests, tools, small manifests)."""
    return list(read_manifest_entries(data, path=path))


def manifest_plan(data: bytes, *, path: str) -> Plan:
    """Return the decoding plan of a manifest's writer schema."""
    return compile_plan(parse_container(data, path=path).schema, path=path)
