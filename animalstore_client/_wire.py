"""What the sans-IO core hands a backend and takes back: a plain request, an answer, a failure.

The core (``_call``) builds a ``Request`` and never sends it. A backend (``_httpx_backend``,
``_aiohttp_backend``) sends it with its HTTP library's public API and returns either an
``Answer`` (status, headers, the body read in full) or a ``SendFailure`` (no usable answer,
already classified as "not sent", "maybe sent" or "fatal"). Neither holds the library's
exception: an error's traceback and locals can hold the request's headers, the API key
included, and what the SDK raises must not reach them.

On aiohttp, the ``httpx`` objects that the public API exposes (``APIResponse.http_response``,
``APIError.request``, ``APIStatusError.response``) are views, built from these with httpx's
public constructors only when read; on httpx, ``APIResponse.http_response`` is httpx's own
response. An exception keeps only a ``RecordedAnswer`` or a ``SendFailure``, which hold a
request view with the ``Authorization`` value redacted and nothing else of the request.
"""

from __future__ import annotations

import copy as copy_module
import enum
import time
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import httpx

from animalstore_client._safe_repr import tolerant_repr

__all__ = [
    "REDACTED",
    "Answer",
    "CappedBody",
    "Failure",
    "RecordedAnswer",
    "Request",
    "SendFailure",
    "deadline_passed",
    "fits",
    "past",
    "redacted_request",
    "response_view",
    "too_large",
]

#: What stands for the ``Authorization`` value in every request view an exception carries.
REDACTED = "[redacted]"


@tolerant_repr
class Request:
    """One attempt's request: method, absolute URL, query, headers, body, timeouts.

    Its ``repr`` shows the method and URL only: it sits in the core's frames, which a
    traceback formatted with captured locals prints.

    Attributes:
        method: the HTTP method.
        url: the absolute URL, without the query.
        params: the query parameters, or ``None`` for none; given to the library apart from
            the URL, so that an httpx client's own ``params`` merge with them.
        headers: the headers to send, the API key's ``Authorization`` included.
        content: the body, or ``None`` for none.
        timeout: seconds per phase (``connect``, ``read``, ``write``, ``pool``; ``None``: no
            limit), as httpx's ``timeout`` request extension.
        max_bytes: the most bytes the answer's decoded body may hold; ``None`` for no limit.
        deadline: the call's deadline in seconds, for messages; ``None`` for none.
        ends: when the deadline passes, on ``time.monotonic()``'s clock; ``None`` for never.
            A sender stops reading a body there, even in an attempt its caller gave up on.
    """

    __slots__ = (
        "content",
        "deadline",
        "ends",
        "headers",
        "max_bytes",
        "method",
        "params",
        "timeout",
        "url",
    )

    def __init__(
        self,
        method: str,
        url: str,
        params: dict[str, str | int] | None,
        headers: dict[str, str],
        content: bytes | None,
        timeout: dict[str, float | None],
        max_bytes: int | None = None,
        deadline: float | None = None,
        ends: float | None = None,
    ) -> None:
        self.method = method
        self.url = url
        self.params = params
        self.headers = headers
        self.content = content
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.ends = ends

    @property
    def full_url(self) -> str:
        """The URL with its query, for messages and logs."""
        if not self.params:
            return self.url
        from urllib.parse import urlencode

        return f"{self.url}?{urlencode(self.params)}"

    def with_timeout(self, timeout: dict[str, float | None]) -> Request:
        """Return a copy of the request with other timeouts."""
        copy = copy_module.copy(self)
        copy.timeout = timeout
        return copy

    def redacted(self) -> httpx.Request:
        """Return a view of the request that an exception may keep: ``Authorization`` redacted."""
        return redacted_request(self.method, self.full_url, self.headers, self.timeout)

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.full_url}>"


class Failure(enum.Enum):
    """How far a failed attempt got, which decides whether it may be sent again."""

    #: Not a byte of the request left (no connection, no pool slot): safe to retry any call.
    NOT_SENT = "not sent"
    #: The request may have reached the service (timeout, hang-up, broken answer): only an
    #: idempotent call may be retried.
    MAYBE_SENT = "maybe sent"
    #: Retrying cannot help (an unsupported URL, a proxy refusal, an undecodable body).
    FATAL = "fatal"
    #: The body grew past ``Request.max_bytes``; reading stopped there. Never retried: the
    #: same answer would come again.
    TOO_LARGE = "too large"


