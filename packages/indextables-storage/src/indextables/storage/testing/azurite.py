"""Azurite (the Azure Blob emulator, from npm) on 127.0.0.1, installed on demand.

Azurite 3.37.0 is installed with ``npm install`` run inside ``<cache>`` the first
time, where ``<cache>`` is ``$INDEXTABLES_TEST_CACHE/azurite`` when that is
set, else ``<repository>/.cache/azurite`` (else ``~/.cache/indextables/azurite``).
A file lock keeps concurrent test sessions from installing twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indextables.protocol.store import ObjectStore
from indextables.storage.registry import open_store
from indextables.storage.testing.process import (
    ServerStartError,
    free_port,
    managed_process,
    start_retrying_taken_ports,
    wait_until,
)

__all__ = ["AZURITE_VERSION", "AzuriteInfo", "azurite_cache_dir", "azurite_server"]

AZURITE_VERSION = "3.37.0"
#: The emulator's well-known development account (public, documented by Microsoft).
ACCOUNT_NAME = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


@dataclass(frozen=True, slots=True)
class AzuriteInfo:
    """A running Azurite blob service and what a client needs to reach it.

    Attributes:
        endpoint_url: the blob service URL, ``http://127.0.0.1:PORT/devstoreaccount1``.
        account_name: the emulator's account.
        account_key: its shared key (kept out of ``repr``).
    """

    endpoint_url: str
    account_name: str = ACCOUNT_NAME
    account_key: str = field(default=ACCOUNT_KEY, repr=False)

    @property
    def connection_string(self) -> str:
        """A connection string for azure-storage-blob clients."""
        return (
            f"DefaultEndpointsProtocol=http;AccountName={self.account_name};"
            f"AccountKey={self.account_key};BlobEndpoint={self.endpoint_url};"
        )

    def store_options(self, **overrides: object) -> dict[str, object]:
        """``open_store`` options for this emulator."""
        options: dict[str, object] = {
            "endpoint_url": self.endpoint_url,
            "account_name": self.account_name,
            "account_key": self.account_key,
            "max_attempts": 3,
            "retry_base_delay": 0.05,
        }
        options.update(overrides)
        return options

    def store_args(self, container: str, *, prefix: str = "") -> tuple[str, dict[str, object]]:
        """``(uri, options)`` for ``abfss://container@account.dfs.core.windows.net/prefix``."""
        host = f"{self.account_name}.dfs.core.windows.net"
        uri = f"abfss://{container}@{host}/{prefix}".rstrip("/")
        return uri, self.store_options()

    def open_store(self, container: str, *, prefix: str = "") -> ObjectStore:
        """Open the store of ``container``/``prefix`` on this emulator."""
        uri, options = self.store_args(container, prefix=prefix)
        return open_store(uri, **options)

    def service_client(self) -> Any:
        """An azure-storage-blob ``BlobServiceClient`` (needs the ``azure`` extra)."""
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(self.connection_string)

    def create_container(self, name: str | None = None) -> str:
        """Create a container (a fresh unique name by default) and return its name."""
        container = name or f"test-{uuid.uuid4().hex[:20]}"
        self.service_client().create_container(container)
        return container


def _repository_root() -> Path | None:
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for candidate in (start, *start.parents):
            if (candidate / "packages" / "indextables-storage").is_dir():
                return candidate
    return None


def azurite_cache_dir() -> Path:
    """Where Azurite is installed: see the module docstring."""
    override = os.environ.get("INDEXTABLES_TEST_CACHE")
    if override:
        return Path(override) / "azurite"
    root = _repository_root()
    if root is not None:
        return root / ".cache" / "azurite"
    return Path.home() / ".cache" / "indextables" / "azurite"


def _installed_version(cache: Path) -> str | None:
    manifest = cache / "node_modules" / "azurite" / "package.json"
    try:
        version: str = json.loads(manifest.read_text())["version"]
        return version
    except (OSError, ValueError, KeyError):
        return None


def ensure_azurite(cache: Path | None = None) -> Path:
    """Install Azurite into the cache if needed; return its blob entry script.

    Raises:
        ServerStartError: node or npm is missing, or ``npm install`` failed.
    """
    cache = cache or azurite_cache_dir()
    script = cache / "node_modules" / "azurite" / "dist" / "src" / "blob" / "main.js"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache.parent / f"{cache.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed_version(cache) != AZURITE_VERSION or not script.exists():
            _npm_install(cache)
    return script


def _npm_install(cache: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise ServerStartError("npm not found: Azurite tests need Node.js 20+ and npm")
    # The cache is its own npm project, installed from inside it. ``--prefix``
    # would also move npm's *global* config to <cache>/etc/npmrc, losing the
    # machine's registry and CA settings (an intercepting proxy's CA lives there).
    package_json = cache / "package.json"
    if not package_json.exists():
        package_json.write_text('{"name": "indextables-test-servers", "private": true}\n')
    command = [npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"]
    command.append(f"azurite@{AZURITE_VERSION}")
    result = subprocess.run(
        command, cwd=cache, capture_output=True, text=True, timeout=600, check=False
    )
    if result.returncode != 0 or _installed_version(cache) != AZURITE_VERSION:
        raise ServerStartError(
            f"npm install azurite@{AZURITE_VERSION} into {cache} failed "
            f"(exit {result.returncode}):\n{result.stderr[-2000:]}"
        )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer (400 without a signature) means it listens


@contextlib.contextmanager
def azurite_server(*, timeout: float = 60.0) -> Iterator[AzuriteInfo]:
    """Run Azurite's blob service (in memory) on a free port of 127.0.0.1.

    Yields:
        AzuriteInfo: endpoint and the well-known development account.

    Raises:
        ServerStartError: node/npm missing, install failed, or Azurite did not start.
    """
    script = ensure_azurite()
    node = shutil.which("node")
    if node is None:
        raise ServerStartError("node not found: Azurite tests need Node.js 20+")

    def start(stack: contextlib.ExitStack) -> AzuriteInfo:
        port = free_port()
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="indextables-azurite-"))
        log = Path(scratch) / "azurite.log"
        command = [node, str(script), "--blobHost", "127.0.0.1", "--blobPort", str(port)]
        command += ["--inMemoryPersistence", "--disableTelemetry", "--skipApiVersionCheck"]
        command += ["--silent"]
        process = stack.enter_context(managed_process(command, log=log, cwd=Path(scratch)))
        info = AzuriteInfo(f"http://127.0.0.1:{port}/{ACCOUNT_NAME}")
        wait_until(
            lambda: _answers(f"{info.endpoint_url}?comp=list"),
            process=process,
            timeout=timeout,
            what=f"Azurite {AZURITE_VERSION}",
            log=log,
        )
        return info

    with start_retrying_taken_ports(start) as info:
        yield info
