"""Middleware: handlers that see each attempt's request and its answer, and may change either.

A client's ``middleware`` is a chain of handlers, the first the outermost: each is called as
``handler(request, call_next)`` with the attempt's ``Request`` and returns a ``Response``, from
``call_next(request)`` (which sends the request down the chain and, past the last handler, to
the backend) or made up. ``AsyncClient``'s handlers are coroutine functions and await
``call_next``. The chain runs once per attempt, inside the retry loop and within the call's
deadline; what it returns is handled as a backend's answer (the status's exception, retries,
``Retry-After``, parsing, ``max_response_bytes``, deprecation signals).

An attempt that gets no answer makes ``call_next`` raise the ``APIConnectionError`` (or
``APITimeoutError``, ``ResponseTooLargeError``) the caller would get; let through, it counts
as that failure (retried as usual). Anything else a handler raises is the caller's: it leaves
the call at once, unretried, its class unchanged, the API key redacted from its ``args`` and a
note naming the handler and the attempt.

The public types are in ``_core.exchange``, loaded with the package; this module loads with
the first client, and imports the wire types (and the errors' module) when an attempt runs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, final

import attrs

from animalstore_client._core.exceptions import APIError
from animalstore_client._core.exchange import (
    AsyncCallNext,
    AsyncHandler,
    CallNext,
    Handler,
    Headers,
    Request,
    Response,
    token_of,
    wrapped_answer,
)
from animalstore_client._core.safe_repr import tolerant_repr

if TYPE_CHECKING:
    from animalstore_client._core.operations import Operation
    from animalstore_client._core.wire import Answer, SendFailure
    from animalstore_client._core.wire import Request as WireRequest

__all__ = [
    "AsyncSend",
    "Attempt",
    "Send",
    "async_chain",
    "check_middleware",
    "handler_name",
    "sync_chain",
]

#: The header that carries the key (lower case): a handler sees its value masked.
_AUTHORIZATION = "authorization"


def handler_name(handler: object) -> str:
    """Return how messages name a handler: its function's name, or its class's."""
    while isinstance(handler, functools.partial):
        handler = handler.func
    name = getattr(handler, "__name__", None)
    return name if isinstance(name, str) else type(handler).__name__


def _is_async(handler: object) -> bool:
    """Whether calling ``handler`` gives a coroutine (``async def``, a partial, ``__call__``)."""
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        type(handler).__call__  # an object whose class's __call__ is ``async def``
    )


def check_middleware(middleware: object, *, asynchronous: bool) -> tuple[Any, ...]:
    """Check a client's ``middleware`` argument and return it as a tuple.

    Args:
        middleware: the argument; ``None`` stands for no middleware.
        asynchronous: whether it is ``AsyncClient``'s, whose handlers are coroutine functions.

    Returns:
        The handlers, in order.

    Raises:
        TypeError: ``middleware`` is not a sequence (a ``str`` or a single handler is
            refused), or an item is not callable, or is a coroutine function for ``Client``
            or a plain function for ``AsyncClient``; the message names the position.
    """
    if middleware is None:
        return ()
    if isinstance(middleware, (str, bytes)) or not isinstance(middleware, Sequence):
        hint = (
            " (put a single handler in a list: middleware=[handler])"
            if callable(middleware)
            else ""
        )
        raise TypeError(
            f"middleware must be a sequence (a list or tuple) of handlers, got "
            f"{type(middleware).__name__}{hint}"
        )
    handlers = tuple(middleware)
    for position, handler in enumerate(handlers):
        if not callable(handler):
            raise TypeError(
                f"middleware[{position}] must be callable, got {type(handler).__name__}"
            )
        if _is_async(handler) is not asynchronous:
            shown = f"middleware[{position}] ({handler_name(handler)!r})"
            raise TypeError(
                f"{shown} must be a coroutine function (async def) for AsyncClient, got a "
                "plain function"
                if asynchronous
                else f"{shown} must be a plain function for Client, got a coroutine function "
                "(async def): give it to AsyncClient"
            )
    return handlers


@tolerant_repr
@final
class Attempt:
    """One attempt through a client's middleware: what the chain decides, with no I/O.

    The chain builders (``sync_chain``, ``async_chain``) call it: it turns the core's request
    into a handler's and back, a backend's outcome into a ``Response`` or the exception
    ``call_next`` raises, and what the chain returned or raised into the attempt's outcome.

    Args:
        handlers: the client's middleware, the first the outermost.
        operation: the call's operation.
        attempt: 0 for the first attempt, 1 for the first retry, and so on.
        idempotent: whether the call may be sent twice (for a failure's message).
        scrub: redacts the client's API key from a message.
    """

    __slots__ = (
        "_failures",
        "_operation",
        "_public",
        "_request",
        "_scrub",
        "_seen",
        "_token",
        "attempt",
        "handlers",
        "idempotent",
    )

    def __init__(
        self,
        handlers: tuple[Any, ...],
        operation: Operation[Any],
        attempt: int,
        idempotent: bool,
        scrub: Callable[[str], str],
    ) -> None:
        self.handlers = handlers
        self._operation = operation
        self.attempt = attempt
        self.idempotent = idempotent
        self._scrub = scrub
        # Ties the handlers' requests and the backend's answers to this attempt.
        self._token = object()
        self._failures: list[SendFailure] = []
        # Exceptions already seen to: a handler's, noted once, and the SDK's own TypeError.
        self._seen: list[BaseException] = []

    def start(self, request: WireRequest) -> Request:
        """Take the core's request for the attempt; return it as the first handler sees it."""
        from animalstore_client._core.wire import REDACTED

        self._request = request
        self._public = Request(
            request.method,
            request.full_url,
            Headers.of(
                {
                    name: f"Bearer {REDACTED}" if name.lower() == _AUTHORIZATION else value
                    for name, value in request.headers.items()
                }
            ),
            request.content,
            self._operation.endpoint.method_name,
            self.attempt,
            self._token,
        )
        return self._public

    def to_send(self, given: object) -> WireRequest:
        """Return the core's request for what a handler gave ``call_next``, the key put back.

        Raises:
            TypeError: ``given`` is not a ``Request``.
            ValueError: ``given`` belongs to another attempt.
        """
        if not isinstance(given, Request):
            raise TypeError(f"call_next takes a Request, got {type(given).__name__}")
        if token_of(given) is not self._token:
            raise ValueError(
                "call_next was given the Request of another attempt: pass on the one the "
                "handler was given, or a with_headers() copy of it"
            )
        request = self._request
        if given is self._public:
            return request
        # ``with_headers`` refuses an ``Authorization``: the copy holds the masked one, spelled
        # as the core's, which the real value replaces in its place.
        headers = dict(given.headers.items())
        headers.update((n, v) for n, v in request.headers.items() if n.lower() == _AUTHORIZATION)
        return attrs.evolve(request, headers=headers)

    def answered(self, outcome: Answer | SendFailure) -> Response:
        """Return the backend's answer as a ``Response``; for no answer, raise its error.

        Raises:
            APIConnectionError: (``APITimeoutError``, ``ResponseTooLargeError``) the error the
                caller would get for the failure, which the core counts as the attempt's if
                it comes out of the chain.
        """
        from animalstore_client._core.response import connection_error
        from animalstore_client._core.wire import SendFailure

        if isinstance(outcome, SendFailure):
            # A user's hook, auth or transport may quote the Authorization header in its error.
            outcome.detail = self._scrub(outcome.detail)
            self._failures.append(outcome)
            raise connection_error(outcome, self._request, idempotent=self.idempotent)
        return Response._of(outcome, self._token)

    def returned(self, value: object, handler: object) -> Response:
        """Return what a handler returned, a ``Response``.

        Raises:
            TypeError: it is anything else; named after the handler.
        """
        if isinstance(value, Response):
            return value
        error = TypeError(
            f"middleware handler {handler_name(handler)!r} returned {type(value).__name__}, "
            "not a Response"
        )
        self._seen.append(error)
        raise error

    def raised(self, exc: Exception, handler: object) -> None:
        """Mark an exception out of ``handler`` as the user's: key redacted, a note added.

        An attempt's failure (``call_next``'s error) and an exception already marked, by an
        inner handler's layer, are left as they are.
        """
        if self.failure_of(exc) is not None or any(exc is seen for seen in self._seen):
            return
        self._seen.append(exc)
        if any(isinstance(arg, str) for arg in exc.args):
            exc.args = tuple(self._scrub(a) if isinstance(a, str) else a for a in exc.args)
        operation = self._operation
        _add_note(
            exc,
            f"raised by middleware handler {handler_name(handler)!r} during "
            f"{operation.method} /{operation.path} (attempt {self.attempt + 1})",
        )

    def failure_of(self, exc: BaseException) -> SendFailure | None:
        """Return the attempt's failure that ``exc`` was raised for by ``call_next``, if any."""
        source = getattr(exc, "_source", None)
        return source if any(source is failure for failure in self._failures) else None

    def outcome(self, response: Response) -> Answer | SendFailure:
        """Return what the chain returned as the attempt's outcome, for the core.

        The backend's answer to this attempt is handed on as it is; any other (made up, or
        kept from another call) becomes an answer to this attempt's request, its body checked
        against ``max_response_bytes`` as the backend checks a body it reads.
        """
        answer, token = wrapped_answer(response)
        if answer is not None and token is self._token:
            return answer
        from animalstore_client._core.wire import Answer, Failure, SendFailure

        request = self._request
        cap = request.max_bytes
        if cap is not None and len(response.content) > cap:
            return SendFailure(
                Failure.TOO_LARGE,
                f"the response body is larger than max_response_bytes={cap}; reading stopped there",
                timeout=False,
                view=request.view(),
            )
        if answer is not None:  # kept from another call: its answer, to this attempt
            return answer.answering(request.view)
        made = (
            [(n.encode("latin-1"), v.encode("latin-1")) for n, v in response.headers.items()],
            "",
            b"HTTP/1.1",
        )

        def details() -> tuple[Any, str, bytes]:
            return made

        return Answer(
            response.status_code,
            response.headers,
            response.content,
            details=details,
            view=request.view,
            signals=any(name.lower() in ("deprecation", "sunset") for name in response.headers),
        )

    def __repr__(self) -> str:
        return f"<Attempt {self.attempt} of {self._operation.endpoint.method_name}>"


def _add_note(exc: BaseException, note: str) -> None:
    """Add a PEP 678 note to ``exc`` as Python 3.11's ``add_note`` does, on 3.10 too.

    The note is appended to ``exc.__notes__``, a list made when there is none.
    """
    notes = getattr(exc, "__notes__", None)
    if notes is None:
        notes = []
        exc.__notes__ = notes  # type: ignore[attr-defined]
    notes.append(note)


#: A sync backend's ``send``, and what sends an attempt through the chain.
Send = Callable[["WireRequest"], "Answer | SendFailure"]
#: An async backend's ``send``, and what sends an attempt through the chain.
AsyncSend = Callable[["WireRequest"], Awaitable["Answer | SendFailure"]]


def sync_chain(attempt: Attempt, send: Send) -> Send:
    """Return what sends ``attempt`` through a ``Client``'s middleware, then with ``send``.

    Args:
        attempt: the attempt.
        send: the backend's ``send``.

    Returns:
        A ``send`` that runs the chain: the attempt's outcome, or what a handler raised.
    """

    def last(request: Request) -> Response:
        return attempt.answered(send(attempt.to_send(request)))

    def layer(handler: Handler, call_next: CallNext) -> CallNext:
        def run(request: Request) -> Response:
            try:
                value = handler(request, call_next)
            except Exception as exc:
                attempt.raised(exc, handler)
                raise
            return attempt.returned(value, handler)

        return run

    chain: CallNext = last
    for handler in reversed(attempt.handlers):
        chain = layer(handler, chain)

    def through(request: WireRequest) -> Answer | SendFailure:
        try:
            return attempt.outcome(chain(attempt.start(request)))
        except APIError as exc:
            failure = attempt.failure_of(exc)
            if failure is None:
                raise
            return failure

    return through


def async_chain(attempt: Attempt, send: AsyncSend) -> AsyncSend:
    """Return what sends ``attempt`` through an ``AsyncClient``'s middleware, then ``send``.

    Args:
        attempt: the attempt.
        send: the backend's ``send``.

    Returns:
        A ``send`` that runs the chain: the attempt's outcome, or what a handler raised.
    """

    async def last(request: Request) -> Response:
        return attempt.answered(await send(attempt.to_send(request)))

    def layer(handler: AsyncHandler, call_next: AsyncCallNext) -> AsyncCallNext:
        async def run(request: Request) -> Response:
            try:
                value = await handler(request, call_next)
            except Exception as exc:
                attempt.raised(exc, handler)
                raise
            return attempt.returned(value, handler)

        return run

    chain: AsyncCallNext = last
    for handler in reversed(attempt.handlers):
        chain = layer(handler, chain)

    async def through(request: WireRequest) -> Answer | SendFailure:
        try:
            return attempt.outcome(await chain(attempt.start(request)))
        except APIError as exc:
            failure = attempt.failure_of(exc)
            if failure is None:
                raise
            return failure

    return through
