"""One OpenTelemetry span per API call, when a client's ``tracing=`` turns it on.

Sans-IO: the clients start a ``Trace`` with the call (``traced_call``, the call class of a
client with tracing on) and tell it how the call failed; the ``Call`` tells it what happened
on the way (each attempt, retry, pause and passed deadline) and that it succeeded. The span is
made current from its start to its end, so that the spans OpenTelemetry's httpx and aiohttp
instrumentations make for each attempt are its children.

Attempts are span events, not child spans: those instrumentations already make a span per
attempt, and a second one of the SDK's would count each attempt twice.

Nothing here reads a header value, a body or the key: attributes come from the request's
method and URL (whose query holds only ``limit`` and ``status``), the answers' status codes,
their ``x-request-id`` (redacted as errors redact it) and the SDK's own (redacted) messages.
Exceptions are not recorded as events: their stack trace may quote a line of the user's source
that holds the key. OpenTelemetry is imported here only, and only once tracing is on.
"""

from __future__ import annotations

import functools
import time
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from animalstore_client._core.call import Call
from animalstore_client._core.config import ClientOptions
from animalstore_client._core.exceptions import APIError, APIStatusError
from animalstore_client._core.operations import Operation
from animalstore_client._core.retries import Pause
from animalstore_client._core.wire import Answer, SendFailure
from animalstore_client._version import __version__

if TYPE_CHECKING:
    from animalstore_client._core.deprecation import DeprecationNotices

__all__ = ["TRACER_NAME", "Trace", "error_type", "traced_call"]

#: The tracer's name: the instrumentation scope of every span the SDK makes.
TRACER_NAME = "animalstore_client"
_DEFAULT_PORTS = {"https": 443, "http": 80}
#: Each tracer provider's tracer for the SDK: an SDK provider makes a new tracer per request,
#: a quarter of the span's own cost. Held weakly: a provider dropped takes its tracer along.
_TRACERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def traced_call(
    operation: Operation[Any],
    options: ClientOptions,
    *,
    raw: bool,
    notices: DeprecationNotices | None,
    pause: Pause | None,
) -> Call[Any]:
    """Return a ``Call`` (same arguments) whose span has started and is current.

    The call class of a client with tracing on, in the place of ``Call`` itself; the client
    gives every argument (``_BaseClient._start``), so none has a default.
    """
    call: Call[Any] = Call(operation, options, raw=raw, notices=notices, pause=pause)
    call._trace = Trace(call, operation, options)
    return call


@functools.lru_cache(maxsize=64)
def _server(base_url: str) -> tuple[str, int]:
    """Return the host and port of ``base_url`` (its scheme's default port when none)."""
    parts = urlsplit(base_url)
    return parts.hostname or "", parts.port or _DEFAULT_PORTS.get(parts.scheme, 443)


def _tracer(tracing: object) -> Any:
    """Return the SDK's tracer from ``tracing``: ``True`` for the global provider, as it is now."""
    from opentelemetry import trace

    provider: Any = trace.get_tracer_provider() if tracing is True else tracing
    try:
        tracer = _TRACERS.get(provider)
    except TypeError:  # a provider that cannot be weakly referenced or hashed: asked each time
        return provider.get_tracer(TRACER_NAME, __version__)
    if tracer is None:
        tracer = _TRACERS[provider] = provider.get_tracer(TRACER_NAME, __version__)
    return tracer


def error_type(exc: BaseException) -> str:
    """Return the span's ``error.type`` for a call that raised ``exc``.

    The status code of a status error (``"404"``), else the exception's class
    (``"APITimeoutError"``, ``"CancelledError"``).
    """
    if isinstance(exc, APIStatusError):
        return str(exc.status_code)
    return type(exc).__qualname__


def _attempt_error(outcome: SendFailure) -> str:
    """Return an attempt's ``error.type``: the HTTP library's error class, when it gave one.

    Else (the deadline, a refused transfer coding) the SDK's exception class for it.
    """
    cause = outcome.cause
    if cause.isidentifier():
        return cause
    if outcome.failure.name == "TOO_LARGE":
        return "ResponseTooLargeError"
    return "APITimeoutError" if outcome.timeout else "APIConnectionError"


