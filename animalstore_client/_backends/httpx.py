"""The httpx family backend: ``httpx`` and ``httpx2``, one API in two packages.

A ``Family`` holds what differs between the two, the library module itself (its exception
classes and ``URL``), so that one sender serves both. Every request goes through the client's
own ``build_request`` and ``send``, so whatever is plugged into that client (event hooks, auth,
mounts, transports, instrumentation, a patched ``send``) sees every call. The library's errors
are classified here and then dropped: see ``_core.wire``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import httpx

from animalstore_client._backends.eventloop import sleep
from animalstore_client._core.wire import (
    Answer,
    BodyReader,
    Details,
    Failure,
    FailureTable,
    FirstValues,
    Request,
    RequestView,
    SendFailure,
    kind_of,
    transfer_coding_refused,
)

__all__ = ["AsyncHttpxSender", "Family", "SyncHttpxSender", "family"]


class Family:
    """One library of the httpx family, and what the senders need of it.

    Args:
        lib: the library module (``httpx`` or ``httpx2``).
    """

    __slots__ = (
        "failures",
        "lib",
        "protocol_error",
        "request_error",
        "status_error",
        "timeout_error",
        "url",
    )

    def __init__(self, lib: ModuleType) -> None:
        self.lib = lib
        self.request_error: type[Exception] = lib.RequestError
        self.protocol_error: type[Exception] = lib.RemoteProtocolError
        self.status_error: type[Exception] = lib.HTTPStatusError
        self.timeout_error: type[Exception] = lib.TimeoutException
        #: Any other error (``DecodingError``, ``UnsupportedProtocol``, ``ProxyError`` ...) is
        #: fatal.
        self.failures: FailureTable = {
            Failure.NOT_SENT: (lib.ConnectError, lib.ConnectTimeout, lib.PoolTimeout),
            Failure.MAYBE_SENT: (lib.TimeoutException, lib.NetworkError, lib.RemoteProtocolError),
        }
        # Parsing the URL and merging the query is a third of what httpx spends building a
        # request; the calls an SDK makes use a handful of URLs.
        self.url = functools.lru_cache(maxsize=256)(_url_parser(lib))

    def build(self, http: Any, request: Request, headers_of: Callable[[Request], Any]) -> Any:
        """Build ``request`` with ``http``'s ``build_request``, so that its own defaults apply.

        ``headers_of`` returns the request's headers as the library's own ``Headers``; called
        inside the call to ``build_request``, never kept in a local: a frame that a traceback
        formatted with its locals shows must not hold the key.
        """
        url: object = request.url
        params = request.params
        if not http.params:  # a client's own params merge in httpx's order, the call's last
            url = self.url(url, None if params is None else tuple(params.items()))
            params = None
        return http.build_request(
            request.method,
            url,
            params=params,
            headers=headers_of(request),
            content=request.content,
            extensions={"timeout": request.timeout},
        )

    def outcome(self, exc: Exception, request: Request, built: Any) -> Answer | SendFailure:
        """Return what an error raised while sending says, without keeping the error.

        A user's response hook that calls ``raise_for_status()`` raises with the response it
        got: that answer, its body unread, is the outcome (so the SDK's typed error and its
        retries hold). Anything else a user's hook, auth or transport raises (or httpx's own
        ``RuntimeError`` for a client closed during the call) ends the attempt as fatal: let
        through, its traceback would hold the request's headers.
        """
        if isinstance(exc, self.status_error):
            return self.answer(request, built, exc.response, b"")  # type: ignore[attr-defined]
        if isinstance(exc, self.request_error):
            return self.classify(exc, request, built)
        return SendFailure.of(exc, Failure.FATAL, timeout=False, view=_view(request, built))

    def classify(self, exc: Exception, request: Request, built: Any) -> SendFailure:
        """Return what an error of the library says about the attempt, without keeping it."""
        if isinstance(exc, self.protocol_error) and str(exc) in _H11_TRANSFER_CODINGS:
            return transfer_coding_refused(_view(request, built))
        failure = kind_of(exc, self.failures)
        if failure is Failure.NOT_SENT and _hung_up_after_sending(exc):
            failure = Failure.MAYBE_SENT
        timeout = isinstance(exc, self.timeout_error)
        return SendFailure.of(exc, failure, timeout=timeout, view=_view(request, built))

    def answer(
        self,
        request: Request,
        built: Any,
        response: Any,
        content: bytes | None,
        signals: bool | None = None,
    ) -> Answer:
        """Return the core's answer for ``response``; ``content`` is ``None`` if httpx read it.

        ``signals``: whether it carries a ``Deprecation`` or ``Sunset`` header, as its
        ``BodyReader`` found; ``None``: look.
        """
        if signals is None:
            signals = BodyReader(request, response.headers.raw, request.view).signals
        # httpx's own response, read in full, is handed out as it is; httpx2's never is.
        native = response if content is None and isinstance(response, httpx.Response) else None
        return Answer(
            response.status_code,
            FirstValues(response.headers),
            response.content if content is None else content,
            details=functools.partial(_details, response),
            view=functools.partial(_view, request, built),
            native=native,
            signals=signals,
        )


#: What h11 says of an answer's ``Transfer-Encoding`` other than ``chunked`` alone, which it
#: refuses before the headers reach the SDK: the SDK's own refusal of it, as on aiohttp.
_H11_TRANSFER_CODINGS = frozenset(
    {"Only Transfer-Encoding: chunked is supported", "multiple Transfer-Encoding headers"}
)


def _url_parser(lib: ModuleType) -> Any:
    def parse(url: str, params: tuple[tuple[str, str | int], ...] | None) -> Any:
        return lib.URL(url, params=params)

    return parse


@functools.cache
def family(lib: ModuleType) -> Family:
    """Return the ``Family`` of the library module ``lib``, made once."""
    return Family(lib)


def _details(response: Any) -> Details:
    """Return the response's raw headers, reason phrase and protocol, for a view."""
    version = response.extensions.get("http_version", b"HTTP/1.1")
    return response.headers.raw, response.reason_phrase, version


