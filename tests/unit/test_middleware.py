"""Middleware (``middleware=``) on both clients, against the reference store in process.

Each test runs on a ``Client`` and on an ``AsyncClient`` with the same handler logic
(``tests.handlers``); the backends over real sockets and trio are in
``tests/reliability/test_middleware.py``.
"""

from __future__ import annotations

import asyncio
import functools
import pickle
import warnings
from collections.abc import Callable, Generator, Iterator
from typing import Any

import httpx
import pytest

from animalstore_client import (
    APIConnectionError,
    APIResponseValidationError,
    AsyncClient,
    Client,
    NotFoundError,
    Pet,
    Request,
    Response,
    ResponseTooLargeError,
)
from animalstore_client.testing import IN_PROCESS_BASE_URL, FakeAnimalStore, Fault
from tests.conftest import Api, VirtualClock
from tests.handlers import Logic, handler, handlers

#: Long enough to be redacted wherever it occurs.
KEY = "sk-middleware-SECRET-5e6f7a8b"
PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}
#: What every request carries besides the key and what a handler adds, as the store reads it.
SENT = {
    "host": "animalstore.test",
    "connection": "keep-alive",
    "accept": "application/json",
    "accept-encoding": "gzip, deflate, br",
    "user-agent": "animalstore-client-python/1.0.0",
    "authorization": f"Bearer {KEY}",
}


class BreakerOpen(Exception):
    """A user's own error, raised by a handler."""


@pytest.fixture(params=["sync", "async"])
def asynchronous(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "async")


@pytest.fixture
def store() -> FakeAnimalStore:
    return FakeAnimalStore(api_keys=[KEY])


@pytest.fixture
def make(
    store: FakeAnimalStore, asynchronous: bool, loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., Api]]:
    """Build a client of the test's kind on ``store`` with ``logic`` as its middleware."""
    made: list[Api] = []

    def build(*logic: Logic, **options: Any) -> Api:
        cls: Any = AsyncClient if asynchronous else Client
        http = (httpx.AsyncClient if asynchronous else httpx.Client)(transport=store.transport())
        client = cls(
            KEY,
            base_url=IN_PROCESS_BASE_URL,
            http_client=http,
            middleware=handlers(*logic, asynchronous=asynchronous),
            **options,
        )
        made.append(Api(client, loop))
        made.append(Api(http, loop))
        return made[-2]

    yield build
    for api in made:
        api.close()


def copy(api: Api, **options: Any) -> Api:
    """The same calls through ``with_options(**options)``'s copy of the client."""
    return Api(api.target.with_options(**options), api._loop)


def test_a_logging_handler_sees_each_attempt_with_the_key_masked_and_its_answer(
    make: Callable[..., Api], store: FakeAnimalStore, clock: VirtualClock
) -> None:
    store.inject(Fault.error(503))
    log: list[object] = []

    def logging(request: Request) -> Generator[Request, Response, Response]:
        log.append(
            (
                request.method,
                request.url,
                request.headers["AUTHORIZATION"],
                request.operation,
                request.attempt,
                request.content,
            )
        )
        response = yield request
        log.append(response.status_code)
        return response

    assert make(logging).list_pets(limit=5) == []
    url = f"{IN_PROCESS_BASE_URL}/pets?limit=5"
    assert log == [
        ("GET", url, "Bearer [redacted]", "list_pets", 0, None),
        503,
        ("GET", url, "Bearer [redacted]", "list_pets", 1, None),
        200,
    ]
    assert len(clock.slept) == 1  # the backoff between the two attempts


