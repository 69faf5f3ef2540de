"""StoreLocations of the contract suite; each server starts once per test session.

The server fixtures come from ``indextables.storage.testing.pytest_plugin``
(session-scoped); a server that cannot start makes its tests fail with the
reason, never skip.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from indextables.protocol.store import ObjectStore
from indextables.storage import clear_memory_stores
from indextables.storage.testing import StoreLocation
from indextables.storage.testing.pytest_plugin import (  # noqa: F401  (fixtures)
    azurite_server,
    moto_server,
    seaweedfs_server,
)


def _local(tmp_path: Path, request: pytest.FixtureRequest) -> StoreLocation:
    return StoreLocation("local", str(tmp_path / "store"))


def _memory(tmp_path: Path, request: pytest.FixtureRequest) -> StoreLocation:
    name = f"contract-{uuid.uuid4().hex}"
    request.addfinalizer(lambda: clear_memory_stores(name))
    return StoreLocation("memory", f"memory://{name}/root", shared_across_processes=False)


def _s3(fixture: str) -> Callable[[Path, pytest.FixtureRequest], StoreLocation]:
    def make(tmp_path: Path, request: pytest.FixtureRequest) -> StoreLocation:
        server = request.getfixturevalue(fixture)
        bucket = server.create_bucket()
        uri, options = server.store_args(bucket, prefix="table/root")
        return StoreLocation(fixture.removesuffix("_server"), uri, options)

    return make


def _azurite(tmp_path: Path, request: pytest.FixtureRequest) -> StoreLocation:
    server = request.getfixturevalue("azurite_server")
    container = server.create_container()
    uri, options = server.store_args(container, prefix="table/root")
    return StoreLocation("azurite", uri, options)


_MAKERS: dict[str, Callable[[Path, pytest.FixtureRequest], StoreLocation]] = {
    "local": _local,
    "memory": _memory,
    "moto": _s3("moto_server"),
    "seaweedfs": _s3("seaweedfs_server"),
    "azurite": _azurite,
}

BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("memory", id="memory"),
    pytest.param("moto", id="moto", marks=[pytest.mark.s3, pytest.mark.integration]),
    pytest.param("seaweedfs", id="seaweedfs", marks=[pytest.mark.s3, pytest.mark.integration]),
    pytest.param("azurite", id="azurite", marks=[pytest.mark.azure, pytest.mark.integration]),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """A fresh, empty location on each backend of the contract suite."""
    return _MAKERS[request.param](tmp_path, request)


@pytest.fixture(params=[param for param in BACKENDS if param.values != ("memory",)])
def shared_backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """Like :func:`backend`, for the backends several processes can share (not memory)."""
    return _MAKERS[request.param](tmp_path, request)


# moto's existence check is not atomic: tests that prove put-if-absent atomicity under
# races run only where the conditional put is atomic (local, memory, SeaweedFS, Azurite).
ATOMIC = [param for param in BACKENDS if param.values != ("moto",)]


@pytest.fixture(params=ATOMIC)
def atomic_backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """A backend whose put-if-absent is atomic, for race tests."""
    return _MAKERS[request.param](tmp_path, request)


@pytest.fixture(params=[param for param in ATOMIC if param.values != ("memory",)])
def atomic_shared_backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """An atomic backend several processes can share (not memory)."""
    return _MAKERS[request.param](tmp_path, request)


@pytest.fixture
def store(backend: StoreLocation) -> ObjectStore:
    """The store of :func:`backend`."""
    return backend.open()
