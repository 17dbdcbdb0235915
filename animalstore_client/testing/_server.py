"""A real HTTP/1.1 server on 127.0.0.1 that answers from a ``FakeAnimalStore``.

``serve`` runs it in a background thread for a ``with`` block; ``serve_in_foreground`` is the
blocking loop behind both ``python -m animalstore_client.testing`` and ``animalstore
mock-server``.
"""

from __future__ import annotations

import contextlib
import re
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import attrs

if TYPE_CHECKING:
    from animalstore_client.testing._faults import Answering, Plan, RawResponse

__all__ = ["serve"]

_HOST = "127.0.0.1"
# How often the serving loop checks for shutdown: the exit of serve() waits up to this long.
_POLL_INTERVAL = 0.05
_CONTENT_LENGTH = re.compile(r"[0-9]{1,18}")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")


@contextlib.contextmanager
def serve(store: Answering, port: int) -> Iterator[str]:
    """Serve ``store`` on 127.0.0.1 in a background thread for the duration of a ``with``.

    Args:
        store: the store that answers the requests.
        port: the TCP port; 0 picks a free one.

    Yields:
        The base URL, ``"http://127.0.0.1:<port>/v1"``.

    Raises:
        OSError: the port cannot be bound.
    """
    server = _Server(store, port)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": _POLL_INTERVAL},
        name=f"animalstore-fake-server-{server.server_port}",
        daemon=True,
    )
    thread.start()
    try:
        yield f"http://{_HOST}:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True
    # socketserver's listen backlog is 5: a burst of connections (an AsyncClient opens up to
    # 100 at once) overflows it, and each dropped SYN waits a second or more to be resent.
    request_queue_size = 1024

    def __init__(self, store: Answering, port: int) -> None:
        self.store = store
        #: Set on close: ends every scripted delay at once, so that no handler holds it up.
        self.closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._handler_threads: list[threading.Thread] = []
        self._handlers_lock = threading.Lock()
        super().__init__((_HOST, port), _RequestHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN, a DNS query that can take seconds.
        socketserver.TCPServer.server_bind(self)
        self.server_name = _HOST
        self.server_port = self.server_address[1]

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        # Replaces ThreadingMixIn's, whose server_close() joins only non-daemon threads: here
        # handler threads are daemons (never holding up interpreter exit) yet still joined.
        # Registering them in the serving thread, not in the handler thread, means that once
        # shutdown() returns, server_close() knows every one of them.
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"animalstore-fake-handler-{self.server_port}",
            daemon=self.daemon_threads,
        )
        with self._handlers_lock:
            self._handler_threads = [t for t in self._handler_threads if t.is_alive()]
            self._handler_threads.append(thread)
            if isinstance(request, socket.socket):
                self._connections.add(request)
        thread.start()

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        with self._handlers_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        """Close the listening socket and, with ``block_on_close``, end every handler thread.

        Handler threads waiting on idle keep-alive connections are woken by shutting their
        sockets down, then joined. Call it after ``shutdown()``.
        """
        self.closing.set()
        super().server_close()
        if not self.block_on_close:
            return
        with self._handlers_lock:
            connections = list(self._connections)
            threads = list(self._handler_threads)
        for connection in connections:
            # Its handler may have closed it meanwhile.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join()

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that goes away mid-exchange is routine for a test server; say nothing.
        pass


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in two writes; with Nagle's algorithm on, the second waits for
    # the client's delayed ACK of the first: 40 ms on every request.
    disable_nagle_algorithm = True
    server_version = "animalstore-fake"
    server: _Server

    def __getattr__(self, name: str) -> Callable[[], None]:
        # http.server dispatches to do_<METHOD> and answers 501 when there is none. Every
        # method goes to the store instead, which answers 404 or 405 exactly as the
        # transport does.
        if name.startswith("do_"):
            return self._forward
        raise AttributeError(name)

    def _forward(self) -> None:
        body = self._read_body()
        if body is None:
            return
        url = urlsplit(self.path)
        plan = self.server.store._exchange(
            self.command, unquote(url.path), url.query, self._merged_headers(), body
        )
        self._carry_out(plan)

    def _carry_out(self, plan: Plan) -> None:
        """Send the store's answer as its plan says: late, cut short, or not at all."""
        if plan.delay and self.server.closing.wait(plan.delay):
            plan = attrs.evolve(plan, response=None)  # the server is closing: hang up
        if plan.response is None:
            self._hang_up(reset=plan.reset)
            return
        if not plan.truncate:
            self._send(plan.response)
            return
        status, headers, body = plan.response
        self._send((status, headers, body[: len(body) // 2]))  # Content-Length: the whole
        self._hang_up(reset=False)

    def _hang_up(self, *, reset: bool) -> None:
        """Close the connection now, with a TCP reset (RST) or a plain close (FIN)."""
        self.close_connection = True
        self.wfile.flush()
        if reset:
            # SO_LINGER on with a zero timeout: close() discards the connection with an RST.
            linger = struct.pack("ii", 1, 0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.connection.close()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answer a request http.server could not parse, with an Error body, and hang up.

        Args:
            code: the HTTP status chosen by http.server (or by the body reader).
            message: what was wrong; defaults to the status phrase.
            explain: unused; part of the overridden signature.
        """
        self.close_connection = True
        status, headers, body = self.server.store._protocol_error(
            code, message or HTTPStatus(code).phrase
        )
        self._send((status, [*headers, ("connection", "close")], body))

    def log_message(self, format: str, *args: object) -> None:
        # The default writes one stderr line per request, noise in a test run.
        pass

    def _send(self, response: RawResponse) -> None:
        status, headers, body = response
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if self.request_version == "HTTP/1.0" and not self.close_connection:
            # http.server keeps an HTTP/1.0 connection open when asked to ("Connection:
            # keep-alive") but does not say so; such a client then waits for the close that
            # ends the response, and never sends its next request (`ab -k` hangs).
            self.send_header("Connection", "keep-alive")
        self.end_headers()
        # A HEAD response announces its Content-Length but must not carry the body.
        if self.command != "HEAD":
            self.wfile.write(body)

    def _merged_headers(self) -> dict[str, str]:
        # Join repeated headers as httpx does, so both adapters hand the store the same view.
        merged: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            merged[key] = f"{merged[key]}, {value}" if key in merged else value
        return merged

    def _read_body(self) -> bytes | None:
        """Read the request body; on a framing error answer 400, and return None.

        None, with no answer, too when the connection ends before the body does.
        """
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked_body()
        length = self.headers.get("content-length")
        if length is None:
            return b""
        if not _CONTENT_LENGTH.fullmatch(length.strip()):
            self.send_error(400, f"invalid Content-Length header: {length!r}")
            return None
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            # The client went away mid-request (a process killed while it sent): a request
            # never received whole is not one, and no answer can reach anyone.
            self.close_connection = True
            return None
        return body

    def _read_chunked_body(self) -> bytes | None:
        chunks: list[bytes] = []
        while True:
            size_field = self.rfile.readline(1024).split(b";", 1)[0].strip()
            if not _CHUNK_SIZE.fullmatch(size_field):
                self.send_error(400, "invalid chunked request body")
                return None
            size = int(size_field, 16)
            if size == 0:
                break
            chunks.append(self.rfile.read(size))
            self.rfile.readline(1024)  # the CRLF that ends the chunk
        # Skip trailer fields up to the blank line that ends the message.
        while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
            pass
        return b"".join(chunks)
