"""Faults below HTTP, over real sockets: stalls, refused ports, resets, truncation, hang-ups.

Each must surface as ``APIConnectionError`` (``APITimeoutError`` for a timeout), never as a raw
httpx, socket or JSON exception; a GET is retried, a POST only when it provably never left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from animalstore_client import APIConnectionError, APITimeoutError, Pet, PetStatus
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import VirtualClock
from tests.reliability.conftest import (
    API_KEY,
    PET,
    Api,
    aiohttp_session,
    close_in,
    exception_chain,
    free_port,
    raised_exactly,
)
from tests.reliability.faultserver import (
    Action,
    FaultServer,
    Forward,
    Hangup,
    Raw,
    Reply,
    Reset,
    Truncate,
)

REX = Pet(id=1, name="Rex", category_id=3, status=PetStatus.AVAILABLE)
BIG_LIST = json.dumps([{**PET, "id": i} for i in range(1, 200)]).encode()
#: Each ends the connection before a complete response has arrived.
BROKEN: dict[str, Action] = {
    "hangup": Hangup(),
    "reset-mid-body": Reset(body=BIG_LIST, sent=100),
    "reset-before-body": Reset(body=BIG_LIST, sent=0),
    "truncated-body": Truncate(body=BIG_LIST, sent=len(BIG_LIST) // 2),
    "not-http": Raw(b"SSH-2.0-OpenSSH_9.6\r\n"),
    "bad-status-line": Raw(b"HTTP/1.1 two hundred OK\r\n\r\n"),
}
#: A read or connect timeout short enough to cost the test little.
SHORT_TIMEOUT = 0.05
#: A stalled server's timeout: the read's short, the other phases long enough for a loaded
#: machine to connect and send, so that the server has the request when the read times out.
READ_TIMEOUT = httpx.Timeout(5.0, read=SHORT_TIMEOUT)
#: When a stalled server hangs up (APIConnectionError): a call that is still waiting then did
#: not time out when it should have. It never costs its length: the server's close ends it.
HANG_UP_AFTER = 1.0


def assert_clean_connection_error(exc: BaseException, error_class: type[Exception]) -> None:
    """``exc`` is exactly ``error_class``, and its chain holds no JSON decoding error."""
    assert type(exc) is error_class
    # The library's error is told in the message, never chained (its frames hold the key).
    assert exc.__cause__ is None
    assert exc.__context__ is None
    assert not any(isinstance(e, json.JSONDecodeError) for e in exception_chain(exc))


def test_a_stalled_server_times_out_within_the_timeout(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.script(Hangup(delay=HANG_UP_AFTER))
    api = make_client(server, timeout=READ_TIMEOUT, max_retries=0)

    started = time.monotonic()
    with pytest.raises(APITimeoutError) as caught:
        api.list_pets()

    # Not before the timeout; and before the hang-up, or the error would be a plain
    # APIConnectionError (the exact class is checked).
    assert time.monotonic() - started >= SHORT_TIMEOUT
    assert_clean_connection_error(caught.value, APITimeoutError)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    # The client may give up before the server thread has read the request off the socket.
    assert server.wait_for_requests(1, timeout=5)
    assert len(server.requests) == 1


def test_a_stalled_get_is_retried_then_times_out(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(Hangup(delay=HANG_UP_AFTER), Hangup(delay=HANG_UP_AFTER))
    api = make_client(server, timeout=READ_TIMEOUT, max_retries=1)

    with pytest.raises(APITimeoutError) as caught:
        api.list_pets()

    assert_clean_connection_error(caught.value, APITimeoutError)  # each timed out, none hung up
    assert server.wait_for_requests(2, timeout=5)  # the last may be read after the timeout
    assert len(server.requests) == 2
    assert len(sleeps) == 1


def test_an_answer_within_the_timeout_is_not_cut_short(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.script(Reply(200, json=[PET], delay=2 * SHORT_TIMEOUT))
    api = make_client(server, timeout=1.5, max_retries=0)

    assert api.list_pets() == [REX]


@pytest.mark.parametrize("operation", ["list_pets", "create_pet"])
def test_a_refused_port_raises_apiconnectionerror(
    make_client: Callable[..., Api], operation: str
) -> None:
    api = make_client(f"http://127.0.0.1:{free_port()}/v1", max_retries=0)

    with pytest.raises(APIConnectionError) as caught:
        api.invoke(operation)

    assert_clean_connection_error(caught.value, APIConnectionError)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


def test_create_pet_is_retried_when_the_connection_was_never_made(
    make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    api = make_client(f"http://127.0.0.1:{free_port()}/v1", max_retries=2)

    raised_exactly(APIConnectionError, lambda: api.create_pet(name="Rex", category_id=3))

    assert len(sleeps) == 2  # nothing was sent, so retrying cannot duplicate the pet


def test_create_pet_refused_then_accepted_creates_the_pet_once(
    make_client: Callable[..., Api],
    make_server: Callable[..., FaultServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing listens on the port at the first attempt; the server starts during the wait.
    store = FakeAnimalStore(api_keys=[API_KEY])
    port = free_port()
    started: list[FaultServer] = []

    def start_server(delay: float) -> None:
        if not started:
            started.append(make_server(port=port, default=Forward(store)))

    async def start_server_async(delay: float) -> None:
        start_server(delay)

    monkeypatch.setattr(time, "sleep", start_server)
    monkeypatch.setattr(asyncio, "sleep", start_server_async)
    api = make_client(f"http://127.0.0.1:{port}/v1", max_retries=2)

    assert api.create_pet(name="Rex", category_id=3) == Pet(1, "Rex", 3)

    (live,) = started
    assert [(r.method, r.path) for r in live.requests] == [("POST", "/v1/pets")]
    assert len(store.pets) == 1


@contextlib.contextmanager
def port_that_never_accepts() -> Iterator[int]:
    """A port whose accept queue is full: the kernel drops new SYNs, so a connect stalls."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port: int = listener.getsockname()[1]
        fillers = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(3)]
        try:
            for filler in fillers:
                filler.setblocking(False)
                filler.connect_ex(("127.0.0.1", port))
            select.select([], fillers[:1], [], 1.0)  # the first one is in the queue
            yield port
        finally:
            for filler in fillers:
                filler.close()


