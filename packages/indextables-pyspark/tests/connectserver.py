"""A separate Spark Connect server process (``sbin/start-connect-server.sh``) for the tests.

:func:`connect_server` starts PySpark's ``start-connect-server.sh --wait`` (the
server in the foreground, in its own process group) on a free port, with the
Python of this interpreter for the server's Python workers (``PYSPARK_PYTHON``:
the tox env that has this package installed), waits until a client can connect
(polling a TCP connection and a gRPC channel, within a bounded time) and stops
the whole process group on exit, also when the block fails. The server needs
the ``spark-connect_*.jar`` that the pyspark wheel ships in its ``jars``
directory; ``--packages`` (a download) is not used.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ConnectServer", "connect_jar", "connect_server"]

_READY_SECONDS = 300.0


@dataclass(frozen=True)
class ConnectServer:
    """A started server: the client's URL, its port, its log file and its process."""

    url: str
    port: int
    log: Path
    process: subprocess.Popen[bytes]
    deadline: float

    def ready(self) -> str:
        """The URL, once a client can connect (``RuntimeError`` if the server exited or
        did not answer by the deadline)."""
        while not _answers(self.port):
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the Connect server exited with {self.process.returncode}:\n{_tail(self.log)}"
                )
            if time.monotonic() > self.deadline:
                raise RuntimeError(
                    f"the Connect server did not answer on port {self.port} in time:\n"
                    f"{_tail(self.log)}"
                )
            time.sleep(1)
        return self.url


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def connect_jar() -> Path | None:
    """The Spark Connect server jar of the installed pyspark, or None."""
    found = sorted((_spark_home() / "jars").glob("spark-connect_*.jar"))
    return found[0] if found else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _answers(port: int) -> bool:
    """Whether the server accepts a gRPC channel on ``port`` (not only the TCP port)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
    except OSError:
        return False
    import grpc

    channel = grpc.insecure_channel(f"localhost:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=5)
    except grpc.FutureTimeoutError:
        return False
    finally:
        channel.close()
    return True


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group, SIGKILL if it outlives 60 s."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)


@contextlib.contextmanager
def connect_server(
    workdir: Path,
    *,
    conf: dict[str, str] | None = None,
    ready_seconds: float = _READY_SECONDS,
    wait: bool = True,
) -> Iterator[ConnectServer]:
    """A ``start-connect-server.sh`` server on a free port for the block (``local[2]``).

    With ``wait=False`` the block starts while the server starts (other work
    meanwhile); ``ConnectServer.ready()`` then waits for it.
    """
    home = _spark_home()
    script = home / "sbin" / "start-connect-server.sh"
    if connect_jar() is None:
        raise RuntimeError(f"no spark-connect_*.jar in {home / 'jars'}")
    workdir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log = workdir / "connect-server.log"
    settings = {
        "spark.connect.grpc.binding.port": str(port),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        **(conf or {}),
    }
    command = ["bash", str(script), "--wait", "--master", "local[2]"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_PID_DIR": str(workdir),
        "SPARK_LOG_DIR": str(workdir),
        "SPARK_IDENT_STRING": f"indextables-tests-{port}",
    }
    env.pop("SPARK_REMOTE", None)
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=workdir,
            start_new_session=True,
        )
    try:
        server = ConnectServer(
            url=f"sc://localhost:{port}",
            port=port,
            log=log,
            process=process,
            deadline=time.monotonic() + ready_seconds,
        )
        if wait:
            server.ready()
        yield server
    finally:
        _stop(process)
