"""Middleware on the five backends over real sockets (httpx and httpx2, sync and async, aiohttp),
and under trio: what handlers see and send, failures, the create that is never resent, and the
deadline around the whole chain. Handlers are written once (``tests.handlers``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import trio

from animalstore_client import (
    APIConnectionError,
    APITimeoutError,
    AsyncClient,
    Pet,
    Request,
    Response,
)
from animalstore_client.testing import FakeAnimalStore, Fault
from tests.conftest import VirtualClock
from tests.handlers import Logic, handlers
from tests.reliability.conftest import (
    API_KEY,
    NO_HTTPX2,
    SYNC_KINDS,
    Api,
    free_port,
    raised_exactly,
)


class BreakerOpen(Exception):
    """A user's own error, raised by a handler."""


@pytest.fixture
def store() -> Iterator[tuple[FakeAnimalStore, str]]:
    """The reference store, served on 127.0.0.1: the store and its base URL."""
    served = FakeAnimalStore(api_keys=[API_KEY])
    with served.serve() as url:
        yield served, url


@pytest.fixture
def build(kind: str, make_client: Callable[..., Api]) -> Callable[..., Api]:
    """Build a client of the test's kind with ``logic`` as its middleware."""

    def make(url: str, *logic: Logic, **options: Any) -> Api:
        asynchronous = kind not in SYNC_KINDS
        return make_client(url, middleware=handlers(*logic, asynchronous=asynchronous), **options)

    return make


def test_a_logging_handler_sees_each_attempt_through_a_retry(
    build: Callable[..., Api], store: tuple[FakeAnimalStore, str], clock: VirtualClock
) -> None:
    served, url = store
    served.inject(Fault.error(503))
    log: list[object] = []

    def logging(request: Request) -> Generator[Request, Response, Response]:
        log.append((request.method, request.url, request.headers["authorization"], request.attempt))
        response = yield request
        log.append((response.status_code, response.headers["content-type"]))
        return response

    assert build(url, logging).list_pets(status="sold") == []

    shown = f"{url}/pets?status=sold"
    assert log == [
        ("GET", shown, "Bearer [redacted]", 0),
        (503, "application/json"),
        ("GET", shown, "Bearer [redacted]", 1),
        (200, "application/json"),
    ]
    assert len(served.requests) == 2
    assert len(clock.slept) == 1


def test_a_header_a_handler_adds_reaches_the_store_on_every_attempt(
    build: Callable[..., Api], store: tuple[FakeAnimalStore, str], clock: VirtualClock
) -> None:
    served, url = store

    def tagging(request: Request) -> Generator[Request, Response, Response]:
        return (yield request.with_headers({"X-Trace-Id": f"t-{request.attempt}"}))

    api = build(url, tagging)
    api.with_options(middleware=None).list_pets()  # what the backend sends without it
    served.inject(Fault.error(503))
    api.list_pets()

    plain, *tagged = (request.headers for request in served.requests)
    assert plain["authorization"] == f"Bearer {API_KEY}"
    assert tagged == [{**plain, "x-trace-id": "t-0"}, {**plain, "x-trace-id": "t-1"}]


def test_a_handler_passing_the_answer_on_changes_nothing_the_caller_sees(
    build: Callable[..., Api], store: tuple[FakeAnimalStore, str]
) -> None:
    _, url = store

    def passing(request: Request) -> Generator[Request, Response, Response]:
        return (yield request)

    api = build(url, passing)
    plain = api.with_options(middleware=None).with_raw_response.list_pets().http_response
    passed = api.with_raw_response.list_pets().http_response

    # The backend's own answer (httpx's response, with the request it sent), not one rebuilt.
    assert passed.request.headers == plain.request.headers
    assert sorted(passed.extensions) == sorted(plain.extensions)
    assert (passed.http_version, passed.reason_phrase) == (plain.http_version, "OK")


def test_a_handler_that_answers_itself_sends_nothing(
    build: Callable[..., Api], store: tuple[FakeAnimalStore, str]
) -> None:
    served, url = store

    def offline(request: Request) -> Response:
        return Response(201, json={"id": 9, "name": "Rex", "categoryId": 3})

    assert build(url, offline).create_pet(name="Rex", category_id=3) == Pet(9, "Rex", 3)
    assert served.requests == []


def test_a_handlers_own_error_is_raised_as_it_is_and_nothing_else_is_sent(
    build: Callable[..., Api], store: tuple[FakeAnimalStore, str]
) -> None:
    served, url = store
    served.inject(Fault.error(503))

    def breaker(request: Request) -> Generator[Request, Response, Response]:
        yield request
        raise BreakerOpen(f"open after a 503 to Bearer {API_KEY}")

    with pytest.raises(BreakerOpen) as raised:
        build(url, breaker, max_retries=2).list_pets()

    assert raised.value.args == ("open after a 503 to [redacted]",)
    assert getattr(raised.value, "__notes__", None) == [
        "raised by middleware handler 'breaker' during GET /pets (attempt 1)"
    ]
    assert served.wait_for_requests(1, timeout=1)
    assert len(served.requests) == 1


