"""What the core hands a backend and takes back: a plain request, an answer, a failure.

The core (``call``) builds a ``Request`` and never sends it. A backend sends it with its HTTP
library's public API, reads the body through a ``BodyReader`` (which alone decides the size
cap and the deadline while reading), and returns an ``Answer`` or a ``SendFailure`` (no usable
answer, classified as "not sent", "maybe sent" or "fatal"). Neither holds the library's
exception: an error's traceback and locals can hold the request's headers, the API key
included, and what the SDK raises must not reach them.

The ``httpx`` objects the public API exposes (``APIResponse.http_response``,
``APIError.request``, ``APIStatusError.response``) are views, built with httpx's public
constructors when first read, from a ``RequestView``: the one place where the key is
redacted. Only a response that httpx itself read in full is handed out as it is.
"""

from __future__ import annotations

import enum
import itertools
import time
from collections.abc import (
    AsyncIterable,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
)
from datetime import timedelta
from typing import Protocol

import attrs
import httpx

from animalstore_client._core.decoding import (
    DecodeError,
    Decoder,
    coded_limit,
    codings,
    refusal,
)
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "REDACTED",
    "TRANSFER_CODING_REFUSAL",
    "Answer",
    "AsyncSender",
    "BodyReader",
    "Details",
    "Failure",
    "FailureTable",
    "FirstValues",
    "Request",
    "RequestView",
    "SendFailure",
    "SyncSender",
    "kind_of",
    "redacted",
    "response_view",
    "transfer_coding_refused",
]

#: What stands for the ``Authorization`` value in every request view an exception carries, and
#: for the key in any message the SDK takes from elsewhere.
REDACTED = "[redacted]"


#: The length from which a key is redacted wherever it occurs, inside words too. A shorter one
#: (a test suite's ``k`` or ``test``) is redacted only where it stands as a word of its own:
#: replaced inside words, it would garble the message (``k`` in "keyword"). Low, so that no
#: real key (tens of characters; the SDK sets no minimum) is ever spared inside another word.
WHOLE_WORDS_BELOW = 8
_BEARER = "Bearer "


def redacted(text: str, key: str) -> str:
    """Return ``text`` with the key redacted wherever it may be the key.

    For a message the SDK takes from elsewhere (a library's error, a user's hook, auth or
    transport, the server's body) and puts into its own exception or log line. The key is
    also looked for as ``repr`` and JSON write it (a quote or backslash escaped), as a
    message quoting a header or a body would show it. Occurrences that overlap or touch make
    one ``REDACTED``, none of them left in part.

    A key of ``WHOLE_WORDS_BELOW`` (8) characters or more is redacted wherever it occurs,
    ``Bearer <key>`` as one. A shorter one only where it stands as a word of its own: where the
    occurrence (with those that overlap or touch it) has no letter, digit or underscore right
    before or after it. So the key ``k`` leaves "keyword" as it is, and redacts ``'k'``, ``k=``
    and the key of ``Bearer k`` (which stays ``Bearer [redacted]``: taking the word ``Bearer``
    away too could leave an occurrence glued to it standing alone).

    Args:
        text: the message.
        key: the client's API key (printable ASCII, never empty).

    Returns:
        The message, each occurrence replaced by ``REDACTED``.
    """
    import json

    forms = {key, repr(key)[1:-1], json.dumps(key)[1:-1]}
    if not any(form in text for form in forms):
        return text
    hidden = bytearray(len(text))  # 1 for each character of an occurrence
    if len(key) < WHOLE_WORDS_BELOW:
        # The forms' occurrences together: one form touching another is one run, whose
        # neighbours decide for both.
        found = sorted(span for form in forms for span in _occurrences(text, form))
        for start, end in _runs(found):
            if _stands_alone(text, start, end):
                hidden[start:end] = b"\x01" * (end - start)
    else:
        for form in forms:
            for start, end in _occurrences(text, form):
                if text.endswith(_BEARER, 0, start):
                    start -= len(_BEARER)
                hidden[start:end] = b"\x01" * (end - start)
    pieces = []
    start = 0
    for secret, run in itertools.groupby(hidden):
        length = sum(1 for _ in run)
        pieces.append(REDACTED if secret else text[start : start + length])
        start += length
    return "".join(pieces)


