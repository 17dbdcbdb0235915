"""How an answer's body is read: its plain way only when it surely fits, and checked after.

``BodyReader`` decides, for every backend, from the headers as received: a body that is
neither encoded nor chunked, with a ``Content-Length`` within the cap, in a call without a
deadline, is read the library's plain way; any other in capped pieces.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import random
import string
import zlib
from typing import Any

import brotli
import httpx
import pytest

from animalstore_client import AsyncClient, Client, ResponseTooLargeError
from animalstore_client._core.decoding import coded_limit
from animalstore_client._core.wire import (
    TRANSFER_CODING_REFUSAL,
    BodyReader,
    Failure,
    Request,
    RequestView,
)
from tests.conftest import API_KEY, BASE_URL


def reader(
    *headers: tuple[bytes, bytes],
    cap: int | None = 1000,
    ends: float | None = None,
    read: bool = False,
) -> Any:
    request = Request("GET", f"{BASE_URL}/pets", None, {}, None, {}, cap, None, ends)
    return BodyReader(request, headers, lambda: RequestView("GET", BASE_URL, [], {}), read=read)


@pytest.mark.parametrize(
    ("headers", "plain"),
    [
        ([(b"Content-Length", b"10")], True),
        ([(b"content-length", b"1000")], True),
        ([(b"Content-Length", b"1001")], False),
        ([], False),  # no length: read until the connection ends
        ([(b"Content-Length", b"10"), (b"Transfer-Encoding", b"chunked")], False),
        ([(b"Content-Length", b"10"), (b"Content-Encoding", b"gzip")], False),
        ([(b"Content-Length", b"1e2")], False),
        ([(b"Content-Length", b"-1")], False),
    ],
    ids=["short", "at-the-cap", "past-the-cap", "none", "chunked", "encoded", "float", "negative"],
)
def test_only_a_body_that_surely_fits_is_read_plainly(
    headers: list[tuple[bytes, bytes]], plain: bool
) -> None:
    assert reader(*headers).plain is plain


@pytest.mark.parametrize(
    "headers",
    [
        [(b"Transfer-Encoding", b"gzip, chunked")],
        [(b"Transfer-Encoding", b"gzip")],
        [(b"Transfer-Encoding", b"chunked"), (b"Transfer-Encoding", b"chunked")],
        # Only spaces and tabs around it, as h11 reads it: not other whitespace, not letters.
        [(b"Transfer-Encoding", b"chunked\x0b")],
        [(b"Transfer-Encoding", b"\x0cchunked")],
        [(b"Transfer-Encoding", b"Xchunked")],
    ],
    ids=["gzip-chunked", "gzip", "twice", "vertical-tab", "form-feed", "letter-before"],
)
@pytest.mark.parametrize("cap", [1000, None])
def test_a_transfer_coding_other_than_chunked_alone_is_refused_unread(
    headers: list[tuple[bytes, bytes]], cap: int | None
) -> None:
    refused = reader(*headers, cap=cap)

    assert refused.refusal is not None
    assert (refused.refusal.failure, refused.refusal.detail) == (
        Failure.FATAL,
        TRANSFER_CODING_REFUSAL,
    )
    assert refused.refusal.request_view().url == httpx.URL(BASE_URL)  # what errors keep
    assert refused.plain is False  # not even without a cap, where chunked alone is plain


@pytest.mark.parametrize("value", [b"chunked", b"CHUNKED", b" \tChunked\t"])
def test_chunked_alone_is_read(value: bytes) -> None:
    assert reader((b"Transfer-Encoding", value)).refusal is None
    assert reader((b"Transfer-Encoding", value), cap=None).plain is True


def test_a_body_not_in_its_coding_is_a_fatal_failure_said_exactly() -> None:
    gzipped = reader((b"Content-Encoding", b"gzip"))

    failure = gzipped.add(b"not gzip at all")

    assert failure is not None
    assert (failure.failure, failure.timeout, failure.detail) == (
        Failure.FATAL,
        False,
        "the response body is not valid gzip (Error -3 while decompressing data: incorrect "
        "header check)",
    )
    assert gzipped.content() == b""


def test_no_cap_reads_plainly_and_a_deadline_never_does() -> None:
    assert reader(cap=None).plain is True
    assert reader((b"Content-Length", b"10"), ends=1e12).plain is False


@pytest.mark.parametrize(
    "headers",
    [
        [(b"Content-Length", b"1001")],
        [],
        [(b"Transfer-Encoding", b"chunked")],
        [(b"Content-Length", b"10"), (b"Content-Encoding", b"gzip")],
    ],
    ids=["past-the-cap", "no-length", "chunked", "encoded"],
)
def test_a_body_the_library_read_already_is_plain_whatever_its_headers_say(
    headers: list[tuple[bytes, bytes]],
) -> None:
    # The library decoded it already (a mock transport, a user's hook that read it): the
    # backend reads it the plain way and checks its size after the fact, under a deadline too.
    assert reader(*headers, ends=1e12, read=True).plain is True
    assert reader(*headers, ends=1e12).plain is False


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        ([(b"Transfer-Encoding", b"gzip")], TRANSFER_CODING_REFUSAL),
        (
            [(b"Content-Encoding", b"compress")],
            "the response body is encoded as 'compress', which the SDK did not ask for "
            "(Accept-Encoding: gzip, deflate, br) and does not decode",
        ),
    ],
    ids=["transfer-coding", "content-coding"],
)
def test_a_refused_body_is_never_plain_even_read_already(
    headers: list[tuple[bytes, bytes]], detail: str
) -> None:
    refused = reader(*headers, cap=None, read=True)

    assert refused.plain is False
    assert refused.refusal is not None
    assert (refused.refusal.failure, refused.refusal.detail) == (Failure.FATAL, detail)


class LongerThanItSays(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """A transport that does not frame bodies by their headers: 2,190 bytes said to be 10."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = b"[" + b" " * 2188 + b"]"
        return httpx.Response(200, headers={"Content-Length": "10"}, content=body)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self.handle_request(request)


