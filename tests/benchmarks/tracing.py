"""What ``tracing=`` costs a call: ``python -m tests.benchmarks.tracing [--quick]``.

Case 10's call (``list_pets(limit=1)``, one pet, in process: the SDK's own work is most of
it), sync and async, with tracing on against the same client with it off. On: an SDK
``TracerProvider`` whose one processor drops every span (the cost of making the span, its
attributes and events, not of exporting them), and the same with no processor at all. Off is
what every call pays (case 10 of ``python -m tests.benchmarks`` checks it against httpx). A
second baseline is the call with tracing off inside a span the caller makes by hand with the
same provider, attributes and event: OpenTelemetry's own cost, which the SDK's cannot go below.
The ratios are reported, not checked: tracing is opt-in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from tests.benchmarks._harness import Comparison, compare, compare_async
from tests.benchmarks.cases import BASE_URL, Settings, in_process_clients, report

#: The attributes the SDK's span starts with, for the span made by hand.
HAND_ATTRIBUTES: dict[str, Any] = {
    "http.request.method": "GET",
    "url.template": "/pets",
    "server.address": "bench.test",
    "server.port": 80,
    "url.full": f"{BASE_URL}/pets?limit=1",
    "animalstore.operation": "list_pets",
}


class Dropping(SpanProcessor):
    """A span processor that is told of every span and keeps none."""

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        """Do nothing with the span that starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Drop the span that ended."""


def providers() -> dict[str, TracerProvider]:
    """The tracer providers measured: one with a processor that drops spans, one with none."""
    dropping = TracerProvider()
    dropping.add_span_processor(Dropping())
    return {"dropping processor": dropping, "no processor": TracerProvider()}


@contextlib.contextmanager
def span_by_hand(tracer: Any) -> Iterator[None]:
    """A span made by hand as the SDK makes its own: its attributes and one event."""
    from opentelemetry.trace import SpanKind

    with tracer.start_as_current_span(
        "list_pets", kind=SpanKind.CLIENT, attributes=dict(HAND_ATTRIBUTES)
    ) as span:
        yield
        span.set_attributes(
            {
                "http.response.status_code": 200,
                "animalstore.request_id": "req_1",
                "http.request.resend_count": 0,
            }
        )
        span.add_event(
            "attempt",
            {
                "http.request.resend_count": 0,
                "http.response.status_code": 200,
                "animalstore.elapsed_ms": 0.1,
            },
        )


def tracing_cost(settings: Settings) -> list[Comparison]:
    """Time case 10's call with tracing on (each provider) against off, sync and async."""
    results: list[Comparison] = []
    with in_process_clients() as (off, off_async, loop):

        def hand_sync(tracer: Any) -> object:
            with span_by_hand(tracer):
                return off.list_pets(limit=1)

        async def hand_async(tracer: Any) -> object:
            with span_by_hand(tracer):
                return await off_async.list_pets(limit=1)

        for name, provider in providers().items():
            tracer = provider.get_tracer("by-hand")
            on, on_async = (
                off.with_options(tracing=provider),
                off_async.with_options(tracing=provider),
            )
            results += compare(
                f"tracing on, sync ({name})",
                lambda on=on: on.list_pets(limit=1),  # type: ignore[misc]
                {
                    "tracing off": (lambda: off.list_pets(limit=1), None),
                    "off + hand span": (
                        lambda tracer=tracer: hand_sync(tracer),  # type: ignore[misc]
                        None,
                    ),
                },
                rounds=settings.rounds,
                number=settings.calls * 2,
            )
            results += compare_async(
                f"tracing on, async ({name})",
                lambda on_async=on_async: on_async.list_pets(limit=1),  # type: ignore[misc]
                {
                    "tracing off": (lambda: off_async.list_pets(limit=1), None),
                    "off + hand span": (
                        lambda tracer=tracer: hand_async(tracer),  # type: ignore[misc]
                        None,
                    ),
                },
                rounds=settings.rounds,
                number=settings.calls * 2,
                loop=loop,
            )
    return results


if __name__ == "__main__":
    report("python -m tests.benchmarks.tracing", __doc__ or "", tracing_cost)
