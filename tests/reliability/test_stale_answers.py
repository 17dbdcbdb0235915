"""Bytes a server sends after a complete answer must not become the next call's answer.

RFC 9112 section 6.3: a client must not treat data after a complete response as a response.
Two ways a server (or a broken proxy) can do it: the extra bytes come in the same packet as the
answer, or in a later one while the connection waits in the pool. Each HTTP library handles
one of them and not the other, and none has a public setting for the other one; the tests of
those are strict xfails, which start failing (and so get noticed) when the library changes.
``docs/assumptions.md`` says the same to users.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator

import aiohttp
import pytest

from animalstore_client import DefaultAioHttpClient
from tests.reliability.conftest import Api, close_in

FIRST = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]"
STALE_BODY = b'[{"id":666,"name":"stale","categoryId":1}]'
STALE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(STALE_BODY)}\r\n\r\n".encode()
    + STALE_BODY
)
FRESH_BODY = b'[{"id":1,"name":"fresh","categoryId":1}]'
FRESH = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(FRESH_BODY)}\r\n\r\n".encode()
    + FRESH_BODY
)


class ExtraAnswerServer:
    """Answers each connection's first request with ``FIRST`` plus an unrequested ``STALE``.

    ``STALE`` goes in the same ``send`` as ``FIRST`` (``later=False``) or 0.2 s after it;
    every later request on the connection gets ``FRESH``.
    """

    def __init__(self, *, later: bool) -> None:
        self.later = later
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket) -> None:
        connection.settimeout(0.1)
        buffer, answered = b"", 0
        with connection:
            while not self._stop.is_set():
                try:
                    data = connection.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                buffer += data
                while b"\r\n\r\n" in buffer:
                    buffer = buffer.split(b"\r\n\r\n", 1)[1]
                    answered += 1
                    try:
                        if answered > 1:
                            connection.sendall(FRESH)
                        elif self.later:
                            connection.sendall(FIRST)
                            time.sleep(0.2)
                            connection.sendall(STALE)
                        else:
                            connection.sendall(FIRST + STALE)
                    except OSError:
                        return

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        for thread in self._threads:
            thread.join(5)


@pytest.fixture
def extra_answer_server() -> Iterator[Callable[..., ExtraAnswerServer]]:
    servers: list[ExtraAnswerServer] = []

    def make(*, later: bool) -> ExtraAnswerServer:
        server = ExtraAnswerServer(later=later)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def second_answer(client: Api) -> list[str]:
    """Make two calls, the second after the extra bytes have surely arrived; its pet names."""
    assert client.list_pets() == []
    time.sleep(0.5)
    return [pet.name for pet in client.list_pets()]


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(
            "sync",
            marks=pytest.mark.xfail(
                strict=True,
                reason="httpcore reuses the connection; h11 keeps the extra bytes as the "
                "next answer (no public setting)",
            ),
        ),
        pytest.param(
            "async",
            marks=pytest.mark.xfail(
                strict=True,
                reason="httpcore reuses the connection; h11 keeps the extra bytes as the "
                "next answer (no public setting)",
            ),
        ),
        "aiohttp",
    ],
)
def test_an_extra_answer_in_the_same_packet_is_not_the_next_calls(
    make_client: Callable[..., Api], extra_answer_server: Callable[..., ExtraAnswerServer]
) -> None:
    server = extra_answer_server(later=False)
    client = make_client(server.base_url, max_retries=0)

    names = second_answer(client)

    # A new connection's first answer (aiohttp drops the one that held extra bytes).
    assert names == []
    assert server.connections == 2


@pytest.mark.parametrize(
    "kind",
    [
        "sync",
        "async",
        pytest.param(
            "aiohttp",
            marks=pytest.mark.xfail(
                strict=True,
                reason="aiohttp parses bytes that arrive on an idle pooled connection as the "
                "next answer (no public setting)",
            ),
        ),
    ],
)
def test_an_extra_answer_in_a_later_packet_is_not_the_next_calls(
    make_client: Callable[..., Api], extra_answer_server: Callable[..., ExtraAnswerServer]
) -> None:
    server = extra_answer_server(later=True)
    client = make_client(server.base_url, max_retries=0)

    names = second_answer(client)

    # httpcore finds the idle connection readable before reusing it, and opens a new one.
    assert names == []
    assert server.connections == 2


@pytest.mark.parametrize("later", [False, True], ids=["same-packet", "later-packet"])
def test_a_connection_per_call_keeps_every_extra_answer_away(
    kind: str,
    make_client: Callable[..., Api],
    extra_answer_server: Callable[..., ExtraAnswerServer],
    aloop: asyncio.AbstractEventLoop,
    later: bool,
) -> None:
    # The ways out docs/assumptions.md gives: `Connection: close` on httpx; on aiohttp, which
    # keeps the connection whatever the request says, a connector that closes each one.
    server = extra_answer_server(later=later)
    if kind == "aiohttp":

        async def closing_session() -> aiohttp.ClientSession:
            return DefaultAioHttpClient(connector=aiohttp.TCPConnector(force_close=True))

        session = aloop.run_until_complete(closing_session())
        try:
            client = make_client(server.base_url, max_retries=0, http_client=session)
            assert second_answer(client) == []
        finally:
            close_in(aloop, session)
    else:
        client = make_client(
            server.base_url, max_retries=0, default_headers={"Connection": "close"}
        )
        assert second_answer(client) == []
    assert server.connections == 2