@tolerant_repr
class SendFailure:
    """An attempt that got no usable answer, as a backend classified it.

    Attributes:
        failure: how far the attempt got.
        timeout: whether a timeout ended it.
        detail: the library's error in one line (its class name and message), which never
            holds a header.
    """

    __slots__ = ("_request_view", "detail", "failure", "timeout")

    def __init__(
        self, failure: Failure, detail: str, *, timeout: bool, request: httpx.Request
    ) -> None:
        self.failure = failure
        self.detail = " ".join(detail.split())  # parsers' messages span lines
        self.timeout = timeout
        self._request_view = request

    @property
    def cause(self) -> str:
        """The library's error class name alone (``ConnectError``), for a one-line account."""
        return self.detail.partition(":")[0]

    def request_view(self) -> httpx.Request:
        """Return the request as an ``httpx.Request``, ``Authorization`` redacted."""
        return self._request_view

    def __repr__(self) -> str:
        return f"<SendFailure {self.failure.value}: {self.detail}>"


@tolerant_repr
class Answer:
    """A response received in full: status, headers and body, with httpx views on demand.

    A backend's subclass says how to build the views; the core reads only the attributes.

    Attributes:
        status_code: the HTTP status code.
        headers: the headers, looked up case-insensitively.
        content: the body, decoded from its ``Content-Encoding``.
    """

    __slots__ = ("content", "headers", "status_code")

    status_code: int
    headers: Mapping[str, str]
    content: bytes

    def http_headers(self) -> httpx.Headers:
        """Return the headers as ``httpx.Headers``."""
        raise NotImplementedError

    def http_response(self) -> httpx.Response:
        """Return the answer as an ``httpx.Response`` (read), for ``APIResponse``."""
        raise NotImplementedError

    def recorded(self) -> RecordedAnswer:
        """Return the answer as an exception may keep it: the request's key redacted."""
        raise NotImplementedError

    def reason_phrase(self) -> str:
        """Return the status line's reason phrase (``""`` when none was sent)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Answer {self.status_code}>"


class RecordedAnswer(Answer):
    """An answer detached from its request: what an exception keeps of it.

    It holds the status, the headers as received (bytes), the body and a request view whose
    ``Authorization`` is redacted, so that nothing reachable from an exception holds the key.

    Args:
        status_code: the status code.
        headers: the headers, looked up case-insensitively.
        content: the decoded body.
        raw_headers: the headers as received, as bytes pairs (a value may be any byte).
        extensions: the response's ``http_version`` and ``reason_phrase``, as httpx names them.
        request: the request view, ``Authorization`` redacted.
        elapsed: the time from sending the request to having read the body, if known.
    """

    __slots__ = ("_elapsed", "_extensions", "_raw_headers", "_request", "_response")

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        content: bytes,
        raw_headers: Iterable[tuple[bytes, bytes]],
        extensions: dict[str, Any],
        request: httpx.Request,
        elapsed: timedelta | None = None,
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self._raw_headers = list(raw_headers)
        self._extensions = extensions
        self._request = request
        self._elapsed = elapsed
        self._response: httpx.Response | None = None

    def http_headers(self) -> httpx.Headers:
        """Return the headers as received, as ``httpx.Headers``."""
        return self.http_response().headers

    def http_response(self) -> httpx.Response:
        """Return an ``httpx.Response`` view of the answer, built on first use."""
        if self._response is None:
            self._response = response_view(
                self.status_code,
                self._raw_headers,
                self.content,
                self._request,
                self._extensions,
                self._elapsed,
            )
        return self._response

    def recorded(self) -> RecordedAnswer:
        """Return itself: it holds no key."""
        return self

    def reason_phrase(self) -> str:
        """Return the reason phrase."""
        return bytes(self._extensions.get("reason_phrase", b"")).decode("latin-1")

    def request_view(self) -> httpx.Request:
        """Return the request it answers, ``Authorization`` redacted."""
        return self._request


def fits(headers: Mapping[str, str], cap: int | None) -> bool:
    """Whether a body is sure to stay within ``cap`` before a byte of it is read.

    So it is when it is neither encoded nor chunked and its ``Content-Length`` is within the
    cap: the HTTP libraries then read exactly that length (h11 fails on a longer body; with
    ``Transfer-Encoding`` it would follow the chunks and ignore the length). Such a body is
    read the library's plain way, which is what the common answer costs; any other is read in
    capped pieces (``CappedBody``). The senders still check the length they got, for a
    transport that does not frame bodies by their headers (a mock, an ASGI app).

    Args:
        headers: the response headers, looked up case-insensitively.
        cap: the most bytes allowed; ``None`` for no limit.
    """
    if cap is None:
        return True
    if "content-encoding" in headers or "transfer-encoding" in headers:
        return False
    length = headers.get("content-length", "")
    return length.isascii() and length.isdigit() and int(length) <= cap


def deadline_passed(request: Request, view: httpx.Request) -> SendFailure:
    """Return the failure for an attempt the call's deadline cut off: never retried.

    Args:
        request: the request, which has a deadline.
        view: its request view, ``Authorization`` redacted.
    """
    return SendFailure(
        Failure.FATAL,
        f"deadline={request.deadline:g} s passed before the call was done",
        timeout=True,
        request=view,
    )


def past(request: Request) -> bool:
    """Whether ``request``'s deadline, if it has one, has passed."""
    return request.ends is not None and time.monotonic() >= request.ends