def _occurrences(text: str, form: str) -> list[tuple[int, int]]:
    """Return where ``form`` occurs in ``text``, as ``(start, end)``, each occurrence.

    Overlapping ones included: a search that resumed after each match would miss an occurrence
    that overlaps the one before (``abab`` at 2 in ``ababab``).
    """
    spans: list[tuple[int, int]] = []
    start = text.find(form)
    while start != -1:
        spans.append((start, start + len(form)))
        start = text.find(form, start + 1)
    return spans


def _runs(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return ``spans`` (sorted) merged into runs: spans that overlap or touch make one."""
    runs: list[tuple[int, int]] = []
    for start, end in spans:
        if runs and start <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
        else:
            runs.append((start, end))
    return runs


def _stands_alone(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` has no letter, digit or underscore right before or after it."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before == "_" or after.isalnum() or after == "_")


@tolerant_repr
@attrs.define(eq=False, repr=False)
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
    """

    method: str
    url: str
    params: dict[str, str | int] | None
    headers: dict[str, str]
    content: bytes | None
    timeout: dict[str, float | None]
    max_bytes: int | None = None
    deadline: float | None = None
    ends: float | None = None

    @property
    def full_url(self) -> str:
        """The URL with its query, for messages and logs."""
        if not self.params:
            return self.url
        from urllib.parse import urlencode

        return f"{self.url}?{urlencode(self.params)}"

    def with_timeout(self, timeout: dict[str, float | None]) -> Request:
        """Return a copy of the request with other timeouts."""
        return attrs.evolve(self, timeout=timeout)

    def view(self) -> RequestView:
        """Return what an exception may keep of this request (``Authorization`` redacted)."""
        return RequestView(self.method, self.full_url, self.headers.items(), self.timeout)

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.full_url}>"


class RequestView:
    """A request as errors and response views show it: the ``Authorization`` value redacted.

    Args:
        method: the HTTP method.
        url: the URL, with its query.
        headers: the headers as sent; the ``Authorization`` value is replaced here.
        timeout: the attempt's timeouts, kept as the ``timeout`` extension.
    """

    __slots__ = ("_built", "headers", "method", "timeout", "url")

    def __init__(
        self,
        method: str,
        url: str,
        headers: Iterable[tuple[str, str]],
        timeout: Mapping[str, float | None],
    ) -> None:
        self.method = method
        self.url = url
        self.headers = [
            (name, REDACTED if name.lower() == "authorization" else value)
            for name, value in headers
        ]
        self.timeout = dict(timeout)
        self._built: httpx.Request | None = None

    def request_view(self) -> httpx.Request:
        """Return the view as a body-less ``httpx.Request``, built on first use."""
        if self._built is None:
            self._built = httpx.Request(
                self.method, self.url, headers=self.headers, extensions={"timeout": self.timeout}
            )
        return self._built


class Failure(enum.Enum):
    """How far a failed attempt got, which decides whether it may be sent again."""

    #: Not a byte of the request left (no connection, no pool slot): safe to retry any call.
    NOT_SENT = "not sent"
    #: The request may have reached the service (timeout, hang-up, broken answer): only an
    #: idempotent call may be retried.
    MAYBE_SENT = "maybe sent"
    #: Retrying cannot help (an unsupported URL, a proxy refusal, an undecodable body, the
    #: call's deadline).
    FATAL = "fatal"
    #: The body grew past ``Request.max_bytes``; reading stopped there. Never retried: the
    #: same answer would come again.
    TOO_LARGE = "too large"


#: How a backend sorts its library's errors: the classes of each kind, tried in the table's
#: order (so that "not sent" can win over a base class that is "maybe sent").
FailureTable = Mapping[Failure, tuple[type[BaseException], ...]]


def kind_of(exc: BaseException, table: FailureTable) -> Failure:
    """Return how far an attempt that ended in ``exc`` got; an error not in ``table`` is fatal."""
    found = (kind for kind, classes in table.items() if isinstance(exc, classes))
    return next(found, Failure.FATAL)


