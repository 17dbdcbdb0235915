"""The size cap counts decoded bytes; the coded ones have a bound of their own: on every backend.

``max_response_bytes`` is what the body may hold once decoded, whatever its coding adds on the
wire; the body as it travelled may hold twice the cap plus 64 KiB (``coded_limit``), which only
a body that decodes to little or nothing reaches. Exact sizes, over real sockets, on the five
backends. And a body in a transfer coding other than ``chunked`` alone (``Transfer-Encoding:
gzip, chunked``) is refused alike on all five, never handed to the JSON parser.
"""

from __future__ import annotations

import json
import random
import string
import struct
import zlib
from collections.abc import Callable

import pytest

from animalstore_client import APIConnectionError, Pet, ResponseTooLargeError
from animalstore_client._core.decoding import coded_limit
from animalstore_client._core.wire import REDACTED
from tests.conftest import VirtualClock
from tests.reliability.conftest import PET, Api, raised_exactly
from tests.reliability.faultserver import FaultServer, Raw, Reply

CAP = 1000
GZIP = [("Content-Encoding", "gzip")]


def gzip_member(data: bytes, *, extra: int = 0, level: int = 6) -> bytes:
    """One gzip member of ``data``, its header padded with an ``extra`` bytes long FEXTRA field
    (RFC 1952), to make a member of any length."""
    flags, padding = (0x04, struct.pack("<H", extra) + bytes(extra)) if extra else (0, b"")
    header = b"\x1f\x8b\x08" + bytes([flags]) + bytes(4) + b"\x00\xff" + padding
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflated = compressor.compress(data) + compressor.flush()
    return header + deflated + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def page_of(size: int) -> tuple[bytes, list[Pet]]:
    """A JSON page of ``size`` bytes exactly, its names random letters that do not compress."""
    letters = random.Random(size).choices(string.ascii_letters + string.digits, k=size)
    pets = [{"id": i, "name": "", "categoryId": 3, "status": "available"} for i in range(5)]
    room = size - len(json.dumps(pets).encode())
    for i, pet in enumerate(pets):
        share = room // len(pets) + (1 if i < room % len(pets) else 0)
        pet["name"] = "".join(letters[:share])
        del letters[:share]
    body = json.dumps(pets).encode()
    assert len(body) == size
    return body, [Pet.from_dict(pet) for pet in pets]


def test_a_page_at_the_cap_is_read_though_its_gzip_coding_is_longer(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    body, pets = page_of(CAP)
    coded = gzip_member(body, level=0)  # stored, as gzip does with what does not compress
    assert len(coded) == 1023
    server.script(Reply(200, body=coded, headers=GZIP))
    client = make_client(server, max_response_bytes=CAP, max_retries=0)

    assert client.list_pets() == pets


@pytest.mark.parametrize("level", [0, 9], ids=["stored", "compressed"])
def test_one_decoded_byte_past_the_cap_is_refused(
    make_client: Callable[..., Api], server: FaultServer, level: int
) -> None:
    body, _ = page_of(CAP + 1)
    server.script(Reply(200, body=gzip_member(body, level=level), headers=GZIP))
    client = make_client(server, max_response_bytes=CAP, max_retries=0)

    with pytest.raises(ResponseTooLargeError) as caught:
        client.list_pets()

    assert str(caught.value) == (
        f"GET {server.base_url}/pets failed: the response body is larger than "
        f"max_response_bytes={CAP}; reading stopped there"
    )
    assert len(server.requests) == 1


def members_of(total: int) -> bytes:
    """``[]`` in gzip, then empty gzip members: ``total`` bytes in all."""
    empty = gzip_member(b"")
    count, rest = divmod(total - len(gzip_member(b"[]")), len(empty))
    # The odd bytes go into the first member's FEXTRA field (2 bytes of length, then the data).
    count, rest = (count - 1, rest + len(empty)) if rest < 2 else (count, rest)
    coded = gzip_member(b"[]", extra=rest - 2) + empty * count
    assert len(coded) == total
    return coded


def test_coded_bytes_are_read_up_to_their_bound_and_refused_past_it(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    limit = coded_limit(CAP)
    assert limit == 2 * CAP + 64 * 1024 == 67_536
    server.script(
        Reply(200, body=members_of(limit), headers=GZIP),
        Reply(200, body=members_of(limit + 1), headers=GZIP),
    )
    client = make_client(server, max_response_bytes=CAP, max_retries=0)

    assert client.list_pets() == []  # 67,536 coded bytes, 2 decoded
    with pytest.raises(ResponseTooLargeError) as caught:
        client.list_pets()

    assert str(caught.value) == (
        f"GET {server.base_url}/pets failed: the response body is larger than 67536 bytes as it "
        "travelled, before decoding (at most twice max_response_bytes=1000 plus 64 KiB); "
        "reading stopped there"
    )
    assert len(server.requests) == 2


def chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


GZIPPED = gzip_member(b"[]")
#: Answers in a transfer coding other than ``chunked`` alone: the head's ``Transfer-Encoding``
#: headers, and the body as it goes on the wire.
REFUSED_TRANSFER_CODINGS = {
    "gzip, chunked": (b"Transfer-Encoding: gzip, chunked", chunked(GZIPPED)),
    "GZIP,Chunked": (b"Transfer-Encoding: GZIP,Chunked", chunked(GZIPPED)),
    "chunked, gzip": (b"Transfer-Encoding: chunked, gzip", chunked(GZIPPED)),
    "gzip": (b"Transfer-Encoding: gzip", GZIPPED),
    "identity": (b"Transfer-Encoding: identity", b"[]"),
    "chunked, chunked": (b"Transfer-Encoding: chunked, chunked", chunked(chunked(b"[]"))),
    "chunked twice": (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", chunked(b"[]")),
}


@pytest.mark.parametrize("coding", list(REFUSED_TRANSFER_CODINGS))
def test_a_transfer_coding_other_than_chunked_alone_is_refused_alike_and_not_retried(
    make_client: Callable[..., Api], server: FaultServer, clock: VirtualClock, coding: str
) -> None:
    headers, body = REFUSED_TRANSFER_CODINGS[coding]
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + headers + b"\r\n\r\n"
    server.script(Raw(head + body), Raw(head + body))
    client = make_client(server, max_retries=1)

    error = raised_exactly(APIConnectionError, client.list_pets)

    assert str(error) == (
        f"GET {server.base_url}/pets failed: the response's Transfer-Encoding is not chunked "
        "alone, the only transfer coding the SDK reads (RFC 9112, section 6); a server "
        "compresses a body with Content-Encoding"
    )
    request = error.request
    assert (request.method, str(request.url), request.headers["authorization"]) == (
        "GET",
        f"{server.base_url}/pets",
        REDACTED,
    )
    assert len(server.requests) == 1  # the same answer would come again
    assert clock.slept == []


@pytest.mark.parametrize("value", [b"chunked", b"Chunked", b" \tCHUNKED "])
def test_chunked_alone_in_any_case_and_spacing_is_read(
    make_client: Callable[..., Api], server: FaultServer, value: bytes
) -> None:
    payload = json.dumps([PET]).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: %s\r\n\r\n"
    server.script(Raw(head % value + chunked(payload)))
    client = make_client(server, max_retries=0, max_response_bytes=None)

    assert client.list_pets() == [Pet.from_dict(PET)]
