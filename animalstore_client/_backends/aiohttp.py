"""The aiohttp backend: sends the core's requests through an ``aiohttp.ClientSession``.

Imported only when an ``AsyncClient`` is given a session or ``DefaultAioHttpClient`` is
called: ``import animalstore_client`` never imports aiohttp. It builds no httpx object per
call: the answer's ``httpx.Response`` view is made only if someone reads it (``_wire``).
Everything goes through the session's public ``request``, so aiohttp's own tracing
(``TraceConfig``, OpenTelemetry's aiohttp-client instrumentation) and middlewares see it.

What aiohttp would rebuild from the same parts at every call is handed to it built, in the
types it takes as they are (``yarl.URL``, a ``multidict`` proxy, ``ClientTimeout``): the URL
with its query, the headers and the limits. Together that is about 5% of a call's CPU with
1,000 calls in flight (docs/performance.md, case 7).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from animalstore_client._backends.eventloop import refuse_trio
from animalstore_client._core.config import DEFAULT_CONNECTION_LIMITS, DEFAULT_TIMEOUT
from animalstore_client._core.wire import (
    Answer,
    BodyReader,
    Failure,
    FailureTable,
    Request,
    SendFailure,
    kind_of,
)

__all__ = ["MAX_HEADER_BYTES", "AiohttpSender", "new_session"]

#: The longest status line and header field aiohttp reads for the SDK: httpx (h11, as httpcore
#: sets it up) takes up to 100 KiB of headers, where aiohttp stops at 8,190 bytes a field.
MAX_HEADER_BYTES = 100 * 1024


async def _next_turn() -> None:
    """Let the event loop run the callbacks it has queued, then go on.

    Not ``asyncio.sleep(0)``: test suites often replace ``asyncio.sleep`` to skip the waits
    between retries, which would take this turn away with them.
    """
    loop = asyncio.get_running_loop()
    turn = loop.create_future()
    loop.call_soon(turn.set_result, None)
    await turn


#: Waiting for a pool slot or for the TCP/TLS connection, nothing was sent; after that, any
#: error may have come once some of the request was written.
_FAILURES: FailureTable = {
    Failure.NOT_SENT: (aiohttp.ConnectionTimeoutError, aiohttp.ClientConnectorError),
    Failure.FATAL: (aiohttp.ClientHttpProxyError,),
    Failure.MAYBE_SENT: (
        aiohttp.ClientConnectionError,  # "Cannot write to closing transport", disconnected ...
        aiohttp.ClientResponseError,
        aiohttp.ClientPayloadError,
        asyncio.TimeoutError,
    ),
}


def classify(exc: BaseException, request: Request) -> SendFailure:
    """Return what an aiohttp error says about the attempt, without keeping the error.

    Only the error's class and message are kept: its ``repr``, ``args`` and ``request_info``
    (a ``ClientResponseError``'s) hold the request's headers, the key included.

    Args:
        exc: what aiohttp raised.
        request: the request that was being sent.

    Returns:
        The failure; an error not in ``_FAILURES`` (an invalid URL ...) is fatal.
    """
    return SendFailure.of(
        exc,
        kind_of(exc, _FAILURES),
        timeout=isinstance(exc, asyncio.TimeoutError),
        view=request.view(),
        # Its str() is "status, message=..., url=..."; the message is what the parser said.
        message=exc.message if isinstance(exc, aiohttp.ClientResponseError) else None,
    )


class _AttemptFailed(Exception):
    """Carries an aiohttp connection error past the session's own resend (see below)."""

    def __init__(self, error: aiohttp.ClientError) -> None:
        super().__init__()
        self.error = error


#: Set while the SDK sends: the session's other requests (the caller's own) are left alone.
_sdk_call: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "animalstore_sdk_call", default=False
)


