"""A tracer provider of a test's own, whose finished spans stay in memory (tracing tests)."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Spans:
    """A tracer provider of the test's own, and the spans it finished."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def finished(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def calls(self) -> list[ReadableSpan]:
        """The SDK's spans (its tracer's scope), in the order they ended."""
        return [
            span
            for span in self.finished()
            if span.instrumentation_scope is not None
            and span.instrumentation_scope.name == "animalstore_client"
        ]

    def names(self) -> list[str]:
        """The names of every span finished, in the order they ended."""
        return [span.name for span in self.finished()]

    def one(self) -> ReadableSpan:
        """The only span the SDK made (the test fails if it made another)."""
        calls = self.calls()
        assert len(calls) == 1, [span.name for span in calls]
        return calls[0]
