"""One API call across all its attempts, as a state machine with no I/O.

The clients drive it: sleep what ``call.wait()`` asks until it asks for nothing (the client
family may be paused by the service's ``Retry-After``), hand ``call.begin()``'s plain
``Request`` to a backend (within ``call.remaining()`` seconds when the call has a
``deadline``), give what came back (an ``Answer``, a ``SendFailure``, or ``None`` if the
deadline cut the attempt off) to ``call.after()``, and either sleep the delay it returns and go
round again, or return ``call.result``. Everything else (the request itself, retry decisions,
the pause, the deadline, logging, the service's deprecation signals, parsing and error mapping)
happens here, once for every client and backend; the body's size cap and the deadline while
reading, in ``BodyReader``.
"""

from __future__ import annotations

import functools
import json
import logging
import time
import weakref
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, cast

from animalstore_client._core.config import ClientOptions
from animalstore_client._core.deprecation import DeprecationNotices
from animalstore_client._core.logging import logger
from animalstore_client._core.middleware import AsyncSend, Attempt, Send, async_chain, sync_chain
from animalstore_client._core.operations import Operation
from animalstore_client._core.response import (
    APIResponse,
    Scrub,
    connection_error,
    parse_body,
    status_error,
)
from animalstore_client._core.retries import Pause, retry_after, retry_delay
from animalstore_client._core.retry_policy import NOT_PROCESSED_STATUSES, RetryPolicy
from animalstore_client._core.types import NotGiven
from animalstore_client._core.wire import (
    Answer,
    Request,
    SendFailure,
    deadline_passed,
    redacted,
)

__all__ = ["DONE", "Call", "CallTrace", "Next"]

T = TypeVar("T")


class Next(NamedTuple):
    """What ``Call.after`` decided comes next: the call is over, or a wait and another attempt.

    Attributes:
        done: whether the call is over: ``result`` holds its value.
        delay: when not done, the seconds to wait before ``begin`` makes the next attempt (the
            backoff, or what ``Retry-After`` asked).
    """

    done: bool
    delay: float = 0.0


#: The call is over.
DONE = Next(done=True)


class CallTrace(Protocol):
    """What a call tells its trace (``_core.tracing.Trace``), when tracing is on.

    The client tells it the rest: ``failed`` when the call raises.
    """

    def paused(self, seconds: float) -> None:
        """Note that the client family's pause holds the call ``seconds`` before an attempt."""

    def deadline(self, call: Call[Any]) -> None:
        """Note that the call's deadline passed, or that the pause would outlast it."""

    def retrying(self, call: Call[Any], outcome: Answer | SendFailure, delay: float) -> None:
        """Note an attempt that ended in ``outcome``, retried after ``delay`` seconds."""

    def succeeded(self, call: Call[Any], answer: Answer) -> None:
        """Note that the call's ``result`` is ready, from ``answer``; the span ends."""

    def failed(self, call: Call[Any], exc: BaseException) -> None:
        """Note that the call raised ``exc``; the span ends."""


