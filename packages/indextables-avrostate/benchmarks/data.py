"""Benchmark data: realistic FileEntry records, Avro states, and a Delta log of the same files.

Each entry is ~600 bytes decoded: two partition columns, six statistic
columns as min/max, a stats JSON, a docMappingRef and footer offsets.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from indextables.avrostate import encode_manifest, encode_state
from indextables.avrostate.manifest_writer import manifest_info
from indextables.protocol.errors import ObjectExistsError, ObjectNotFoundError
from indextables.protocol.state import FileEntry, StateManifest
from indextables.protocol.store import ObjectInfo

STAT_COLUMNS = ("id", "score", "ts", "name", "city", "amount")


class DirStore:
    """A minimal local-directory ObjectStore (benchmarks do not depend on indextables-storage)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def uri(self) -> str:
        return self.root.as_uri()

    def get(self, key: str) -> bytes:
        try:
            return (self.root / key).read_bytes()
        except FileNotFoundError:
            raise ObjectNotFoundError(key) from None

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return self.get(key)[start:end]

    def head(self, key: str) -> ObjectInfo:
        st = (self.root / key).stat()
        return ObjectInfo(key, st.st_size, int(st.st_mtime * 1000))

    def put(self, key: str, data: bytes) -> None:
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)

    def put_if_absent(self, key: str, data: bytes) -> None:
        if (self.root / key).exists():
            raise ObjectExistsError(key)
        self.put(key, data)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        keys = []
        for dirpath, _, files in os.walk(self.root):
            for name in files:
                key = os.path.relpath(os.path.join(dirpath, name), self.root)
                if key.startswith(prefix):
                    keys.append(key)
        for key in sorted(keys):
            yield self.head(key)

    def delete(self, key: str) -> None:
        (self.root / key).unlink(missing_ok=True)

    def delete_many(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.delete(key)


def partition_of(i: int, partitions: int) -> tuple[str, str]:
    """The (date, region) partition of entry ``i``: ``partitions`` distinct pairs."""
    p = i % partitions
    return f"2024-{1 + p // 28 % 12:02d}-{1 + p % 28:02d}", f"region-{p // 336}"


def make_entry(i: int, *, partitions: int) -> FileEntry:
    """Entry ``i`` of a table with ``partitions`` partitions."""
    date, region = partition_of(i, partitions)
    mins = {c: f"{c}-{i * 7 % 100_000:06d}" for c in STAT_COLUMNS}
    maxs = {c: f"{c}-{i * 7 % 100_000 + 500:06d}" for c in STAT_COLUMNS}
    mins["id"], maxs["id"] = str(i * 1000), str(i * 1000 + 999)
    return FileEntry(
        f"date={date}/region={region}/part-{i:08d}-5f1c2a9e-8b7d-4c3e-9a1f-{i:012d}.split",
        {"date": date, "region": region},
        50_000_000 + i,
        1_700_000_000_000 + i,
        True,
        1 + i // 1000,
        1_700_000_000_000 + i // 1000,
        stats=json.dumps({"numRecords": 100_000 + i, "nullCount": {"name": i % 5, "city": 0}}),
        min_values=mins,
        max_values=maxs,
        num_records=100_000 + i,
        footer_start_offset=49_000_000 + i,
        footer_end_offset=50_000_000 + i,
        has_footer_offsets=True,
        num_merge_ops=0,
        doc_mapping_ref="z7TwwZ-tDWGD-uX5",
        uncompressed_size_bytes=48_000_000 + i,
    )


def entries(n: int, *, partitions: int = 100, start: int = 0) -> list[FileEntry]:
    """``n`` realistic entries."""
    return [make_entry(i, partitions=partitions) for i in range(start, start + n)]


def write_table(
    root: Path, n: int, *, partitions: int, per_manifest: int = 50_000, version: int = 1
) -> DirStore:
    """A compacted state of ``n`` entries sorted by partition values (as compaction
    sorts them), built chunk by chunk."""
    store = DirStore(root)
    order = sorted(range(n), key=lambda i: (*partition_of(i, partitions), i))
    infos = []
    total = 0
    for lo in range(0, n, per_manifest):
        chunk = [make_entry(i, partitions=partitions) for i in order[lo : lo + per_manifest]]
        path = f"manifests/manifest-{lo:016x}.avro"
        store.put(f"_transaction_log/{path}", encode_manifest(chunk))
        infos.append(manifest_info(path, chunk))
        total += sum(e.size for e in chunk)
    state = StateManifest(
        1,
        version,
        1_700_000_000_000,
        n,
        total,
        tuple(infos),
        schema_registry={"z7TwwZ-tDWGD-uX5": "[]"},
    )
    store.put(f"_transaction_log/state-v{version:020d}/_manifest.avro", encode_state(state))
    return store


def write_log_head(root: Path) -> None:
    """Version 0 (protocol and metadata) beside the state, so the engine can open the table."""
    from indextables.protocol.actions import FileFormat, MetadataAction, ProtocolAction
    from indextables.protocol.versionfile import encode_version_file

    key = "_transaction_log/00000000000000000000.json"
    store = DirStore(root)
    if (root / key).exists():
        return
    fields = [
        {"name": name, "type": kind, "nullable": True, "metadata": {}}
        for name, kind in (("id", "long"), ("msg", "string"), ("date", "string"))
    ]
    fields.append({"name": "region", "type": "string", "nullable": True, "metadata": {}})
    schema = json.dumps({"type": "struct", "fields": fields})
    metadata = MetadataAction("bench", FileFormat(), schema, ("date", "region"), {})
    store.put(key, encode_version_file([ProtocolAction(4, 4), metadata]))


def write_delta_log(root: Path, files: list[FileEntry]) -> None:
    """A Delta table log (version 0 + checkpoint) describing the same files."""
    from deltalake import DeltaTable

    log = root / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    fields = [
        {"name": n, "type": "string", "nullable": True, "metadata": {}}
        for n in ("date", "region", *STAT_COLUMNS)
    ]
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "bench",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps({"type": "struct", "fields": fields}),
                "partitionColumns": ["date", "region"],
                "configuration": {},
                "createdTime": 1_700_000_000_000,
            }
        },
    ]
    for e in files:
        stats = {
            "numRecords": e.num_records,
            "minValues": e.min_values,
            "maxValues": e.max_values,
            "nullCount": dict.fromkeys(STAT_COLUMNS, 0),
        }
        actions.append(
            {
                "add": {
                    "path": e.path.replace(".split", ".parquet"),
                    "partitionValues": dict(e.partition_values),
                    "size": e.size,
                    "modificationTime": e.modification_time,
                    "dataChange": True,
                    "stats": json.dumps(stats),
                }
            }
        )
    (log / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    DeltaTable(str(root)).create_checkpoint()