@tolerant_repr
class SendFailure:
    """An attempt that got no usable answer, as a backend classified it.

    Args:
        failure: how far the attempt got.
        detail: the library's error in one line (its class name and message), which never
            holds a header.
        timeout: whether a timeout ended it.
        view: the request, as an exception may keep it.
    """

    __slots__ = ("_view", "detail", "failure", "timeout")

    def __init__(self, failure: Failure, detail: str, *, timeout: bool, view: RequestView) -> None:
        self.failure = failure
        self.detail = " ".join(detail.split())  # parsers' messages span lines
        self.timeout = timeout
        self._view = view

    @classmethod
    def of(
        cls,
        exc: BaseException,
        failure: Failure,
        *,
        timeout: bool,
        view: RequestView,
        message: str | None = None,
    ) -> SendFailure:
        """Return the failure for ``exc``, keeping its class name and message, not the error.

        ``message`` replaces ``str(exc)`` when that could hold a header. A refused connection
        reads the same whatever the library and event loop made of it ("[Errno 111] ...",
        "All connection attempts failed", "Cannot connect to host ...").
        """
        if failure is Failure.NOT_SENT and _refused(exc):
            return cls(failure, _REFUSED, timeout=timeout, view=view)
        message = str(exc) if message is None else message
        detail = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        return cls(failure, detail, timeout=timeout, view=view)

    @property
    def cause(self) -> str:
        """The library's error class name alone (``ConnectError``), for a one-line account."""
        return self.detail.partition(":")[0]

    def request_view(self) -> httpx.Request:
        """Return the request as an ``httpx.Request``, ``Authorization`` redacted."""
        return self._view.request_view()

    def __repr__(self) -> str:
        return f"<SendFailure {self.failure.value}: {self.detail}>"


_REFUSED = (
    "ConnectionRefusedError: connection refused (nothing accepts connections at that address)"
)


def _refused(exc: BaseException) -> bool:
    """Whether a ``ConnectionRefusedError`` is behind ``exc``.

    It is looked for in the chain, and in exception groups there (anyio's, when every address
    of a host refused).
    """
    pending = [exc]
    seen: set[int] = set()
    while pending:
        error = pending.pop()
        if isinstance(error, ConnectionRefusedError):
            return True
        seen.add(id(error))
        linked = [error.__cause__, error.__context__]
        members = getattr(error, "exceptions", None)
        if isinstance(members, tuple):
            linked += members
        pending += [link for link in linked if link is not None and id(link) not in seen]
    return False


def deadline_passed(request: Request, view: RequestView, wait: float = 0.0) -> SendFailure:
    """Return the outcome of an attempt that the call's deadline cut off: never retried.

    ``wait``, when given, is the wait the service asked for that the deadline leaves no time for.
    """
    return SendFailure(
        Failure.FATAL,
        f"deadline={request.deadline:g} s leaves no time for the {wait:.1f} s wait the service "
        "asked for (Retry-After)"
        if wait
        else f"deadline={request.deadline:g} s passed before the call was done",
        timeout=True,
        view=view,
    )


#: Why an answer in a transfer coding other than ``chunked`` alone is refused, on every
#: backend: h11 (under httpx and httpx2) refuses it before handing over the headers, where
#: aiohttp would follow the chunks and hand over what they hold still coded (``gzip,
#: chunked``), so the SDK refuses it on aiohttp itself, in these same words (``BodyReader``).
TRANSFER_CODING_REFUSAL = (
    "the response's Transfer-Encoding is not chunked alone, the only transfer coding the SDK "
    "reads (RFC 9112, section 6); a server compresses a body with Content-Encoding"
)


def transfer_coding_refused(view: RequestView) -> SendFailure:
    """Return the outcome of an answer in a transfer coding the SDK refuses: fatal, not retried.

    Args:
        view: the request, as an exception may keep it.

    Returns:
        The failure, with ``TRANSFER_CODING_REFUSAL`` as its detail.
    """
    return SendFailure(Failure.FATAL, TRANSFER_CODING_REFUSAL, timeout=False, view=view)


def _chunked_alone(transfer: Sequence[bytes]) -> bool:
    """Whether an answer's ``Transfer-Encoding`` headers say ``chunked`` and nothing else.

    One header, whose value is ``chunked`` in any case, with spaces or tabs around it: what h11
    reads. (RFC 9112 lets a response stack codings before ``chunked``, which neither h11 nor
    aiohttp decodes.)
    """
    return len(transfer) == 1 and transfer[0].strip(b" \t").lower() == b"chunked"


#: What a backend says of an answer's status line and headers when asked: the headers as
#: received (bytes pairs, a value may be any byte), the reason phrase and the protocol.
Details = tuple[Sequence[tuple[bytes, bytes]], str, bytes]

