"""Bounded cost against any server: a size cap on answers, and a deadline for a whole call.

Every test runs on each client kind and backend (``make_client``) against real sockets on
127.0.0.1: the fault server for scripted answers, and ``DripServer`` below for servers that
send a byte at a time or nothing at all. What a decompression bomb in any stack of codings
costs is in ``test_content_codings.py``.

A call against a dripping server really waits out its deadline, so the deadlines here are short
(0.2 s), and what bounds the call is checked where it is decided, not by timing it: the time
the client gives each attempt (``send_within``'s, or anyio's ``move_on_after``'s, seconds) and
the attempt's own timeouts, none longer than the time left. How soon after its deadline a call
ends is a speed claim, for the benchmarks. Waits the SDK asks for (a ``Retry-After``, a backoff)
run on the ``clock`` fixture's virtual clock.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import httpx
import pytest

from animalstore_client import (
    DEFAULT_MAX_RESPONSE_BYTES,
    APIConnectionError,
    APITimeoutError,
    InternalServerError,
    ResponseTooLargeError,
)
from animalstore_client._backends import deadline
from animalstore_client._backends.deadline import send_within, send_within_async
from tests.conftest import VirtualClock, closed_after
from tests.reliability.conftest import PET, Api
from tests.reliability.faultserver import FaultServer, Raw, Reply
from tests.reliability.rawserver import RawServer

#: A call's deadline against a dripping server: short, as the call waits it out for real.
DEADLINE = 0.2
#: How often a dripping server sends a byte: often enough that no per-phase timeout of the
#: attempt (5 s) could ever run out, and that an attempt past its deadline soon meets a byte.
DRIP = 0.02
#: How much earlier than its deadline a call may end: timers (a lock's wait, the event loop's)
#: may wake a hair early. A machine under load only makes a call end later.
EARLY = 0.02


class DripServer(RawServer):
    """Reads the request, then answers one byte every ``interval``, until the client leaves.

    ``mode`` is ``"headers"`` (a header line that never ends), ``"body"`` (complete headers
    announcing a large body, then the body a byte at a time) or ``"silent"`` (nothing at all).

    Attributes:
        requests: how many requests it read.
    """

    HEADS: ClassVar[dict[str, bytes]] = {
        "headers": b"HTTP/1.1 200 OK\r\nX-Drip: ",
        "body": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000\r\n\r\n[",
        "silent": b"",
    }

    def __init__(self, mode: str, interval: float = 0.1) -> None:
        self.mode = mode
        self.interval = interval
        self.requests = 0
        super().__init__()

    def serve(self, connection: socket.socket) -> None:
        if self.read_head(connection) is None:
            return
        self.requests += 1
        connection.sendall(self.HEADS[self.mode])
        while not self.wait(self.interval):
            if self.mode != "silent":
                connection.sendall(b" ")


@pytest.fixture
def drip_server() -> Iterator[Callable[[str], DripServer]]:
    yield from closed_after(lambda mode: DripServer(mode, interval=DRIP))


@pytest.fixture
def granted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, dict[str, float | None]]]:
    """What each attempt under a deadline was given, in order: the seconds the client waits
    for it (``send_within``'s, or ``send_within_async``'s, which cancels it then), and its
    per-phase timeouts. The attempts still run as they would."""
    given: list[tuple[float, dict[str, float | None]]] = []

    def sync(seconds: float, send: Any, request: Any) -> Any:
        given.append((seconds, dict(request.timeout)))
        return send_within(seconds, send, request)

    async def asynchronous(seconds: float, send: Any, request: Any) -> Any:
        given.append((seconds, dict(request.timeout)))
        return await send_within_async(seconds, send, request)

    monkeypatch.setattr(deadline, "send_within", sync)
    monkeypatch.setattr(deadline, "send_within_async", asynchronous)
    return given


def assert_given_at_most(
    granted: list[tuple[float, dict[str, float | None]]], deadline: float
) -> None:
    """One attempt, given no more than ``deadline``, and no phase of it longer."""
    assert len(granted) == 1, granted
    seconds, timeouts = granted[0]
    assert 0 < seconds <= deadline
    assert set(timeouts) == {"connect", "read", "write", "pool"}
    assert all(phase is not None and 0 < phase <= deadline for phase in timeouts.values())


def copy(client: Api, **options: object) -> Api:
    """``client.with_options(**options)``, called as the suite calls ``client``."""
    return Api(client.target.with_options(**options), client._loop, client.kind)


# -- the size cap --------------------------------------------------------------------------


def test_the_default_cap_is_16_mib(make_client: Callable[..., Api], server: FaultServer) -> None:
    client = make_client(server)
    assert client.max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES == 16 * 1024 * 1024
    assert client.with_options(max_response_bytes=None).max_response_bytes is None


@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("operation", ["list_pets", "create_pet"])
def test_a_body_past_the_cap_raises_once_and_is_not_retried(
    make_client: Callable[..., Api], server: FaultServer, operation: str, gzip: bool
) -> None:
    body = b"[" + b" " * 5000 + b"]"  # valid JSON, 5,002 bytes once decoded
    server.script(Reply(200, body=body, gzip=gzip), Reply(200, body=body, gzip=gzip))
    client = make_client(server, max_response_bytes=5001, max_retries=3)

    with pytest.raises(ResponseTooLargeError) as caught:
        client.invoke(operation)

    assert len(server.requests) == 1
    assert "max_response_bytes=5001" in str(caught.value)
    assert str(caught.value).startswith(f"{'POST' if operation == 'create_pet' else 'GET'} ")
    assert caught.value.request.headers["authorization"] == "[redacted]"


def test_a_body_at_the_cap_is_read(make_client: Callable[..., Api], server: FaultServer) -> None:
    body = b"[" + b" " * 4998 + b"]"  # 5,000 bytes
    server.script(Reply(200, body=body, gzip=True))
    client = make_client(server, max_response_bytes=5000)

    assert client.list_pets() == []


def test_an_error_answer_past_the_cap_raises_the_size_error(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    server.script(Reply(500, body=b"x" * 10_000))
    client = make_client(server, max_response_bytes=1000, max_retries=0)

    with pytest.raises(ResponseTooLargeError):
        client.list_pets()


def test_with_options_and_none_lift_the_cap(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    body = b"[" + b" " * 3000 + b"]"
    server.script(Reply(200, body=body), Reply(200, body=body), Reply(200, body=body))
    client = make_client(server, max_response_bytes=100)

    with pytest.raises(ResponseTooLargeError):
        client.list_pets()
    assert copy(client, max_response_bytes=None).list_pets() == []
    assert copy(client, max_response_bytes=4000).list_pets() == []
    assert len(server.requests) == 3


def test_the_connection_is_dropped_after_a_body_past_the_cap(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    # Far larger than a socket buffer: the rest is still on its way when the reading stops.
    server.script(Reply(200, body=b"[" + b" " * 8_000_000 + b"]"), Reply(200, json=[PET]))
    client = make_client(server, max_response_bytes=1000)

    with pytest.raises(ResponseTooLargeError):
        client.list_pets()
    assert [pet.id for pet in client.list_pets()] == [1]
    # The rest of the first body was never read: the second call came on a new connection.
    first, second = server.requests
    assert first.connection != second.connection


# -- the deadline --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["headers", "body", "silent"])
@pytest.mark.parametrize("operation", ["list_pets", "create_pet"])
def test_the_deadline_bounds_a_call_against_a_dripping_server(
    make_client: Callable[..., Api],
    drip_server: Callable[[str], DripServer],
    granted: list[tuple[float, dict[str, float | None]]],
    mode: str,
    operation: str,
) -> None:
    server = drip_server(mode)
    # Per phase, 5 s would never run out: the server sends a byte every 20 ms, forever (or
    # for 100,000 bytes of body): only the deadline ends the call.
    client = make_client(server.base_url, timeout=5.0, deadline=DEADLINE, max_retries=3)

    started = time.monotonic()
    with pytest.raises(APITimeoutError) as caught:
        client.invoke(operation)
    elapsed = time.monotonic() - started

    assert elapsed + EARLY >= DEADLINE, elapsed
    assert f"deadline={DEADLINE:g} s passed" in str(caught.value)
    # The attempt was given the time left, at most, in all and in each phase.
    assert_given_at_most(granted, DEADLINE)
    # Cut off at the deadline, the call is not retried: one attempt (assert_given_at_most), so
    # one connection and one request at most. Not exactly one: on a loaded machine the deadline
    # may pass before a create's body is sent whole or the server's thread has read it.
    assert server.connections <= 1
    assert server.requests <= 1


def test_a_per_call_deadline_overrides_the_clients(
    make_client: Callable[..., Api],
    drip_server: Callable[[str], DripServer],
    granted: list[tuple[float, dict[str, float | None]]],
) -> None:
    server = drip_server("headers")
    client = make_client(server.base_url, timeout=5.0, deadline=30)

    with pytest.raises(APITimeoutError) as caught:
        client.list_pets(deadline=DEADLINE)
    assert f"deadline={DEADLINE:g} s passed" in str(caught.value)
    # The call's deadline, not the client's 30 s, bounded the attempt.
    assert_given_at_most(granted, DEADLINE)
    assert client.with_options(deadline=None).deadline is None
    assert client.deadline == 30.0


def test_retries_stop_when_the_deadline_leaves_no_time_for_the_next(
    make_client: Callable[..., Api], server: FaultServer, clock: VirtualClock
) -> None:
    # Each 503 asks for a 0.4 s wait: the 1 s deadline has room for two retries, not three.
    server.script(*[Reply(503, headers={"Retry-After": "0.4"}) for _ in range(10)])
    client = make_client(server, deadline=1.0, max_retries=10)

    with pytest.raises(InternalServerError):
        client.list_pets()

    assert len(server.requests) == 3
    # Two waits of the 0.4 s asked for (the second pause has just begun when it is slept);
    # the third would end past the deadline, so the call ends without it.
    assert clock.slept == [pytest.approx(0.4, abs=0.05)] * 2


def test_a_call_that_ends_in_time_is_unaffected_by_its_deadline(
    make_client: Callable[..., Api], server: FaultServer, clock: VirtualClock
) -> None:
    server.script(Reply(503), Reply(200, json=[PET]), Reply(201, json=PET))
    client = make_client(server, deadline=10)

    assert [pet.id for pet in client.list_pets()] == [1]
    assert client.create_pet(name="Rex", category_id=3).id == 1
    assert len(server.requests) == 3
    # The one backoff after the 503, well within the deadline, was waited as usual.
    assert len(clock.slept) == 1
    assert 0 < clock.slept[0] < 10


@pytest.mark.parametrize(
    ("option", "value"),
    [("deadline", value) for value in [0, -1, float("nan"), float("inf"), True, "1"]]
    + [("max_response_bytes", value) for value in [0, -5, 1.5, True, "16"]],
)
def test_a_bad_deadline_or_cap_is_refused_before_sending(
    make_client: Callable[..., Api], server: FaultServer, option: str, value: object
) -> None:
    client = make_client(server)

    with pytest.raises((TypeError, ValueError), match=option):
        client.with_options(**{option: value})
    if option == "deadline":  # a call's own, too
        with pytest.raises((TypeError, ValueError), match="deadline"):
            client.list_pets(deadline=value)
    assert server.requests == []


def test_a_refused_connection_under_a_deadline_is_a_connection_error(
    make_client: Callable[..., Api],
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = make_client(f"http://127.0.0.1:{port}/v1", deadline=DEADLINE, max_retries=0)

    with pytest.raises(APIConnectionError) as caught:
        client.list_pets()
    assert type(caught.value) is APIConnectionError


def test_a_length_beside_chunked_framing_does_not_get_past_the_cap(
    kind: str, make_client: Callable[..., Api], server: FaultServer
) -> None:
    # h11 follows the chunks and ignores Content-Length: the length must not be trusted then.
    chunk = b" " * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(32)) + b"0\r\n\r\n"
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    server.script(Raw(head + body))
    client = make_client(server, max_response_bytes=1024 * 1024, max_retries=0)

    # aiohttp refuses such framing outright; httpx reads it, within the cap.
    expected = APIConnectionError if kind == "aiohttp" else ResponseTooLargeError
    with pytest.raises(expected):
        client.list_pets()


def test_an_abandoned_sync_attempt_stops_reading_a_dripping_body(
    drip_server: Callable[[str], DripServer],
) -> None:
    from animalstore_client import Client

    server = drip_server("body")  # 100,000 bytes, one every 20 ms: more than half an hour
    with Client(api_key="k", base_url=server.base_url, timeout=5.0, deadline=DEADLINE) as client:
        with pytest.raises(APITimeoutError):
            client.list_pets()
        # The worker thread gave up at the next byte after the deadline.
        for thread in _attempt_threads():
            thread.join(2.0)
        assert _attempt_threads() == []


def _attempt_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "animalstore-attempt"]


def test_a_sync_attempt_under_a_deadline_runs_in_a_daemon_thread_named_for_it(
    server: FaultServer,
) -> None:
    # A daemon, so that an attempt abandoned at its deadline never holds up the interpreter's
    # exit; named, so that logs (%(threadName)s), debuggers and _attempt_threads() tell it apart.
    from animalstore_client import Client

    server.script(Reply(200, json=[PET]))
    threads: list[threading.Thread] = []

    def seen(request: httpx.Request) -> None:
        threads.append(threading.current_thread())

    with (
        httpx.Client(event_hooks={"request": [seen]}) as http,
        Client(api_key="k", base_url=server.base_url, deadline=10, http_client=http) as client,
    ):
        assert [pet.id for pet in client.list_pets()] == [1]
    assert [(thread.name, thread.daemon) for thread in threads] == [("animalstore-attempt", True)]


def test_the_raw_response_of_a_capped_read_has_its_elapsed_time(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    server.script(Reply(200, json=[PET], gzip=True, delay=0.05))
    client = make_client(server)

    started = time.perf_counter()
    response = client.raw.list_pets()
    took = time.perf_counter() - started

    # From sending to having read the body: at least the server's delay, within the call.
    assert 0.05 <= response.http_response.elapsed.total_seconds() <= took
    assert response.http_response.json() == [PET]


def test_a_sync_attempt_with_no_timeout_ends_soon_after_the_deadline(
    drip_server: Callable[[str], DripServer], httpx_module: Any
) -> None:
    from animalstore_client import Client

    server = drip_server("silent")  # never answers: only a timeout of the attempt's own ends it
    with (
        httpx_module.Client() as http,
        Client(
            api_key="k", base_url=server.base_url, timeout=None, deadline=DEADLINE, http_client=http
        ) as client,
    ):
        with pytest.raises(APITimeoutError):
            client.list_pets()
        # Its phases without a limit were given the time left: the worker thread is gone soon
        # after the deadline, not when the server gives up.
        for thread in _attempt_threads():
            thread.join(2.0)
        assert _attempt_threads() == []
