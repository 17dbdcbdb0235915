"""What users plug into their HTTP library sees every call the SDK makes, over real sockets:
httpx's event hooks, a class-level patch of ``send`` (what tracing integrations such as
Sentry's install) and OpenTelemetry's ``HTTPXClientInstrumentor.instrument_client``; aiohttp's
``TraceConfig`` and OpenTelemetry's aiohttp-client instrumentation (which is one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from animalstore_client import AsyncClient, Client, DefaultAioHttpClient
from tests.reliability.conftest import API_KEY, PET
from tests.reliability.faultserver import FaultServer, Reply

CALLS = 3


def three_calls() -> list[Reply]:
    return [Reply(200, json=[PET]), Reply(201, json=PET), Reply(200, json=[PET])]


def make_three_calls(client: Client) -> None:
    """The calls ``three_calls()`` answers: list, create, list."""
    client.list_pets()
    client.create_pet(name="Rex", category_id=3)
    client.list_pets()


async def make_three_calls_async(client: AsyncClient) -> None:
    """``make_three_calls`` on an ``AsyncClient``."""
    await client.list_pets()
    await client.create_pet(name="Rex", category_id=3)
    await client.list_pets()


def three_calls_through(server: FaultServer, make_http: Callable[[], Any]) -> None:
    """``make_three_calls`` to ``server`` with an ``AsyncClient`` on ``make_http()`` (made on
    the calls' loop); both closed after."""

    async def main() -> None:
        http = make_http()
        async with (
            http,
            AsyncClient(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
        ):
            await make_three_calls_async(client)

    asyncio.run(main())


def check_traced(exporter: Any, server: FaultServer) -> None:
    """Check that a span ended for each of the three calls, and that the trace context went out
    with every request."""
    spans = exporter.get_finished_spans()
    assert [span.name for span in spans] == ["GET", "POST", "GET"]
    assert all(request.header("traceparent") for request in server.requests)
    assert len(server.requests) == CALLS


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("pool", ["own", "passed-in"])
def test_a_class_level_patch_of_send_sees_every_call(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch, kind: str, pool: str
) -> None:
    server.script(*three_calls())
    seen: list[str] = []
    if kind == "sync":
        original = httpx.Client.send

        def patched(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            seen.append(f"{request.method} {request.url.path}")
            return original(self, request, **kwargs)

        monkeypatch.setattr(httpx.Client, "send", patched)
        http = httpx.Client() if pool == "passed-in" else None
        with Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client:
            make_three_calls(client)
        if http is not None:
            http.close()
    else:
        async_original = httpx.AsyncClient.send

        async def async_patched(
            self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any
        ) -> httpx.Response:
            seen.append(f"{request.method} {request.url.path}")
            return await async_original(self, request, **kwargs)

        monkeypatch.setattr(httpx.AsyncClient, "send", async_patched)

        async def main() -> None:
            http = httpx.AsyncClient() if pool == "passed-in" else None
            async with AsyncClient(
                api_key=API_KEY, base_url=server.base_url, http_client=http
            ) as client:
                await make_three_calls_async(client)
            if http is not None:
                await http.aclose()

        asyncio.run(main())

    assert seen == ["GET /v1/pets", "POST /v1/pets", "GET /v1/pets"]
    assert len(server.requests) == CALLS


def test_event_hooks_of_a_users_httpx_client_see_every_call_and_answer(
    server: FaultServer,
) -> None:
    server.script(*three_calls())
    requests: list[str] = []
    statuses: list[int] = []
    http = httpx.Client(
        event_hooks={
            "request": [lambda request: requests.append(request.headers["authorization"])],
            "response": [lambda response: statuses.append(response.status_code)],
        }
    )
    with http, Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client:
        make_three_calls(client)

    assert requests == [f"Bearer {API_KEY}"] * CALLS
    assert statuses == [200, 201, 200]


def test_aiohttps_tracing_sees_every_call_and_its_headers(server: FaultServer) -> None:
    import aiohttp

    server.script(*three_calls())
    started: list[tuple[str, str]] = []
    ended: list[int] = []

    async def on_start(_: Any, __: Any, params: aiohttp.TraceRequestStartParams) -> None:
        started.append((params.method, params.url.path))

    async def on_end(_: Any, __: Any, params: aiohttp.TraceRequestEndParams) -> None:
        ended.append(params.response.status)

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    trace.on_request_end.append(on_end)

    three_calls_through(server, lambda: DefaultAioHttpClient(trace_configs=[trace]))

    assert started == [("GET", "/v1/pets"), ("POST", "/v1/pets"), ("GET", "/v1/pets")]
    assert ended == [200, 201, 200]


def _tracer() -> tuple[Any, Any]:
    """An OpenTelemetry tracer provider that keeps its finished spans in memory."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_opentelemetry_instrument_client_traces_every_call_on_httpx(
    server: FaultServer, kind: str
) -> None:
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    from animalstore_client import DefaultAsyncHttpxClient, DefaultHttpxClient

    server.script(*three_calls())
    provider, exporter = _tracer()
    if kind == "sync":
        http = DefaultHttpxClient()
        HTTPXClientInstrumentor.instrument_client(http, tracer_provider=provider)
        with http, Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client:
            make_three_calls(client)
    else:

        def instrumented() -> DefaultAsyncHttpxClient:
            http = DefaultAsyncHttpxClient()
            HTTPXClientInstrumentor.instrument_client(http, tracer_provider=provider)
            return http

        three_calls_through(server, instrumented)

    check_traced(exporter, server)


def test_opentelemetry_aiohttp_instrumentation_traces_every_call(server: FaultServer) -> None:
    from opentelemetry.instrumentation.aiohttp_client import create_trace_config

    server.script(*three_calls())
    provider, exporter = _tracer()

    three_calls_through(
        server,
        lambda: DefaultAioHttpClient(trace_configs=[create_trace_config(tracer_provider=provider)]),
    )

    check_traced(exporter, server)


def tracing_hooks(provider: Any) -> dict[str, list[Any]]:
    """The event hooks docs/backends.md shows for tracing calls on httpx2: a span per request."""
    tracer = provider.get_tracer("my-app")

    def start(request: Any) -> None:
        span = tracer.start_span(f"{request.method} {request.url.path}")
        request.extensions["span"] = span

    def end(response: Any) -> None:
        span = response.request.extensions["span"]
        span.set_attribute("http.response.status_code", response.status_code)
        span.end()

    return {"request": [start], "response": [end]}


def async_hooks(hooks: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The same hooks for an async client, which awaits them."""

    def wrap(hook: Any) -> Any:
        async def call(argument: Any) -> None:
            hook(argument)

        return call

    return {name: [wrap(hook) for hook in functions] for name, functions in hooks.items()}


@pytest.mark.parametrize("kind", ["httpx2-sync", "httpx2-async"])
def test_event_hooks_trace_every_call_on_httpx2(server: FaultServer, kind: str) -> None:
    # opentelemetry-instrumentation-httpx does not support httpx2 (its instrument_client makes
    # the calls fail): the hooks the docs show instead.
    pytest.importorskip("httpx2", reason="httpx2 is not installed (the SDK's httpx2 extra)")
    from animalstore_client import DefaultAsyncHttpx2Client, DefaultHttpx2Client

    server.script(*three_calls())
    provider, exporter = _tracer()
    hooks = tracing_hooks(provider)
    if kind == "httpx2-sync":
        with (
            DefaultHttpx2Client(event_hooks=hooks) as http,
            Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
        ):
            make_three_calls(client)
    else:
        three_calls_through(
            server, lambda: DefaultAsyncHttpx2Client(event_hooks=async_hooks(hooks))
        )

    spans = exporter.get_finished_spans()
    assert [span.name for span in spans] == ["GET /v1/pets", "POST /v1/pets", "GET /v1/pets"]
    assert [span.attributes["http.response.status_code"] for span in spans] == [200, 201, 200]
    assert len(server.requests) == CALLS


def test_a_sync_call_with_a_deadline_runs_in_the_callers_context(
    server: FaultServer, httpx_module: Any
) -> None:
    # The attempt runs in a worker thread: tracing (a span in a context variable) must follow.
    import contextvars

    trace_id: contextvars.ContextVar[str] = contextvars.ContextVar("trace_id", default="none")
    seen: list[str] = []
    hooks = {"request": [lambda request: seen.append(trace_id.get())]}
    server.script(Reply(200, json=[PET]), Reply(200, json=[PET]))
    with (
        httpx_module.Client(event_hooks=hooks) as http,
        Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
    ):
        trace_id.set("trace-7")
        client.list_pets(deadline=5.0)
        trace_id.set("trace-8")
        client.list_pets()
    assert seen == ["trace-7", "trace-8"]
