"""The aiohttp backend behind ``DefaultAioHttpClient``: httpx-aiohttp's transport, made exact.

Imported only when such a client is made: ``import animalstore_client`` never imports aiohttp.

httpx-aiohttp 0.2 maps every ``aiohttp.ClientConnectionError`` to ``httpx.ConnectTimeout``,
a server that hung up after receiving the request included, and lets aiohttp's protocol errors
(an answer that is not HTTP) through unmapped. The SDK retries a ``create_pet`` after a
``ConnectTimeout``, since that error says nothing was sent: with those mappings a pet could be
created twice. So every aiohttp error is raised here as the httpx error of the same meaning.
And aiohttp resends an idempotent request once, at once, when the server hung up; the SDK
counts, spaces and logs its retries itself, so that resend is turned off.

A request that needs none of httpx's client machinery (no auth, event hooks, redirects to
follow, proxy mounts or streaming) is sent around it: straight to the aiohttp session, its
answer read in full. Through ``httpx.AsyncClient.send`` every call also pays for auth and
redirect flows, a cookie-jar pass, response stream wrappers and a second round of header
normalisation, which together cost as much again as aiohttp itself. Body-less requests are
assembled from the parts of the first one httpx built alike (``_httpx_parts``). The outcome is
the same: the same request on the wire, the same ``httpx.Response``, cookies stored, httpx's
INFO log line.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from animalstore_client._httpx_parts import RequestTemplate, response_from

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


#: Distinct body-less requests whose parts a client keeps; past that it starts afresh.
_MAX_CACHED = 256
#: The query parameter types a request to assemble may have: no two values of them that are
#: equal are written differently.
_PLAIN = (str, int)
_httpx_logger = logging.getLogger("httpx")


class _Transport(AiohttpTransport):
    def session(self) -> aiohttp.ClientSession:
        """Return the aiohttp session, opening it in the running loop on first use."""
        if not isinstance(self.client, aiohttp.ClientSession):
            self.client = self.get_client()
        return self.client

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

    def __init__(self, **kwargs: Any) -> None:
        #: The transport requests go to when they can skip httpx's client machinery; ``None``
        #: when a transport was given or any is mounted (proxies), where httpx chooses.
        self._direct: _Transport | None = None
        self._templates: dict[tuple[Any, ...], RequestTemplate] = {}
        super().__init__(**kwargs)
        if kwargs.get("mounts"):
            self._direct = None

    def _init_transport(self, **kwargs: Any) -> httpx.AsyncBaseTransport:  # type: ignore[override]
        transport: httpx.AsyncBaseTransport | None = kwargs.pop("transport", None)
        if transport is not None:
            return transport
        self._direct = _Transport(**kwargs)
        return self._direct

    def _init_proxy_transport(  # type: ignore[override]
        self, proxy: httpx.Proxy, **kwargs: Any
    ) -> httpx.AsyncBaseTransport:
        self._direct = None  # httpx's mounts decide which URLs go through a proxy
        return _Transport(proxy=proxy, **kwargs)

    def build_request(  # type: ignore[override]
        self,
        method: str,
        url: httpx.URL | str,
        *,
        params: Any = None,
        headers: Any = None,
        json: Any = None,
        extensions: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> httpx.Request:
        """Build a request as ``httpx.AsyncClient.build_request`` does.

        A body-less request to an absolute URL, when this client has no cookies or query
        parameters of its own, is assembled from the parts of the first such request httpx
        built: the same URL, headers and extensions, at a tenth of the cost.

        Returns:
            The request.

        Raises:
            httpx.InvalidURL: as ``httpx.AsyncClient.build_request``; and so on.
        """
        key = None if json is not None else self._template_key(method, url, params, headers, kwargs)
        try:
            template = None if key is None else self._templates.get(key)
        except TypeError:  # unhashable: a list of values for one parameter, say
            key = template = None
        if template is None:
            request = super().build_request(
                method,
                url,
                params=params,
                headers=headers,
                json=json,
                extensions=extensions,
                **kwargs,
            )
            if key is not None:
                if len(self._templates) >= _MAX_CACHED:
                    self._templates.clear()
                self._templates[key] = RequestTemplate(request)
            return request
        extensions = {} if extensions is None else dict(extensions)
        if "timeout" not in extensions:
            extensions["timeout"] = self.timeout.as_dict()
        return template.request(extensions)

    def _template_key(
        self, method: str, url: object, params: object, headers: object, other: dict[str, Any]
    ) -> tuple[Any, ...] | None:
        """Return what identifies the request, or ``None`` if it is not one to assemble."""
        if (
            (
                other
                and any(v is not None and v is not httpx.USE_CLIENT_DEFAULT for v in other.values())
            )
            or not isinstance(url, str)
            or not url.startswith(("https://", "http://"))
            or not (params is None or type(params) is dict)
            or not (headers is None or type(headers) is dict)
            or self.params
            or self.cookies
        ):
            return None
        query = None
        if params is not None:
            query = tuple(params.items())
            # Equal keys must mean equal requests: 1, 1.0 and True are equal, yet httpx writes
            # them as "1", "1.0" and "true".
            if not all(type(name) is str and type(value) in _PLAIN for name, value in query):
                return None
        return (
            method,
            url,
            query,
            None if headers is None else tuple(headers.items()),
            tuple(self.headers.raw),
        )

    async def send(
        self,
        request: httpx.Request,
        *,
        stream: bool = False,
        auth: Any = httpx.USE_CLIENT_DEFAULT,
        follow_redirects: Any = httpx.USE_CLIENT_DEFAULT,
    ) -> httpx.Response:
        """Send ``request``; see ``httpx.AsyncClient.send``.

        Raises:
            httpx.HTTPError: as ``httpx.AsyncClient.send``; an aiohttp error as the
                ``httpx.TransportError`` of the same meaning.
            RuntimeError: the client is closed.
        """
        transport = self._direct
        if transport is not None and self._is_direct(request, stream, auth, follow_redirects):
            return await self._send_direct(transport, request)
        try:
            return await super().send(
                request, stream=stream, auth=auth, follow_redirects=follow_redirects
            )
        except httpx.TransportError as exc:
            cause = exc.__cause__
            if isinstance(cause, aiohttp.ClientError):
                raise httpx_error(cause, request) from cause
            raise
        except aiohttp.ClientError as exc:
            raise httpx_error(exc, request) from exc

    def _is_direct(
        self, request: httpx.Request, stream: bool, auth: Any, follow_redirects: Any
    ) -> bool:
        """Whether sending ``request`` needs nothing of httpx's client but its transport."""
        hooks = self.event_hooks
        return not (
            stream
            or (
                self.follow_redirects
                if follow_redirects is httpx.USE_CLIENT_DEFAULT
                else follow_redirects
            )
            or (self.auth if auth is httpx.USE_CLIENT_DEFAULT else auth) is not None
            or request.url.userinfo
            or hooks["request"]
            or hooks["response"]
            or not isinstance(request.stream, httpx.ByteStream)
        )

    async def _send_direct(self, transport: _Transport, request: httpx.Request) -> httpx.Response:
        """Send as ``httpx.AsyncClient.send`` would, straight to the aiohttp session.

        What httpx-aiohttp's ``handle_async_request`` sends, the answer read in full.
        """
        if self.is_closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        timeout = request.extensions.get("timeout")
        if timeout is None:
            timeout = self.timeout.as_dict()
            request.extensions = {**request.extensions, "timeout": timeout}
        started = time.perf_counter()
        try:
            async with transport.session().request(
                request.method,
                str(request.url),
                headers=request.headers.multi_items(),
                data=request.content or None,
                allow_redirects=False,
                auto_decompress=False,
                compress=False,
                timeout=aiohttp.ClientTimeout(  # as httpx-aiohttp maps it: aiohttp has no write
                    sock_connect=timeout.get("connect"),
                    sock_read=timeout.get("read"),
                    connect=timeout.get("pool"),
                ),
                server_hostname=request.extensions.get("sni_hostname"),
            ) as answer:
                body = await answer.read()
        except aiohttp.ClientError as exc:
            raise httpx_error(exc, request) from exc
        extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
        if answer.reason:
            extensions["reason_phrase"] = answer.reason.encode()
        response = response_from(answer.status, answer.raw_headers, body, request, extensions)
        response.elapsed = timedelta(seconds=time.perf_counter() - started)
        response.default_encoding = self._default_encoding
        if "Set-Cookie" in answer.headers:
            self.cookies.extract_cookies(response)
        if "Location" in answer.headers and response.has_redirect_location:
            response.next_request = self._build_redirect_request(request, response)
        _httpx_logger.info(
            'HTTP Request: %s %s "%s %d %s"',
            request.method,
            request.url,
            response.http_version,
            response.status_code,
            response.reason_phrase,
        )
        return response
