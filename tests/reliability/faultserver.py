"""A scriptable HTTP/1.1 fault-injection server on 127.0.0.1, for the reliability tests.

Standard library only. Each request the server receives is recorded, then answered by the next
action of a script (a queue); when the script is empty the ``default`` action answers. The
actions cover what real networks and proxies do to an API client: answer any status with any
headers and body (gzipped or not), answer late, hang up without answering, reset the
connection mid-body (``SO_LINGER`` 0, so the peer sees an RST), cut the body short, send bytes
that are not HTTP at all, or hand the request to a ``FakeAnimalStore``.

Usage::

    with FaultServer() as server:
        server.script(Reply(503, headers={"Retry-After": "1"}), Reply(200, json=[]))
        client = Client(api_key="k", base_url=server.base_url)
        ...
        assert [r.path for r in server.requests] == ["/v1/pets", "/v1/pets"]

One thread accepts connections and one thread serves each connection (keep-alive is
supported), up to ``max_connections`` at a time; more are closed at once and counted in
``refused_connections``. ``close()`` stops accepting, wakes every waiting handler (a delayed
answer is cut short), closes every socket and joins every thread.
"""

from __future__ import annotations

import contextlib
import gzip as gzip_module
import json as json_module
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from tests.reliability.rawserver import accepted

__all__ = [
    "Action",
    "FaultServer",
    "Forward",
    "Hangup",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Reset",
    "Truncate",
]

HOST = "127.0.0.1"
_MAX_HEAD_BYTES = 64 * 1024
_MAX_BODY_BYTES = 32 * 1024 * 1024
_ACCEPT_POLL = 0.5
_JOIN_TIMEOUT = 10.0
_NO_JSON: Any = object()
# Statuses whose responses never have a body (RFC 9110 6.4.1).
_BODILESS = frozenset({204, 304})

HeaderItems = Mapping[str, str] | Iterable[tuple[str, str]]


