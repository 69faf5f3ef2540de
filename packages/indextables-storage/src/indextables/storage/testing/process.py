"""A server process in its own process group, started, awaited and stopped reliably."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from indextables.storage.errors import StorageError

__all__ = [
    "PortTakenError",
    "ServerStartError",
    "free_port",
    "free_ports",
    "log_tail",
    "managed_process",
    "port_open",
    "start_retrying_taken_ports",
    "stop_group",
    "wait_until",
]


class ServerStartError(StorageError, RuntimeError):
    """A test server could not be installed or started (the message says why)."""


class PortTakenError(ServerStartError):
    """The server exited at start because a port chosen free was taken meanwhile.

    A port is free only when chosen: any process on the machine (an outgoing
    connection's ephemeral port, another test server) may take it before the
    server binds it. Starting again on fresh ports is the remedy.
    """


# What moto (werkzeug), Azurite (node) and SeaweedFS print when a port is taken.
_PORT_TAKEN = re.compile(
    r"address already in use|EADDRINUSE|port allocation failed|is in use by another program",
    re.IGNORECASE,
)

_T = TypeVar("_T")


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def free_ports(count: int) -> list[int]:
    """Return ``count`` distinct free ports (held open together while choosing)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in sockets]
    finally:
        for probe in sockets:
            probe.close()


def port_open(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port``."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def log_tail(path: Path, limit: int = 2000) -> str:
    """The last ``limit`` characters of a server log, for error messages."""
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return "<no log>"


def wait_until(
    ready: Callable[[], bool],
    *,
    process: subprocess.Popen[bytes],
    timeout: float,
    what: str,
    log: Path,
) -> None:
    """Poll ``ready`` until it is true; fail early if the process exits.

    Raises:
        ServerStartError: the process died or ``timeout`` seconds passed.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_tail(log)
            error = PortTakenError if _PORT_TAKEN.search(tail) else ServerStartError
            raise error(
                f"{what} exited with code {process.returncode} while starting; log {log}:\n{tail}"
            )
        with contextlib.suppress(Exception):
            if ready():
                return
        time.sleep(0.1)
    raise ServerStartError(
        f"{what} was not ready after {timeout:.0f} s; log {log}:\n{log_tail(log)}"
    )


@contextlib.contextmanager
def start_retrying_taken_ports(
    start: Callable[[contextlib.ExitStack], _T], *, attempts: int = 3
) -> Iterator[_T]:
    """Enter a server started by ``start(stack)``, choosing fresh ports when one was taken.

    ``start`` picks its ports, registers everything it opens on ``stack`` and
    returns what the ``with`` block sees. A start that fails with
    :class:`PortTakenError` is undone (the stack closed) and made again, up to
    ``attempts`` times; any other error, and any error inside the ``with``
    block, propagates at once.

    Raises:
        PortTakenError: every attempt lost a port race.
        ServerStartError: the server could not start for another reason.
    """
    for attempt in range(1, attempts + 1):
        with contextlib.ExitStack() as stack:
            try:
                value = start(stack)
            except PortTakenError:
                if attempt == attempts:
                    raise
                continue
            yield value
            return


def stop_group(process: subprocess.Popen[bytes], *, grace: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL it if it outlives ``grace`` seconds."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
    # Children of the server (node workers, weed sub-servers) share its group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@contextlib.contextmanager
def managed_process(
    command: Sequence[str],
    *,
    log: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` in a new process group with output to ``log``; kill the group at exit.

    A watchdog process leads the group and kills it if this process dies
    without cleaning up (see :mod:`indextables.storage.testing.watchdog`).

    Raises:
        ServerStartError: the command could not be executed.
    """
    if shutil.which(command[0]) is None:
        raise ServerStartError(f"cannot run {command[0]!r}: not found or not executable")
    log.parent.mkdir(parents=True, exist_ok=True)
    watched = [sys.executable, "-m", "indextables.storage.testing.watchdog", str(os.getpid())]
    with log.open("ab") as out:
        try:
            process = subprocess.Popen(
                [*watched, "--", *command],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as error:
            raise ServerStartError(f"cannot run {command[0]!r}: {error}") from error
    try:
        yield process
    finally:
        stop_group(process)
