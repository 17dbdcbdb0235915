"""Whatever the user's own client settings and whatever the server sends in its status line and
headers, the SDK's outcome is the one its docs promise, on every backend, over real sockets.

The content codings the SDK asks for and reads (gzip, deflate, br) and refuses (zstd, others;
what each stack means and what a bomb in each costs is in ``test_content_codings.py``);
aiohttp sessions built with ``raise_for_status``, ``auto_decompress=False`` or small header
limits; httpx and httpx2 event hooks that raise; reason phrases in any bytes; large headers;
deprecation dates out of any calendar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from animalstore_client import (
    APIConnectionError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    Pet,
    ResponseTooLargeError,
)
from animalstore_client._core.retry_policy import DEFAULT_RETRY
from tests.conftest import VirtualClock
from tests.reliability.conftest import (
    API_KEY,
    HTTPX_FAMILY_KINDS,
    PET,
    SYNC_KINDS,
    Api,
    aiohttp_session,
    close_in,
    error_body,
    json_bytes,
    new_http_client,
    raised_exactly,
)
from tests.reliability.faultserver import FaultServer, Raw, Reply
from tests.reliability.test_secrets import texts_of


def assert_backoffs(slept: list[float], retries: list[int]) -> None:
    """``slept`` is the computed backoff before each retry of ``retries`` (0 for a call's
    first retry), as a ``Retry-After: 0`` asks for no wait of its own: 0.5 s, 1 s ..., each
    less up to a quarter of jitter."""
    assert len(slept) == len(retries)
    for wait, retry in zip(slept, retries, strict=True):
        nominal = min(DEFAULT_RETRY.initial_delay * 2**retry, DEFAULT_RETRY.max_delay)
        assert 0.75 * nominal <= wait <= nominal


# -- content codings ------------------------------------------------------------------------


def test_the_sdk_asks_for_what_it_decodes(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.default = Reply(200, json=[PET])
    make_client(server).list_pets()
    (request,) = server.requests
    # br: the test extra's brotli (1.2) bounds its output; zstandard's decoder does not.
    assert request.header("accept-encoding") == "gzip, deflate, br"


@pytest.mark.parametrize("encoding", ["zstd", "gzip, zstd", "compress", "br, br"])
def test_an_answer_in_an_encoding_the_sdk_did_not_ask_for_is_refused_unread(
    server: FaultServer, make_client: Callable[..., Api], encoding: str
) -> None:
    # The body is not valid in that coding either: it is never decoded, so it never matters.
    server.default = Reply(200, body=b"\x00" * 64, headers=[("Content-Encoding", encoding)])
    api = make_client(server)
    error = raised_exactly(APIConnectionError, api.list_pets)
    assert f"encoded as {encoding!r}, which the SDK did not ask for" in str(error) or (
        encoding == "br, br" and "undoes at most 2 content codings, br at most once" in str(error)
    )
    assert len(server.requests) == 1  # fatal: the same answer would come again
    assert error.request.headers["authorization"] == "[redacted]"


# -- a user's aiohttp session -----------------------------------------------------------------


@pytest.fixture
def session_client(make_client: Callable[..., Api], aloop: Any) -> Iterator[Callable[..., Api]]:
    """An AsyncClient on a ``DefaultAioHttpClient(**options)`` the user configured."""
    made: list[Any] = []

    def make(server: FaultServer, **options: Any) -> Api:
        session = aiohttp_session(aloop, **options)
        made.append(session)
        return make_client(server, http_client=session)

    yield make
    for session in made:
        aloop.run_until_complete(session.close())


@pytest.mark.parametrize("kind", ["aiohttp"])
def test_a_session_that_raises_for_status_still_gives_typed_errors_and_retries(
    server: FaultServer, session_client: Callable[..., Api], clock: VirtualClock
) -> None:
    api = session_client(server, raise_for_status=True)
    server.script(Reply(400, json=error_body(400, "invalid_parameter", "limit")))
    with pytest.raises(BadRequestError) as caught:
        api.list_pets()
    assert (caught.value.status_code, caught.value.code) == (400, "invalid_parameter")
    assert len(server.requests) == 1  # a 400 is not resent

    server.script(
        Reply(503, json=error_body(503), headers=[("Retry-After", "0")]), Reply(201, json=PET)
    )
    assert api.create_pet(name="Rex", category_id=3) == Pet.from_dict(PET)
    create_attempts = server.requests[1:]
    assert len(create_attempts) == 2  # a 503 is retried, with the same key
    assert len({r.header("idempotency-key") for r in create_attempts}) == 1
    assert_backoffs(clock.slept, [0])


@pytest.mark.parametrize("kind", ["aiohttp"])
def test_a_session_that_does_not_decompress_still_reads_gzip_within_the_cap(
    server: FaultServer, session_client: Callable[..., Api]
) -> None:
    api = session_client(server, auto_decompress=False)
    server.script(Reply(200, json=[PET], gzip=True))
    assert api.list_pets() == [Pet.from_dict(PET)]
    # The cap counts the decoded body: 2 MB of JSON that gzip makes a few KB.
    big = json_bytes([PET] * 40_000)
    server.script(Reply(200, body=big, gzip=True))
    capped = Api(api.target.with_options(max_response_bytes=1_000_000), api._loop, api.kind)
    with pytest.raises(ResponseTooLargeError):
        capped.list_pets()
    assert len(server.requests) == 2


@pytest.mark.parametrize("kind", ["aiohttp"])
def test_a_session_with_small_header_limits_reads_large_headers(
    server: FaultServer, session_client: Callable[..., Api]
) -> None:
    api = session_client(server, max_field_size=100, max_line_size=100)
    server.script(Reply(200, json=[PET], headers=[("X-Big", "v" * 9_000)]))
    raw = api.raw.list_pets()
    assert raw.headers["x-big"] == "v" * 9_000
    assert len(server.requests) == 1


def test_headers_as_large_as_httpx_takes_are_read_on_every_backend(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.script(Reply(200, json=[PET], headers=[("X-Big", "v" * 90_000)]))
    raw = make_client(server).raw.list_pets()
    assert len(raw.headers["x-big"]) == 90_000
    assert len(server.requests) == 1


# -- a user's httpx or httpx2 event hooks ---------------------------------------------------------


def hooked_client(
    kind: str, aloop: Any, make_client: Callable[..., Api], server: FaultServer, hook: Any
) -> Api:
    if kind in SYNC_KINDS:
        hooks = {"response": [hook]}
    else:

        async def async_hook(response: Any) -> None:
            hook(response)

        hooks = {"response": [async_hook]}
    return make_client(server, http_client=new_http_client(kind, aloop, event_hooks=hooks))


def raise_for_status(response: Any) -> None:
    response.raise_for_status()


@pytest.mark.parametrize("kind", HTTPX_FAMILY_KINDS)
def test_a_hook_that_raises_for_status_gives_the_typed_error_and_retries(
    kind: str,
    aloop: Any,
    server: FaultServer,
    make_client: Callable[..., Api],
    clock: VirtualClock,
) -> None:
    api = hooked_client(kind, aloop, make_client, server, raise_for_status)
    server.script(Reply(404, json=error_body(404, "not_found", "no pet 7")))
    with pytest.raises(NotFoundError) as caught:
        api.get_pet(7)
    assert caught.value.status_code == 404
    assert caught.value.request.headers["authorization"] == "[redacted]"
    assert not any(API_KEY in text for text in texts_of(caught.value))

    server.script(Reply(503, headers=[("Retry-After", "0")]), Reply(200, json=[PET]))
    assert api.list_pets() == [Pet.from_dict(PET)]
    assert len(server.requests) == 3  # the 503 was retried

    server.script(*[Reply(503, headers=[("Retry-After", "0")])] * 3)
    with pytest.raises(InternalServerError):
        api.list_pets()
    assert len(server.requests) == 6
    assert_backoffs(clock.slept, [0, 0, 1])


@pytest.mark.parametrize("kind", HTTPX_FAMILY_KINDS)
@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
def test_a_hook_that_reads_the_body_leaves_the_call_its_answer(
    kind: str, aloop: Any, server: FaultServer, make_client: Callable[..., Api], gzip: bool
) -> None:
    # A logging hook reads the body before the SDK does: its raw bytes are gone, what httpx
    # decoded is the answer (within the cap, checked after the fact).
    read: list[bytes] = []

    def log_body(response: Any) -> None:
        read.append(response.read())

    async def alog_body(response: Any) -> None:
        read.append(await response.aread())

    hooks = {"response": [log_body if kind in SYNC_KINDS else alog_body]}
    http = new_http_client(kind, aloop, event_hooks=hooks)
    api = make_client(server, http_client=http)
    server.script(Reply(200, json=[PET], gzip=gzip), Reply(200, json=[PET] * 50, gzip=gzip))
    try:
        assert api.list_pets() == [Pet.from_dict(PET)]
        assert read == [json_bytes([PET])]
        with pytest.raises(ResponseTooLargeError):
            api.with_options(max_response_bytes=100).list_pets()
        assert len(server.requests) == 2
    finally:
        api.close()
        close_in(aloop, http)


@pytest.mark.parametrize("kind", HTTPX_FAMILY_KINDS)
def test_whatever_a_hook_raises_reaches_the_caller_without_the_key(
    kind: str, aloop: Any, server: FaultServer, make_client: Callable[..., Api]
) -> None:
    def broken(response: Any) -> None:
        # What a hook that keeps the request around would put in its error.
        raise ValueError(f"my hook failed on {response.request.method}", response.request)

    api = hooked_client(kind, aloop, make_client, server, broken)
    server.default = Reply(201, json=PET)
    with pytest.raises(APIConnectionError) as caught:
        api.create_pet(name="Rex", category_id=3)
    assert type(caught.value) is APIConnectionError
    assert "ValueError: ('my hook failed on POST'," in str(caught.value)
    assert len(server.requests) == 1  # fatal: never resent
    assert not any(API_KEY in text for text in texts_of(caught.value))


# -- status lines and headers the server sends --------------------------------------------------


def raw_answer(status: bytes, body: bytes, *headers: bytes) -> Raw:
    """An answer sent as bytes, then the connection closed (and said so, so it is not reused)."""
    head = b"HTTP/1.1 " + status + b"\r\nConnection: close\r\nContent-Type: application/json\r\n"
    head += b"".join(h + b"\r\n" for h in headers)
    return Raw(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)


@pytest.mark.parametrize(
    "reason",
    [
        "\u041d\u0435 \u043d\u0430\u0439\u0434\u0435\u043d\u043e".encode(),  # Cyrillic
        "Nicht gefunden \u2013 \u00fc".encode(),
        b"\xff",
        "Nicht gefunden ü".encode("latin-1"),
    ],
    ids=["cyrillic-utf8", "dash-utf8", "ff", "latin1"],
)
def test_any_reason_phrase_gives_the_typed_outcome(
    server: FaultServer, make_client: Callable[..., Api], clock: VirtualClock, reason: bytes
) -> None:
    api = make_client(server, max_retries=1)
    body = json_bytes(error_body(404, "not_found", "no pet"))
    server.script(raw_answer(b"404 " + reason, body))
    with pytest.raises(NotFoundError) as caught:
        api.list_pets()
    assert (caught.value.status_code, caught.value.message) == (404, "no pet")
    assert caught.value.response.status_code == 404

    server.script(
        raw_answer(b"503 " + reason, json_bytes(error_body(503)), b"Retry-After: 0"),
        raw_answer(b"200 " + reason, json_bytes([PET])),
    )
    raw = api.raw.list_pets()
    assert raw.parse() == [Pet.from_dict(PET)]
    assert raw.http_response.status_code == 200
    assert raw.retries_taken == 1
    assert_backoffs(clock.slept, [0])


@pytest.mark.parametrize(
    "sunset",
    [
        "Fri, 31 Dec 9999 23:00:00 -0500",  # year 10000 in UTC
        "Mon, 01 Jan 0001 00:00:00 +0100",  # before year 1 in UTC
        "Sat, 01 Jan 0000 00:00:00 GMT",
        "Thu, 31 Dec 99999 00:00:00 GMT",
        "\xff\xfe",
    ],
)
def test_a_deprecation_date_out_of_any_calendar_is_ignored(
    server: FaultServer, make_client: Callable[..., Api], sunset: str
) -> None:
    headers = [("Sunset", sunset), ("Deprecation", "@99999999999999")]
    server.script(Reply(201, json=PET, headers=headers))
    api = make_client(server)
    assert api.create_pet(name="Rex", category_id=3) == Pet.from_dict(PET)
    assert len(server.requests) == 1  # created once, and the call did not fail after it
    raw_server_reply = Reply(200, json=[PET], headers=headers)
    server.script(raw_server_reply)
    raw = api.raw.list_pets()
    assert (raw.sunset, raw.deprecation) == (None, None)


def test_a_year_below_100_written_in_four_digits_is_that_year() -> None:
    from animalstore_client._core.deprecation import sunset_date

    date = sunset_date({"sunset": "Mon, 01 Jan 0001 00:00:00 GMT"})
    assert date is not None
    assert (date.year, date.month, date.day) == (1, 1, 1)
    assert sunset_date({"sunset": "Sun, 06 Nov 94 08:49:37 GMT"}) is not None  # RFC 850 years
