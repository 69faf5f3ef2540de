"""A fault-injecting HTTP proxy in front of a real test server.

The proxy relays every request to the real server unchanged except for the
faults armed with :meth:`FaultProxy.inject`:

- ``"drop_response"``: forward the request, wait until the server answers
  (so it has applied the request), then close the client's connection
  without the answer: the client sees a reset after sending, the ambiguous
  failure a put-if-absent must settle by reading back;
- ``"stall_response"``: like ``drop_response``, but hold the connection open
  without answering until the client gives up (its read timeout);
- ``"reset_before"``: close the connection without forwarding (not applied);
- ``"throttle"``: answer ``503 SlowDown`` without forwarding (not applied).

Each request runs on its own upstream connection with ``Connection: close``,
so the proxy never has to parse response framing.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ["Fault", "FaultProxy", "fault_proxy"]

Fault = Literal["drop_response", "stall_response", "reset_before", "throttle"]

_THROTTLE_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
)
_THROTTLE = (
    b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nConnection: close\r\n"
    + f"Content-Length: {len(_THROTTLE_BODY)}\r\n\r\n".encode()
    + _THROTTLE_BODY
)


@dataclass(slots=True)
class _Rule:
    fault: Fault
    method: str
    remaining: int


def _read_head(client: socket.socket) -> tuple[bytes, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _header(lines: list[bytes], name: bytes) -> bytes | None:
    for line in lines[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


class FaultProxy:
    """A running proxy: ``endpoint_url`` replaces the real server's in client options.

    Attributes:
        endpoint_url: ``http://127.0.0.1:PORT`` of the proxy.
        faults_fired: how many armed faults have fired so far.
        requests: how many requests arrived, by HTTP method.
    """

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._closed = threading.Event()
        self.faults_fired = 0
        self.requests: dict[str, int] = {}
        self.endpoint_url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    def inject(self, fault: Fault, *, method: str = "PUT", count: int = 1) -> None:
        """Arm ``fault`` for the next ``count`` requests with HTTP ``method``."""
        with self._lock:
            self._rules.append(_Rule(fault, method.upper(), count))

    def clear(self) -> None:
        """Disarm every fault that has not fired yet."""
        with self._lock:
            self._rules.clear()

    def close(self) -> None:
        """Stop accepting connections."""
        self._closed.set()
        # A blocked accept() does not wake on close(): connect once to release it.
        with contextlib.suppress(OSError), socket.create_connection(self._address(), 1):
            pass
        self._listener.close()
        self._thread.join(5)

    def _address(self) -> tuple[str, int]:
        host, port = self._listener.getsockname()[:2]
        return host, port

    def _take(self, method: str) -> Fault | None:
        with self._lock:
            self.requests[method] = self.requests.get(method, 0) + 1
            for rule in self._rules:
                if rule.method == method and rule.remaining > 0:
                    rule.remaining -= 1
                    self.faults_fired += 1
                    return rule.fault
        return None

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client, contextlib.suppress(OSError):
            request = self._read_request(client)
            if request is None:
                return
            method, data = request
            fault = self._take(method)
            if fault == "reset_before":
                return
            if fault == "throttle":
                client.sendall(_THROTTLE)
                return
            self._relay(client, data, fault=fault)

    def _read_request(self, client: socket.socket) -> tuple[str, bytes] | None:
        parsed = _read_head(client)
        if parsed is None:
            return None
        head, body = parsed
        lines = head.split(b"\r\n")
        length = int(_header(lines, b"content-length") or 0)
        if (_header(lines, b"expect") or b"").lower() == b"100-continue":
            client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        while len(body) < length:
            chunk = client.recv(65536)
            if not chunk:
                return None
            body += chunk
        kept = [line for line in lines if not line.lower().startswith((b"connection:", b"expect:"))]
        head = b"\r\n".join([*kept, b"Connection: close"])
        return lines[0].split(b" ", 1)[0].decode(), head + b"\r\n\r\n" + body

    def _relay(self, client: socket.socket, request: bytes, *, fault: Fault | None) -> None:
        with socket.create_connection(self._upstream, timeout=60) as upstream:
            upstream.sendall(request)
            while chunk := upstream.recv(65536):
                if fault == "stall_response":
                    client.settimeout(30)
                    client.recv(1)  # until the client times out and hangs up
                if fault is not None:
                    return  # the server answered: it applied the request; the client never knows
                client.sendall(chunk)


@contextlib.contextmanager
def fault_proxy(endpoint_url: str) -> Iterator[FaultProxy]:
    """Run a :class:`FaultProxy` in front of ``endpoint_url`` (``http://host:port[/path]``)."""
    host_port = endpoint_url.split("://", 1)[1].split("/", 1)[0]
    host, _, port = host_port.rpartition(":")
    proxy = FaultProxy(host, int(port))
    try:
        yield proxy
    finally:
        proxy.close()