class Call(Generic[T]):
    """The state of one API call: its request, its retries so far, and its result.

    Args:
        operation: what to send, with the call's own headers and timeout, if any.
        options: the client's options.
        raw: make ``result`` the ``APIResponse`` instead of the parsed value.
        notices: where the client family records the operations it has warned about; ``None``
            never warns about the service's deprecation signals.
        pause: the client family's pause, which a ``Retry-After`` extends and every attempt
            waits out; ``None``: this call's own.
    """

    __slots__ = (
        "_ends",
        "_idempotent",
        "_key",
        "_last",
        "_notices",
        "_operation",
        "_options",
        "_pause",
        "_raw",
        "_started",
        "_trace",
        "deadline",
        "request",
        "result",
        "retries",
    )

    def __init__(
        self,
        operation: Operation[T],
        options: ClientOptions,
        *,
        raw: bool = False,
        notices: DeprecationNotices | None = None,
        pause: Pause | None = None,
    ) -> None:
        # Read once: each of the operation's own properties reads it again.
        endpoint = operation.endpoint
        self._idempotent = endpoint.idempotent
        key = options.api_key
        headers = options.headers
        if key is None:  # a key provider gives each call's key
            key, headers = options.call_key()
        if operation.headers is not None:
            # Names are lower case on both sides, so the call's own replace the client's
            # whatever their spelling, and the Idempotency-Key (the same on every attempt, so
            # that a service that deduplicates can) is never sent beside another.
            headers = {**headers, **operation.headers}
        content = None
        if operation.json is not None:
            # As httpx writes a json= body: compact, UTF-8, no NaN.
            content = json.dumps(
                operation.json, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
            if "content-type" not in headers:  # a caller's own wins, as with httpx's json=
                headers = {**headers, "content-type": "application/json"}
        timeout = options.timeout_extension if operation.timeout is None else operation.timeout
        deadline = operation.deadline
        #: Seconds for the whole call, retries and waits included; ``None`` for no limit.
        self.deadline = options.deadline if isinstance(deadline, NotGiven) else deadline
        self._ends = None if self.deadline is None else time.monotonic() + self.deadline
        self.request = Request(
            endpoint.method,
            options.base_url + operation.path,
            operation.params or None,
            headers,
            content,
            timeout,
            options.max_response_bytes,
            self.deadline,
            self._ends,
        )
        # The SDK already warns when a deprecated operation is called: once is enough.
        self._notices = None if endpoint.removal is not None else notices
        self._operation = operation
        # The client's options; the retry policy and the address are read from them only when
        # an attempt fails.
        self._options = options
        self._key = key
        # For a raw response, what redacts the key when it parses, perhaps after its client
        # is gone: it must not keep the key alive (``_redactor``).
        self._raw = _redactor(options, key) if raw else None
        self._pause = Pause() if pause is None else pause
        self._last: Answer | SendFailure | None = None
        self._started = 0.0
        self.retries = 0
        self.result: T
        # tracing: set by ``_core.tracing.traced_call`` when the client's tracing is on.
        self._trace: CallTrace | None = None

    @property
    def policy(self) -> RetryPolicy:
        """The call's retry policy: its own (``retry=``), else its client's."""
        retry = self._operation.retry
        return self._options.retry if retry is None else retry

    @property
    def middleware(self) -> tuple[Any, ...]:
        """The client's middleware handlers; empty, each attempt goes straight to the backend."""
        return self._options.middleware

    def wait(self) -> float:
        """Return the seconds to wait before the next attempt; 0.0 to start it now.

        Non-zero while the client family is paused: a call got 429 or 503 with
        ``Retry-After``. Ask again after the wait, as another answer may extend the pause.

        Raises:
            APITimeoutError: the pause outlasts the call's deadline, before any attempt; after
                one, the error of the last attempt's outcome instead, as for a retry that the
                deadline leaves no time for.
        """
        left = self._pause.left()
        if left <= 0.0:
            return 0.0
        if self._ends is not None and time.monotonic() + left >= self._ends:
            if self._last is None:
                self._last = deadline_passed(self.request, self.request.view(), left)
            if self._trace is not None:  # tracing
                self._trace.deadline(self)
            raise self._error(self._last)
        if self._trace is not None:  # tracing
            self._trace.paused(left)
        return left

    def begin(self) -> Request:
        """Start an attempt: note the time and return the request to send.

        Under a deadline, no phase of the attempt may wait longer than the time left.
        """
        self._started = time.perf_counter()
        if self._ends is None:
            return self.request
        left = max(self._ends - time.monotonic(), 0.0)
        return self.request.with_timeout(
            {
                phase: left if seconds is None else min(seconds, left)
                for phase, seconds in self.request.timeout.items()
            }
        )

    def remaining(self) -> float:
        """Return the seconds left before the deadline (0 when past it; a deadline is set)."""
        assert self._ends is not None, "remaining() is for a call with a deadline"
        return max(self._ends - time.monotonic(), 0.0)

    def chained(self, send: Send) -> Send:
        """Return ``send`` behind the client's middleware, for the attempt about to start.

        Args:
            send: the sync backend's ``send``.

        Returns:
            What sends the attempt through the handlers (``_core.middleware``), then ``send``.
        """
        return sync_chain(self._attempt(), send)

    def chained_async(self, send: AsyncSend) -> AsyncSend:
        """Return ``send`` behind the client's middleware: ``chained`` for an async backend."""
        return async_chain(self._attempt(), send)

    def _attempt(self) -> Attempt:
        """Return the attempt about to start as the middleware chain sees it."""
        return Attempt(
            self._options.middleware, self._operation, self.retries, self._idempotent, self._scrub
        )

    def after(self, outcome: Answer | SendFailure | None) -> Next:
        """Take in one attempt's outcome and decide what comes next.

        Args:
            outcome: the answer (body read), the backend's account of why there was none, or
                ``None`` when the call's deadline cut the attempt off.

        Returns:
            ``DONE`` when ``result`` is ready; else a ``Next`` with the wait before the next
            attempt.

        Warns:
            DeprecationWarning: the response carries the service's ``Deprecation`` or
                ``Sunset`` header, the first time for this client family and operation.

        Raises:
            APIStatusError: (a subclass of) for a non-2xx answer that is not retried.
            APIConnectionError: (or ``APITimeoutError``) when no response came and no retry is
                left, allowed or possible before the deadline.
            ResponseTooLargeError: the body was larger than ``max_response_bytes``.
            APIResponseValidationError: for a 2xx answer whose body does not fit the schema.
        """
        outcome = self._counted(outcome)
        self._last = outcome
        if logger.isEnabledFor(logging.DEBUG):
            self._log_attempt(outcome)
        if isinstance(outcome, Answer):
            self._received(outcome)
            if 200 <= outcome.status_code < 300:
                # A success is never retried: the common path skips the retry policy.
                self._take_result(outcome)
                if self._trace is not None:  # tracing
                    self._trace.succeeded(self, outcome)
                return DONE
        delay = self._retry_delay(outcome)
        if delay is None:
            raise self._error(outcome)
        if self._trace is not None:  # tracing
            self._trace.retrying(self, outcome, delay)
        self.retries += 1
        self._log_retry(outcome, delay)
        return Next(done=False, delay=delay)

    def _counted(self, outcome: Answer | SendFailure | None) -> Answer | SendFailure:
        """Return an attempt's outcome as the call counts it.

        An attempt that the deadline cut off counts as the deadline's failure, and a failure's
        account of itself loses the key.
        """
        if outcome is None or (
            self._ends is not None
            and isinstance(outcome, SendFailure)
            and outcome.timeout
            and time.monotonic() >= self._ends
        ):
            # Cut off, or the attempt's timeouts were cut to the time left: its own timeout
            # at the deadline, a hair before the deadline's, is the deadline's.
            if self._trace is not None:  # tracing
                self._trace.deadline(self)
            return deadline_passed(self.request, self.request.view())
        if isinstance(outcome, SendFailure):
            # A user's hook, auth or transport may quote the Authorization header in its error.
            outcome.detail = self._scrub(outcome.detail)
        return outcome

    def _received(self, answer: Answer) -> None:
        """Note what any answer tells: how long it took, and the service's deprecation signals."""
        answer.elapsed = time.perf_counter() - self._started
        if self._notices is not None and answer.signals:
            self._notices.warn_once(self._operation.name, answer)

    def _take_result(self, answer: Answer) -> None:
        """Make a successful answer the call's ``result``: its body parsed, or the raw response."""
        result_type = self._operation.result_type
        self.result = (
            APIResponse(answer, result_type, self.retries, self._raw)
            if self._raw is not None
            else parse_body(answer, result_type, self._scrub)
        )

    def _retry_delay(self, outcome: Answer | SendFailure) -> float | None:
        """Return the seconds to wait before the call's next attempt; ``None``: no retry.

        The retry policy decides, with the client family's pause, which an answer's
        ``Retry-After`` extends; a retry that the deadline leaves no time for is not made, and
        the last outcome stands.
        """
        if isinstance(outcome, Answer) and outcome.status_code in NOT_PROCESSED_STATUSES:
            wait = retry_after(outcome.headers)
            if wait is not None:
                self._pause.extend(wait)
        delay = retry_delay(
            outcome,
            idempotent=self._idempotent,
            retries_taken=self.retries,
            policy=self.policy,
        )
        if delay is None:
            return None
        # Another call's Retry-After may ask for longer than this one's.
        delay = max(delay, self._pause.left())
        if self._ends is not None and time.monotonic() + delay >= self._ends:
            return None
        return delay

    def _log_retry(self, outcome: Answer | SendFailure, delay: float) -> None:
        """Log the retry at INFO, the record marked ``animalstore_retry``."""
        logger.info(
            "retrying %s %s in %.1f s after %s (attempt %d of %d)",
            self.request.method,
            self.request.full_url,
            delay,
            outcome.status_code if isinstance(outcome, Answer) else outcome.cause,
            self.retries + 1,
            self.policy.max_retries + 1,
            extra={"animalstore_retry": True},
        )

    def _error(self, outcome: Answer | SendFailure) -> Exception:
        if isinstance(outcome, SendFailure):
            return connection_error(outcome, self.request, idempotent=self._idempotent)
        return status_error(outcome, self._options.base_url, self._scrub)

    def _scrub(self, text: str) -> str:
        """Return a message from elsewhere (a library, a hook, the server) without the key."""
        return redacted(text, self._key)

    def _log_attempt(self, outcome: Answer | SendFailure) -> None:
        status = outcome.status_code if isinstance(outcome, Answer) else outcome.detail
        logger.debug(
            "%s %s -> %s in %.1f ms (retry %d)",
            self.request.method,
            self.request.full_url,
            status,
            (time.perf_counter() - self._started) * 1000,
            self.retries,
        )


def _redactor(options: ClientOptions, key: str) -> Scrub:
    """Return what redacts the call's ``key`` from a message, holding the options weakly.

    A raw response parses when asked, perhaps after its client is closed and dropped; a strong
    reference would keep the key in memory as long as the response lives. Once the options
    are gone the message is left as it is: only the body the server sent can then quote a key,
    and the response holds that body anyway. A key from a key provider is held as long as
    the response: the options never had it.
    """
    if options.api_key is None:
        return functools.partial(redacted, key=key)
    held = weakref.ref(options)

    def scrub(text: str) -> str:
        alive = held()
        return text if alive is None else redacted(text, cast(str, alive.api_key))

    return scrub
