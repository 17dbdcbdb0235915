"""The httpx backend: sends the core's requests through an ``httpx.Client``/``AsyncClient``.

Every request goes through the client's own ``build_request`` and ``send``, so whatever is
plugged into that client (event hooks, auth, mounts, transports, OpenTelemetry's
``HTTPXClientInstrumentor``, a patched ``send``) sees every call. httpx's errors are classified
here and then dropped: see ``_wire``.
"""

from __future__ import annotations

import functools
import sys
from datetime import timedelta

import httpx

from animalstore_client._eventloop import sleep
from animalstore_client._wire import (
    Answer,
    CappedBody,
    Failure,
    RecordedAnswer,
    Request,
    SendFailure,
    deadline_passed,
    fits,
    past,
    redacted_request,
    response_view,
    too_large,
)

__all__ = ["AsyncHttpxSender", "HttpxAnswer", "SyncHttpxSender", "classify", "to_httpx"]

#: The response extensions an exception keeps (not the network stream, say).
_KEPT = ("http_version", "reason_phrase")

#: First match wins: subclasses before their bases.
_FAILURES: tuple[tuple[type[httpx.RequestError], Failure], ...] = (
    (httpx.ConnectError, Failure.NOT_SENT),
    (httpx.ConnectTimeout, Failure.NOT_SENT),
    (httpx.PoolTimeout, Failure.NOT_SENT),
    (httpx.TimeoutException, Failure.MAYBE_SENT),
    (httpx.NetworkError, Failure.MAYBE_SENT),
    (httpx.RemoteProtocolError, Failure.MAYBE_SENT),
)


def classify(exc: httpx.RequestError, request: httpx.Request) -> SendFailure:
    """Return what an httpx error says about the attempt, without keeping the error.

    Args:
        exc: what httpx raised.
        request: the request that was being sent.

    Returns:
        The failure; an error not listed in ``_FAILURES`` (``DecodingError``,
        ``UnsupportedProtocol``, ``ProxyError`` ...) is fatal.
    """
    failure = next((kind for cls, kind in _FAILURES if isinstance(exc, cls)), Failure.FATAL)
    if failure is Failure.NOT_SENT and _hung_up_after_sending(exc):
        failure = Failure.MAYBE_SENT
    return SendFailure(
        failure,
        f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
        timeout=isinstance(exc, httpx.TimeoutException),
        request=_redacted(request),
    )


def _redacted(request: httpx.Request) -> httpx.Request:
    """Return a view of ``request`` that an exception may keep: ``Authorization`` redacted."""
    return redacted_request(
        request.method,
        request.url,
        request.headers.multi_items(),
        request.extensions.get("timeout"),
    )


def _hung_up_after_sending(exc: httpx.RequestError) -> bool:
    """Whether a "not sent" error really chains an aiohttp error raised after sending.

    httpx-aiohttp's own client (``httpx_aiohttp.HttpxAiohttpClient``, an ``httpx.AsyncClient``
    a user may pass in) raises ``ConnectTimeout`` for every aiohttp connection error, a
    server that hung up after reading the request included; the aiohttp error it chains says
    which it was. aiohttp is looked up, not imported: if it is not loaded, it raised nothing.
    """
    aiohttp = sys.modules.get("aiohttp")
    cause = exc.__cause__
    if aiohttp is None or not isinstance(cause, aiohttp.ClientError):
        return False
    return not isinstance(cause, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError))


class HttpxAnswer(Answer):
    """An ``httpx.Response`` and its body, read within the cap, as the core sees it.

    Args:
        response: the response: streamed and closed, or read.
        content: its body, decoded, when the response was streamed; ``None`` when it was read.
    """

    __slots__ = ("_read", "response")

    def __init__(self, response: httpx.Response, content: bytes | None = None) -> None:
        self.response = response
        self.status_code = response.status_code
        self.headers = response.headers
        self.content = response.content if content is None else content
        self._read: httpx.Response | None = response if content is None else None

    def http_headers(self) -> httpx.Headers:
        """Return the response's own headers."""
        return self.response.headers

    def http_response(self) -> httpx.Response:
        """Return the response as httpx would have read it: its request, headers and body.

        httpx's own when it was read; else built on first use, since reading the body in
        capped pieces leaves httpx's response streamed rather than read.
        """
        if self._read is None:
            response = self.response
            self._read = response_view(
                self.status_code,
                response.headers.raw,
                self.content,
                response.request,
                dict(response.extensions),
                _elapsed(response),
            )
        return self._read

    def recorded(self) -> RecordedAnswer:
        """Return the answer detached from the response's request, which holds the key."""
        response = self.response
        return RecordedAnswer(
            self.status_code,
            self.headers,
            self.content,
            response.headers.raw,
            {name: response.extensions[name] for name in _KEPT if name in response.extensions},
            _redacted(response.request),
            _elapsed(response),
        )

    def reason_phrase(self) -> str:
        """Return the reason phrase."""
        return self.response.reason_phrase