@pytest.mark.parametrize("operation", ["list_pets", "create_pet"])
def test_a_connect_timeout_is_an_apitimeouterror_retried_even_for_a_post(
    make_client: Callable[..., Api], clock: VirtualClock, operation: str
) -> None:
    with port_that_never_accepts() as port:
        # The deadline, far longer than both attempts and the backoff between them, ends a
        # call whose connect timeout was not applied, and says so in its own words.
        url = f"http://127.0.0.1:{port}/v1"
        api = make_client(
            url,
            timeout=httpx.Timeout(5.0, connect=SHORT_TIMEOUT),
            max_retries=1,
            deadline=3.0,
        )
        started = time.monotonic()
        with pytest.raises(APITimeoutError) as caught:
            api.invoke(operation)

    assert_clean_connection_error(caught.value, APITimeoutError)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert len(clock.slept) == 1  # nothing left, so even create_pet may go again
    method = "GET" if operation == "list_pets" else "POST"
    ending = NOT_SENT if operation == "list_pets" else NOT_CREATED
    message = str(caught.value)
    # The connect timeout's own error (each library words it its own way), not the deadline's.
    assert message.startswith(f"{method} {url}/pets failed: ")
    assert message.endswith(ending)
    assert "deadline" not in message
    assert time.monotonic() - started >= 2 * SHORT_TIMEOUT


@pytest.mark.parametrize("fault", list(BROKEN.values()), ids=list(BROKEN))
def test_a_broken_answer_to_a_get_is_an_apiconnectionerror(
    server: FaultServer, make_client: Callable[..., Api], fault: Action
) -> None:
    server.script(fault, Reply(200, json=[]))
    api = make_client(server, max_retries=0)

    with pytest.raises(APIConnectionError) as caught:
        api.list_pets()

    assert_clean_connection_error(caught.value, APIConnectionError)
    assert len(server.requests) == 1