def _view(request: Request, built: Any) -> RequestView:
    """Return the request as the client built it (its headers merged in), as errors keep it."""
    return RequestView(built.method, str(built.url), built.headers.multi_items(), request.timeout)


def _reader(request: Request, built: Any, response: Any) -> BodyReader:
    """Return the ``BodyReader`` of ``response``, which says whether httpx reads it plainly.

    A response hook of the user's that read the body, or a transport that made its response
    from bytes (httpx reads those at once: a mock, an in-process app), leaves only what httpx
    decoded: that is the body, checked against the cap after the fact.
    """
    read = bool(response.is_stream_consumed)
    return BodyReader(
        request, response.headers.raw, functools.partial(_view, request, built), read=read
    )


def _content(reader: BodyReader) -> bytes | None:
    """Return the body ``reader`` read in pieces; ``None`` when httpx read it its plain way."""
    return None if reader.plain else reader.content()


def _hung_up_after_sending(exc: Exception) -> bool:
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


class _Sender:
    """What both senders hold: a client of the httpx family, its library, and its last headers.

    Args:
        http: the client.
        family: its library.
    """

    __slots__ = ("_headers", "family", "http")

    def __init__(self, http: Any, family: Family) -> None:
        self.http = http
        self.family = family
        # The last request's headers as the library's own ``Headers``: given a dict, it
        # normalizes every name and value at each call; given its own, it copies their list
        # (about 2 us a call). The calls of a client without headers of their own share its
        # dict: the same object each time. Kept here, with the client that sent them, never
        # in the process-wide ``Family``: they hold the key, which must go with the client.
        self._headers: tuple[Mapping[str, str], Any] | None = None

    def _build(self, request: Request) -> Any:
        """Build ``request`` with the client's ``build_request``, headers as the library's own."""
        return self.family.build(self.http, request, self._headers_of)

    def _headers_of(self, request: Request) -> Any:
        """Return the request's headers as the library's own ``Headers``."""
        headers = self._headers
        if headers is None or headers[0] is not request.headers:
            headers = self._headers = (request.headers, self.family.lib.Headers(request.headers))
        return headers[1]

    @property
    def closed(self) -> bool:
        """Whether the client was closed."""
        return bool(self.http.is_closed)


class SyncHttpxSender(_Sender):
    """Sends with an ``httpx.Client`` or an ``httpx2.Client``."""

    __slots__ = ()

    def send(self, request: Request) -> Answer | SendFailure:
        """Send one attempt and read its answer in full, through a ``BodyReader``.

        Returns:
            The answer, or the classified failure.
        """
        family = self.family
        built = self._build(request)
        try:
            response = self.http.send(built, stream=True)
            try:
                reader = _reader(request, built, response)
                stop = reader.refusal
                if reader.plain:
                    stop = reader.check(len(response.read()))
                elif stop is None:
                    stop = reader.read(response.iter_raw())  # decoded by the reader
            finally:
                response.close()  # mid-body, httpcore drops the connection rather than reuse it
        except Exception as exc:
            return family.outcome(exc, request, built)
        content = _content(reader)
        return stop or family.answer(request, built, response, content, reader.signals)


class AsyncHttpxSender(_Sender):
    """Sends with an ``httpx.AsyncClient`` or an ``httpx2.AsyncClient``, on asyncio or trio."""

    __slots__ = ()

    #: Waits between attempts the running library's way.
    sleep = staticmethod(sleep)

    async def send(self, request: Request) -> Answer | SendFailure:
        """Send one attempt and read its answer in full, through a ``BodyReader``.

        Returns:
            The answer, or the classified failure.
        """
        family = self.family
        built = self._build(request)
        stop = None
        try:
            response = await self.http.send(built, stream=True)
            try:
                reader = _reader(request, built, response)
                stop = reader.refusal
                if reader.plain:
                    stop = reader.check(len(await response.aread()))
                elif stop is None:
                    stop = await reader.aread(response.aiter_raw())  # decoded by the reader
            finally:
                await response.aclose()
        except Exception as exc:
            return family.outcome(exc, request, built)
        content = _content(reader)
        return stop or family.answer(request, built, response, content, reader.signals)
