"""Shared fixtures: a local-directory ObjectStore, both decoder twins, golden tables.

The store is a minimal, real implementation of the protocol's ObjectStore
(put-if-absent through ``os.link``, as platform.md measured safe), so these
tests do not depend on indextables-storage.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from indextables.avrostate import impl
from indextables.protocol.errors import ObjectExistsError, ObjectNotFoundError
from indextables.protocol.state import FileEntry
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


class DirStore:
    """A tiny ObjectStore over a local directory (keys are relative paths)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gets: list[str] = []

    @property
    def uri(self) -> str:
        return self.root.as_uri()

    def _path(self, key: str) -> Path:
        return self.root / key

    def get(self, key: str) -> bytes:
        self.gets.append(key)
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise ObjectNotFoundError(key) from None

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return self.get(key)[start:end]

    def head(self, key: str) -> ObjectInfo:
        try:
            st = self._path(key).stat()
        except FileNotFoundError:
            raise ObjectNotFoundError(key) from None
        return ObjectInfo(key, st.st_size, int(st.st_mtime * 1000))

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)

    def put_if_absent(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise ObjectExistsError(key) from None
        finally:
            os.unlink(tmp)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        keys = []
        for dirpath, _, files in os.walk(self.root):
            for name in files:
                key = os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/")
                if key.startswith(prefix):
                    keys.append(key)
        for key in sorted(keys):
            yield self.head(key)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def delete_many(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.delete(key)


@pytest.fixture
def store(tmp_path: Path) -> DirStore:
    """An empty table directory."""
    return DirStore(tmp_path / "table")


# The pure env (INDEXTABLES_AVROSTATE_IMPL=python) is built without the
# extension; everywhere else the Cython twin must load, or its tests fail.
IMPLS = ["python"] if os.environ.get(impl.IMPL_ENV) == "python" else ["cython", "python"]


@pytest.fixture(params=IMPLS)
def decoder(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    """Each decoder twin in turn, active for the whole test."""
    with impl.using(request.param) as module:
        yield module


@pytest.fixture
def golden() -> Path:
    """The directory of the golden tables (read-only)."""
    return GOLDEN


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``golden_name`` runs a test once per golden table."""
    if "golden_name" in metafunc.fixturenames:
        metafunc.parametrize("golden_name", GOLDEN_TABLES)


@pytest.fixture
def copy_golden(tmp_path: Path) -> Callable[[str], DirStore]:
    """Copy a golden table to a private directory and open it."""

    def copy(name: str) -> DirStore:
        shutil.copytree(GOLDEN / name, tmp_path / name)
        return DirStore(tmp_path / name)

    return copy


@pytest.fixture
def golden_table(tmp_path: Path, request: pytest.FixtureRequest) -> DirStore:
    """A private copy of the golden table named by the test's ``table`` parameter."""
    name = request.param
    shutil.copytree(GOLDEN / name, tmp_path / name)
    return DirStore(tmp_path / name)


def make_entry(i: int, *, partitions: int = 10, version: int = 1, **extra: Any) -> FileEntry:
    """A realistic FileEntry: two partition columns, min/max stats, footer offsets."""
    stats_cols = ("id", "score", "ts", "name", "city", "flag")
    fields: dict[str, Any] = {
        "stats": json.dumps({"numRecords": 1000 + i, "nullCount": {"name": i % 3}}),
        "min_values": {c: f"{c}-min-{i}" for c in stats_cols},
        "max_values": {c: f"{c}-max-{i}" for c in stats_cols},
        "num_records": 1000 + i,
        "footer_start_offset": 10_000 + i,
        "footer_end_offset": 20_000 + i,
        "has_footer_offsets": True,
        "num_merge_ops": 0,
        "doc_mapping_ref": "z7TwwZ-tDWGD-uX5",
        "uncompressed_size_bytes": 9_000 + i,
    }
    fields.update(extra)
    return FileEntry(
        f"date=2024-01-{i % partitions:02d}/region=r{i % 3}/part-{i:08d}.split",
        {"date": f"2024-01-{i % partitions:02d}", "region": f"r{i % 3}"},
        20_000 + i,
        1_700_000_000_000 + i,
        True,
        version,
        1_700_000_000_000 + version,
        **fields,
    )


@pytest.fixture
def entries() -> Callable[..., list[FileEntry]]:
    """``entries(n, start=0, **kw)``: n realistic entries numbered from start."""

    def build(n: int, start: int = 0, **kw: Any) -> list[FileEntry]:
        return [make_entry(i, **kw) for i in range(start, start + n)]

    return build