def test_a_header_a_handler_adds_is_sent_on_every_attempt(
    make: Callable[..., Api], store: FakeAnimalStore, clock: VirtualClock
) -> None:
    store.inject(Fault.error(503, operation="create"))

    def tagging(request: Request) -> Generator[Request, Response, Response]:
        return (yield request.with_headers({"X-Attempt": str(request.attempt)}))

    created = make(tagging).create_pet(name="Rex", category_id=3, idempotency_key="key-1")

    assert created == Pet(id=1, name="Rex", category_id=3)
    sent = {
        **SENT,
        "content-type": "application/json",
        "content-length": "29",
        "idempotency-key": "key-1",
    }
    assert [r.headers for r in store.requests] == [
        {**sent, "x-attempt": "0"},
        {**sent, "x-attempt": "1"},
    ]


def test_a_handler_that_answers_itself_sends_nothing(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    def offline(request: Request) -> Response:
        return Response(200, json=[PET], headers={"X-Request-Id": "req-local"})

    api = make(offline)

    assert api.list_pets() == [Pet(id=1, name="Rex", category_id=3, status="available")]
    raw = api.with_raw_response.list_pets()
    assert (raw.status_code, raw.request_id) == (200, "req-local")
    assert raw.headers["content-type"] == "application/json"
    assert raw.content == b'[{"id":1,"name":"Rex","categoryId":3,"status":"available"}]'
    assert store.requests == []


def test_a_cached_answer_is_returned_again_for_another_call(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    store.add_pet("Rex", 3, "available")
    cache: dict[str, Response] = {}

    def caching(request: Request) -> Generator[Request, Response, Response]:
        if request.url not in cache:
            cache[request.url] = yield request
        return cache[request.url]

    api = make(caching)
    first = api.list_pets()
    store.add_pet("Tom", 2, "sold")  # not seen: the second call is answered from the cache

    assert api.list_pets() == first == [Pet(id=1, name="Rex", category_id=3, status="available")]
    assert copy(api).with_raw_response.list_pets().parse() == first
    assert len(store.requests) == 1
    assert api.list_pets(limit=2) != first  # another URL: sent
    assert len(store.requests) == 2


def test_a_handlers_own_error_leaves_the_call_unretried_with_the_key_redacted_and_a_note(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    store.inject(Fault.error(503))

    def breaker(request: Request) -> Generator[Request, Response, Response]:
        response = yield request
        raise BreakerOpen(f"tripped by {response.status_code} (key {KEY})", 3)

    with pytest.raises(BreakerOpen) as raised:
        make(breaker, max_retries=3).list_pets()

    assert type(raised.value) is BreakerOpen
    assert raised.value.args == ("tripped by 503 (key [redacted])", 3)
    assert getattr(raised.value, "__notes__", None) == [
        "raised by middleware handler 'breaker' during GET /pets (attempt 1)"
    ]
    assert len(store.requests) == 1  # never retried


def test_an_inner_handlers_error_is_noted_once_naming_that_handler(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    def outer(request: Request) -> Generator[Request, Response, Response]:
        return (yield request)

    def inner(request: Request) -> Response:
        raise KeyError("no entry")

    api = make(outer, inner)
    with pytest.raises(KeyError) as raised, pytest.warns(DeprecationWarning, match="get_pet"):
        api.get_pet(7)

    assert getattr(raised.value, "__notes__", None) == [
        "raised by middleware handler 'inner' during GET /pets/7 (attempt 1)"
    ]
    assert store.requests == []


def test_the_first_handler_is_the_outermost(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    order: list[str] = []

    def wrapping(name: str) -> Logic:
        def logic(request: Request) -> Generator[Request, Response, Response]:
            order.append(f"{name} in")
            response = yield request.with_headers(
                {"X-Path": f"{request.headers.get('x-path', '')}/{name}"}
            )
            order.append(f"{name} out")
            return response

        logic.__name__ = name
        return logic

    make(wrapping("a"), wrapping("b"), wrapping("c")).list_pets()

    assert order == ["a in", "b in", "c in", "c out", "b out", "a out"]
    (request,) = store.requests
    assert request.headers["x-path"] == "/a/b/c"


def test_a_made_up_answer_is_handled_as_the_backends_would_be(
    make: Callable[..., Api], store: FakeAnimalStore, clock: VirtualClock
) -> None:
    answers = iter(
        [
            Response(503, headers={"Retry-After": "2"}, content=b"busy"),
            Response(200, json=[PET], headers={"Deprecation": "true"}),
        ]
    )

    def scripted(request: Request) -> Response:
        return next(answers)

    api = make(scripted)
    with pytest.warns(DeprecationWarning, match="GET /pets"):
        assert api.list_pets() == [Pet(id=1, name="Rex", category_id=3, status="available")]
    assert clock.slept == [2.0]  # the Retry-After of the made-up 503

    with pytest.raises(NotFoundError) as missing:
        copy(api, middleware=[handler(_not_found, asynchronous=_is_async(api))]).list_pets()
    assert (missing.value.status_code, missing.value.code) == (404, "not_found")
    assert missing.value.message == "no such pet"
    assert missing.value.request.headers["authorization"] == "[redacted]"
    assert store.requests == []


def _not_found(request: Request) -> Response:
    return Response(404, json={"code": "not_found", "message": "no such pet", "status": 404})


def _is_async(api: Api) -> bool:
    return isinstance(api.target, AsyncClient)


def test_a_made_up_body_is_capped_and_parsed_as_a_received_one(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    def big(request: Request) -> Response:
        return Response(200, content=b"[" + b" " * 100 + b"]")

    def broken(request: Request) -> Response:
        return Response(200, content=b"<html>")

    with pytest.raises(ResponseTooLargeError) as raised:
        make(big, max_response_bytes=101).list_pets()
    url = f"{IN_PROCESS_BASE_URL}/pets"
    assert type(raised.value) is ResponseTooLargeError
    assert raised.value.message == (
        f"GET {url} failed: the response body is larger than max_response_bytes=101; "
        "reading stopped there"
    )
    assert (raised.value.request.method, str(raised.value.request.url)) == ("GET", url)
    assert make(big, max_response_bytes=102).list_pets() == []  # exactly the cap
    with pytest.raises(APIResponseValidationError, match="not valid JSON"):
        make(broken).list_pets()
    assert store.requests == []


def test_a_handler_returning_anything_else_is_a_type_error_naming_it(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    def forgetful(request: Request) -> Generator[Request, Response, None]:
        yield request

    def outer(request: Request) -> Generator[Request, Response, Response]:
        return (yield request)

    with pytest.raises(TypeError) as raised:
        make(outer, forgetful, max_retries=2).list_pets()
    assert str(raised.value) == "middleware handler 'forgetful' returned NoneType, not a Response"
    assert not hasattr(raised.value, "__notes__")
    assert len(store.requests) == 1


def test_call_next_takes_only_the_attempts_request_or_a_copy(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    kept: list[Request] = []

    def keeping(request: Request) -> Generator[Request, Response, Response]:
        kept.append(request)
        return (yield kept[0])

    def wrong(request: Request) -> Generator[Any, Response, Response]:
        return (yield "GET /pets")

    api = make(keeping)
    api.list_pets()
    with pytest.raises(ValueError, match="another attempt") as raised:
        api.list_pets()
    assert str(raised.value) == (
        "call_next was given the Request of another attempt: pass on the one the handler was "
        "given, or a with_headers() copy of it"
    )
    assert getattr(raised.value, "__notes__", None) == [
        "raised by middleware handler 'keeping' during GET /pets (attempt 1)"
    ]
    with pytest.raises(TypeError, match="call_next takes a Request, got str"):
        make(wrong).list_pets()
    assert len(store.requests) == 1


def test_a_connection_error_let_through_counts_as_the_attempts_failure(
    asynchronous: bool, loop: asyncio.AbstractEventLoop, clock: VirtualClock
) -> None:
    seen: list[tuple[int, type[BaseException], str]] = []

    def watching(request: Request) -> Generator[Request, Response, Response]:
        try:
            return (yield request)
        except APIConnectionError as exc:
            seen.append((request.attempt, type(exc), exc.message))
            raise

    def refusing(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("All connection attempts failed")

    transport = httpx.MockTransport(refusing)
    http = (httpx.AsyncClient if asynchronous else httpx.Client)(transport=transport)
    cls: Any = AsyncClient if asynchronous else Client
    api = Api(
        cls(
            KEY,
            base_url=IN_PROCESS_BASE_URL,
            http_client=http,
            max_retries=1,
            middleware=handlers(watching, asynchronous=asynchronous),
        ),
        loop,
    )

    with pytest.raises(APIConnectionError) as raised:
        api.list_pets()

    message = (
        f"GET {IN_PROCESS_BASE_URL}/pets failed: ConnectError: All connection attempts failed"
        "; not sent: the request provably never reached the service, and calling again is safe"
    )
    assert seen == [(0, APIConnectionError, message), (1, APIConnectionError, message)]
    assert type(raised.value) is APIConnectionError
    assert raised.value.message == message
    assert not hasattr(raised.value, "__notes__")
    assert len(clock.slept) == 1
    api.close()
    Api(http, loop).close()


def test_with_options_replaces_the_chain_or_keeps_it(
    make: Callable[..., Api], store: FakeAnimalStore, asynchronous: bool
) -> None:
    calls: list[str] = []

    def first(request: Request) -> Generator[Request, Response, Response]:
        calls.append("first")
        return (yield request)

    def second(request: Request) -> Generator[Request, Response, Response]:
        calls.append("second")
        return (yield request)

    api = make(first)
    copy(api).list_pets()
    copy(api, middleware=handlers(second, asynchronous=asynchronous)).list_pets()
    copy(api, middleware=None).list_pets()
    copy(api, middleware=[]).list_pets()
    api.list_pets()

    assert calls == ["first", "second", "first"]
    assert len(store.requests) == 5
    assert api.target._options.middleware == tuple(api.target._options.middleware)


async def _async_handler(request: Request, call_next: Any) -> Response:
    response: Response = await call_next(request)
    return response


def _sync_handler(request: Request, call_next: Any) -> Response:
    response: Response = call_next(request)
    return response


class _AsyncCallable:
    async def __call__(self, request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        return response


@pytest.mark.parametrize(
    ("cls", "middleware", "message"),
    [
        (
            Client,
            _sync_handler,
            "middleware must be a sequence (a list or tuple) of handlers, "
            "got function (put a single handler in a list: middleware=[handler])",
        ),
        (Client, "handler", "middleware must be a sequence (a list or tuple) of handlers, got str"),
        (
            Client,
            {_sync_handler},
            "middleware must be a sequence (a list or tuple) of handlers, got set",
        ),
        (Client, [_sync_handler, 3], "middleware[1] must be callable, got int"),
        (
            Client,
            [_sync_handler, _async_handler],
            "middleware[1] ('_async_handler') must be a plain function for Client, got a "
            "coroutine function (async def): give it to AsyncClient",
        ),
        (
            Client,
            [_AsyncCallable()],
            "middleware[0] ('_AsyncCallable') must be a plain function for Client, got a "
            "coroutine function (async def): give it to AsyncClient",
        ),
        (
            AsyncClient,
            [_async_handler, _sync_handler],
            "middleware[1] ('_sync_handler') must be a "
            "coroutine function (async def) for AsyncClient, got a plain function",
        ),
        (
            AsyncClient,
            [functools.partial(_sync_handler)],
            "middleware[0] ('_sync_handler') must be a coroutine function (async def) for "
            "AsyncClient, got a plain function",
        ),
    ],
)
def test_middleware_of_the_wrong_kind_is_refused_at_construction(
    cls: Any, middleware: Any, message: str
) -> None:
    with pytest.raises(TypeError) as raised:
        cls(KEY, middleware=middleware)
    assert str(raised.value) == message
    client: Any = cls(KEY)
    with pytest.raises(TypeError) as raised:
        client.with_options(middleware=middleware)
    assert str(raised.value) == message


def test_a_partial_of_a_coroutine_function_and_an_async_callable_are_async_handlers() -> None:
    handlers_given: list[Any] = [functools.partial(_async_handler), _AsyncCallable()]
    client = AsyncClient(KEY, middleware=handlers_given)
    assert client._options.middleware == tuple(handlers_given)
    assert Client(KEY, middleware=(functools.partial(_sync_handler),))._options.middleware


def test_a_request_is_immutable_and_its_copies_refuse_the_headers_the_sdk_sets(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    seen: list[Request] = []

    def keep(request: Request) -> Generator[Request, Response, Response]:
        seen.append(request)
        return (yield request)

    make(keep).create_pet(name="Rex", category_id=3, idempotency_key="key-1")
    (request,) = seen

    assert request.content == b'{"name":"Rex","categoryId":3}'
    assert request.headers["Idempotency-Key"] == "key-1"
    assert KEY not in repr(request) + repr(dict(request.headers)) + repr(pickle.dumps(request))
    assert repr(request) == f"<Request POST {IN_PROCESS_BASE_URL}/pets (attempt 0)>"
    with pytest.raises(AttributeError, match="immutable"):
        request.method = "GET"
    with pytest.raises(TypeError):
        request.headers["x"] = "y"  # type: ignore[index]
    for name, hint in [
        ("authorization", "pass api_key="),
        ("Idempotency-Key", "pass idempotency_key= to create_pet"),
        ("Content-Length", "it is computed from the request body"),
    ]:
        with pytest.raises(ValueError, match=f"headers must not set '{name}': {hint}"):
            request.with_headers({name: "x"})
    with pytest.raises(ValueError, match="must be ASCII without CR, LF or NUL"):
        request.with_headers({"X-A": "a\r\nb"})
    with pytest.raises(TypeError, match="headers must be a mapping"):
        request.with_headers([("X-A", "b")])  # type: ignore[arg-type]

    changed = request.with_headers({"ACCEPT": "text/plain", "X-New": "1"})
    assert changed.headers["accept"] == "text/plain"
    assert [name for name in changed.headers if name.lower() == "accept"] == ["ACCEPT"]
    assert request.headers["accept"] == "application/json"  # the original is unchanged


def test_a_response_checks_what_it_is_made_of() -> None:
    made = Response(201, json={"a": [1, "é"]}, headers={"Content-Type": "application/x+json"})
    assert made.content == '{"a":[1,"é"]}'.encode()
    assert made.json() == {"a": [1, "é"]}
    assert dict(made.headers) == {"Content-Type": "application/x+json"}
    assert made.headers["content-type"] == "application/x+json"
    assert Response(204).content == b""
    assert Response(200, json=None).content == b"null"
    assert repr(Response(418)) == "<Response [418]>"
    assert pickle.loads(pickle.dumps(made)).json() == made.json()
    with pytest.raises(AttributeError, match="immutable"):
        made.status_code = 200
    with pytest.raises(ValueError, match="from 100 to 599, got 600"):
        Response(600)
    with pytest.raises(ValueError, match="from 100 to 599, got 99"):
        Response(99)
    with pytest.raises(TypeError, match="status_code must be an int, got bool"):
        Response(True)
    with pytest.raises(ValueError, match="pass content= or json=, not both"):
        Response(200, content=b"x", json={})
    with pytest.raises(TypeError, match="content must be bytes, got str"):
        Response(200, content="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Out of range float values"):
        Response(200, json=float("nan"))
    with pytest.raises(ValueError, match="must not hold CR, LF or NUL"):
        Response(200, headers={"X-A": "a\nb"})
    with pytest.raises(TypeError, match="headers must map str to str, got str to int"):
        Response(200, headers={"X-A": 1})  # type: ignore[dict-item]


def test_a_client_without_middleware_builds_no_chain(
    monkeypatch: pytest.MonkeyPatch, store: FakeAnimalStore
) -> None:
    from animalstore_client._core import call

    def refuse(*args: object) -> None:
        raise AssertionError("a chain was built")

    monkeypatch.setattr(call, "sync_chain", refuse)
    with store.client(KEY) as client:
        assert client.list_pets() == []


def _key() -> str:
    return KEY


def test_a_pickled_client_keeps_its_middleware() -> None:
    client = Client(api_key=_key, middleware=[_sync_handler])
    copied = pickle.loads(pickle.dumps(client))
    assert copied._options.middleware == (_sync_handler,)
    async_copy = pickle.loads(pickle.dumps(AsyncClient(api_key=_key, middleware=[_async_handler])))
    assert async_copy._options.middleware == (_async_handler,)


def test_a_handler_passing_the_answer_on_hands_out_the_backends_own_response(
    make: Callable[..., Api],
) -> None:
    def passing(request: Request) -> Generator[Request, Response, Response]:
        return (yield request)

    api = make(passing)
    plain = copy(api, middleware=None).with_raw_response.list_pets().http_response
    passed = api.with_raw_response.list_pets().http_response

    # The library's own response: the request httpx sent (its client's headers too), and no
    # extensions of the SDK's making, as without middleware.
    assert passed.request.headers == plain.request.headers
    assert passed.request.headers["connection"] == "keep-alive"
    assert passed.extensions == plain.extensions == {}


def test_a_cached_answer_from_another_call_answers_this_one_under_its_cap(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    store.add_pet("Rex", 3, "available")
    kept: list[Response] = []

    def caching(request: Request) -> Generator[Request, Response, Response]:
        if not kept:
            kept.append((yield request))
        return kept[0]

    api = make(caching)
    api.list_pets(limit=1)
    raw = api.with_raw_response.list_pets(limit=2)

    assert raw.parse() == [Pet(id=1, name="Rex", category_id=3, status="available")]
    assert str(raw.http_response.request.url) == f"{IN_PROCESS_BASE_URL}/pets?limit=2"
    assert len(store.requests) == 1
    size = len(kept[0].content)
    assert copy(api, max_response_bytes=size).list_pets() == raw.parse()
    with pytest.raises(ResponseTooLargeError, match=f"max_response_bytes={size - 1};"):
        copy(api, max_response_bytes=size - 1).list_pets()
    assert len(store.requests) == 1


def test_a_made_up_answer_reads_as_a_received_one(make: Callable[..., Api]) -> None:
    def made(request: Request) -> Response:
        return Response(200, content=b"[]", headers={"X-Name": "café"})

    def empty_404(request: Request) -> Response:
        return Response(404)

    raw = make(made).with_raw_response.list_pets()
    assert raw.headers["x-name"] == "café"
    assert raw.http_response.headers.raw == [
        (b"X-Name", "café".encode("latin-1")),
        (b"Content-Length", b"2"),
    ]
    assert (raw.http_response.http_version, raw.http_response.reason_phrase) == ("HTTP/1.1", "OK")
    with pytest.raises(NotFoundError) as missing:
        make(empty_404).list_pets()
    assert missing.value.message == "(empty body)"


@pytest.mark.parametrize(
    ("headers", "warned"),
    [
        ({"Deprecation": "true"}, "GET /pets is deprecated"),
        ({"SUNSET": "Sat, 01 Jan 2028 00:00:00 GMT"}, "GET /pets will be removed"),
        ({"X-Request-Id": "req-local"}, None),
    ],
)
def test_a_made_up_answers_deprecation_signals_warn_as_a_received_ones(
    make: Callable[..., Api], headers: dict[str, str], warned: str | None
) -> None:
    def made(request: Request) -> Response:
        return Response(200, content=b"[]", headers=headers)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert make(made).list_pets() == []
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    if warned is None:
        assert messages == []
    else:
        (message,) = messages
        assert message.startswith(warned)


def test_a_made_up_body_past_the_cap_is_too_large_even_once_the_deadline_passed(
    make: Callable[..., Api], clock: VirtualClock
) -> None:
    def late(request: Request) -> Response:
        clock.advance(30)
        return Response(200, content=b"[ ]")

    with pytest.raises(ResponseTooLargeError) as raised:
        make(late, max_response_bytes=2, deadline=10).list_pets()
    assert type(raised.value) is ResponseTooLargeError


def test_a_connection_error_let_through_reaches_the_outer_handler_without_a_note(
    make: Callable[..., Api], store: FakeAnimalStore, clock: VirtualClock
) -> None:
    store.inject(Fault.drop(processed=False))
    notes: list[object] = []

    def outer(request: Request) -> Generator[Request, Response, Response]:
        try:
            return (yield request)
        except APIConnectionError as exc:
            notes.append(getattr(exc, "__notes__", None))
            raise

    def inner(request: Request) -> Generator[Request, Response, Response]:
        return (yield request)

    assert make(outer, inner, max_retries=1).list_pets() == []
    assert notes == [None]
    assert len(clock.slept) == 1


def test_an_earlier_attempts_error_raised_again_is_the_callers(
    make: Callable[..., Api], store: FakeAnimalStore, clock: VirtualClock
) -> None:
    store.inject(Fault.drop(processed=False))
    kept: list[APIConnectionError] = []

    def replaying(request: Request) -> Generator[Request, Response, Response]:
        if kept:
            raise kept[0]
        try:
            return (yield request)
        except APIConnectionError as exc:
            kept.append(exc)
            raise

    with pytest.raises(APIConnectionError) as raised:
        make(replaying, max_retries=3).list_pets()

    assert raised.value is kept[0]
    assert getattr(raised.value, "__notes__", None) == [
        "raised by middleware handler 'replaying' during GET /pets (attempt 2)"
    ]
    assert len(clock.slept) == 1  # one retry, then the handler's own error ends the call


def test_a_note_is_added_after_the_exceptions_own_notes(make: Callable[..., Api]) -> None:
    def annotated(request: Request) -> Response:
        error = BreakerOpen("open")
        error.__notes__ = ["the breaker's own note"]  # type: ignore[attr-defined]
        raise error

    with pytest.raises(BreakerOpen) as raised:
        make(annotated).list_pets()
    assert getattr(raised.value, "__notes__", None) == [
        "the breaker's own note",
        "raised by middleware handler 'annotated' during GET /pets (attempt 1)",
    ]


def test_a_handler_returning_a_dict_is_named_with_what_it_returned(
    make: Callable[..., Api],
) -> None:
    def dicts(request: Request) -> dict[str, int]:
        return {"status": 200}

    with pytest.raises(TypeError) as raised:
        make(dicts).list_pets()
    assert str(raised.value) == "middleware handler 'dicts' returned dict, not a Response"


def test_a_with_headers_copy_is_the_same_request_with_the_key_masked_and_sent(
    make: Callable[..., Api], store: FakeAnimalStore
) -> None:
    seen: list[Request] = []

    def outer(request: Request) -> Generator[Request, Response, Response]:
        seen.append(request)
        return (yield request.with_headers({"ACCEPT": "application/json; q=1", "X-Tag": "t"}))

    def inner(request: Request) -> Generator[Request, Response, Response]:
        seen.append(request)
        return (yield request)

    make(outer, inner).create_pet(name="Rex", category_id=3, idempotency_key="key-1")

    given, copied = seen
    fields = ("method", "url", "content", "operation", "attempt")
    assert [getattr(copied, f) for f in fields] == [getattr(given, f) for f in fields]
    assert copied.headers["Authorization"] == "Bearer [redacted]"
    assert [n for n in copied.headers if n.lower() == "accept"] == ["ACCEPT"]
    (sent,) = store.requests
    assert sent.headers == {
        **SENT,
        "accept": "application/json; q=1",
        "content-type": "application/json",
        "content-length": "29",
        "idempotency-key": "key-1",
        "x-tag": "t",
    }


def test_response_headers_are_looked_up_in_any_case_and_only_by_str() -> None:
    headers = Response(200, headers={"Content-Type": "text/plain", "X-A": "1"}).headers

    assert "CONTENT-TYPE" in headers
    assert "x-a" in headers
    assert "X-B" not in headers
    assert 1 not in headers  # type: ignore[comparison-overlap]
    assert headers.get(1) is None  # type: ignore[call-overload]
    with pytest.raises(KeyError) as raised:
        headers[1]  # type: ignore[index]
    assert raised.value.args == (1,)
    assert repr(headers) == "Headers({'Content-Type': 'text/plain', 'X-A': '1'})"
    replaced = Response(200, headers={"x-a": "1", "X-B": "2", "X-A": "3"}).headers
    assert list(replaced.items()) == [("X-A", "3"), ("X-B", "2")]


def test_a_response_takes_any_status_from_100_to_599_and_bytes_like_content() -> None:
    assert [Response(status).status_code for status in (100, 599)] == [100, 599]
    bytes_like: list[Any] = [bytearray(b"ab"), memoryview(b"ab")]
    assert [type(Response(200, content=c).content) for c in bytes_like] == [bytes, bytes]
    assert [Response(200, content=c).content for c in bytes_like] == [b"ab", b"ab"]
    assert list(Response(200, json=[]).headers.items()) == [("content-type", "application/json")]
    with pytest.raises(ValueError, match="not both") as raised:
        Response(200, content=b"x", json={})
    assert str(raised.value) == "pass content= or json=, not both"
    with pytest.raises(AttributeError) as deleted:
        del Response(200).status_code
    assert str(deleted.value) == "Response objects are immutable"

    made = Response(404, headers={"X-A": "é"}, content=b"gone")
    copied = pickle.loads(pickle.dumps(made))
    assert (copied.status_code, dict(copied.headers)) == (404, {"X-A": "é"})
    assert copied.content == b"gone"


@pytest.mark.parametrize(
    ("headers", "error", "message"),
    [
        ([("X-A", "1")], TypeError, "headers must be a mapping, got list"),
        ({"X-A": "€"}, ValueError, "header 'X-A' must be Latin-1"),
        ({"X-€": "1"}, ValueError, "header 'X-€' must be Latin-1"),
        ({"X-A": "a\0b"}, ValueError, "header 'X-A' must not hold CR, LF or NUL"),
        ({"X-A\r": "1"}, ValueError, "header 'X-A\\r' must not hold CR, LF or NUL"),
        ({1: "1"}, TypeError, "headers must map str to str, got int to str"),
    ],
)
def test_a_response_refuses_headers_it_could_not_send(
    headers: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        Response(200, headers=headers)
    assert str(raised.value) == message


def test_an_answer_retold_to_another_request_keeps_all_it_received() -> None:
    from animalstore_client._core.wire import RequestView
    from tests.conftest import httpx_answer

    first = httpx_answer(
        httpx.Response(203, json=[], headers={"Deprecation": "true", "X-Request-Id": "req_9"})
    )
    other = RequestView("GET", "https://api.test/v1/pets?limit=2", [], {})

    retold = first.answering(lambda: other)

    assert retold is not first
    assert (retold.status_code, retold.content, retold.signals) == (203, b"[]", True)
    assert retold.headers["x-request-id"] == "req_9"
    assert retold.http_response().headers.raw == first.http_response().headers.raw
    assert str(retold.http_response().request.url) == "https://api.test/v1/pets?limit=2"