async def _attempt_once(
    request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
) -> aiohttp.ClientResponse:
    """Send an SDK call once: a client middleware that turns off aiohttp's resend of a GET.

    aiohttp sends a GET again, at once, when the connection drops; the SDK counts, spaces
    and logs its retries itself, so that ``max_retries`` is every attempt made. An error that
    is not an ``aiohttp.ClientError`` leaves aiohttp's loop at once; the sender unwraps it.
    """
    if not _sdk_call.get():
        return await handler(request)
    try:
        return await handler(request)
    except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
        raise _AttemptFailed(exc) from None


def new_session(**kwargs: Any) -> aiohttp.ClientSession:
    """Return an ``aiohttp.ClientSession`` with the SDK's defaults; see ``DefaultAioHttpClient``."""
    refuse_trio("DefaultAioHttpClient")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        # aiohttp's own error, "no running event loop", does not say what to do.
        raise RuntimeError(
            "DefaultAioHttpClient() must be called inside a coroutine, as aiohttp binds a "
            "session to the running event loop: async def main(): async with "
            "DefaultAioHttpClient() as http, AsyncClient(http_client=http) as client: ..., "
            "then asyncio.run(main())"
        ) from None
    timeout = DEFAULT_TIMEOUT
    limits = DEFAULT_CONNECTION_LIMITS
    if "connector" not in kwargs:
        kwargs["connector"] = aiohttp.TCPConnector(
            limit=limits.max_connections or 0, keepalive_timeout=limits.keepalive_expiry
        )
    kwargs.setdefault(
        "timeout",
        aiohttp.ClientTimeout(
            connect=timeout.pool, sock_connect=timeout.connect, sock_read=timeout.read
        ),
    )
    if "trust_env" not in kwargs:
        # aiohttp reads the proxy variables (and .netrc) only with trust_env, and then in a
        # thread before every request, which halves the calls a second with 1,000 in flight:
        # worth it only where a proxy is set.
        from urllib.request import getproxies

        kwargs["trust_env"] = any(scheme != "no" for scheme in getproxies())  # "no": NO_PROXY
    middlewares: Sequence[Any] = kwargs.get("middlewares", ())
    kwargs["middlewares"] = (*middlewares, _attempt_once)
    return aiohttp.ClientSession(**kwargs)


@functools.lru_cache(maxsize=256)
def _url(url: str, query: tuple[tuple[str, str | int], ...] | None) -> URL:
    """Return the URL with its query, as aiohttp would build it at every call."""
    return URL(url).with_query(query)


async def _answer(request: Request, response: aiohttp.ClientResponse) -> Answer | SendFailure:
    """Return the answer with its body read, or why the body was not read in full.

    A response whose body is not read in full is closed, not released: the rest must not be
    read, nor the connection reused.
    """
    reader = BodyReader(request, response.raw_headers, request.view)
    body = await _body(reader, response)
    if isinstance(body, SendFailure):
        response.close()
        return body
    details = (response.raw_headers, response.reason or "", b"HTTP/1.1")
    return Answer(
        response.status,
        response.headers,  # a multidict: a repeated field gives its first value
        body,
        details=lambda: details,
        view=request.view,
        signals=reader.signals,
    )


async def _body(reader: BodyReader, response: aiohttp.ClientResponse) -> bytes | SendFailure:
    """Return the body, read through ``reader``, or why it is refused or reading stopped."""
    if reader.refusal is not None:
        return reader.refusal
    if reader.plain:
        content = await response.read()
        return reader.check(len(content)) or content
    return await reader.aread(response.content.iter_any()) or reader.content()


