"""A bare TCP server on 127.0.0.1 for answers no HTTP server would send.

Subclasses say what to do with each connection (``serve``), byte by byte; this class accepts
connections, serves each in its own thread, counts them, and on ``close()`` stops, closes
every socket and joins every thread. ``read_head`` reads one request's head off a connection.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

__all__ = ["RawServer", "accepted"]


def accepted(listener: socket.socket, stop: threading.Event) -> Iterator[socket.socket]:
    """Each connection ``listener`` accepts, until ``stop`` is set or ``listener`` is closed.

    ``listener`` has a timeout, so that ``stop`` is seen while no client connects.
    """
    while not stop.is_set():
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        yield connection


class RawServer:
    """Accepts connections and hands each to ``serve`` in a thread of its own.

    Attributes:
        connections: how many connections were accepted.
    """

    def __init__(self) -> None:
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._start(self._accept)

    @property
    def base_url(self) -> str:
        """The API's address on this server."""
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    @property
    def stopping(self) -> bool:
        """Whether ``close()`` was called: ``serve`` should return."""
        return self._stop.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds``, or less if the server stops; return whether it stopped."""
        return self._stop.wait(seconds)

    def serve(self, connection: socket.socket) -> None:
        """Serve one connection (in its own thread); the socket is closed afterwards."""
        raise NotImplementedError

    def read_head(self, connection: socket.socket, buffer: bytes = b"") -> bytes | None:
        """Read until a request's head is complete; return what follows it, ``None`` if closed."""
        connection.settimeout(0.1)
        while b"\r\n\r\n" not in buffer:
            if self.stopping:
                return None
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return None
            if not chunk:
                return None
            buffer += chunk
        return buffer.split(b"\r\n\r\n", 1)[1]

    def close(self) -> None:
        """Stop accepting, close every socket, join every thread."""
        self._stop.set()
        self._listener.close()
        for sock in self._sockets:
            sock.close()
        for thread in self._threads:
            thread.join(5)

    def _start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        for connection in accepted(self._listener, self._stop):
            self.connections += 1
            self._sockets.append(connection)
            self._start(self._serve_and_close, connection)

    def _serve_and_close(self, connection: socket.socket) -> None:
        # An OSError: the client went away.
        with connection, contextlib.suppress(OSError):
            self.serve(connection)
