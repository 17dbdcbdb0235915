"""``tracing=`` and ``ANIMALSTORE_TRACING``: which provider a call's span goes to, if any;
the checks at construction; and nothing of OpenTelemetry imported while tracing is off. Then
what the span's machinery does in process: its tracer asked once per provider, each attempt's
time, a span processor that raises as the span ends, and a traced call's other duties.

In process, on the store's transport. The global tracer provider is never set here: where a
test needs it, ``opentelemetry.trace.get_tracer_provider`` is patched for the test alone, and
the one test that sets it runs in a child process.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace import StatusCode

from animalstore_client import APIResponse, AsyncClient, Client, InternalServerError, __version__
from animalstore_client._core import call as call_module
from animalstore_client._core import tracing as tracing_module
from animalstore_client.testing import IN_PROCESS_BASE_URL, FakeAnimalStore, Fault
from tests.conftest import VirtualClock, without_our_variables
from tests.spans import Spans

INSTALL = "pip install 'animalstore-client[tracing]'"


@pytest.fixture
def recorder() -> Iterator[Spans]:
    made = Spans()
    yield made
    made.provider.shutdown()


@pytest.fixture
def global_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spans]:
    """What ``get_tracer_provider()`` returns during the test (the real one is left alone)."""
    made = Spans()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: made.provider)
    yield made
    made.provider.shutdown()


@pytest.fixture
def store() -> FakeAnimalStore:
    return FakeAnimalStore()


@pytest.fixture
def list_with(store: FakeAnimalStore) -> Iterator[Callable[..., Client]]:
    """Make a ``Client`` on the store's transport with ``options``, after one ``list_pets``."""
    http = httpx.Client(transport=store.transport())

    def make(**options: Any) -> Client:
        client = Client(
            api_key="test-key", base_url=IN_PROCESS_BASE_URL, http_client=http, **options
        )
        client.list_pets()
        return client

    with http:
        yield make


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", " yes "])
def test_the_variable_turns_tracing_on_with_the_global_provider(
    list_with: Callable[..., Client],
    global_provider: Spans,
    monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    monkeypatch.setenv("ANIMALSTORE_TRACING", value)
    list_with()
    assert global_provider.names() == ["list_pets"]


@pytest.mark.parametrize("value", [None, "", "0", "false", "no", "on", "2"])
def test_tracing_is_off_unless_the_variable_says_so(
    list_with: Callable[..., Client],
    global_provider: Spans,
    monkeypatch: pytest.MonkeyPatch,
    value: str | None,
) -> None:
    if value is not None:
        monkeypatch.setenv("ANIMALSTORE_TRACING", value)
    list_with()
    assert global_provider.names() == []


def test_an_explicit_argument_wins_over_the_variable(
    list_with: Callable[..., Client],
    global_provider: Spans,
    recorder: Spans,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANIMALSTORE_TRACING", "1")
    list_with(tracing=False)
    list_with(tracing=recorder.provider)
    assert global_provider.names() == []
    assert recorder.names() == ["list_pets"]


def test_the_variable_is_read_when_the_client_is_built(
    list_with: Callable[..., Client], global_provider: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANIMALSTORE_TRACING", "1")
    client = list_with()
    monkeypatch.delenv("ANIMALSTORE_TRACING")
    client.list_pets()
    client.with_options(max_retries=1).list_pets()  # a copy keeps the client's tracing
    assert global_provider.names() == ["list_pets"] * 3


def test_true_uses_the_global_provider_as_it_is_at_each_call(
    list_with: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = Spans(), Spans()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: before.provider)
    client = list_with(tracing=True)
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: after.provider)
    client.list_pets()
    assert before.names() == after.names() == ["list_pets"]


def test_with_options_turns_tracing_on_or_off_for_the_copy_only(
    list_with: Callable[..., Client], recorder: Spans
) -> None:
    client = list_with()
    traced = client.with_options(tracing=recorder.provider)
    traced.list_pets()
    traced.with_options(max_retries=1).list_pets()
    traced.with_options(tracing=None).list_pets()  # None: the client's own
    traced.with_options(tracing=False).list_pets()
    client.list_pets()
    assert recorder.names() == ["list_pets"] * 3


def test_the_async_client_takes_the_same_argument(store: FakeAnimalStore, recorder: Spans) -> None:
    async def main() -> None:
        async with store.async_client() as client:
            await client.with_options(tracing=recorder.provider).create_pet(
                name="Rex", category_id=3
            )
            await client.list_pets()

    asyncio.run(main())
    assert recorder.names() == ["create_pet"]


@pytest.mark.parametrize(
    ("value", "got"),
    [
        ("yes", "str"),
        (1, "int"),
        (0, "int"),
        (object(), "object"),
        (TracerProvider, "the class TracerProvider (pass an instance)"),
    ],
)
@pytest.mark.parametrize("where", ["Client", "AsyncClient", "with_options"])
def test_anything_but_a_bool_none_or_a_provider_is_a_type_error(
    store: FakeAnimalStore, where: str, value: object, got: str
) -> None:
    build: Callable[[], object] = {
        "Client": lambda: Client(api_key="test-key", tracing=value),  # type: ignore[arg-type]
        "AsyncClient": lambda: AsyncClient(api_key="test-key", tracing=value),  # type: ignore[arg-type]
        "with_options": lambda: store.client().with_options(tracing=value),  # type: ignore[arg-type]
    }[where]
    with pytest.raises(TypeError) as caught:
        build()
    assert str(caught.value) == (
        f"tracing must be a bool, None or an OpenTelemetry TracerProvider, got {got}"
    )


@pytest.mark.parametrize("source", ["argument", "variable"])
def test_tracing_without_opentelemetry_fails_at_construction(
    monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)  # as if not installed
    if source == "variable":
        monkeypatch.setenv("ANIMALSTORE_TRACING", "yes")
    with pytest.raises(ImportError) as caught:
        Client(api_key="test-key", tracing=True if source == "argument" else None)
    assert (
        str(caught.value) == f"tracing needs OpenTelemetry's API, which is not installed: {INSTALL}"
    )
    # Off needs nothing of it.
    Client(api_key="test-key", tracing=False).close()


def test_a_provider_is_kept_as_given_and_true_as_true(recorder: Spans) -> None:
    # What pickling reads: it can send True, and must refuse a provider, which cannot pickle.
    client = Client(api_key="test-key", tracing=recorder.provider)
    assert client._options.tracing is recorder.provider
    assert client.with_options(tracing=True)._options.tracing is True
    assert client.with_options(tracing=False)._options.tracing is None


@pytest.mark.parametrize(
    ("base_url", "address", "port"),
    [
        ("http://animalstore.test/v1", "animalstore.test", 80),
        ("https://animalstore.test/v1", "animalstore.test", 443),
        ("https://[::1]:8443/v1/", "::1", 8443),
    ],
)
def test_the_server_is_read_off_the_base_url_with_its_schemes_default_port(
    store: FakeAnimalStore, recorder: Spans, base_url: str, address: str, port: int
) -> None:
    with (
        httpx.Client(transport=store.transport()) as http,
        Client(
            api_key="test-key", base_url=base_url, http_client=http, tracing=recorder.provider
        ) as client,
    ):
        client.list_pets(limit=3)
    [span] = recorder.exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["server.address"] == address
    assert span.attributes["server.port"] == port
    assert span.attributes["url.full"] == f"{base_url.rstrip('/')}/pets?limit=3"


def run_child(code: str, **variables: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=without_our_variables(**variables),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_off_imports_nothing_of_opentelemetry() -> None:
    code = """
        import sys
        from animalstore_client.testing import FakeAnimalStore

        store = FakeAnimalStore()
        with store.client() as client:
            client.create_pet(name="Rex", category_id=3)
            client.with_options(tracing=False).list_pets()
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
    """
    assert run_child(code) == "[]"


def test_the_variable_traces_with_the_global_provider_set_after_the_client() -> None:
    code = """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from animalstore_client import Client
        from animalstore_client.testing import FakeAnimalStore

        store = FakeAnimalStore()
        with store.client() as client, store.client().with_options(tracing=False) as untraced:
            client.list_pets()  # no provider yet: OpenTelemetry's no-op
            exporter = InMemorySpanExporter()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            trace.set_tracer_provider(provider)
            client.create_pet(name="Rex", category_id=3)
            untraced.list_pets()
        print([span.name for span in exporter.get_finished_spans()])
    """
    assert run_child(code, ANIMALSTORE_TRACING="true") == "['create_pet']"


# -- the span's machinery, in process ------------------------------------------------------


class AskedProvider:
    """A tracer provider that counts how often it is asked for a tracer (a plain object:
    weakly referenced and hashed by identity, as the SDK's ``TracerProvider`` is)."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.asked = 0

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        self.asked += 1
        return self.provider.get_tracer(*args, **kwargs)


class SlottedProvider:
    """A tracer provider that cannot be weakly referenced (``__slots__``, no ``__weakref__``)."""

    __slots__ = ("asked", "provider")

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.asked = 0

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        self.asked += 1
        return self.provider.get_tracer(*args, **kwargs)


class UnhashableProvider(AskedProvider):
    """A tracer provider that cannot be hashed: equal by value, so ``__hash__`` is ``None``."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnhashableProvider) and other.provider is self.provider

    __hash__ = None  # type: ignore[assignment]


def scopes(finished: list[ReadableSpan]) -> list[tuple[str, str | None]]:
    """Each span's instrumentation scope: its tracer's name and version."""
    found = []
    for span in finished:
        assert span.instrumentation_scope is not None
        found.append((span.instrumentation_scope.name, span.instrumentation_scope.version))
    return found


def test_each_provider_is_asked_for_the_sdks_tracer_once(
    store: FakeAnimalStore, recorder: Spans
) -> None:
    provider = AskedProvider(recorder.provider)
    with store.client() as client:
        traced = client.with_options(tracing=provider)
        traced.list_pets()
        traced.create_pet(name="Rex", category_id=3)
        traced.with_options(max_retries=1).list_pets()  # another client, the same provider

    assert provider.asked == 1
    assert recorder.names() == ["list_pets", "create_pet", "list_pets"]
    assert scopes(recorder.finished()) == [("animalstore_client", __version__)] * 3


@pytest.mark.parametrize("kind", [SlottedProvider, UnhashableProvider])
def test_a_provider_that_cannot_be_weakly_referenced_or_hashed_is_asked_each_call(
    store: FakeAnimalStore, recorder: Spans, kind: Callable[[TracerProvider], Any]
) -> None:
    provider = kind(recorder.provider)
    with store.client() as client:
        traced = client.with_options(tracing=provider)
        traced.list_pets()
        traced.list_pets()

    assert provider.asked == 2
    assert scopes(recorder.finished()) == [("animalstore_client", __version__)] * 2


class StoppedClock:
    """``time`` for the call and its trace, whose ``perf_counter`` moves only when told."""

    def __init__(self, clock: VirtualClock) -> None:
        self.now = 1000.0
        self._clock = clock

    def perf_counter(self) -> float:
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._clock, name)


class Taking(httpx.BaseTransport):
    """The store's transport, each request taking the next of ``seconds`` on ``clock``."""

    def __init__(self, store: FakeAnimalStore, clock: StoppedClock, seconds: list[float]) -> None:
        self._inner = store.transport()
        self._clock = clock
        self._seconds = seconds

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._clock.now += self._seconds.pop(0)
        return self._inner.handle_request(request)


def test_each_attempt_event_says_how_long_that_attempt_took_in_milliseconds(
    store: FakeAnimalStore, recorder: Spans, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = StoppedClock(clock)
    for module in (call_module, tracing_module):
        monkeypatch.setattr(module, "time", stopped)
    store.inject(Fault.error(503, operation="list"))
    with (
        httpx.Client(transport=Taking(store, stopped, [0.25, 0.5])) as http,
        Client(
            api_key="test-key",
            base_url=IN_PROCESS_BASE_URL,
            http_client=http,
            tracing=recorder.provider,
        ) as client,
    ):
        client.list_pets()

    [span] = recorder.exporter.get_finished_spans()
    attempts = [event.attributes for event in span.events if event.name == "attempt"]
    # From each attempt's start, not the call's: the backoff between them is not counted.
    assert [dict(attempt or {})["animalstore.elapsed_ms"] for attempt in attempts] == [250.0, 500.0]
    assert len(clock.slept) == 1


class InterruptedExport(SpanProcessor):
    """A span processor whose export is interrupted (Ctrl-C) as the span ends."""

    def on_end(self, span: ReadableSpan) -> None:
        raise KeyboardInterrupt


def test_a_span_processor_that_raises_at_the_end_leaves_no_span_current(
    store: FakeAnimalStore, recorder: Spans, caplog: pytest.LogCaptureFixture
) -> None:
    recorder.provider.add_span_processor(InterruptedExport())  # after the exporter's
    with (
        store.client() as client,
        caplog.at_level(logging.WARNING),
        pytest.raises(KeyboardInterrupt),
    ):
        client.with_options(tracing=recorder.provider).list_pets()

    # The span ended once (what the processor raised ends the call, not the span again), and
    # is no longer current: a later span is not its child.
    assert trace.get_current_span() is trace.INVALID_SPAN
    [span] = recorder.exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET
    assert [event.name for event in span.events] == ["attempt"]
    assert caplog.records == []  # no "ended span" warning, no failed detach
    assert len(store.requests) == 1


def test_a_traced_call_warns_of_the_services_deprecation_once(
    store: FakeAnimalStore, recorder: Spans
) -> None:
    store.set_deprecation("GET /pets", deprecation=datetime(2026, 1, 5, tzinfo=timezone.utc))
    with store.client() as client:
        traced = client.with_options(tracing=recorder.provider)
        with pytest.warns(DeprecationWarning, match=r"^GET /pets is deprecated by the service"):
            traced.list_pets()
        traced.list_pets()  # once for the client family: a second warning would fail the test
        client.with_options(tracing=False).list_pets()

    assert recorder.names() == ["list_pets"] * 2


def test_a_traced_raw_call_returns_the_raw_response(
    store: FakeAnimalStore, recorder: Spans
) -> None:
    store.inject(Fault.error(500, operation="list"))
    with store.client(max_retries=0) as client:
        traced = client.with_options(tracing=recorder.provider)
        response = traced.with_raw_response.create_pet(name="Rex", category_id=3)
        with pytest.raises(InternalServerError):
            traced.with_raw_response.list_pets()

    assert isinstance(response, APIResponse)
    assert response.status_code == 201
    assert response.parse().name == "Rex"
    assert recorder.names() == ["create_pet", "list_pets"]
