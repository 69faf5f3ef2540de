"""Shared fixtures: the golden tables, a test-only in-memory store, Avro reading.

The in-memory store here is a test double of the ObjectStore interface (the
real stores live in indextables-storage); it keeps put-if-absent atomic with a
lock so engine tests can race threads against it.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from indextables.protocol.errors import ObjectExistsError, ObjectNotFoundError
from indextables.protocol.store import ObjectInfo

# Hypothesis must not depend on the machine's speed (CI runs at load 20): no deadline and no
# "input generation is slow" health check, for every test that does not set its own.
settings.register_profile(
    "machine-independent", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("machine-independent")

# The golden tables: the repository's own copy (testdata/golden, see its NOTICE).
GOLDEN = Path(__file__).resolve().parents[3] / "testdata/golden/indextables_spark_v0.5.4"

GOLDEN_TABLES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


class DictStore:
    """An ObjectStore over a dict: keys -> (bytes, mtime ms)."""

    def __init__(self, uri: str = "memory://test") -> None:
        self._uri = uri
        self.objects: dict[str, tuple[bytes, int]] = {}
        self._lock = threading.Lock()

    @property
    def uri(self) -> str:
        return self._uri

    def get(self, key: str) -> bytes:
        try:
            return self.objects[key][0]
        except KeyError:
            raise ObjectNotFoundError(key) from None

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return self.get(key)[start:end]

    def head(self, key: str) -> ObjectInfo:
        data = self.get(key)
        return ObjectInfo(key, len(data), self.objects[key][1])

    def put(self, key: str, data: bytes) -> None:
        with self._lock:
            self.objects[key] = (bytes(data), int(time.time() * 1000))

    def put_if_absent(self, key: str, data: bytes) -> None:
        with self._lock:
            if key in self.objects:
                raise ObjectExistsError(key)
            self.objects[key] = (bytes(data), int(time.time() * 1000))

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        with self._lock:
            items = sorted((k, v) for k, v in self.objects.items() if k.startswith(prefix))
        for key, (data, mtime) in items:
            yield ObjectInfo(key, len(data), mtime)

    def delete(self, key: str) -> None:
        with self._lock:
            self.objects.pop(key, None)

    def delete_many(self, keys: Iterable[str]) -> None:
        for key in list(keys):
            self.delete(key)

    @classmethod
    def from_directory(cls, root: Path) -> DictStore:
        store = cls(f"memory://{root.name}")
        for path in sorted(root.rglob("*")):
            if path.is_file():
                store.put(path.relative_to(root).as_posix(), path.read_bytes())
        return store


@pytest.fixture
def store() -> DictStore:
    return DictStore()


@pytest.fixture(scope="session")
def golden_root() -> Path:
    return GOLDEN


@pytest.fixture(params=GOLDEN_TABLES)
def golden_table(request: pytest.FixtureRequest) -> Path:
    return GOLDEN / request.param


@pytest.fixture
def golden_expected(golden_table: Path) -> dict[str, Any]:
    """The independent oracle of ``golden_table``."""
    return json.loads((golden_table.parent / f"{golden_table.name}.expected.json").read_text())


def _read_long(fo: Any) -> int:
    byte = fo.read(1)[0]
    value, shift = byte & 0x7F, 7
    while byte & 0x80:
        byte = fo.read(1)[0]
        value |= (byte & 0x7F) << shift
        shift += 7
    return (value >> 1) ^ -(value & 1)


def _zstd_block(fo: Any) -> io.BytesIO:
    import zstandard

    data = fo.read(_read_long(fo))
    return io.BytesIO(zstandard.ZstdDecompressor().decompressobj().decompress(data))


@pytest.fixture(scope="session")
def read_avro() -> Callable[[Path], list[dict[str, Any]]]:
    """Test-only Avro+zstd reading (fastavro with a zstandard block reader)."""
    import fastavro
    from fastavro.read import BLOCK_READERS

    BLOCK_READERS["zstandard"] = _zstd_block

    def read(path: Path) -> list[dict[str, Any]]:
        with path.open("rb") as handle:
            return list(fastavro.reader(handle))

    return read


@pytest.fixture
def store_of_table(golden_table: Path) -> DictStore:
    """A read-only copy of ``golden_table`` in a test-only memory store."""
    return DictStore.from_directory(golden_table)


@pytest.fixture
def golden_copy(golden_table: Path, tmp_path: Path) -> Path:
    """A writable copy of ``golden_table`` (the originals are never written)."""
    import shutil

    target = tmp_path / golden_table.name
    shutil.copytree(golden_table, target)
    return target


SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "integer", "nullable": False, "metadata": {}},
        {"name": "date", "type": "string", "nullable": True, "metadata": {}},
    ],
}


@pytest.fixture
def schema() -> dict[str, Any]:
    return SCHEMA