class AiohttpSender:
    """Sends with an ``aiohttp.ClientSession`` (asyncio only).

    Args:
        session: the session; the caller's, never closed here.
    """

    __slots__ = ("_headers", "_timeout", "session")

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        # The last request's headers and timeouts, as aiohttp takes them. The calls of a
        # client without options of their own share its dicts: the same objects each time.
        self._headers: tuple[Mapping[str, str], CIMultiDictProxy[str]] | None = None
        self._timeout: tuple[Mapping[str, float | None], aiohttp.ClientTimeout] | None = None

    def _headers_of(self, request: Request) -> CIMultiDictProxy[str]:
        """Return the request's headers as aiohttp takes them without converting them.

        Called inside the call to aiohttp, never kept in a local: the sender's frames, which a
        traceback formatted with its locals shows, must not hold the key.
        """
        headers = self._headers
        if headers is None or headers[0] is not request.headers:
            headers = self._headers = (
                request.headers,
                CIMultiDictProxy(CIMultiDict(request.headers)),
            )
        return headers[1]

    def _timeout_of(self, request: Request) -> aiohttp.ClientTimeout:
        """Return the request's limits on each phase of the attempt, as aiohttp's."""
        timeout = self._timeout
        if timeout is None or timeout[0] is not request.timeout:
            limits = request.timeout
            timeout = self._timeout = (
                limits,
                aiohttp.ClientTimeout(
                    connect=limits.get("pool"),
                    sock_connect=limits.get("connect"),
                    sock_read=limits.get("read"),
                ),
            )
        return timeout[1]

    def _request(self, request: Request) -> Any:
        """Return the session's request for one attempt, to enter: nothing is sent before.

        Headers, URL and limits go in as aiohttp takes them, built inside this call; whatever
        the session's own settings, the SDK reads every answer itself, as it travelled (the
        core decodes it), with headers as large as httpx takes.
        """
        params = request.params
        return self.session.request(
            request.method,
            _url(request.url, None if params is None else tuple(params.items())),
            headers=self._headers_of(request),
            data=request.content,
            allow_redirects=False,
            timeout=self._timeout_of(request),
            raise_for_status=False,
            auto_decompress=False,
            max_line_size=MAX_HEADER_BYTES,
            max_field_size=MAX_HEADER_BYTES,
        )

    @property
    def closed(self) -> bool:
        """Whether the session was closed."""
        return self.session.closed

    @staticmethod
    async def sleep(delay: float) -> None:
        """Wait between attempts."""
        await asyncio.sleep(delay)

    async def send(self, request: Request) -> Answer | SendFailure:
        """Send one attempt and read its answer in full, up to ``request.max_bytes``.

        Returns:
            The answer, or the classified failure.

        Raises:
            RuntimeError: called under trio, or the session is closed (also while the call
                waited to retry).
        """
        refuse_trio("an AsyncClient on aiohttp")
        # aiohttp learns that the server closed an idle pooled connection only when its loop
        # reads the socket; after the loop stood still (a sync wrapper running one call at a
        # time, a loop busy with CPU work) it would write the request to the dead connection.
        # One turn of the loop first runs the socket's read callback, already queued ahead of
        # this task's next step, which marks the connection closed. (A session with
        # trust_env=True gets such turns anyway: aiohttp looks up .netrc and the proxy in a
        # thread.)
        await _next_turn()
        marked = _sdk_call.set(True)
        try:
            async with self._request(request) as response:
                return await _answer(request, response)
        except _AttemptFailed as exc:
            return classify(exc.error, request)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            return classify(exc, request)
        except Exception as exc:
            if not (isinstance(exc, RuntimeError) and self.session.closed):
                # Anything else a user's middleware or trace hook raises, or aiohttp's
                # ValueError for credentials of the session's own (its auth=, or a .netrc entry
                # read with trust_env) that collide with the SDK's Authorization header, ends
                # the attempt as fatal, as on httpx: let through, its traceback would hold the
                # request's headers, and its message (redacted in the SDK's) may quote them.
                return classify(exc, request)
        finally:
            _sdk_call.reset(marked)
        # The session was closed meanwhile; raised here, outside aiohttp's frames, whose locals
        # hold the headers.
        raise RuntimeError("the aiohttp session was closed during the call")
