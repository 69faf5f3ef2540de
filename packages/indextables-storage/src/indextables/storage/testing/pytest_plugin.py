"""Session-scoped pytest fixtures for the test servers of :mod:`indextables.storage.testing`.

Use them from any package's ``conftest.py``::

    from indextables.storage.testing.pytest_plugin import (  # noqa: F401
        moto_server,
        seaweedfs_server,
    )

or list ``"indextables.storage.testing.pytest_plugin"`` in ``pytest_plugins`` of a
top-level conftest. Each server starts once per test session, on first use,
and is stopped (its whole process group) when the session ends. A server
that cannot start raises :class:`ServerStartError` in every test that asks for
it: the tests error out with the reason, they are never skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from indextables.storage.testing.azurite import AzuriteInfo
from indextables.storage.testing.azurite import azurite_server as _azurite
from indextables.storage.testing.s3servers import (
    S3ServerInfo,
)
from indextables.storage.testing.s3servers import (
    moto_server as _moto,
)
from indextables.storage.testing.s3servers import (
    seaweedfs_server as _seaweedfs,
)

__all__ = ["azurite_server", "moto_server", "seaweedfs_server"]


@pytest.fixture(scope="session")
def moto_server() -> Iterator[S3ServerInfo]:
    """A moto S3 server for the whole test session."""
    with _moto() as info:
        yield info


@pytest.fixture(scope="session")
def seaweedfs_server() -> Iterator[S3ServerInfo]:
    """A SeaweedFS S3 server (SigV4) for the whole test session."""
    with _seaweedfs() as info:
        yield info


@pytest.fixture(scope="session")
def azurite_server() -> Iterator[AzuriteInfo]:
    """An Azurite blob service for the whole test session."""
    with _azurite() as info:
        yield info
