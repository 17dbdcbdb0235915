"""``tracing=``: one OpenTelemetry span per API call on every backend, over real sockets.

Each test has a ``TracerProvider`` of its own, handed over as ``tracing=provider``, whose
finished spans stay in memory: nothing process-wide changes. The SDK's waits run on the
``clock`` fixture where a test retries or pauses.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
import trio
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from animalstore_client import (
    APIConnectionError,
    APIResponse,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AsyncClient,
    Client,
    DefaultAioHttpClient,
    DefaultAsyncHttpxClient,
    DefaultHttpxClient,
    InternalServerError,
    NotFoundError,
    RateLimitError,
    ResponseTooLargeError,
    RetryPolicy,
)
from animalstore_client._backends.httpx import AsyncHttpxSender
from animalstore_client.testing import FakeAnimalStore, Fault
from tests.conftest import VirtualClock
from tests.reliability.conftest import API_KEY, Api, raised_exactly
from tests.spans import Spans

#: Each operation, the arguments it is called with, and what it sends: method, route, path.
CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any], str, str, str]] = {
    "list_pets": (
        (),
        {"limit": 5, "status": "available"},
        "GET",
        "/pets",
        "pets?limit=5&status=available",
    ),
    "create_pet": ((), {"name": "Rex", "category_id": 3}, "POST", "/pets", "pets"),
    "get_pet": ((1,), {}, "GET", "/pets/{petId}", "pets/1"),
}


@pytest.fixture
def spans() -> Iterator[Spans]:
    made = Spans()
    yield made
    made.provider.shutdown()


@pytest.fixture
def store() -> FakeAnimalStore:
    return FakeAnimalStore(api_keys=[API_KEY])


@pytest.fixture
def url(store: FakeAnimalStore) -> Iterator[str]:
    with store.serve() as base_url:
        yield base_url


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    """The span's events, each with its attributes, ``animalstore.elapsed_ms`` left out
    (checked to be a time)."""
    found = []
    for event in span.events:
        attributes = dict(event.attributes or {})
        elapsed = attributes.pop("animalstore.elapsed_ms", None)
        if event.name == "attempt":
            assert isinstance(elapsed, float), elapsed
            assert 0 <= elapsed < 60_000, elapsed
        found.append((event.name, attributes))
    return found


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def port_of(url: str) -> int:
    port = httpx.URL(url).port
    assert port is not None
    return port


@pytest.mark.parametrize("raw", [False, True], ids=["parsed", "raw"])
@pytest.mark.parametrize("operation", list(CALLS))
def test_every_call_is_one_client_span_with_its_attributes(
    make_client: Any,
    store: FakeAnimalStore,
    url: str,
    spans: Spans,
    operation: str,
    raw: bool,
) -> None:
    store.add_pet("Rex", 3, "available")
    client: Api = make_client(url, tracing=spans.provider)
    args, kwargs, method, route, path = CALLS[operation]

    result = (client.raw if raw else client).call(operation, *args, **kwargs)

    assert isinstance(result, APIResponse) is raw
    span = spans.one()
    assert span.name == operation
    assert span.kind is SpanKind.CLIENT
    assert span.status.status_code is StatusCode.UNSET
    status = 201 if operation == "create_pet" else 200
    assert attributes(span) == {
        "http.request.method": method,
        "url.template": route,
        "server.address": "127.0.0.1",
        "server.port": port_of(url),
        "url.full": f"{url}/{path}",
        "animalstore.operation": operation,
        "animalstore.retry.max_retries": 2,
        "http.response.status_code": status,
        "animalstore.request_id": "req_1",
        "http.request.resend_count": 0,
    }
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "http.response.status_code": status})
    ]
    assert len(store.requests) == 1


def test_a_status_error_sets_error_type_to_the_status(
    make_client: Any, url: str, spans: Spans
) -> None:
    client: Api = make_client(url, tracing=spans.provider)

    error = raised_exactly(NotFoundError, lambda: client.get_pet(404))

    span = spans.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == str(error)
    assert attributes(span)["error.type"] == "404"
    assert attributes(span)["http.response.status_code"] == 404
    assert attributes(span)["http.request.resend_count"] == 0
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "http.response.status_code": 404})
    ]


def test_retries_are_events_of_the_one_span(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    store.inject(
        Fault.error(503, retry_after=2, operation="list"),
        Fault.drop(processed=False, operation="list"),
    )
    client: Api = make_client(url, tracing=spans.provider)

    assert client.list_pets() == []

    span = spans.one()
    found = events(span)
    assert [name for name, _ in found] == ["attempt", "retry", "attempt", "retry", "attempt"]
    assert found[0][1] == {"http.request.resend_count": 0, "http.response.status_code": 503}
    assert found[1][1] == {"http.request.resend_count": 1, "animalstore.retry.delay": 2.0}
    dropped = found[2][1]
    assert dropped["http.request.resend_count"] == 1
    assert dropped["error.type"].isidentifier()  # the HTTP library's error class
    assert found[3][1]["http.request.resend_count"] == 2
    assert found[4][1] == {"http.request.resend_count": 2, "http.response.status_code": 200}
    assert [retry["animalstore.retry.delay"] for name, retry in found if name == "retry"] == (
        clock.slept
    )
    assert attributes(span)["http.request.resend_count"] == 2
    assert attributes(span)["http.response.status_code"] == 200
    assert attributes(span)["animalstore.request_id"] == "req_2"  # the drop had no answer
    assert "error.type" not in attributes(span)
    assert span.status.status_code is StatusCode.UNSET
    assert len(store.requests) == 3


def test_a_call_held_by_the_familys_pause_shows_it_as_an_event(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    store.inject(Fault.error(429, retry_after=3, operation="list"))
    client: Api = make_client(url, tracing=spans.provider)
    raised_exactly(RateLimitError, lambda: client.with_options(max_retries=0).list_pets())

    client.create_pet(name="Rex", category_id=3)

    limited, paused = spans.calls()
    assert attributes(limited)["error.type"] == "429"
    assert [name for name, _ in events(limited)] == ["attempt"]
    (_, pause), _ = events(paused)
    assert [name for name, _ in events(paused)] == ["pause", "attempt"]
    assert pause == {"animalstore.pause.seconds": clock.slept[0]}  # what was left of it
    assert len(clock.slept) == 1
    assert 2.5 < clock.slept[0] <= 3.0


def test_a_pause_past_the_deadline_is_a_timeout_with_a_deadline_event(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    store.inject(Fault.error(503, retry_after=30, operation="list"))
    client: Api = make_client(url, tracing=spans.provider, deadline=5.0)
    # The retry the service asks for would outlast the deadline: the 503 stands.
    raised_exactly(InternalServerError, lambda: client.list_pets())

    error = raised_exactly(APITimeoutError, lambda: client.list_pets())

    first, second = spans.calls()
    assert attributes(first)["error.type"] == "503"
    assert attributes(first)["animalstore.deadline"] == 5.0
    assert attributes(second)["error.type"] == "APITimeoutError"
    assert second.status.description == str(error)
    assert events(second) == [("deadline", {"animalstore.deadline": 5.0})]  # no attempt
    assert attributes(second)["http.request.resend_count"] == 0
    assert "http.response.status_code" not in attributes(second)
    assert len(store.requests) == 1
    assert clock.slept == []


def test_a_deadline_that_cuts_an_attempt_off_is_a_timeout(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans
) -> None:
    store.inject(Fault.delay(5.0, operation="list"))
    client: Api = make_client(url, tracing=spans.provider)

    error = raised_exactly(APITimeoutError, lambda: client.list_pets(deadline=0.2))

    span = spans.one()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == str(error)
    assert attributes(span)["error.type"] == "APITimeoutError"
    assert attributes(span)["animalstore.deadline"] == 0.2
    assert events(span) == [
        ("deadline", {"animalstore.deadline": 0.2}),
        ("attempt", {"http.request.resend_count": 0, "error.type": "APITimeoutError"}),
    ]


def test_a_lost_create_is_a_connection_error_never_retried(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans
) -> None:
    store.inject(Fault.drop(processed=True, operation="create"))
    client: Api = make_client(url, tracing=spans.provider)

    error = raised_exactly(APIConnectionError, lambda: client.create_pet(name="Rex", category_id=3))

    span = spans.one()
    assert attributes(span)["error.type"] == "APIConnectionError"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == str(error)
    assert "may have" in str(error)  # the SDK says the animal may have been created
    assert attributes(span)["http.request.resend_count"] == 0
    assert "http.response.status_code" not in attributes(span)
    [(name, attempt)] = events(span)
    assert name == "attempt"
    assert attempt["http.request.resend_count"] == 0
    assert attempt["error.type"].isidentifier()
    assert len(store.pets) == 1
    assert len(store.requests) == 1


def test_an_answer_that_does_not_fit_the_schema_fails_the_span_after_its_attempt(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans
) -> None:
    store.inject(Fault.malformed("wrong_schema", operation="list"))
    client: Api = make_client(url, tracing=spans.provider)

    error = raised_exactly(APIResponseValidationError, lambda: client.list_pets())

    span = spans.one()
    assert attributes(span)["error.type"] == "APIResponseValidationError"
    assert attributes(span)["http.response.status_code"] == 200
    assert span.status.description == str(error)
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "http.response.status_code": 200})
    ]


def test_an_answer_past_max_response_bytes_is_its_attempts_error(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans
) -> None:
    store.add_pet("Rex", 3, "available")
    client: Api = make_client(url, tracing=spans.provider, max_response_bytes=16)

    error = raised_exactly(ResponseTooLargeError, lambda: client.list_pets())

    span = spans.one()
    assert attributes(span)["error.type"] == "ResponseTooLargeError"
    assert span.status.description == str(error)
    assert "http.response.status_code" not in attributes(span)  # the body was refused
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "error.type": "ResponseTooLargeError"})
    ]
    assert len(store.requests) == 1


def test_a_refused_content_coding_is_a_connection_error_of_the_sdks(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans
) -> None:
    # The SDK refuses the body itself, on every backend: no library error class to name.
    store.inject(Fault.error(503, headers={"Content-Encoding": "compress"}, operation="list"))
    client: Api = make_client(url, tracing=spans.provider)

    error = raised_exactly(APIConnectionError, lambda: client.list_pets())

    span = spans.one()
    assert "compress" in str(error)
    assert attributes(span)["error.type"] == "APIConnectionError"
    assert span.status.description == str(error)
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "error.type": "APIConnectionError"})
    ]
    assert len(store.requests) == 1  # refused bodies are not asked for again


SECRET_HEADER = "hdr-v4lue-SECRET-93a1"
SECRET_NAME = "BodyName-SECRET-5e2f"


def every_value(finished: list[ReadableSpan]) -> list[str]:
    """Every attribute and event attribute value, of every span, as text."""
    values: list[str] = []
    for span in finished:
        values += [span.name, str(span.status.description)]
        values += [str(value) for value in (span.attributes or {}).values()]
        for event in span.events:
            values += [event.name, *(str(value) for value in (event.attributes or {}).values())]
    return values


def test_no_span_holds_the_key_a_body_or_a_header_value(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    store.inject(
        Fault.error(503, operation="create"),
        Fault.drop(processed=False, operation="list"),
        Fault.error(500, operation="list", times=None),
    )
    client: Api = make_client(
        url, tracing=spans.provider, default_headers={"X-Team": SECRET_HEADER}
    )
    client.create_pet(name=SECRET_NAME, category_id=3, idempotency_key="idem-SECRET-77")
    raised_exactly(InternalServerError, lambda: client.list_pets())
    raised_exactly(NotFoundError, lambda: client.get_pet(404))

    assert len(spans.calls()) == 3
    shown = "\n".join(every_value(spans.finished()))
    for secret in (API_KEY, SECRET_HEADER, SECRET_NAME, "idem-SECRET-77", "application/json"):
        assert secret not in shown
    assert '"categoryId"' not in shown  # no body, the answer's nor the request's


def test_a_sync_call_interrupted_by_ctrl_c_ends_its_span(
    store: FakeAnimalStore, url: str, spans: Spans
) -> None:
    def interrupt(request: httpx.Request) -> None:
        raise KeyboardInterrupt

    with (
        httpx.Client(event_hooks={"request": [interrupt]}) as http,
        Client(api_key=API_KEY, base_url=url, http_client=http, tracing=spans.provider) as client,
        pytest.raises(KeyboardInterrupt),
    ):
        client.list_pets()

    span = spans.one()
    assert attributes(span)["error.type"] == "KeyboardInterrupt"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "KeyboardInterrupt"
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "error.type": "KeyboardInterrupt"})
    ]
    assert store.requests == []


def test_a_sync_call_interrupted_in_its_backoff_adds_no_attempt(
    store: FakeAnimalStore,
    url: str,
    spans: Spans,
    clock: VirtualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store.inject(Fault.error(503, operation="list"))

    def interrupt(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(clock, "sleep", interrupt)  # Ctrl-C during the wait before a retry
    with (
        Client(api_key=API_KEY, base_url=url, tracing=spans.provider) as client,
        pytest.raises(KeyboardInterrupt),
    ):
        client.list_pets()

    span = spans.one()
    found = events(span)
    # The attempt was recorded as it ended; the interrupt came between attempts.
    assert [name for name, _ in found] == ["attempt", "retry"]
    assert found[0][1] == {"http.request.resend_count": 0, "http.response.status_code": 503}
    assert attributes(span)["error.type"] == "KeyboardInterrupt"
    assert attributes(span)["http.response.status_code"] == 503
    assert attributes(span)["http.request.resend_count"] == 0  # the retry was never sent
    assert span.status.description == "KeyboardInterrupt"
    assert len(store.requests) == 1


def test_an_asyncio_call_cancelled_in_its_backoff_adds_no_attempt(
    store: FakeAnimalStore, url: str, spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.inject(Fault.error(503, operation="list"))

    async def main() -> None:
        waiting = asyncio.Event()

        async def hold(seconds: float) -> None:  # the backoff, until cancelled
            waiting.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(AsyncHttpxSender, "sleep", staticmethod(hold))
        async with AsyncClient(api_key=API_KEY, base_url=url, tracing=spans.provider) as client:
            task = asyncio.ensure_future(client.list_pets())
            await waiting.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())

    span = spans.one()
    found = events(span)
    assert [name for name, _ in found] == ["attempt", "retry"]
    assert found[0][1] == {"http.request.resend_count": 0, "http.response.status_code": 503}
    assert attributes(span)["error.type"] == "CancelledError"
    assert attributes(span)["http.request.resend_count"] == 0  # the retry was never sent
    assert len(store.requests) == 1


@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
def test_a_cancelled_asyncio_call_ends_its_span(
    store: FakeAnimalStore, url: str, spans: Spans, backend: str
) -> None:
    store.inject(Fault.delay(5.0, operation="list"))

    async def main() -> None:
        http = DefaultAioHttpClient() if backend == "aiohttp" else None
        async with AsyncClient(
            api_key=API_KEY, base_url=url, http_client=http, tracing=spans.provider
        ) as client:
            task = asyncio.ensure_future(client.list_pets())
            while not store.requests:
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        if http is not None:
            await http.close()

    asyncio.run(main())

    span = spans.one()
    assert attributes(span)["error.type"] == "CancelledError"
    assert span.status.status_code is StatusCode.ERROR
    assert events(span) == [
        ("attempt", {"http.request.resend_count": 0, "error.type": "CancelledError"})
    ]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_every_operation_under_anyio_then_a_cancelled_one(
    store: FakeAnimalStore, url: str, spans: Spans, backend: str
) -> None:
    store.add_pet("Rex", 3, "available")
    store.inject(Fault.delay(5.0, operation="list"))

    async def main() -> None:
        async with AsyncClient(api_key=API_KEY, base_url=url, tracing=spans.provider) as client:
            await client.create_pet(name="Rex", category_id=3)
            with pytest.warns(DeprecationWarning, match=r"^get_pet\(\) calls GET /pets/\{petId\}"):
                await client.get_pet(1)  # type: ignore[deprecated]
            with anyio.move_on_after(0.2):
                await client.list_pets()

    anyio.run(main, backend=backend)

    created, got, cancelled = spans.calls()
    assert [created.name, got.name, cancelled.name] == ["create_pet", "get_pet", "list_pets"]
    assert attributes(created)["http.response.status_code"] == 201
    assert attributes(got)["http.response.status_code"] == 200
    expected = "Cancelled" if backend == "trio" else "CancelledError"
    assert attributes(cancelled)["error.type"] == expected
    assert cancelled.status.status_code is StatusCode.ERROR
    assert [name for name, _ in events(cancelled)] == ["attempt"]
    assert len({span.context.trace_id for span in (created, got, cancelled)}) == 3


def test_trio_retries_on_the_virtual_clock(
    store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    store.inject(Fault.error(503, retry_after=1, operation="list"))

    async def main() -> None:
        async with AsyncClient(api_key=API_KEY, base_url=url, tracing=spans.provider) as client:
            await client.list_pets()

    trio.run(main)

    span = spans.one()
    assert [name for name, _ in events(span)] == ["attempt", "retry", "attempt"]
    assert attributes(span)["http.request.resend_count"] == 1
    assert clock.slept == [1.0]


# -- beside OpenTelemetry's own instrumentations of the HTTP libraries ------------------------


def check_nested(spans: Spans, attempts: int) -> None:
    """One call span of the SDK's, with each attempt's span of the instrumentation as its
    child, all in one trace."""
    call = spans.one()
    children = [span for span in spans.finished() if span is not call]
    assert len(children) == attempts
    assert call.context is not None
    for child in children:
        assert child.parent is not None
        assert child.parent.span_id == call.context.span_id
        assert child.context is not None
        assert child.context.trace_id == call.context.trace_id
        assert child.kind is SpanKind.CLIENT
    assert call.parent is None
    assert [name for name, _ in events(call)].count("attempt") == attempts


@pytest.mark.parametrize("deadline", [None, 5.0], ids=["no-deadline", "deadline"])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_httpx_instrumentations_attempt_spans_are_children_of_the_call_span(
    store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock, kind: str, deadline: Any
) -> None:
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    store.inject(Fault.error(503, operation="list"))
    if kind == "sync":
        http = DefaultHttpxClient()
        HTTPXClientInstrumentor().instrument_client(http, tracer_provider=spans.provider)
        with (
            http,
            Client(
                api_key=API_KEY, base_url=url, http_client=http, tracing=spans.provider
            ) as client,
        ):
            # With a deadline, each attempt runs in a worker thread: the span follows it.
            client.list_pets(deadline=deadline)
    else:

        async def main() -> None:
            async_http = DefaultAsyncHttpxClient()
            HTTPXClientInstrumentor().instrument_client(async_http, tracer_provider=spans.provider)
            async with (
                async_http,
                AsyncClient(
                    api_key=API_KEY, base_url=url, http_client=async_http, tracing=spans.provider
                ) as client,
            ):
                await client.list_pets(deadline=deadline)

        asyncio.run(main())

    check_nested(spans, attempts=2)
    assert len(store.requests) == 2


def test_aiohttp_instrumentations_attempt_spans_are_children_of_the_call_span(
    store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    from opentelemetry.instrumentation.aiohttp_client import create_trace_config

    store.inject(Fault.error(503, operation="list"))

    async def main() -> None:
        trace = create_trace_config(tracer_provider=spans.provider)
        async with (
            DefaultAioHttpClient(trace_configs=[trace]) as http,
            AsyncClient(
                api_key=API_KEY, base_url=url, http_client=http, tracing=spans.provider
            ) as client,
        ):
            await client.list_pets()

    asyncio.run(main())

    check_nested(spans, attempts=2)


def test_a_failed_call_ends_its_span_as_the_sdks_own_error(
    make_client: Any, store: FakeAnimalStore, url: str, spans: Spans, clock: VirtualClock
) -> None:
    store.inject(Fault.error(502, operation="list", times=None))
    client: Api = make_client(url, tracing=spans.provider, max_retries=1)

    error = raised_exactly(InternalServerError, lambda: client.list_pets())

    span = spans.one()
    assert isinstance(error, APIStatusError)
    assert attributes(span)["error.type"] == "502"
    assert attributes(span)["http.request.resend_count"] == 1
    assert [name for name, _ in events(span)] == ["attempt", "retry", "attempt"]
    assert span.status.description == str(error)
    assert not any(event.name == "exception" for event in span.events)
    assert math.isclose(
        sum(float(attempt.get("animalstore.retry.delay", 0)) for _, attempt in events(span)),
        sum(clock.slept),
    )


def test_the_span_shows_the_retry_policy_in_force(make_client: Any, url: str, spans: Spans) -> None:
    client: Api = make_client(url, tracing=spans.provider, max_retries=1)

    client.list_pets()
    client.list_pets(retry=RetryPolicy(max_retries=4))

    assert [attributes(span)["animalstore.retry.max_retries"] for span in spans.calls()] == [1, 4]
