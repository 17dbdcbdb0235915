"""What one call (``_core.call``) makes of its request and its attempts, as a user sees it.

The request as it goes out (its body's bytes, its header names, no body on a GET), the
deadline (a call's own, the timeouts of each phase, the request an error keeps, the attempt
abandoned at it), the client family's pause, the API key redacted from what the server says,
and the log records and times of each attempt.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import httpx
import pytest
import respx

from animalstore_client import (
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AsyncClient,
    AuthenticationError,
    Client,
    DefaultAioHttpClient,
    RateLimitError,
)
from animalstore_client._core.wire import REDACTED
from animalstore_client.testing import IN_PROCESS_BASE_URL, FakeAnimalStore, Fault
from tests.conftest import API_KEY, BASE_URL, Api, StoppedClock, stopped_clock

PET = {"id": 7, "name": "Rex", "categoryId": 3, "status": "available"}
#: A list of pets whose first id is the key: the schema error quotes the value it got.
KEY_AS_ID = [{"id": API_KEY, "name": "Rex", "categoryId": 3}]


# -- the request as it goes out ----------------------------------------------------------------


def test_a_create_sends_its_body_as_compact_utf8_json(api: Api, mock_api: respx.MockRouter) -> None:
    # As httpx writes a json= body: no space after a separator, and a name outside ASCII as
    # its UTF-8 bytes (the JSON encoding), not as a \u escape, which takes six bytes a letter.
    route = mock_api.post("/pets").respond(201, json=PET)

    api.create_pet(name="Renée", category_id=3, status="pending")

    body = route.calls.last.request.content
    assert body == '{"name":"Renée","categoryId":3,"status":"pending"}'.encode()


def test_the_sdks_own_headers_go_out_under_lower_case_names(
    api: Api, mock_api: respx.MockRouter
) -> None:
    # Names are case-insensitive in HTTP, but the spelling travels and is seen (a proxy's log,
    # a hook printing ``headers.raw``): every header the SDK writes is written in lower case,
    # the Content-Type of a JSON body included.
    route = mock_api.post("/pets").respond(201, json=PET)

    api.create_pet(name="Rex", category_id=3)

    raw = route.calls.last.request.headers.raw
    assert (b"content-type", b"application/json") in raw
    names = {name for name, _ in raw}
    assert {b"authorization", b"accept", b"user-agent", b"idempotency-key"} <= names


def list_pets_once(backend: str, base_url: str) -> None:
    """Call ``list_pets`` once on ``backend`` (``httpx``, ``httpx-async`` or ``aiohttp``)."""
    if backend == "httpx":
        with Client(api_key="test-key", base_url=base_url) as client:
            client.list_pets()
        return

    async def main() -> None:
        http = DefaultAioHttpClient() if backend == "aiohttp" else None  # made in the loop
        try:
            async with AsyncClient(
                api_key="test-key", base_url=base_url, http_client=http
            ) as client:
                await client.list_pets()
        finally:
            if http is not None:
                await http.close()

    asyncio.run(main())


@pytest.mark.parametrize("backend", ["httpx", "httpx-async", "aiohttp"])
def test_a_get_goes_out_without_a_body_or_headers_announcing_one(backend: str) -> None:
    # Over a real socket, as each library frames the request: aiohttp, given an empty body
    # rather than none, would announce it (Content-Length: 0, Content-Type: text/plain).
    store = FakeAnimalStore()
    with store.serve() as base_url:
        list_pets_once(backend, base_url)

    [request] = store.requests
    assert (request.method, request.body) == ("GET", b"")
    assert {"content-length", "content-type", "transfer-encoding"} & set(request.headers) == set()


# -- the deadline ------------------------------------------------------------------------------


def test_a_calls_own_deadline_applies_when_the_client_has_none() -> None:
    store = FakeAnimalStore()
    store.inject(Fault.delay(10.0))
    # Without the call's deadline, the 2 s read timeout would end the attempt, as a ReadTimeout.
    with store.client(timeout=2.0, max_retries=0) as client:
        assert client.deadline is None
        with pytest.raises(APITimeoutError, match=r"failed: deadline=0\.2 s passed"):
            client.list_pets(deadline=0.2)


def test_a_call_cut_off_by_its_deadline_keeps_the_request_it_was_sending() -> None:
    store = FakeAnimalStore()
    store.inject(Fault.delay(10.0))
    with (
        store.client(timeout=2.0, max_retries=0) as client,
        pytest.raises(APITimeoutError) as caught,
    ):
        client.list_pets(limit=5, deadline=0.2)

    request = caught.value.request
    assert (request.method, str(request.url)) == ("GET", f"{IN_PROCESS_BASE_URL}/pets?limit=5")
    assert request.headers["authorization"] == REDACTED


def test_a_call_the_pause_leaves_no_time_for_keeps_the_request_it_would_have_sent() -> None:
    store = FakeAnimalStore()
    store.inject(Fault.error(429, retry_after=30))
    with store.client(max_retries=0) as client:
        with pytest.raises(RateLimitError):
            client.list_pets()
        # The client family is paused for 30 s: a call with 3 s gives up before any attempt.
        with pytest.raises(APITimeoutError, match=r"deadline=3 s leaves no time") as caught:
            client.list_pets(limit=5, deadline=3.0)

    request = caught.value.request
    assert (request.method, str(request.url)) == ("GET", f"{IN_PROCESS_BASE_URL}/pets?limit=5")
    assert request.headers["authorization"] == REDACTED
    assert len(store.requests) == 1


def test_under_a_deadline_each_phase_waits_its_own_timeout_or_else_the_time_left(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    # The timeouts each attempt hands the library (httpx's ``timeout`` extension, which its
    # transport applies): a phase's own when shorter than the time left, the time left for a
    # phase without a limit.
    seen: list[dict[str, float | None]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, json=[])

    mock_api.get("/pets").mock(side_effect=answer)
    api = make_api(timeout=httpx.Timeout(0.5, read=None), deadline=30.0)

    api.list_pets()

    [timeout] = seen
    assert (timeout["connect"], timeout["write"], timeout["pool"]) == (0.5, 0.5, 0.5)
    read = timeout["read"]
    assert read is not None
    assert 29.0 < read <= 30.0


class PieceByPieceBody(httpx.SyncByteStream):
    """A body whose first piece comes at once and each further one when the test releases it.

    Attributes:
        asked: how many pieces the reader asked for.
        closed: set when the reader closed the response.
    """

    def __init__(self) -> None:
        self.asked = 0
        self.closed = threading.Event()
        self._released = threading.Semaphore(0)

    def release(self) -> None:
        """Let the next piece go."""
        self._released.release()

    def __iter__(self) -> Iterator[bytes]:
        self.asked += 1
        yield b"["
        while True:
            self.asked += 1
            if not self._released.acquire(timeout=10.0):  # bounded: never hang the suite
                return
            yield b" "

    def close(self) -> None:
        self.closed.set()


def test_a_sync_attempt_abandoned_at_the_deadline_stops_reading_at_the_next_piece() -> None:
    # A sync attempt cannot be interrupted: the call stops waiting for it at the deadline and
    # it goes on in its thread. A body still arriving then must not hold it (and its
    # connection) for as long as the server likes: it stops at the next piece.
    body = PieceByPieceBody()
    http = httpx.Client(transport=httpx.MockTransport(lambda _: httpx.Response(200, stream=body)))
    with http, Client(api_key=API_KEY, base_url=BASE_URL, deadline=0.3, http_client=http) as client:
        with pytest.raises(APITimeoutError, match=r"deadline=0\.3 s passed"):
            client.list_pets()

        body.release()  # a piece arrives, after the deadline

        assert body.closed.wait(5.0)
        assert body.asked <= 2  # nothing was asked for after that piece


# -- the client family's pause -----------------------------------------------------------------


def test_a_short_pause_that_another_call_asked_for_is_waited_out(sleeps: list[float]) -> None:
    store = FakeAnimalStore()
    store.inject(Fault.error(429, retry_after=0.5))
    with store.client(max_retries=0) as client:
        with pytest.raises(RateLimitError):
            client.list_pets()

        assert client.list_pets() == []

    # The next call waited the half second out before it was sent.
    assert len(sleeps) == 1
    assert 0.4 < sleeps[0] <= 0.5
    assert len(store.requests) == 2


# -- the key in what the server says -----------------------------------------------------------


def test_a_body_that_does_not_fit_is_reported_without_the_key(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(200, json=KEY_AS_ID)

    with pytest.raises(APIResponseValidationError) as plain:
        api.list_pets()
    raw = api.with_raw_response.list_pets()
    with pytest.raises(APIResponseValidationError) as parsed:
        raw.parse()

    for error in (plain.value, parsed.value):
        assert error.message == (
            f"response body does not fit the schema: $[0].id: expected an integer, "
            f"got str '{REDACTED}'"
        )
        assert API_KEY not in repr(error.args)


def test_a_raw_response_that_outlives_its_client_still_parses(mock_api: respx.MockRouter) -> None:
    # The raw response does not keep the client's options (and so the key) alive; once they
    # are gone its error quotes the body as the server sent it, which the response holds anyway.
    mock_api.get("/pets").respond(200, json=KEY_AS_ID)
    client = Client(api_key=API_KEY, base_url=BASE_URL)
    raw = client.with_raw_response.list_pets()
    client.close()
    del client
    gc.collect()

    with pytest.raises(APIResponseValidationError) as caught:
        raw.parse()

    assert caught.value.message.endswith(f"expected an integer, got str {API_KEY!r}")


def test_an_error_answer_that_quotes_the_key_is_reported_without_it(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(
        401,
        json={"code": f"bad_{API_KEY}", "message": f"invalid key Bearer {API_KEY}", "status": 401},
        headers={"x-request-id": f"req-{API_KEY}"},
    )

    with pytest.raises(AuthenticationError) as caught:
        api.list_pets()

    error = caught.value
    assert error.message == f"invalid key {REDACTED}"
    assert error.error is not None
    assert (error.code, error.error.message) == (f"bad_{REDACTED}", f"invalid key {REDACTED}")
    assert error.request_id == f"req-{REDACTED}"
    assert API_KEY not in str(error)


# -- log records and times ---------------------------------------------------------------------


@pytest.fixture
def stopwatch(monkeypatch: pytest.MonkeyPatch) -> StoppedClock:
    """``time.perf_counter`` stopped, so that a duration is what the test made it, exactly."""
    return stopped_clock(monkeypatch, time, "perf_counter")


def test_an_attempts_time_is_logged_in_milliseconds_and_kept_as_its_responses_elapsed(
    api: Api,
    mock_api: respx.MockRouter,
    stopwatch: StoppedClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")

    def answer(request: httpx.Request) -> httpx.Response:
        stopwatch.now += 0.25  # the server takes a quarter of a second
        return httpx.Response(404, json={"code": "not_found", "message": "no", "status": 404})

    mock_api.get("/pets").mock(side_effect=answer)

    with pytest.raises(APIStatusError) as caught:
        api.list_pets()

    lines = [r.getMessage() for r in caplog.records if r.name == "animalstore_client"]
    assert lines == [f"GET {BASE_URL}/pets -> 404 in 250.0 ms (retry 0)"]
    assert caught.value.response.elapsed == timedelta(seconds=0.25)


def test_a_retrys_info_record_is_marked_as_one(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    # ``animalstore_retry=True`` is promised (CHANGELOG): the command line's filter prints a
    # line per retry on a terminal by it, and an application's filter may pick them out too.
    caplog.set_level(logging.INFO, logger="animalstore_client")
    mock_api.get("/pets").mock(side_effect=[httpx.Response(503), httpx.Response(200, json=[])])

    api.list_pets()

    [record] = [r for r in caplog.records if r.name == "animalstore_client"]
    assert record.levelno == logging.INFO
    assert record.getMessage().startswith(f"retrying GET {BASE_URL}/pets in ")
    assert getattr(record, "animalstore_retry", None) is True