#: The headers by which the service announces deprecations, lower case.
_SIGNALS = frozenset({b"deprecation", b"sunset"})


def _framing(
    raw_headers: Iterable[tuple[bytes, bytes]],
) -> tuple[bytes | None, list[bytes], list[bytes], bool]:
    """Return what an answer's headers say of its body: length, codings, and any signal.

    Returns:
        The last ``Content-Length``, the ``Content-Encoding`` and ``Transfer-Encoding`` values
        in order, and whether a ``Deprecation`` or ``Sunset`` header came.
    """
    length: bytes | None = None
    encodings: list[bytes] = []
    transfer: list[bytes] = []
    signals = False
    # One pass over the raw pairs: a fraction of what four lookups in a library's
    # case-insensitive headers cost, on every call.
    for name, value in raw_headers:
        name = name.lower()
        if name == b"content-length":
            length = value
        elif name == b"content-encoding":
            encodings.append(value)
        elif name == b"transfer-encoding":
            transfer.append(value)
        elif name in _SIGNALS:
            signals = True
    return length, encodings, transfer, signals


def _decoding(
    encodings: Sequence[bytes],
    transfer: Sequence[bytes],
    keep: Callable[[bytes], None],
    view: Callable[[], RequestView],
) -> tuple[Decoder | None, SendFailure | None]:
    """Return the decoder a body in ``encodings`` needs (``None``: none), or why it is refused.

    Args:
        encodings: the answer's ``Content-Encoding`` values.
        transfer: its ``Transfer-Encoding`` values.
        keep: what takes each decoded piece.
        view: returns the request as an exception may keep it.

    Returns:
        The decoder and ``None``, or ``None`` and the refusal: a transfer coding other than
        ``chunked`` alone, or content codings the SDK does not read.
    """
    if transfer and not _chunked_alone(transfer):
        return None, transfer_coding_refused(view())
    stack = codings(encodings) if encodings else None
    if not stack:
        return None, None
    reason = refusal(stack)
    if reason is not None:
        return None, SendFailure(Failure.FATAL, reason, timeout=False, view=view())
    return Decoder(stack, keep), None


def _fits(length: bytes | None, transfer: Sequence[bytes], request: Request) -> bool:
    """Whether a body that is not encoded surely fits the request's cap, read plainly.

    It does when there is no cap, or when it is not chunked and its ``Content-Length`` is
    within the cap: the libraries then read exactly that length.
    """
    cap = request.max_bytes
    return cap is None or (
        not transfer and length is not None and length.isdigit() and int(length) <= cap
    )


class _ListedHeaders(Protocol):
    """Headers that keep each repeat of a field: httpx's and httpx2's ``Headers``."""

    def get_list(self, key: str, split_commas: bool = False) -> list[str]: ...

    def keys(self) -> KeysView[str]: ...

    def __contains__(self, key: object) -> bool: ...


@tolerant_repr
class FirstValues(Mapping[str, str]):
    """An answer's headers as the SDK reads them: a repeated field gives its first value.

    The fields the SDK reads (``Retry-After``, ``X-Request-Id``, ``Deprecation``, ``Sunset``)
    hold one value each. httpx and httpx2 join a repeated field's values into one string
    (``Retry-After: 3`` twice reads ``3, 3``, which is no wait at all), where aiohttp's
    headers give the first: this gives the first on the httpx family too, so that every
    backend reads a repeated field alike.

    Args:
        headers: the library's headers (httpx's or httpx2's ``Headers``); names are looked up
            case-insensitively.
    """

    __slots__ = ("_headers",)

    def __init__(self, headers: _ListedHeaders) -> None:
        self._headers = headers

    def __getitem__(self, name: str) -> str:
        values = self._headers.get_list(name)
        if not values:
            raise KeyError(name)
        return values[0]

    def __contains__(self, name: object) -> bool:
        return name in self._headers

    def __iter__(self) -> Iterator[str]:
        return iter(self._headers.keys())

    def __len__(self) -> int:
        return len(self._headers.keys())

    def __repr__(self) -> str:
        return f"<FirstValues of {len(self)} fields>"


