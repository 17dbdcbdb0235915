"""How the aiohttp backend classifies aiohttp's errors: what may be sent again, what is fatal.

The sockets-level behaviour is in ``tests/reliability``; these are the errors a test server
cannot provoke on demand (a write to a transport that is closing).
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from animalstore_client._backends.aiohttp import classify
from animalstore_client._core.wire import REDACTED, Failure, Request

REQUEST = Request(
    "POST",
    "http://127.0.0.1:9/v1/pets",
    None,
    {"authorization": "Bearer sk-classify-key", "content-type": "application/json"},
    b"{}",
    {"connect": 5.0, "read": 30.0, "write": 30.0, "pool": 30.0},
)


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
