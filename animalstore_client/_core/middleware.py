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

The public types are here, loaded with the package; the chain's machinery reads the wire
types, which load with the first client, so it imports them when an attempt runs.
"""

from __future__ import annotations

import functools
import inspect
import json as _json
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, final

import attrs

from animalstore_client._core.config import check_headers
from animalstore_client._core.exceptions import APIError
from animalstore_client._core.safe_repr import tolerant_repr

if TYPE_CHECKING:
    from animalstore_client._core.operations import Operation
    from animalstore_client._core.wire import Answer, SendFailure
    from animalstore_client._core.wire import Request as WireRequest

__all__ = [
    "AsyncCallNext",
    "AsyncHandler",
    "Attempt",
    "CallNext",
    "Handler",
    "Request",
    "Response",
    "async_chain",
    "check_middleware",
    "handler_name",
    "sync_chain",
]

#: What ``Response(json=...)`` is when no JSON body is given (``None`` is JSON's ``null``).
_NO_JSON: Any = object()
#: The header that carries the key (lower case): a handler sees its value masked.
_AUTHORIZATION = "authorization"


@tolerant_repr
@final
class _Headers(Mapping[str, str]):
    """A read-only mapping of headers whose names are looked up case-insensitively.

    Iteration gives the names as spelled when set.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, tuple[str, str]]) -> None:
        self._items = items  # lower-case name -> (name as spelled, value)

    @classmethod
    def of(cls, pairs: Mapping[str, str]) -> _Headers:
        """Return the headers of ``pairs``; a later name replaces an earlier one in any case."""
        items: dict[str, tuple[str, str]] = {}
        for name, value in pairs.items():
            items.pop(name.lower(), None)  # the later spelling wins, in the later place
            items[name.lower()] = (name, value)
        return cls(items)

    def __getitem__(self, name: str) -> str:
        if not isinstance(name, str):
            raise KeyError(name)
        return self._items[name.lower()][1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


class _Frozen:
    """Refuses attribute assignment after construction: a middleware type is immutable."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")


@tolerant_repr
@final
class Request(_Frozen):
    """One attempt's request as a middleware handler sees it; immutable.

    The SDK builds it for each attempt; ``with_headers`` makes a copy with more headers, to
    hand to ``call_next``. The API key never shows: ``Authorization`` reads
    ``"Bearer [redacted]"``, and the SDK puts the real value back when it sends.

    Attributes:
        method: the HTTP method (``"GET"``).
        url: the absolute URL, with the query (``"https://.../v1/pets?limit=10"``).
        headers: the headers to be sent, read-only, names looked up case-insensitively.
        content: the body (``create_pet``'s JSON), or ``None`` for none.
        operation: the client method making the call (``"list_pets"``).
        attempt: which attempt this is: 0 for the first, 1 for the first retry, and so on.
    """

    __slots__ = ("_token", "attempt", "content", "headers", "method", "operation", "url")

    # For type checkers only: at run time the slots are set once, by ``object.__setattr__``,
    # and tools that resolve a public class's annotations in the package find no names to look up.
    if TYPE_CHECKING:
        method: str
        url: str
        headers: Mapping[str, str]
        content: bytes | None
        operation: str
        attempt: int
        _token: object

    def __init__(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | None,
        operation: str,
        attempt: int,
        token: object,
    ) -> None:
        # Built by the SDK only; ``token`` ties the request and its copies to their attempt.
        for name, value in (
            ("method", method),
            ("url", url),
            ("headers", headers),
            ("content", content),
            ("operation", operation),
            ("attempt", attempt),
            ("_token", token),
        ):
            object.__setattr__(self, name, value)

    def with_headers(self, headers: Mapping[str, str]) -> Request:
        """Return a copy with ``headers`` merged over this request's (names case-insensitive).

        Args:
            headers: the headers to set; checked as ``extra_headers`` are.

        Returns:
            The new request, for the same attempt.

        Raises:
            TypeError: ``headers`` is not a mapping of ``str`` to ``str``.
            ValueError: a name is not an HTTP token, is ``Authorization`` or
                ``Idempotency-Key`` (the SDK sets them), or frames the body
                (``Content-Length``, ``Transfer-Encoding``), or a value holds CR, LF, NUL or
                non-ASCII characters.
        """
        added = check_headers("headers", headers)
        # A name given in another case replaces the old one: ``_Headers.of`` folds the case.
        merged = _Headers.of({**dict(self.headers.items()), **added})
        return Request(
            self.method,
            self.url,
            merged,
            self.content,
            self.operation,
            self.attempt,
            self._token,
        )

    def __reduce__(self) -> tuple[object, ...]:
        # A copy or a pickle belongs to no attempt: its headers are the masked ones anyway.
        return Request, (
            self.method,
            self.url,
            _Headers.of(dict(self.headers.items())),
            self.content,
            self.operation,
            self.attempt,
            None,
        )

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.url} (attempt {self.attempt})>"


@tolerant_repr
@final
class Response(_Frozen):
    """An answer as middleware sees and makes it: status, headers and body, read in full.

    ``call_next`` returns one for the backend's answer; a handler may also build one, to
    answer without the network (a cache, a fallback), or return one it kept from an earlier
    call. Whatever the chain returns is handled as the backend's answer would be: a non-2xx
    status raises its exception or is retried, ``Retry-After`` is honoured, a 2xx body is
    parsed, and a body larger than ``max_response_bytes`` raises ``ResponseTooLargeError``.

    Args:
        status_code: the HTTP status, 100 to 599.
        headers: the answer's headers; ``None`` for none.
        content: the body, as bytes; cannot be combined with ``json``.
        json: a value to send as the body in JSON, compact, as UTF-8; ``Content-Type`` is
            then ``application/json`` unless ``headers`` sets one.

    Attributes:
        status_code: the HTTP status code.
        headers: the headers, read-only, names looked up case-insensitively (a repeated field
            gives its first value).
        content: the body, decoded from its ``Content-Encoding``.

    Raises:
        TypeError: an argument has the wrong type, or ``json`` is not JSON-serializable.
        ValueError: ``status_code`` is outside 100 to 599, both ``content`` and ``json`` are
            given, a header holds CR, LF or NUL or is not Latin-1, or ``json`` holds NaN or
            an infinity.
    """

    __slots__ = ("_answer", "_token", "content", "headers", "status_code")

    if TYPE_CHECKING:  # as for ``Request``
        status_code: int
        headers: Mapping[str, str]
        content: bytes
        _answer: Answer | None
        _token: object

    def __init__(
        self,
        status_code: int,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes = b"",
        json: object = _NO_JSON,
    ) -> None:
        if not isinstance(status_code, int) or isinstance(status_code, bool):
            raise TypeError(f"status_code must be an int, got {type(status_code).__name__}")
        if not 100 <= status_code <= 599:
            raise ValueError(f"status_code must be from 100 to 599, got {status_code}")
        pairs = _response_headers(headers)
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise TypeError(f"content must be bytes, got {type(content).__name__}")
        content = bytes(content)
        if json is not _NO_JSON:
            if content:
                raise ValueError("pass content= or json=, not both")
            # As the SDK writes a request's body: compact, UTF-8, no NaN.
            content = _json.dumps(
                json, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
            if not any(name.lower() == "content-type" for name in pairs):
                pairs = {**pairs, "content-type": "application/json"}
        self._set(status_code, _Headers.of(pairs), content, None, None)

    def _set(
        self,
        status_code: int,
        headers: Mapping[str, str],
        content: bytes,
        answer: Answer | None,
        token: object,
    ) -> None:
        for name, value in (
            ("status_code", status_code),
            ("headers", headers),
            ("content", content),
            ("_answer", answer),
            ("_token", token),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def _of(cls, answer: Answer, token: object) -> Response:
        """Return the backend's answer to the attempt of ``token``, wrapped (body not copied)."""
        response = object.__new__(cls)
        response._set(answer.status_code, answer.headers, answer.content, answer, token)
        return response

    def json(self) -> Any:
        """Return the body decoded as JSON.

        Returns:
            The decoded value.

        Raises:
            ValueError: the body is not JSON (``json.JSONDecodeError``).
        """
        return _json.loads(self.content)

    def __reduce__(self) -> tuple[object, ...]:
        # Status, headers and body only: the backend's answer stays behind.
        rebuild = functools.partial(
            Response, headers=dict(self.headers.items()), content=self.content
        )
        return rebuild, (self.status_code,)

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"


def _response_headers(headers: object) -> dict[str, str]:
    """Check a made-up answer's headers: a mapping of ``str`` to ``str``, Latin-1, one line."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(f"headers must be a mapping, got {type(headers).__name__}")
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError(
                f"headers must map str to str, got {type(name).__name__} to {type(value).__name__}"
            )
        for text in (name, value):
            if any(c in text for c in "\r\n\0"):
                raise ValueError(f"header {name!r} must not hold CR, LF or NUL")
            try:
                text.encode("latin-1")
            except UnicodeEncodeError:
                raise ValueError(f"header {name!r} must be Latin-1") from None
        checked[name] = value
    return checked


# The handlers' types, for the clients' signatures.
#: What a ``Client`` handler's ``call_next`` is: send the request on, return the answer.
CallNext = Callable[[Request], Response]
#: A ``Client`` middleware handler: ``handler(request, call_next) -> Response``.
Handler = Callable[[Request, CallNext], Response]
#: What an ``AsyncClient`` handler's ``call_next`` is: awaited, it gives the answer.
AsyncCallNext = Callable[[Request], Awaitable[Response]]
#: An ``AsyncClient`` middleware handler: ``async def handler(request, call_next)``.
AsyncHandler = Callable[[Request, AsyncCallNext], Awaitable[Response]]


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
            _Headers.of(
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
        if given._token is not self._token:
            raise ValueError(
                "call_next was given the Request of another attempt: pass on the one the "
                "handler was given, or a with_headers() copy of it"
            )
        request = self._request
        if given is self._public:
            return request
        headers = {n: v for n, v in given.headers.items() if n.lower() != _AUTHORIZATION}
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
        source = getattr(exc, "_source", None) if isinstance(exc, APIError) else None
        return source if any(source is failure for failure in self._failures) else None

    def outcome(self, response: Response) -> Answer | SendFailure:
        """Return what the chain returned as the attempt's outcome, for the core.

        The backend's answer to this attempt is handed on as it is; any other (made up, or
        kept from another call) becomes an answer to this attempt's request, its body checked
        against ``max_response_bytes`` as the backend checks a body it reads.
        """
        answer = response._answer
        if answer is not None and response._token is self._token:
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
        if answer is not None:
            details, signals = answer._details, answer.signals
        else:
            made = (
                [(n.encode("latin-1"), v.encode("latin-1")) for n, v in response.headers.items()],
                "",
                b"HTTP/1.1",
            )

            def details() -> tuple[Any, str, bytes]:
                return made

            signals = any(name.lower() in ("deprecation", "sunset") for name in response.headers)
        return Answer(
            response.status_code,
            response.headers,
            response.content,
            details=details,
            view=request.view,
            signals=signals,
        )

    def __repr__(self) -> str:
        return f"<Attempt {self.attempt} of {self._operation.endpoint.method_name}>"


def _add_note(exc: BaseException, note: str) -> None:
    """Add a PEP 678 note to ``exc``, as Python 3.11's ``add_note`` does on 3.10 too."""
    if sys.version_info >= (3, 11):
        exc.add_note(note)
    else:
        notes = getattr(exc, "__notes__", None)
        if not isinstance(notes, list):
            notes = []
            exc.__notes__ = notes  # type: ignore[attr-defined]
        notes.append(note)


Send = Callable[["WireRequest"], "Answer | SendFailure"]
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