class Trace:
    """The span of one call, started and made current when made; ended by ``succeeded``/``failed``.

    Args:
        call: the call it traces (its request is built).
        operation: what the call sends.
        options: the client's options; ``options.tracing`` is ``True`` or the provider.
    """

    __slots__ = ("_attempts", "_ended", "_recorded", "_span", "_started", "_token")

    def __init__(self, call: Call[Any], operation: Operation[Any], options: ClientOptions) -> None:
        from opentelemetry import context, trace

        endpoint = operation.endpoint
        address, port = _server(options.base_url)
        attributes: dict[str, Any] = {
            "http.request.method": endpoint.method,
            "url.template": endpoint.route,
            "server.address": address,
            "server.port": port,
            "url.full": call.request.full_url,
            "animalstore.operation": endpoint.method_name,
            # The retry policy in force: the call's own, else its client's.
            "animalstore.retry.max_retries": call.policy.max_retries,
        }
        if call.deadline is not None:
            attributes["animalstore.deadline"] = call.deadline
        self._span = _tracer(options.tracing).start_span(
            endpoint.method_name, kind=trace.SpanKind.CLIENT, attributes=attributes
        )
        self._token = context.attach(trace.set_span_in_context(self._span))
        self._ended = False
        #: The last outcome recorded as an ``attempt`` event, and when its attempt began.
        self._recorded: Answer | SendFailure | None = None
        self._started = 0.0
        #: The attempts recorded: what ``http.request.resend_count`` counts, less the first.
        self._attempts = 0

    def paused(self, seconds: float) -> None:
        """Note that the client family's pause (a ``Retry-After``) holds the call ``seconds``."""
        self._span.add_event("pause", {"animalstore.pause.seconds": seconds})

    def deadline(self, call: Call[Any]) -> None:
        """Note that the call's deadline passed (or that a pause would outlast it).

        Only a call with a deadline (a positive number of seconds) gets here.
        """
        self._span.add_event("deadline", {"animalstore.deadline": call.deadline})

    def retrying(self, call: Call[Any], outcome: Answer | SendFailure, delay: float) -> None:
        """Note an attempt that is retried after ``delay`` seconds."""
        self._attempt(call, outcome)
        self._span.add_event(
            "retry",
            {"http.request.resend_count": call.retries + 1, "animalstore.retry.delay": delay},
        )

    def succeeded(self, call: Call[Any], answer: Answer) -> None:
        """Note the answer that ends the call, and end the span."""
        self._attempt(call, answer)
        self._end()

    def failed(self, call: Call[Any], exc: BaseException) -> None:
        """Note why the call raised ``exc`` (the SDK's error, a cancellation ...); end the span."""
        if self._ended:
            return
        last = call._last
        if last is not None and last is not self._recorded and call._started:
            self._attempt(call, last)
        elif call._started != self._started:
            # An attempt under way when the call was cancelled or interrupted.
            self._event(call, {"error.type": type(exc).__qualname__})
        from opentelemetry.trace import Status, StatusCode

        # The SDK's messages are its own, the key redacted; of anything else, the class alone.
        description = str(exc) if isinstance(exc, APIError) else type(exc).__qualname__
        self._span.set_status(Status(StatusCode.ERROR, description))
        self._end({"error.type": error_type(exc)})

    def _attempt(self, call: Call[Any], outcome: Answer | SendFailure) -> None:
        """Add the ``attempt`` event of ``outcome``; an answer's status and id go on the span."""
        self._recorded = outcome
        if isinstance(outcome, Answer):
            answered: dict[str, Any] = {"http.response.status_code": outcome.status_code}
            request_id = outcome.headers.get("x-request-id")
            if request_id is not None:
                answered["animalstore.request_id"] = call._scrub(request_id)
            self._span.set_attributes(answered)
            self._event(call, {"http.response.status_code": outcome.status_code})
        else:
            self._event(call, {"error.type": _attempt_error(outcome)})

    def _event(self, call: Call[Any], attributes: dict[str, Any]) -> None:
        self._started = call._started
        self._attempts += 1
        elapsed = (time.perf_counter() - call._started) * 1000
        self._span.add_event(
            "attempt",
            {
                "http.request.resend_count": call.retries,
                **attributes,
                "animalstore.elapsed_ms": elapsed,
            },
        )

    def _end(self, ending: dict[str, Any] | None = None) -> None:
        """Set the number of resends made (and ``ending``) on the span; detach it, end it.

        The resends are the attempts made less the first: a call stopped while it waited to
        retry counted a retry it never sent.
        """
        from opentelemetry import context

        self._ended = True
        resends = max(self._attempts - 1, 0)
        self._span.set_attributes({"http.request.resend_count": resends, **(ending or {})})
        # Detached first: a span processor that raises as the span ends (a Ctrl-C during a
        # synchronous export) must not leave the ended span current in the caller's context.
        context.detach(self._token)
        self._span.end()