def test_a_handler_answers_for_a_refused_connection(
    build: Callable[..., Api], make_client: Callable[..., Api]
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    caught: list[APIConnectionError] = []

    def fallback(request: Request) -> Generator[Request, Response, Response]:
        try:
            return (yield request)
        except APIConnectionError as exc:
            caught.append(exc)
            return Response(200, json=[{"id": 1, "name": "Cached", "categoryId": 1}])

    assert build(url, fallback, max_retries=0).list_pets() == [Pet(1, "Cached", 1)]

    plain = raised_exactly(APIConnectionError, make_client(url, max_retries=0).list_pets)
    (given,) = caught
    assert type(given) is APIConnectionError
    assert given.message == plain.message
    assert "ConnectionRefusedError" in given.message
    assert given.request.headers["authorization"] == "[redacted]"


def test_a_create_whose_connection_drops_after_sending_is_not_resent_through_middleware(
    build: Callable[..., Api], store: tuple[FakeAnimalStore, str], clock: VirtualClock
) -> None:
    served, url = store
    served.inject(Fault.drop(processed=True, operation="create"))
    seen: list[tuple[int, str]] = []

    def passing(request: Request) -> Generator[Request, Response, Response]:
        try:
            return (yield request)
        except APIConnectionError as exc:
            seen.append((request.attempt, type(exc).__name__))
            raise

    error = raised_exactly(
        APIConnectionError,
        lambda: build(url, passing, max_retries=3).create_pet(name="Rex", category_id=3),
    )

    assert seen == [(0, "APIConnectionError")]
    assert "the animal may have been created; not retried" in error.message
    assert len(served.requests) == 1
    assert [pet.name for pet in served.pets] == ["Rex"]
    assert clock.slept == []


def test_a_slow_handler_is_cut_off_at_the_deadline(
    kind: str, make_client: Callable[..., Api], store: tuple[FakeAnimalStore, str]
) -> None:
    served, url = store
    release, done = threading.Event(), threading.Event()
    ended: list[str] = []

    def blocking(request: Request, call_next: Callable[[Request], Response]) -> Response:
        try:
            release.wait(5)
            return call_next(request)
        finally:
            ended.append("released" if release.is_set() else "timed out")
            done.set()

    async def waiting(request: Request, call_next: Any) -> Response:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        raise AssertionError("never reached")

    synchronous = kind in SYNC_KINDS
    api = make_client(url, middleware=[blocking if synchronous else waiting], deadline=0.2)
    error = raised_exactly(APITimeoutError, api.list_pets)

    assert "deadline=0.2 s passed before the call was done" in error.message
    if synchronous:
        # The call returned at the deadline while the handler still waits in its thread,
        # which goes on once released (and sends: its answer is dropped).
        assert ended == []
        release.set()
        assert done.wait(2)
        assert ended == ["released"]
        assert len(served.requests) == 1
    else:
        assert ended == ["cancelled"]
        assert served.requests == []


# -- trio --------------------------------------------------------------------------------------

TRIO_BACKENDS = [
    "httpx",
    pytest.param("httpx2", marks=pytest.mark.skipif(NO_HTTPX2 is not None, reason=str(NO_HTTPX2))),
]


@asynccontextmanager
async def _trio_client(backend: str, url: str, *logic: Logic) -> AsyncIterator[AsyncClient]:
    """An ``AsyncClient`` on ``backend`` with ``logic`` as its middleware; closed after, with
    its ``http_client``."""
    http: Any = None
    if backend == "httpx2":
        from animalstore_client import DefaultAsyncHttpx2Client

        http = DefaultAsyncHttpx2Client()
    middleware = handlers(*logic, asynchronous=True)
    async with AsyncClient(API_KEY, base_url=url, http_client=http, middleware=middleware) as c:
        yield c
    if http is not None:
        await http.aclose()


@pytest.mark.parametrize("backend", TRIO_BACKENDS)
def test_under_trio_handlers_see_each_attempt_and_their_headers_are_sent(
    backend: str, store: tuple[FakeAnimalStore, str], clock: VirtualClock
) -> None:
    served, url = store
    served.inject(Fault.error(503))
    attempts: list[int] = []

    def tagging(request: Request) -> Generator[Request, Response, Response]:
        attempts.append(request.attempt)
        return (yield request.with_headers({"X-Attempt": str(request.attempt)}))

    async def main() -> list[Pet]:
        async with _trio_client(backend, url, tagging) as client:
            return await client.list_pets()

    assert trio.run(main) == []
    assert attempts == [0, 1]
    assert [request.headers["x-attempt"] for request in served.requests] == ["0", "1"]


@pytest.mark.parametrize("backend", TRIO_BACKENDS)
def test_under_trio_a_handlers_error_is_raised_and_a_slow_one_is_cancelled_at_the_deadline(
    backend: str, store: tuple[FakeAnimalStore, str]
) -> None:
    served, url = store
    cancelled: list[bool] = []

    def breaker(request: Request) -> Response:
        raise BreakerOpen("open")

    async def stuck(request: Request, call_next: Any) -> Response:
        try:
            await trio.Event().wait()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise
        raise AssertionError("never reached")

    async def main() -> tuple[BaseException, BaseException]:
        async with _trio_client(backend, url, breaker) as client:
            try:
                await client.list_pets()
            except BreakerOpen as exc:
                raised = exc
            slow = client.with_options(middleware=[stuck], deadline=0.2)
            try:
                await slow.list_pets()
            except APITimeoutError as exc:
                return raised, exc
        raise AssertionError("no error")

    raised, timed_out = trio.run(main)
    assert getattr(raised, "__notes__", None) == [
        "raised by middleware handler 'breaker' during GET /pets (attempt 1)"
    ]
    assert "deadline=0.2 s passed" in str(timed_out)
    assert cancelled == [True]
    assert served.requests == []
