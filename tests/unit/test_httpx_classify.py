"""How the httpx family backend reads its library's errors, for httpx and httpx2 alike.

Each library has its own exception classes: a ``Family`` takes them from the module it is made
for, and its senders classify what that library raised. The sockets-level behaviour is in
``tests/reliability``; these are the errors no test server provokes on demand (a pool timeout,
a decoding error), on each library. Each test makes its ``Family``: what the constructor takes
from the library is what is under test, not the one ``family()`` made once for the process.
"""

from __future__ import annotations

from types import ModuleType

import httpx
import httpx2
import pytest

from animalstore_client._backends.httpx import Family
from animalstore_client._core.wire import (
    REDACTED,
    TRANSFER_CODING_REFUSAL,
    Answer,
    Failure,
    Request,
    SendFailure,
)
from tests.unit.conftest import CLASSIFY_REQUEST as REQUEST

LIBRARIES = [pytest.param(httpx, id="httpx"), pytest.param(httpx2, id="httpx2")]


def built(lib: ModuleType) -> object:
    """``REQUEST`` as the library's own ``Request``."""
    return lib.Request(REQUEST.method, REQUEST.url, headers=REQUEST.headers)


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.parametrize(
    ("name", "message", "failure", "timeout"),
    [
        ("ConnectError", "Name or service not known", Failure.NOT_SENT, False),
        ("ConnectTimeout", "timed out", Failure.NOT_SENT, True),
        ("PoolTimeout", "timed out", Failure.NOT_SENT, True),
        ("ReadTimeout", "timed out", Failure.MAYBE_SENT, True),
        ("WriteTimeout", "timed out", Failure.MAYBE_SENT, True),
        ("ReadError", "Connection reset by peer", Failure.MAYBE_SENT, False),
        ("WriteError", "Broken pipe", Failure.MAYBE_SENT, False),
        (
            "RemoteProtocolError",
            "Server disconnected without sending a response.",
            Failure.MAYBE_SENT,
            False,
        ),
        ("DecodingError", "Error -3 while decompressing data", Failure.FATAL, False),
        ("UnsupportedProtocol", "Request URL has an unsupported protocol", Failure.FATAL, False),
    ],
)
def test_each_librarys_errors_say_how_far_the_attempt_got(
    lib: ModuleType, name: str, message: str, failure: Failure, timeout: bool
) -> None:
    result = Family(lib).outcome(getattr(lib, name)(message), REQUEST, built(lib))

    assert isinstance(result, SendFailure)
    assert (result.failure, result.timeout, result.detail) == (
        failure,
        timeout,
        f"{name}: {message}",
    )
    assert result.request_view().headers["authorization"] == REDACTED


@pytest.mark.parametrize("lib", LIBRARIES)
def test_h11s_refusal_of_a_transfer_coding_is_the_sdks_own_refusal(lib: ModuleType) -> None:
    error = lib.RemoteProtocolError("Only Transfer-Encoding: chunked is supported")

    result = Family(lib).outcome(error, REQUEST, built(lib))

    assert isinstance(result, SendFailure)
    assert (result.failure, result.timeout) == (Failure.FATAL, False)
    assert result.detail == TRANSFER_CODING_REFUSAL


@pytest.mark.parametrize("lib", LIBRARIES)
def test_a_status_error_a_users_hook_raised_is_the_answer_it_carries(lib: ModuleType) -> None:
    request = built(lib)
    response = lib.Response(503, headers={"x-request-id": "req_1"}, request=request)
    error = lib.HTTPStatusError(
        "Server error '503 Service Unavailable'", request=request, response=response
    )

    result = Family(lib).outcome(error, REQUEST, request)

    assert isinstance(result, Answer)
    assert (result.status_code, result.headers["x-request-id"]) == (503, "req_1")


@pytest.mark.parametrize("lib", LIBRARIES)
def test_a_family_keeps_at_most_256_parsed_urls(lib: ModuleType) -> None:
    # A client calling ever new paths (get_pet of each id) must not hold a URL for each.
    family = Family(lib)
    with lib.Client() as http:
        for pet_id in range(300):
            request = Request("GET", f"http://127.0.0.1:9/v1/pets/{pet_id}", None, {}, None, {})
            sent = family.build(http, request, lambda attempt: attempt.headers)
            assert str(sent.url) == f"http://127.0.0.1:9/v1/pets/{pet_id}"

    assert family.url.cache_info().currsize == 256
