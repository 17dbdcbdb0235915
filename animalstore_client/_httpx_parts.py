"""``httpx.Request`` and ``httpx.Response`` objects assembled from parts httpx already made.

httpx's constructors normalise every header, parse the URL and run the body through its
encoders and decoders on every call: about 40 µs for a body-less GET and 15 µs for a response,
as much as aiohttp takes to send the request and read the answer. The aiohttp backend
(``_aiohttp``) builds the first request of each kind with httpx's own ``build_request`` and keeps
its parts as a ``RequestTemplate``; the same request again is then assembled from them, and
an answer from the bytes aiohttp read. What comes out is what httpx's constructors make:
``tests/unit/test_httpx_parts.py`` compares every attribute, so that an httpx release that
changes its objects fails there, not in a user's program.
"""

from __future__ import annotations

from typing import Any

import httpx

__all__ = ["RequestTemplate", "response_from"]


class RequestTemplate:
    """The parts of a body-less request that httpx built, to assemble the same request again.

    Args:
        request: a request built by ``httpx.AsyncClient.build_request``, without a body.
    """

    __slots__ = ("_encoding", "_headers", "_method", "_url")

    def __init__(self, request: httpx.Request) -> None:
        self._method = request.method
        self._url = request.url  # immutable: safe to share
        self._headers: list[tuple[bytes, bytes, bytes]] = list(request.headers._list)
        self._encoding = request.headers.encoding

    def request(self, extensions: dict[str, Any]) -> httpx.Request:
        """Return a new request equal to the template's, with these ``extensions``.

        Its headers are a copy of the template's: changing them changes no other request.
        """
        headers = object.__new__(httpx.Headers)
        headers._list = list(self._headers)
        headers._encoding = self._encoding
        request = object.__new__(httpx.Request)
        request.method = self._method
        request.url = self._url
        request.headers = headers
        request.extensions = extensions
        request.stream = httpx.ByteStream(b"")
        request._content = b""
        return request


def response_from(
    status: int,
    raw_headers: tuple[tuple[bytes, bytes], ...],
    body: bytes,
    request: httpx.Request,
    extensions: dict[str, Any],
) -> httpx.Response:
    """Return the read ``httpx.Response`` of an answer received in full.

    Args:
        status: the status code.
        raw_headers: the headers as received, in order.
        body: the whole body as received.
        request: the request it answers.
        extensions: the response extensions (``http_version``, ``reason_phrase``).

    Returns:
        The response, read, as ``httpx.Response(..., stream=...)`` and ``read()`` make it. A
        body with a ``Content-Encoding`` goes through httpx's decoders, as it would there.

    Raises:
        httpx.DecodingError: a body that does not decode as its ``Content-Encoding`` says.
    """
    headers = object.__new__(httpx.Headers)
    headers._list = [(name, name.lower(), value) for name, value in raw_headers]
    headers._encoding = None
    if any(lower == b"content-encoding" for _, lower, _ in headers._list):
        response = httpx.Response(
            status,
            headers=headers,
            stream=httpx.ByteStream(body),
            request=request,
            extensions=extensions,
        )
        response.read()
        return response
    response = object.__new__(httpx.Response)
    response.status_code = status
    response.headers = headers
    response._request = request
    response.next_request = None
    response.extensions = extensions
    response.history = []
    response.is_closed = True
    response.is_stream_consumed = True
    response.default_encoding = "utf-8"
    response.stream = httpx.ByteStream(body)
    response._num_bytes_downloaded = len(body)
    response._content = body
    return response