@tolerant_repr
class Answer:
    """A response received in full: status, headers and body, with httpx views on demand.

    Args:
        status_code: the HTTP status code.
        headers: the headers, looked up case-insensitively; a repeated field gives its first
            value on every backend (aiohttp's own headers do; httpx's in ``FirstValues``).
        content: the body, decoded from its ``Content-Encoding``.
        details: returns the raw headers, the reason phrase (``""`` when none was sent) and
            the protocol as httpx names it (``b"HTTP/1.1"``); called only when needed.
        view: returns the request as an exception may keep it; called only when needed.
        native: the library's own ``httpx.Response``, read in full, if it is one; handed out
            as ``http_response`` (never kept by an exception: its request holds the key).
        signals: whether the answer carries a ``Deprecation`` or ``Sunset`` header.

    Attributes:
        elapsed: seconds from sending the request to having read the body (set by the core).
    """

    __slots__ = (
        "_details",
        "_native",
        "_response",
        "_view",
        "content",
        "elapsed",
        "headers",
        "signals",
        "status_code",
    )

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        content: bytes,
        *,
        details: Callable[[], Details],
        view: Callable[[], RequestView],
        native: httpx.Response | None = None,
        signals: bool = False,
    ) -> None:
        self.status_code: int = status_code
        self.headers: Mapping[str, str] = headers
        self.content: bytes = content
        self.signals: bool = signals
        self._details = details
        self._view = view
        self._native = native
        self._response: httpx.Response | None = native
        self.elapsed: float | None = None

    def answering(self, view: Callable[[], RequestView]) -> Answer:
        """Return this answer as the answer to another request (middleware's kept answers).

        Args:
            view: returns the other request as an exception may keep it.

        Returns:
            A new answer with this one's status, headers, body and what was received; not the
            library's own response, which answered the first request.
        """
        return Answer(
            self.status_code,
            self.headers,
            self.content,
            details=self._details,
            view=view,
            signals=self.signals,
        )

    def http_headers(self) -> httpx.Headers:
        """Return the headers as received, as ``httpx.Headers``."""
        return self.http_response().headers

    def http_response(self) -> httpx.Response:
        """Return the answer as an ``httpx.Response`` (read), built on first use."""
        if self._response is None:
            raw_headers, reason, http_version = self._details()
            extensions: dict[str, object] = {"http_version": http_version}
            if reason:
                # As a status line carries it: bytes, which may be any byte of Latin-1.
                extensions["reason_phrase"] = reason.encode("latin-1", "replace")
            self._response = response_view(
                self.status_code,
                raw_headers,
                self.content,
                self._view().request_view(),
                extensions,
            )
            if self.elapsed is not None:
                self._response.elapsed = timedelta(seconds=self.elapsed)
        return self._response

    def request_view(self) -> httpx.Request:
        """Return the request it answers, ``Authorization`` redacted."""
        return self._view().request_view()

    def recorded(self) -> Answer:
        """Return the answer as an exception may keep it: no object that holds the key.

        The request itself (its headers) and the library's response (its request's) are left
        behind; what remains is a ``RequestView`` and the details, read now.
        """
        view, details = self._view(), self._details()
        recorded = Answer(
            self.status_code,
            self.headers,
            self.content,
            details=lambda: details,
            view=lambda: view,
            signals=self.signals,
        )
        recorded.elapsed = self.elapsed
        return recorded

    def reason_phrase(self) -> str:
        """Return the status line's reason phrase (``""`` when none was sent)."""
        return self._details()[1]

    def __reduce__(self) -> tuple[object, ...]:
        # For pickle and copy (a raw response holds its answer): no object that holds the key.
        # The request keeps its method and URL but not its headers, as a pickled exception's
        # does; the library's response is left behind, its view built again when read.
        raw_headers, reason, version = self._details()
        view = self._view()
        state = (list(raw_headers), self.content, reason, version, view.method, view.url)
        return _rebuilt_answer, (self.status_code, *state, self.signals, self.elapsed)

    def __repr__(self) -> str:
        return f"<Answer {self.status_code}>"


def _rebuilt_answer(
    status_code: int,
    raw_headers: list[tuple[bytes, bytes]],
    content: bytes,
    reason: str,
    version: bytes,
    method: str,
    url: str,
    signals: bool,
    elapsed: float | None,
) -> Answer:
    """Return a pickled ``Answer`` as ``Answer.__reduce__`` left it: no request headers."""
    details = (raw_headers, reason, version)
    view = RequestView(method, url, (), {})
    answer = Answer(
        status_code,
        FirstValues(httpx.Headers(raw_headers)),
        content,
        details=lambda: details,
        view=lambda: view,
        signals=signals,
    )
    answer.elapsed = elapsed
    return answer


