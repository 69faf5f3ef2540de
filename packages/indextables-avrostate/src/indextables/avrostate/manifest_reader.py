"""Reading manifest files (``manifests/manifest-*.avro``) of FileEntry records.

The container is split into blocks, each block decompressed and scanned by
the selected decoder (see :mod:`~indextables.avrostate.impl`). Blocks in which
no entry survives the tombstones and the partition filter are dropped at
once, so a pruned read holds only what it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any

from indextables.avrostate import impl
from indextables.avrostate._decode_common import (
    Columns,
    DecodeError,
    Plan,
    UnsafePathDecodeError,
    compile_plan,
)
from indextables.avrostate.container import Container as AvroContainer
from indextables.avrostate.container import parse_container
from indextables.avrostate.entries import BlockRef, FileEntries
from indextables.avrostate.errors import CorruptAvroFileError, UnsafeManifestPathError
from indextables.protocol.state import FileEntry

__all__ = ["EntriesBuilder", "PartitionCache", "read_manifest", "read_manifest_entries"]

PartitionCache = dict[Any, tuple[dict[str, str], bool]]
"""Raw partition-map bytes -> (decoded map, filter verdict); share it across one read."""


class EntriesBuilder:
    """Scans the blocks of one or more manifests, in order, into one :class:`FileEntries`.

    Args:
        pv_filter: keep only entries whose partition values it accepts.
        tombstones: paths to drop.
        pv_cache: raw partition-map bytes -> (map, verdict), so equal maps
            become one object and are filtered once.
    """

    def __init__(
        self,
        *,
        pv_filter: Callable[[Mapping[str, str]], bool] | None = None,
        tombstones: Container[str] | None = None,
        pv_cache: PartitionCache | None = None,
    ) -> None:
        self._filter = pv_filter
        self._tombstones = tombstones
        self._cache: PartitionCache = {} if pv_cache is None else pv_cache
        self._columns = Columns()
        self._block_starts: list[int] = []
        self._blocks: list[BlockRef] = []
        self._plans: dict[str, Plan] = {}

    def _plan(self, schema: Any, path: str) -> Plan:
        key = json.dumps(schema, sort_keys=True)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = compile_plan(schema, path=path)
        return plan

    def add(
        self, container: AvroContainer, blocks: Iterable[tuple[int, bytes]] | None = None
    ) -> None:
        """Scan a container's blocks (``blocks``: already decompressed ones, if given)."""
        path = container.path
        plan = self._plan(container.schema, path)
        decoder = impl.decoder()
        columns = self._columns
        for count, raw in container.decompressed() if blocks is None else blocks:
            before = len(columns.paths)
            try:
                kept = decoder.scan_block(
                    raw, count, plan, self._cache, self._filter, self._tombstones, columns
                )
            except UnsafePathDecodeError as exc:
                raise UnsafeManifestPathError(path, f"unsafe entry: {exc}") from None
            except DecodeError as exc:
                raise CorruptAvroFileError(path, f"block does not decode: {exc}") from exc
            if kept:
                self._block_starts.append(before)
                self._blocks.append(BlockRef(raw, plan, path))

    def build(self) -> FileEntries:
        """The entries scanned so far."""
        return FileEntries(self._columns, self._block_starts, self._blocks)


def read_manifest_entries(
    data: bytes,
    *,
    path: str,
    pv_filter: Callable[[Mapping[str, str]], bool] | None = None,
    tombstones: Container[str] | None = None,
    pv_cache: PartitionCache | None = None,
) -> FileEntries:
    """Decode a manifest into lazy entries (see :class:`EntriesBuilder` for the options).

    Raises:
        CorruptAvroFileError: the file or one of its records does not decode.
    """
    builder = EntriesBuilder(pv_filter=pv_filter, tombstones=tombstones, pv_cache=pv_cache)
    builder.add(parse_container(data, path=path))
    return builder.build()


def read_manifest(data: bytes, *, path: str) -> list[FileEntry]:
    """Decode every entry of a manifest eagerly (tests, tools, small manifests)."""
    return list(read_manifest_entries(data, path=path))