def too_large(request: Request, view: httpx.Request) -> SendFailure:
    """Return the failure for an answer whose decoded body grew past ``request.max_bytes``.

    Args:
        request: the request whose answer was too large.
        view: its request view, ``Authorization`` redacted.
    """
    return SendFailure(
        Failure.TOO_LARGE,
        f"the response body is larger than max_response_bytes={request.max_bytes}; "
        "reading stopped there",
        timeout=False,
        request=view,
    )


class CappedBody:
    """A body read piece by piece, which refuses to grow past a cap.

    Each backend reads the decoded body in the pieces its library hands out and stops at the
    first that does not fit, so that a huge answer or a decompression bomb costs about the
    cap in memory, never its full size.

    Args:
        cap: the most bytes allowed; ``None`` for no limit.
    """

    __slots__ = ("_cap", "_parts", "_size")

    def __init__(self, cap: int | None) -> None:
        self._cap = cap
        self._parts: list[bytes] = []
        self._size = 0

    def add(self, chunk: bytes) -> bool:
        """Keep ``chunk``; return ``False`` (keeping nothing) if the body would pass the cap."""
        self._size += len(chunk)
        if self._cap is not None and self._size > self._cap:
            self._parts.clear()
            return False
        self._parts.append(chunk)
        return True

    def content(self) -> bytes:
        """Return the body read so far."""
        return b"".join(self._parts)


def redacted_request(
    method: str,
    url: httpx.URL | str,
    headers: Iterable[tuple[str, str]] | Mapping[str, str],
    timeout: Mapping[str, float | None] | None,
) -> httpx.Request:
    """Return an ``httpx.Request`` view of a request, the ``Authorization`` value redacted.

    Args:
        method: the HTTP method.
        url: the URL.
        headers: the headers as sent.
        timeout: the attempt's timeouts, kept as the ``timeout`` extension; ``None`` for none.

    Returns:
        A body-less request with the same method, URL and headers, but ``Authorization:
        [redacted]``.
    """
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return httpx.Request(
        method,
        url,
        headers=[
            (name, REDACTED if name.lower() == "authorization" else value) for name, value in pairs
        ],
        extensions={} if timeout is None else {"timeout": dict(timeout)},
    )


def response_view(
    status_code: int,
    headers: Iterable[tuple[bytes, bytes]],
    content: bytes,
    request: httpx.Request,
    extensions: dict[str, Any],
    elapsed: timedelta | None = None,
) -> httpx.Response:
    """Return a read ``httpx.Response`` built from an answer whose body is already decoded.

    ``Content-Encoding`` and ``Content-Length`` describe the body as it travelled, not the
    decoded one: httpx would decode it a second time, so both are left out when an encoding
    was applied.

    Args:
        status_code: the status code.
        headers: the headers as received, as bytes (httpx would encode ``str`` as ASCII).
        content: the decoded body.
        request: the request it answers.
        extensions: the response extensions (``http_version``, ``reason_phrase``).
        elapsed: the time from sending the request to having read the body, if known.

    Returns:
        The response, read.
    """
    pairs = list(headers)
    if any(name.lower() == b"content-encoding" for name, _ in pairs):
        pairs = [p for p in pairs if p[0].lower() not in (b"content-encoding", b"content-length")]
    response = httpx.Response(
        status_code, headers=pairs, content=content, request=request, extensions=extensions
    )
    if elapsed is not None:
        response.elapsed = elapsed
    return response