def _elapsed(response: httpx.Response) -> timedelta | None:
    """Return the response's ``elapsed``, which httpx sets when it closes the response."""
    try:
        return response.elapsed
    except RuntimeError:  # one built by hand, never sent
        return None


def _plain_read(response: httpx.Response, request: Request) -> bool:
    """Whether to read the body httpx's plain way (``read()``) rather than in capped pieces.

    Only when it surely fits (``fits``), and the call has no deadline: under a deadline the
    pieces let an attempt stop reading a dripping body once the deadline passes, even in the
    worker thread of a sync call that stopped waiting for it.
    """
    return request.ends is None and fits(response.headers, request.max_bytes)


def _checked(answer: HttpxAnswer, request: Request, built: httpx.Request) -> Answer | SendFailure:
    """Return ``answer``, or the size failure if its body is past the cap after all.

    A transport that does not frame bodies by their headers (a mock, an ASGI app) may hand
    over more than ``Content-Length`` said.
    """
    cap = request.max_bytes
    if cap is not None and len(answer.content) > cap:
        return too_large(request, _redacted(built))
    return answer


def to_httpx(http: httpx.Client | httpx.AsyncClient, request: Request) -> httpx.Request:
    """Build ``request`` with ``http``'s ``build_request``, so that its own defaults apply.

    Args:
        http: the client to send with; its headers, cookies and params are merged in.
        request: the core's request.

    Returns:
        The ``httpx.Request`` to send.
    """
    url: str | httpx.URL = request.url
    params = request.params
    if not http.params:
        # Parsing the URL and merging the query is a third of what httpx spends building a
        # request; the calls an SDK makes use a handful of URLs. (A client with params of
        # its own gets them merged in httpx's order, the call's last.)
        url = _url(url, None if params is None else tuple(params.items()))
        params = None
    return http.build_request(
        request.method,
        url,
        params=params,
        headers=request.headers,
        content=request.content,
        extensions={"timeout": request.timeout},
    )


@functools.lru_cache(maxsize=256)
def _url(url: str, params: tuple[tuple[str, str | int], ...] | None) -> httpx.URL:
    """Return ``url`` with ``params`` as its query, parsed once per process."""
    return httpx.URL(url, params=params)


class SyncHttpxSender:
    """Sends with an ``httpx.Client``.

    Args:
        http: the client.
    """

    __slots__ = ("http",)

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def send(self, request: Request) -> Answer | SendFailure:
        """Send one attempt and read its answer in full, up to ``request.max_bytes``.

        Returns:
            The answer, or the classified failure.
        """
        built = to_httpx(self.http, request)
        try:
            response = self.http.send(built, stream=True)
            try:
                if _plain_read(response, request):
                    response.read()
                    return _checked(HttpxAnswer(response), request, built)
                body = CappedBody(request.max_bytes)
                for chunk in response.iter_bytes():
                    if not body.add(chunk):
                        return too_large(request, _redacted(built))
                    if past(request):
                        return deadline_passed(request, _redacted(built))
            finally:
                response.close()  # mid-body, httpcore drops the connection rather than reuse it
        except httpx.RequestError as exc:
            return classify(exc, built)
        return HttpxAnswer(response, body.content())


class AsyncHttpxSender:
    """Sends with an ``httpx.AsyncClient``, under asyncio or trio.

    Args:
        http: the client.
    """

    __slots__ = ("http",)

    #: Waits between attempts the running library's way.
    sleep = staticmethod(sleep)

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def send(self, request: Request) -> Answer | SendFailure:
        """Send one attempt and read its answer in full, up to ``request.max_bytes``.

        Returns:
            The answer, or the classified failure.
        """
        built = to_httpx(self.http, request)
        try:
            response = await self.http.send(built, stream=True)
            try:
                if _plain_read(response, request):
                    await response.aread()
                    return _checked(HttpxAnswer(response), request, built)
                body = CappedBody(request.max_bytes)
                async for chunk in response.aiter_bytes():
                    if not body.add(chunk):
                        return too_large(request, _redacted(built))
                    if past(request):
                        return deadline_passed(request, _redacted(built))
            finally:
                await response.aclose()
        except httpx.RequestError as exc:
            return classify(exc, built)
        return HttpxAnswer(response, body.content())
