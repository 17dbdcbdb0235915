"""What middleware handlers see and make: an attempt's ``Request`` and its ``Response``.

Both immutable; the package exports them (``animalstore_client.Request``, ``Response``).
``Request.with_headers`` gives a copy with more headers; ``Response(...)`` makes an answer
without the network. The chain that hands them to the handlers is in ``_core.middleware``,
which loads with the first client.
"""

from __future__ import annotations

import functools
import json as _json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, final

from animalstore_client._core.config import check_headers
from animalstore_client._core.safe_repr import tolerant_repr

if TYPE_CHECKING:
    from animalstore_client._core.wire import Answer

__all__ = [
    "AsyncCallNext",
    "AsyncHandler",
    "CallNext",
    "Handler",
    "Headers",
    "Request",
    "Response",
    "token_of",
    "wrapped_answer",
]

#: What ``Response(json=...)`` is when no JSON body is given (``None`` is JSON's ``null``).
_NO_JSON: Any = object()


@tolerant_repr
@final
class Headers(Mapping[str, str]):
    """A read-only mapping of headers whose names are looked up case-insensitively.

    Iteration gives the names as spelled when set.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, tuple[str, str]]) -> None:
        self._items = items  # lower-case name -> (name as spelled, value)

    @classmethod
    def of(cls, pairs: Mapping[str, str]) -> Headers:
        """Return the headers of ``pairs``; a later name replaces an earlier one in any case.

        The later name's spelling and value take the earlier one's place.
        """
        items: dict[str, tuple[str, str]] = {}
        for name, value in pairs.items():
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
        # A name given in another case replaces the old one: ``Headers.of`` folds the case.
        merged = Headers.of({**dict(self.headers.items()), **added})
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
            Headers.of(dict(self.headers.items())),
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
        self._set(status_code, Headers.of(pairs), content, None, None)

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
        wrapped = object.__new__(cls)
        wrapped._set(answer.status_code, answer.headers, answer.content, answer, token)
        return wrapped

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


def token_of(given: Request) -> object:
    """Return what ties a ``Request`` to its attempt (``None`` for an unpickled copy)."""
    return given._token


def wrapped_answer(given: Response) -> tuple[Answer | None, object]:
    """Return the backend's answer a ``Response`` wraps (``None``: made up) and its attempt's tie.

    Read here, beside the class: the chain (``_core.middleware``) needs both, users neither.
    """
    return given._answer, given._token