class _Stopped(Exception):
    """Carries why reading stops out of a decoder, from the piece that crossed the line."""

    def __init__(self, failure: SendFailure) -> None:
        super().__init__()
        self.failure = failure


class BodyReader:
    """Reads an answer's body for a backend: the one place that decodes, caps and times it.

    It reads the headers once, as received. A body that surely fits, in a call without a
    deadline, is read the library's plain way (``plain``), which is what the common answer
    costs; the backend then hands its size to ``check``. Any other is read in the pieces the
    library hands out, as they travelled (never decoded by the library), each given to
    ``add``: a body with a ``Content-Encoding`` is decoded here (``_core.decoding``), each
    layer bounded, so that a huge answer or a decompression bomb costs about the cap in
    memory on every backend, and a body dripping past the deadline stops at the next piece,
    even in an attempt its caller gave up on. The cap counts the decoded bytes; the coded ones,
    as they travelled, stop at ``coded_limit`` of the cap (twice it plus 64 KiB), which only a
    body that decodes to little or nothing reaches. A body in a coding the SDK did not ask
    for, or in too many, is not read at all (``refusal``), and neither is one in a transfer
    coding other than ``chunked`` alone (``TRANSFER_CODING_REFUSAL``).

    A body surely fits when it is neither encoded nor chunked and its ``Content-Length`` is
    within the cap: the HTTP libraries then read exactly that length (h11 fails on a longer
    body; with ``Transfer-Encoding`` it would follow the chunks and ignore the length).

    Args:
        request: the request being answered.
        raw_headers: the answer's headers as received, as bytes pairs.
        view: returns the request as an exception may keep it.
        read: the library has read the body already, decoded (a user's response hook read
            it, or a transport made the response from bytes: a mock, an in-process app). It
            is plain then, as the library handed it over, checked against the cap after the
            fact; a refused body is never plain.
    """

    __slots__ = (
        "_body",
        "_decoder",
        "_feed",
        "_limit",
        "_travelled",
        "plain",
        "refusal",
        "signals",
    )

    def __init__(
        self,
        request: Request,
        raw_headers: Iterable[tuple[bytes, bytes]],
        view: Callable[[], RequestView],
        *,
        read: bool = False,
    ) -> None:
        # Apart from the reader: a decoder holds the body's ``keep``, and a reference from it
        # back to the reader would be a cycle, left for the garbage collector at every call.
        self._body = _Body(request, view)
        length, encodings, transfer, signals = _framing(raw_headers)
        #: Why the body must not be read at all (a transfer coding or a content coding the SDK
        #: does not read), if so.
        self.refusal: SendFailure | None
        self._decoder: Decoder | None
        self._decoder, self.refusal = _decoding(encodings, transfer, self._body.keep, view)
        #: Whether to read the body the library's plain way: it surely fits, or the library
        #: has read it already; never when it is refused.
        self.plain: bool = self.refusal is None and (
            read or (request.ends is None and not encodings and _fits(length, transfer, request))
        )
        #: Whether the answer carries a ``Deprecation`` or ``Sunset`` header.
        self.signals: bool = signals
        self._feed = self._body.keep if self._decoder is None else self._decoder.feed
        self._travelled = 0
        cap = request.max_bytes
        self._limit = None if cap is None else coded_limit(cap)

    def add(self, chunk: bytes) -> SendFailure | None:
        """Take the next piece of the body as it travelled; return why reading must stop, if so.

        It stops past the cap, the coded bytes' limit or the deadline, or at a body that its
        codings do not describe.
        """
        if self._decoder is not None:
            # A coded piece may decode to nothing (an empty gzip member, a deflate flush
            # block): an endless run of them must stop too. Checked before decoding, so that
            # where it stops does not depend on how the library split the body.
            self._travelled += len(chunk)
            limit = self._limit
            if limit is not None and self._travelled > limit:
                cap = self._body.request.max_bytes
                return self._body.too_large(
                    f"the response body is larger than {limit} bytes as it travelled, before "
                    f"decoding (at most twice max_response_bytes={cap} plus 64 KiB); reading "
                    "stopped there"
                )
        try:
            self._feed(chunk)
        except _Stopped as stopped:
            return stopped.failure
        except DecodeError as exc:
            return self._undecodable(exc)
        if self._decoder is None:
            return None
        # The deadline holds for pieces that decode to nothing, which ``keep`` never sees.
        return self._body.check(self._body.size)

    def done(self) -> SendFailure | None:
        """Return why the body, read to its end, is refused (cut short inside a coding), if so."""
        if self._decoder is None:
            return None
        try:
            self._decoder.end()
        except DecodeError as exc:
            return self._undecodable(exc)
        return None

    def read(self, chunks: Iterable[bytes]) -> SendFailure | None:
        """Take the pieces of the body, then its end; return why reading stopped, if it did."""
        for chunk in chunks:
            if stop := self.add(chunk):
                return stop
        return self.done()

    async def aread(self, chunks: AsyncIterable[bytes]) -> SendFailure | None:
        """Take the pieces of the body, then its end; return why reading stopped, if it did."""
        async for chunk in chunks:
            if stop := self.add(chunk):
                return stop
        return self.done()

    def check(self, size: int) -> SendFailure | None:
        """Return why a body of ``size`` bytes so far is refused (cap, deadline), if it is.

        A transport that does not frame bodies by their headers (a mock, an ASGI app) may hand
        over more than ``Content-Length`` said: a plain read is checked too.
        """
        return self._body.check(size)

    def content(self) -> bytes:
        """Return the body read so far, decoded."""
        return b"".join(self._body.parts)

    def _undecodable(self, exc: DecodeError) -> SendFailure:
        self._body.parts.clear()
        return SendFailure(Failure.FATAL, str(exc), timeout=False, view=self._body.view())


