"""How the aiohttp backend classifies aiohttp's errors: what may be sent again, what is fatal;
and how the httpx backend reads the aiohttp error that httpx-aiohttp's own client chains.

The sockets-level behaviour is in ``tests/reliability``; these are the errors a test server
cannot provoke on demand (a write to a transport that is closing, a proxy's refusal).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

import aiohttp
import httpx
import pytest
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from animalstore_client._backends.aiohttp import classify
from animalstore_client._backends.httpx import family
from animalstore_client._core.wire import REDACTED, Failure
from tests.unit.conftest import CLASSIFY_REQUEST as REQUEST


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (
            aiohttp.ClientConnectionResetError("Cannot write to closing transport"),
            Failure.MAYBE_SENT,
        ),
        (aiohttp.ClientConnectionError("Failed to send bytes"), Failure.MAYBE_SENT),
        (aiohttp.ServerDisconnectedError(), Failure.MAYBE_SENT),
        (asyncio.TimeoutError(), Failure.MAYBE_SENT),
        (aiohttp.InvalidURL("http://[::1"), Failure.FATAL),
        (ValueError("Cannot combine AUTHORIZATION header with AUTH argument"), Failure.FATAL),
    ],
    ids=["reset-while-writing", "connection-error", "disconnected", "timeout", "bad-url", "auth"],
)
def test_an_error_after_the_connection_was_made_may_have_sent_the_request(
    error: BaseException, failure: Failure
) -> None:
    result = classify(error, REQUEST)
    assert result.failure is failure
    assert result.timeout is isinstance(error, asyncio.TimeoutError)
    view = result.request_view()
    assert view.headers["authorization"] == REDACTED
    assert str(view.url) == REQUEST.url


def test_a_multi_line_parser_message_is_folded_into_one_line() -> None:
    error = aiohttp.ClientConnectionError("Bad status line:\n\n  b'HTTP/1.1 x'\n  ^")
    assert classify(error, REQUEST).detail == (
        "ClientConnectionError: Bad status line: b'HTTP/1.1 x' ^"
    )


def test_a_proxy_that_refuses_the_tunnel_is_fatal_not_maybe_sent() -> None:
    # A ClientResponseError, but from the proxy, before the request went anywhere: sending it
    # again through the same proxy gets the same refusal.
    info = aiohttp.RequestInfo(
        URL(REQUEST.url),
        REQUEST.method,
        CIMultiDictProxy(CIMultiDict(REQUEST.headers)),
    )
    error = aiohttp.ClientHttpProxyError(
        info, (), status=407, message="Proxy Authentication Required"
    )

    result = classify(error, REQUEST)

    assert (result.failure, result.timeout) == (Failure.FATAL, False)
    assert result.detail == "ClientHttpProxyError: Proxy Authentication Required"
    assert result.request_view().headers["authorization"] == REDACTED


def chained(error: Exception, cause: BaseException) -> Exception:
    """``error`` as raised ``from cause``."""
    error.__cause__ = cause
    return error


#: The connection key a ``ClientConnectorError`` names (only its host, port and ssl are read).
CONNECTION = cast(Any, SimpleNamespace(host="127.0.0.1", port=9, ssl=True))
#: What the SDK says of a refused connection, whatever the library's words.
REFUSED = "ConnectionRefusedError: connection refused (nothing accepts connections at that address)"


@pytest.mark.parametrize(
    ("cause", "failure", "detail"),
    [
        (
            aiohttp.ConnectionTimeoutError("Connection timeout to host http://127.0.0.1:9/v1/pets"),
            Failure.NOT_SENT,
            "ConnectTimeout: Connection timeout to host http://127.0.0.1:9/v1/pets",
        ),
        (
            chained(
                aiohttp.ClientConnectorError(CONNECTION, ConnectionRefusedError(111, "refused")),
                ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)"),
            ),
            Failure.NOT_SENT,
            REFUSED,
        ),
        (
            aiohttp.ServerDisconnectedError(),
            Failure.MAYBE_SENT,
            "ConnectTimeout: Server disconnected",
        ),
    ],
    ids=["connect-timeout", "refused", "hung-up"],
)
def test_httpx_aiohttps_connect_timeout_is_not_sent_unless_it_chains_a_hang_up(
    cause: aiohttp.ClientError, failure: Failure, detail: str
) -> None:
    # httpx-aiohttp's own client raises httpx.ConnectTimeout for every aiohttp connection
    # error, chaining it: a connection never made (timed out, refused) was not sent; a server
    # that hung up after reading the request may have had it.
    error = chained(httpx.ConnectTimeout(str(cause)), cause)
    built = httpx.Request(REQUEST.method, REQUEST.url, headers=REQUEST.headers)

    result = family(httpx).classify(error, REQUEST, built)

    assert (result.failure, result.timeout, result.detail) == (failure, True, detail)
    assert result.request_view().headers["authorization"] == REDACTED
