"""The fault server itself: what the other tests rely on it to do, checked with plain httpx."""

from __future__ import annotations

import errno
import gzip
import socket
import threading
import time

import httpx
import pytest

from tests.reliability.faultserver import (
    FaultServer,
    Forward,
    Hangup,
    Raw,
    Reply,
    Reset,
    Truncate,
)


def raw_exchange(server: FaultServer, request: bytes) -> bytes:
    """Send ``request`` on a new connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def drain(sock: socket.socket) -> None:
    while sock.recv(65536):
        pass


def test_it_answers_in_script_order_then_with_the_default(server: FaultServer) -> None:
    server.script(Reply(503, json={"n": 1}, headers={"Retry-After": "7"}), Reply(201, body=b"x"))
    with httpx.Client() as client:
        first = client.get(f"{server.base_url}/pets")
        second = client.post(f"{server.base_url}/pets", json={"a": 1})
        third = client.get(f"{server.base_url}/other")

    assert (first.status_code, first.json(), first.headers["retry-after"]) == (503, {"n": 1}, "7")
    assert (second.status_code, second.content) == (201, b"x")
    assert third.status_code == 418
    assert server.pending == 0


def test_it_records_method_target_headers_body_and_connection(server: FaultServer) -> None:
    server.script(Reply(200), Reply(200))
    with httpx.Client() as client:
        client.post(f"{server.base_url}/pets?x=%2e", json={"name": "Rex"}, headers={"X-A": "1"})
        client.get(f"{server.base_url}/pets/7")

    first, second = server.requests
    assert (first.method, first.target, first.path, first.query) == (
        "POST",
        "/v1/pets?x=%2e",
        "/v1/pets",
        "x=%2e",
    )
    assert first.header("x-a") == "1"
    assert first.json() == {"name": "Rex"}
    assert (second.method, second.path, second.body) == ("GET", "/v1/pets/7", b"")
    assert first.connection == second.connection  # keep-alive
    assert first.received_at <= second.received_at


def test_it_gzips_on_request(server: FaultServer) -> None:
    server.script(Reply(json=[1, 2], gzip=True))
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /v1/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"Content-Encoding: gzip" in head
    assert gzip.decompress(body) == b"[1, 2]"


def test_hangup_closes_without_a_byte(server: FaultServer) -> None:
    server.script(Hangup())
    assert raw_exchange(server, b"GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n") == b""


def test_truncate_sends_part_of_the_announced_body(server: FaultServer) -> None:
    server.script(Truncate(body=b"0123456789", sent=4))
    data = raw_exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length: 10\r\n" in data
    assert data.endswith(b"\r\n\r\n0123")


def test_reset_ends_the_connection_with_an_rst(server: FaultServer) -> None:
    server.script(Reset(body=b"0123456789", sent=4))
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        # The server has closed it: over loopback the RST is in this socket as close() returns.
        assert server.wait_until_closed(timeout=5.0)
        with pytest.raises(ConnectionResetError) as caught:
            drain(sock)
    assert caught.value.errno == errno.ECONNRESET


def test_raw_sends_bytes_as_they_are(server: FaultServer) -> None:
    server.script(Raw(b"SSH-2.0-nope\r\n"))
    assert raw_exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n") == b"SSH-2.0-nope\r\n"


def test_forward_answers_from_a_fake_store(server: FaultServer) -> None:
    from animalstore_client.testing import FakeAnimalStore

    store = FakeAnimalStore(api_keys=["k"])
    server.script(Forward(store))
    with httpx.Client() as client:
        response = client.post(
            f"{server.base_url}/pets",
            json={"name": "Rex", "categoryId": 3},
            headers={"Authorization": "Bearer k"},
        )
    assert response.status_code == 201
    assert response.json() == {"id": 1, "name": "Rex", "categoryId": 3}
    assert [p.name for p in store.pets] == ["Rex"]


def test_close_cuts_a_delay_short_joins_threads_and_frees_the_port() -> None:
    threads_before = threading.active_count()
    fault_server = FaultServer().start()
    fault_server.script(Reply(delay=60))
    sock = socket.create_connection(("127.0.0.1", fault_server.port), timeout=5)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert fault_server.wait_for_requests(1, timeout=5.0)

    # A delay it did not cut short would hold its thread past the join's 10 s (RuntimeError),
    # and then send the answer.
    fault_server.close()
    assert sock.recv(1) == b""  # the server's end is closed, with no answer sent
    sock.close()
    assert threading.active_count() == threads_before
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", fault_server.port), timeout=5)
    fault_server.close()  # idempotent


def test_connections_beyond_the_bound_are_refused() -> None:
    with FaultServer(max_connections=2) as fault_server:
        socks = [socket.create_connection(("127.0.0.1", fault_server.port)) for _ in range(3)]
        try:
            deadline = time.monotonic() + 5
            while fault_server.refused_connections < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert fault_server.refused_connections == 1
        finally:
            for sock in socks:
                sock.close()