class _Body:
    """The body read so far, decoded, and the limits it must keep while it grows."""

    __slots__ = ("parts", "request", "size", "view")

    def __init__(self, request: Request, view: Callable[[], RequestView]) -> None:
        self.request = request
        self.view = view
        self.parts: list[bytes] = []
        self.size = 0

    def keep(self, piece: bytes) -> None:
        """Keep the next decoded piece; raise ``_Stopped`` when the body must stop there."""
        self.size += len(piece)
        self.parts.append(piece)
        if stop := self.check(self.size):
            raise _Stopped(stop)

    def check(self, size: int) -> SendFailure | None:
        """Return why a body of ``size`` bytes so far is refused (cap, deadline), if it is."""
        request = self.request
        if request.max_bytes is not None and size > request.max_bytes:
            return self.too_large(
                f"the response body is larger than max_response_bytes={request.max_bytes}; "
                "reading stopped there"
            )
        if request.ends is not None and time.monotonic() >= request.ends:
            return deadline_passed(request, self.view())
        return None

    def too_large(self, detail: str) -> SendFailure:
        """Drop what was read and return the failure of a body past a limit, ``detail`` why."""
        self.parts.clear()
        return SendFailure(Failure.TOO_LARGE, detail, timeout=False, view=self.view())


class SyncSender(Protocol):
    """What a sync backend offers the client: send one attempt."""

    @property
    def closed(self) -> bool:
        """Whether the library's client was closed."""
        ...

    def send(self, request: Request) -> Answer | SendFailure:
        """Send one attempt and read its answer in full, through a ``BodyReader``."""
        ...


class AsyncSender(Protocol):
    """What an async backend offers the client: send one attempt, and sleep between two."""

    @property
    def closed(self) -> bool:
        """Whether the library's client was closed."""
        ...

    def send(self, request: Request) -> Awaitable[Answer | SendFailure]:
        """Send one attempt and read its answer in full, through a ``BodyReader``."""
        ...

    def sleep(self, delay: float) -> Awaitable[None]:
        """Wait ``delay`` seconds the running event loop's way."""
        ...


def response_view(
    status_code: int,
    headers: Iterable[tuple[bytes, bytes]],
    content: bytes,
    request: httpx.Request,
    extensions: dict[str, object],
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

    Returns:
        The response, read.
    """
    pairs = list(headers)
    if any(name.lower() == b"content-encoding" for name, _ in pairs):
        pairs = [p for p in pairs if p[0].lower() not in (b"content-encoding", b"content-length")]
    return httpx.Response(
        status_code, headers=pairs, content=content, request=request, extensions=extensions
    )
