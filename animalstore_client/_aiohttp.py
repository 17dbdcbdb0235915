"""The aiohttp backend behind ``DefaultAioHttpClient``: httpx-aiohttp's transport, made exact.

Imported only when such a client is made: ``import animalstore_client`` never imports aiohttp.

httpx-aiohttp 0.2 maps every ``aiohttp.ClientConnectionError`` to ``httpx.ConnectTimeout``,
a server that hung up after receiving the request included, and lets aiohttp's protocol errors
(an answer that is not HTTP) through unmapped. The SDK retries a ``create_pet`` after a
``ConnectTimeout``, since that error says nothing was sent: with those mappings a pet could be
created twice. So every aiohttp error is raised here as the httpx error of the same meaning.
And aiohttp resends an idempotent request once, at once, when the server hung up; the SDK
counts, spaces and logs its retries itself, so that resend is turned off.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

__all__ = ["AioHttpClient", "httpx_error"]

#: First match wins: subclasses before their bases.
_ERRORS: tuple[tuple[type[aiohttp.ClientError], type[httpx.TransportError]], ...] = (
    # Waiting for a pool slot or for the TCP/TLS connection: nothing was sent.
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    # The connection to the proxy, or to the host, could not be made: nothing was sent.
    (aiohttp.ClientProxyConnectionError, httpx.ConnectError),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    (aiohttp.ClientHttpProxyError, httpx.ProxyError),
    # From here on the request may have reached the server.
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),
    (aiohttp.InvalidURL, httpx.UnsupportedProtocol),
    (aiohttp.ClientOSError, httpx.ReadError),
)


def httpx_error(exc: aiohttp.ClientError, request: httpx.Request) -> httpx.TransportError:
    """Return the httpx error that means what ``exc`` means, with ``exc``'s message.

    Args:
        exc: what aiohttp raised.
        request: the request being sent.

    Returns:
        The error to raise (``httpx.TransportError`` itself for an error not listed, which
        the SDK never retries).
    """
    error_class = next(
        (mapped for source, mapped in _ERRORS if isinstance(exc, source)), httpx.TransportError
    )
    return error_class(str(exc) or type(exc).__name__, request=request)


class _Transport(AiohttpTransport):
    def get_client(self) -> aiohttp.ClientSession:
        session = super().get_client()
        # A private switch (aiohttp 3.10+), with no public equivalent; the reliability suite
        # proves it holds (max_retries=0 sends a GET once, even to a server that hangs up).
        session._retry_connection = False
        return session


class AioHttpClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` on httpx-aiohttp's transport, raising only httpx errors.

    Built by ``DefaultAioHttpClient``; it takes the arguments of ``httpx.AsyncClient``. As in
    httpx, proxies (given or from the environment) are mounted as transports of their own.
    """

    def _init_transport(self, **kwargs: Any) -> httpx.AsyncBaseTransport:  # type: ignore[override]
        transport: httpx.AsyncBaseTransport | None = kwargs.pop("transport", None)
        return transport if transport is not None else _Transport(**kwargs)

    def _init_proxy_transport(  # type: ignore[override]
        self, proxy: httpx.Proxy, **kwargs: Any
    ) -> httpx.AsyncBaseTransport:
        return _Transport(proxy=proxy, **kwargs)

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """Send ``request``; see ``httpx.AsyncClient.send``.

        Raises:
            httpx.HTTPError: as ``httpx.AsyncClient.send``; an aiohttp error as the
                ``httpx.TransportError`` of the same meaning.
        """
        try:
            return await super().send(request, **kwargs)
        except httpx.TransportError as exc:
            cause = exc.__cause__
            if isinstance(cause, aiohttp.ClientError):
                raise httpx_error(cause, request) from cause
            raise
        except aiohttp.ClientError as exc:
            raise httpx_error(exc, request) from exc