@pytest.mark.parametrize("fault", list(BROKEN.values()), ids=list(BROKEN))
def test_a_get_is_retried_after_a_broken_answer(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float], fault: Action
) -> None:
    server.script(fault, fault, Reply(200, json=[PET]))
    api = make_client(server, max_retries=2)

    assert api.list_pets() == [REX]
    assert len(server.requests) == 3
    assert len(sleeps) == 2


def test_a_get_that_always_hangs_up_fails_after_its_retries(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.default = Hangup()
    api = make_client(server, max_retries=2)

    with pytest.raises(APIConnectionError) as caught:
        api.list_pets()

    assert_clean_connection_error(caught.value, APIConnectionError)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert len(server.requests) == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize("fault", list(BROKEN.values()), ids=list(BROKEN))
def test_a_post_with_a_broken_answer_is_sent_once(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float], fault: Action
) -> None:
    server.script(fault, Reply(201, json=PET))
    api = make_client(server, max_retries=3)

    with pytest.raises(APIConnectionError) as caught:
        api.create_pet(name="Rex", category_id=3)

    assert_clean_connection_error(caught.value, APIConnectionError)
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/v1/pets")]
    assert sleeps == []


def test_a_post_after_the_server_dropped_an_idle_connection_goes_once_on_a_new_one(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    store = FakeAnimalStore(api_keys=[API_KEY])
    # The first answer closes the connection without saying so (no "Connection: close").
    server.script(Reply(200, json=[], drop_after=True), Forward(store))
    api = make_client(server, max_retries=0)

    assert api.list_pets() == []
    # The server has closed it: over loopback its FIN is in the client's idle pooled
    # connection as close() returns.
    assert server.wait_until_closed(timeout=5.0)
    assert api.create_pet(name="Rex", category_id=3) == Pet(1, "Rex", 3)

    first, second = server.requests
    assert first.connection != second.connection
    assert len(store.pets) == 1


class IdleClosingServer(FaultServer):
    """A fault server whose test closes its idle connections when it wants, not on a timer."""

    def close_idle_connections(self) -> None:
        """Close every open connection from the server's side, as an idle timeout would (a
        FIN): call it between calls, when every connection is idle; then ``wait_until_closed``.
        """
        with self._lock:
            connections = list(self._connections.values())
        for connection in connections:
            # The handler's recv() then returns nothing, and it closes the socket.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def idle_closing_server() -> Iterator[IdleClosingServer]:
    server = IdleClosingServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("operation", ["create_pet", "list_pets"])
def test_every_call_after_the_server_closed_an_idle_connection_goes_once_and_succeeds(
    idle_closing_server: IdleClosingServer,
    make_client: Callable[..., Api],
    operation: str,
    kind: str,
    aloop: asyncio.AbstractEventLoop,
) -> None:
    # The shape of a sync wrapper over AsyncClient (one run_until_complete per call) and of a
    # loop busy elsewhere: between calls nothing runs the client's event loop, and meanwhile
    # the server closes the idle keep-alive connection.
    store = FakeAnimalStore(api_keys=[API_KEY])
    server = idle_closing_server
    server.default = Forward(store)
    options: dict[str, Any] = {}
    if kind == "aiohttp":
        # Without trust_env: with it, aiohttp looks up .netrc and the proxy in a thread before
        # every request, which gives the loop the turns that hide the fault.
        http = aiohttp_session(aloop, trust_env=False)
        options["http_client"] = http
    api = make_client(server, max_retries=0, **options)

    for round_ in range(40):
        if operation == "create_pet":
            assert api.create_pet(name=f"pet-{round_}", category_id=3).id == round_ + 1
        else:
            assert api.list_pets() == []
        # The server closes the idle connection, as its idle timeout would: over loopback its
        # FIN is in the client's socket as close() returns.
        server.close_idle_connections()
        assert server.wait_until_closed(timeout=5.0)

    assert len(server.requests) == 40  # each call went out once
    assert len({request.connection for request in server.requests}) == 40
    assert len(store.pets) == (40 if operation == "create_pet" else 0)
    if kind == "aiohttp":
        close_in(aloop, http)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_refused_connection_reads_the_same_on_every_client_and_backend(
    kind: str, make_client: Callable[..., Api], host: str
) -> None:
    # Each library words it its own way ("[Errno 111] Connection refused", anyio's "All
    # connection attempts failed", aiohttp's "Cannot connect to host ...").
    url = f"http://{host}:{free_port()}/v1"
    api = make_client(url, max_retries=0)

    error = raised_exactly(APIConnectionError, api.list_pets)

    assert str(error) == (
        f"GET {url}/pets failed: ConnectionRefusedError: connection refused "
        "(nothing accepts connections at that address)" + NOT_SENT
    )


# -- what the message says the call did ----------------------------------------------------------

#: How the message of a create whose request may have reached the service ends.
MAYBE_CREATED = (
    "; the animal may have been created; not retried, as a create is retried only when it "
    "provably was not processed; pass idempotency_key= to make retries safe"
)
#: How the message of a create that provably was not sent ends.
NOT_CREATED = (
    "; not sent, so the animal was not created: the request provably never reached the "
    "service, and calling again is safe"
)
#: How the message of any other call that provably was not sent ends.
NOT_SENT = "; not sent: the request provably never reached the service, and calling again is safe"
#: Each loses the answer to a request the server has read: a hang-up, and a read timeout.
LOST = {
    "hangup": (Hangup(), APIConnectionError, 5.0),
    "read-timeout": (Hangup(delay=HANG_UP_AFTER), APITimeoutError, READ_TIMEOUT),
}


@pytest.mark.parametrize(("fault", "error_class", "timeout"), LOST.values(), ids=list(LOST))
def test_a_create_whose_answer_was_lost_says_the_animal_may_have_been_created(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    fault: Action,
    error_class: type[APIConnectionError],
    timeout: float | httpx.Timeout,
) -> None:
    server.script(fault, Reply(201, json=PET))
    api = make_client(server, timeout=timeout, max_retries=2)

    with pytest.raises(APIConnectionError) as caught:
        api.create_pet(name="Rex", category_id=3)

    assert_clean_connection_error(caught.value, error_class)
    message = str(caught.value)
    assert message.startswith(f"POST {server.base_url}/pets failed: ")
    assert message.endswith(MAYBE_CREATED)
    assert caught.value.message == message
    assert caught.value.request.method == "POST"
    assert server.wait_for_requests(1, timeout=5)  # read off the socket maybe after the timeout
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/v1/pets")]
    assert sleeps == []


@pytest.mark.parametrize(("fault", "error_class", "timeout"), LOST.values(), ids=list(LOST))
def test_a_get_whose_answer_was_lost_claims_neither(
    server: FaultServer,
    make_client: Callable[..., Api],
    fault: Action,
    error_class: type[APIConnectionError],
    timeout: float | httpx.Timeout,
) -> None:
    # A GET changes nothing, and its request may have reached the service: nothing to add.
    server.script(fault)
    api = make_client(server, timeout=timeout, max_retries=0)

    with pytest.raises(APIConnectionError) as caught:
        api.list_pets()

    assert_clean_connection_error(caught.value, error_class)
    assert "; " not in str(caught.value).partition(" failed: ")[2]
    assert server.wait_for_requests(1, timeout=5)  # read off the socket maybe after the timeout
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("operation", "ending"),
    [("list_pets", NOT_SENT), ("create_pet", NOT_CREATED)],
    ids=["list_pets", "create_pet"],
)
def test_a_call_that_provably_was_not_sent_says_so(
    make_client: Callable[..., Api], sleeps: list[float], operation: str, ending: str
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    api = make_client(url, max_retries=1)

    with pytest.raises(APIConnectionError) as caught:
        api.invoke(operation)

    assert_clean_connection_error(caught.value, APIConnectionError)
    method = "GET" if operation == "list_pets" else "POST"
    assert str(caught.value) == (
        f"{method} {url}/pets failed: ConnectionRefusedError: connection refused "
        f"(nothing accepts connections at that address){ending}"
    )
    assert caught.value.request.method == method
    assert len(sleeps) == 1  # retried, as nothing was sent