class _Store(Protocol):
    def handle(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]: ...


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it.

    Attributes:
        method: the HTTP method.
        target: the raw request target (``/v1/pets?limit=5``), not decoded.
        path: the target's path, not percent-decoded.
        query: the target's query string, without ``?``.
        headers: the headers in order, names lower-cased, repeats kept.
        body: the body bytes.
        connection: the number of the connection it came on (0, 1, ...).
        received_at: ``time.monotonic()`` when its head had been read.
        received_at_wall: ``time.time()`` at the same moment.
    """

    method: str
    target: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    connection: int
    received_at: float
    received_at_wall: float

    def header(self, name: str) -> str | None:
        """Return the first value of header ``name`` (case-insensitive), or ``None``."""
        name = name.lower()
        return next((value for key, value in self.headers if key == name), None)

    def header_names(self) -> set[str]:
        """Return the lower-cased names of every header received."""
        return {key for key, _ in self.headers}

    def json(self) -> Any:
        """Decode the body as JSON."""
        return json_module.loads(self.body)


@dataclass(frozen=True)
class Reply:
    """Answer with ``status``, after ``delay`` seconds.

    Attributes:
        status: the status code (any three digits).
        body: the body bytes; ignored when ``json`` is given.
        json: a value to send JSON-encoded as the body.
        headers: extra headers, sent after the generated ones.
        content_type: the ``Content-Type``; ``None`` sends none.
        gzip: gzip the body and send ``Content-Encoding: gzip``.
        delay: seconds to wait before answering.
        close: send ``Connection: close`` and close the connection after the answer.
        drop_after: close the connection after the answer without announcing it.
    """

    status: int = 200
    body: bytes = b""
    json: Any = _NO_JSON
    headers: HeaderItems = ()
    content_type: str | None = "application/json"
    gzip: bool = False
    delay: float = 0.0
    close: bool = False
    drop_after: bool = False

    def payload(self) -> bytes:
        """Return the body as it goes on the wire (JSON-encoded, gzipped as configured)."""
        body = self.body if self.json is _NO_JSON else json_module.dumps(self.json).encode()
        return gzip_module.compress(body) if self.gzip else body


@dataclass(frozen=True)
class Hangup:
    """Close the connection without answering, after ``delay`` seconds (a stall when long)."""

    delay: float = 0.0


@dataclass(frozen=True)
class _CutShort:
    """Send the head (announcing the whole body) and ``sent`` bytes of it, then end."""

    status: int = 200
    body: bytes = b""
    sent: int = 0
    content_type: str = "application/json"


@dataclass(frozen=True)
class Reset(_CutShort):
    """Send the head (announcing the whole body) and ``sent`` bytes of it, then an RST."""


@dataclass(frozen=True)
class Truncate(_CutShort):
    """Send the head (announcing the whole body) and ``sent`` bytes of it, then a clean FIN."""


@dataclass(frozen=True)
class Raw:
    """Send ``data`` as it is (not necessarily HTTP), then close the connection."""

    data: bytes


@dataclass(frozen=True)
class Forward:
    """Answer from a ``FakeAnimalStore`` (anything with its ``handle`` method)."""

    store: _Store = field(repr=False)


Action = Reply | Hangup | Reset | Truncate | Raw | Forward


class _Closed(Exception):
    """The peer closed the connection, or the server is stopping."""


class FaultServer:
    """A scripted HTTP/1.1 server on 127.0.0.1 that records every request.

    Args:
        default: the action for a request when the script is empty; by default a 418 that no
            test expects, so an unscripted request fails loudly (and is never retried).
        max_connections: the most connections served at once.
        port: the port to listen on; 0 (the default) picks a free one.
        idle_timeout: seconds a connection may sit idle before the server closes it.
    """

    def __init__(
        self,
        *,
        default: Action | None = None,
        max_connections: int = 64,
        port: int = 0,
        idle_timeout: float = 30.0,
    ) -> None:
        self.default: Action = default or Reply(
            418, json={"code": "unscripted", "message": "no action scripted", "status": 418}
        )
        self.refused_connections = 0
        self._max_connections = max_connections
        self._idle_timeout = idle_timeout
        self._script: deque[Action] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        #: Notified, under ``_lock``, when a connection has been closed.
        self._closed_one = threading.Condition(self._lock)
        #: Notified, under ``_lock``, when a request has been recorded.
        self._received = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._connections: dict[int, socket.socket] = {}
        self._threads: list[threading.Thread] = []
        self._connection_count = 0
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self.port = port

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> FaultServer:
        """Bind the port on 127.0.0.1 and start accepting; returns ``self``."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, self.port))
        listener.listen(128)
        listener.settimeout(_ACCEPT_POLL)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._acceptor = threading.Thread(
            target=self._accept_loop, name=f"faultserver-accept-{self.port}", daemon=True
        )
        self._acceptor.start()
        return self

    def close(self) -> None:
        """Stop: close the listener and every connection, and join every thread; idempotent.

        Raises:
            RuntimeError: a thread did not end within 10 s (a bug in this server).
        """
        self._stopping.set()
        if self._listener is not None:
            # Wakes accept() at once on Linux; elsewhere the accept poll still ends it.
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
        if self._acceptor is not None:
            self._acceptor.join(_JOIN_TIMEOUT)
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            connections = list(self._connections.values())
            threads = list(self._threads)
        for connection in connections:
            with contextlib.suppress(OSError):  # its handler may have closed it already
                connection.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(_JOIN_TIMEOUT)
        alive = [t.name for t in [self._acceptor, *threads] if t is not None and t.is_alive()]
        if alive:
            raise RuntimeError(f"fault server threads did not stop: {alive}")

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- scripting and inspection -------------------------------------------------------------

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the SDK's ``base_url``."""
        return f"{self.origin}/v1"

    def script(self, *actions: Action) -> None:
        """Queue actions; each answers one request, in order."""
        with self._lock:
            self._script.extend(actions)

    def wait_until_closed(self, timeout: float) -> bool:
        """Wait until the server has closed every client connection; return whether it did."""
        with self._closed_one:
            return self._closed_one.wait_for(lambda: not self._connections, timeout)

    def wait_for_requests(self, count: int, timeout: float) -> bool:
        """Wait until the server has recorded ``count`` requests; return whether it had."""
        with self._received:
            return self._received.wait_for(lambda: len(self._requests) >= count, timeout)

    @property
    def open_connections(self) -> int:
        """How many client connections are open now (a closed one ends its handler)."""
        with self._lock:
            return len(self._connections)

    @property
    def pending(self) -> int:
        """How many scripted actions are still unused."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received, oldest first."""
        with self._lock:
            return list(self._requests)

    # -- serving ------------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._listener is not None
        for connection in accepted(self._listener, self._stopping):
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()]
                if len(self._threads) >= self._max_connections or self._stopping.is_set():
                    self.refused_connections += 1
                    connection.close()
                    continue
                number = self._connection_count
                self._connection_count += 1
                self._connections[number] = connection
                thread = threading.Thread(
                    target=self._serve_connection,
                    args=(connection, number),
                    name=f"faultserver-conn-{self.port}-{number}",
                    daemon=True,
                )
                self._threads.append(thread)
            thread.start()

    def _serve_connection(self, connection: socket.socket, number: int) -> None:
        connection.settimeout(self._idle_timeout)
        buffer = bytearray()
        try:
            while not self._stopping.is_set():
                request = self._read_request(connection, buffer, number)
                with self._lock:
                    self._requests.append(request)
                    action = self._script.popleft() if self._script else self.default
                    self._received.notify_all()
                if not self._perform(action, connection, request):
                    break
        except (_Closed, OSError):
            pass
        finally:
            with self._lock:
                self._connections.pop(number, None)
                connection.close()  # under the lock: closed when a waiter is woken
                self._closed_one.notify_all()

    def _receive(self, connection: socket.socket, buffer: bytearray) -> None:
        chunk = connection.recv(65536)
        if not chunk or self._stopping.is_set():
            raise _Closed
        buffer += chunk

    def _read_request(
        self, connection: socket.socket, buffer: bytearray, number: int
    ) -> RecordedRequest:
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > _MAX_HEAD_BYTES:
                raise _Closed
            self._receive(connection, buffer)
        head_end = buffer.index(b"\r\n\r\n")
        head = bytes(buffer[:head_end]).decode("latin-1")
        del buffer[: head_end + 4]
        received_at, received_at_wall = time.monotonic(), time.time()
        request_line, *header_lines = head.split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        headers = tuple(
            (name.strip().lower(), value.strip())
            for name, _, value in (line.partition(":") for line in header_lines)
        )
        lookup = dict(headers)
        if "chunked" in lookup.get("transfer-encoding", "").lower():
            body = self._read_chunked(connection, buffer)
        else:
            length = int(lookup.get("content-length", "0"))
            if length > _MAX_BODY_BYTES:
                raise _Closed
            while len(buffer) < length:
                self._receive(connection, buffer)
            body = bytes(buffer[:length])
            del buffer[:length]
        parts = urlsplit(target)
        return RecordedRequest(
            method=method,
            target=target,
            path=parts.path,
            query=parts.query,
            headers=headers,
            body=body,
            connection=number,
            received_at=received_at,
            received_at_wall=received_at_wall,
        )

    def _read_chunked(self, connection: socket.socket, buffer: bytearray) -> bytes:
        body = bytearray()
        while True:
            while b"\r\n" not in buffer:
                self._receive(connection, buffer)
            line_end = buffer.index(b"\r\n")
            size = int(bytes(buffer[:line_end]).split(b";")[0], 16)
            del buffer[: line_end + 2]
            if size == 0:
                while b"\r\n" not in buffer:
                    self._receive(connection, buffer)
                del buffer[: buffer.index(b"\r\n") + 2]  # no trailers expected
                return bytes(body)
            while len(buffer) < size + 2:
                self._receive(connection, buffer)
            body += buffer[:size]
            del buffer[: size + 2]
            if len(body) > _MAX_BODY_BYTES:
                raise _Closed

    def _wait(self, seconds: float) -> None:
        """Sleep, cut short (by ``_Closed``) when the server is stopping."""
        if seconds > 0 and self._stopping.wait(seconds):
            raise _Closed

    def _perform(self, action: Action, connection: socket.socket, request: RecordedRequest) -> bool:
        """Carry out one action; return whether the connection stays open."""
        if isinstance(action, Forward):
            status, headers, body = action.store.handle(
                request.method,
                unquote(request.path),
                request.query,
                dict(request.headers),
                request.body,
            )
            connection.sendall(_head(status, headers) + body)
            return True
        if isinstance(action, Reply):
            return self._reply(action, connection, request)
        if isinstance(action, Hangup):
            self._wait(action.delay)
            return False
        if isinstance(action, _CutShort):
            headers = [
                ("Content-Type", action.content_type),
                ("Content-Length", str(len(action.body))),
            ]
            connection.sendall(_head(action.status, headers) + action.body[: action.sent])
            if isinstance(action, Reset):
                # Linger on, with a zero timeout: close() discards the socket with an RST.
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if isinstance(action, Raw):
            connection.sendall(action.data)
            return False
        raise TypeError(f"not a fault server action: {action!r}")

    def _reply(self, reply: Reply, connection: socket.socket, request: RecordedRequest) -> bool:
        self._wait(reply.delay)
        headers: list[tuple[str, str]] = []
        payload = b"" if reply.status in _BODILESS else reply.payload()
        if reply.content_type is not None:
            headers.append(("Content-Type", reply.content_type))
        if reply.gzip:
            headers.append(("Content-Encoding", "gzip"))
        if reply.status not in _BODILESS:
            headers.append(("Content-Length", str(len(payload))))
        if reply.close:
            headers.append(("Connection", "close"))
        extra = reply.headers.items() if isinstance(reply.headers, Mapping) else reply.headers
        headers.extend(extra)
        body = b"" if request.method == "HEAD" else payload
        connection.sendall(_head(reply.status, headers) + body)
        client_closes = (request.header("connection") or "").lower() == "close"
        return not (reply.close or reply.drop_after or client_closes)


def _head(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