def test_a_body_read_plainly_is_checked_against_the_cap_after_all() -> None:
    transport = LongerThanItSays()
    with (
        Client(
            api_key=API_KEY,
            base_url=BASE_URL,
            max_response_bytes=100,
            http_client=httpx.Client(transport=transport),
        ) as client,
        pytest.raises(ResponseTooLargeError),
    ):
        client.list_pets()

    async def main() -> None:
        async with AsyncClient(
            api_key=API_KEY,
            base_url=BASE_URL,
            max_response_bytes=100,
            http_client=httpx.AsyncClient(transport=transport),
        ) as client:
            await client.list_pets()

    with pytest.raises(ResponseTooLargeError):
        asyncio.run(main())


@pytest.mark.parametrize("encoding", [None, b"gzip", b"br, deflate"])
def test_a_reader_leaves_no_cycle_for_the_garbage_collector(encoding: bytes | None) -> None:
    # A cycle (the decoder holding a method of the reader) would keep every call's decoder,
    # its window included, until the collector ran: time and memory on every call.
    headers = [] if encoding is None else [(b"Content-Encoding", encoding)]
    body = encode(encoding, b'[{"id": 1}]')
    gc.collect()
    gc.disable()
    try:
        for _ in range(10):
            read = reader(*headers)
            assert read.read([body[:3], body[3:]]) is None
            assert read.content() == b'[{"id": 1}]'
        del read
        assert gc.collect() == 0
    finally:
        gc.enable()


def encode(encoding: bytes | None, data: bytes) -> bytes:
    if encoding == b"gzip":
        return gzip.compress(data)
    if encoding == b"br, deflate":
        return zlib.compress(brotli.compress(data))
    return data


def empty_gzip_members(count: int) -> list[bytes]:
    return [gzip.compress(b"")] * count


def test_coded_pieces_that_decode_to_nothing_stop_at_the_deadline() -> None:
    # An endless run of empty gzip members decodes to nothing: the deadline holds all the same.
    request = Request("GET", f"{BASE_URL}/pets", None, {}, None, {}, None, 1.0, 0.0)
    headers = [(b"Content-Encoding", b"gzip")]
    expired = BodyReader(request, headers, lambda: RequestView("GET", BASE_URL, [], {}))

    stop = expired.add(gzip.compress(b""))

    assert stop is not None
    assert (stop.timeout, stop.detail) == (True, "deadline=1 s passed before the call was done")


def test_coded_pieces_that_decode_to_nothing_stop_past_the_coded_limit() -> None:
    # The cap counts decoded bytes, which never grow here: the coded bytes' own limit, twice
    # the cap plus 64 KiB (67,536 bytes for a cap of 1,000), stops them, checked to the byte.
    capped = reader((b"Content-Encoding", b"gzip"), cap=1000)
    member = gzip.compress(b"")
    assert (len(member), coded_limit(1000)) == (20, 67_536)
    pieces = [*empty_gzip_members(3376), member[:16]]  # 67,536 bytes

    assert [capped.add(piece) for piece in pieces] == [None] * len(pieces)
    stop = capped.add(member[16:])

    assert stop is not None
    assert (stop.failure, stop.timeout) == (Failure.TOO_LARGE, False)
    assert stop.detail == (
        "the response body is larger than 67536 bytes as it travelled, before decoding (at "
        "most twice max_response_bytes=1000 plus 64 KiB); reading stopped there"
    )
    assert capped.content() == b""


def incompressible(size: int) -> bytes:
    """``size`` bytes of a JSON string that gzip makes longer, not shorter."""
    letters = random.Random(size).choices(string.ascii_letters + string.digits, k=size - 2)
    return b'"' + "".join(letters).encode() + b'"'


def test_the_cap_counts_decoded_bytes_not_the_longer_coded_ones() -> None:
    body = incompressible(1000)
    coded = gzip.compress(body, compresslevel=0)  # stored: longer than the body
    assert len(coded) == 1023

    at_the_cap = reader((b"Content-Encoding", b"gzip"), cap=1000)
    assert at_the_cap.read([coded]) is None
    assert at_the_cap.content() == body

    one_past = reader((b"Content-Encoding", b"gzip"), cap=999)
    stop = one_past.read([coded])
    assert stop is not None
    assert (stop.failure, stop.detail) == (
        Failure.TOO_LARGE,
        "the response body is larger than max_response_bytes=999; reading stopped there",
    )
    assert one_past.content() == b""
