"""The one decoder of content codings (``_core.decoding``): what a ``Content-Encoding`` means,
what each stack decodes to whatever pieces its bytes arrive in, and that no layer yields more
than a piece at a time, so that the size cap bounds a bomb in any stack.
"""

from __future__ import annotations

import gzip
import struct
import sys
import types
import zlib
from collections.abc import Callable

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client._core.decoding import (
    MAX_CODINGS,
    STEP,
    DecodeError,
    Decoder,
    _bounded_brotli,
    accept_encoding,
    accepted,
    codings,
    refusal,
)


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


#: How each coding the SDK decodes is applied; ``deflate-raw`` is ``deflate`` as some servers
#: send it (no zlib header).
ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "deflate-raw": raw_deflate,
    "br": lambda data: brotli.compress(data, quality=4),
    "identity": lambda data: data,
}
#: The most one piece may hold: brotli fills its output buffer past its limit by up to one block.
MOST_AT_ONCE = 2 * STEP


def encode(stack: list[str], data: bytes) -> bytes:
    for coding in stack:
        data = ENCODERS[coding](data)
    return data


def header_names(stack: list[str]) -> list[str]:
    return ["deflate" if coding == "deflate-raw" else coding for coding in stack]


def decode(stack: list[str], body: bytes, piece: int | None = None) -> tuple[bytes, list[int]]:
    """Decode ``body`` fed ``piece`` bytes at a time; return the body and each piece's size."""
    pieces: list[bytes] = []
    decoder = Decoder(codings([", ".join(header_names(stack)).encode()]), pieces.append)
    step = piece or max(len(body), 1)
    for start in range(0, len(body), step):
        decoder.feed(body[start : start + step])
    decoder.end()
    return b"".join(pieces), [len(p) for p in pieces]


# -- what a Content-Encoding header means ----------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([b"gzip"], ["gzip"]),
        ([b"GZip"], ["gzip"]),
        ([b" \tdeflate , gzip\t"], ["deflate", "gzip"]),
        ([b"deflate", b"gzip"], ["deflate", "gzip"]),  # repeated headers: one list, in order
        ([b"identity, gzip", b"Identity"], ["gzip"]),
        ([b",, gzip ,", b""], ["gzip"]),  # empty elements
        ([b"identity"], []),
        ([b"x-\xff"], ["x-\xff"]),  # any byte, read as Latin-1
        ([b"X-GZip"], ["x-gzip"]),  # only spaces and tabs are stripped, before lower-casing
        ([b"\x0bgzip\x0c", b"\r\ngzip"], ["\x0bgzip\x0c", "\r\ngzip"]),  # not other blanks
    ],
)
def test_a_content_encoding_is_a_list_of_codings_in_the_order_applied(
    values: list[bytes], expected: list[str]
) -> None:
    assert codings(values) == expected


def test_the_sdk_asks_for_what_it_decodes() -> None:
    # brotli 1.2 (the test extra's) bounds its output; zstandard's decompressobj does not.
    assert accept_encoding() == "gzip, deflate, br"
    assert _bounded_brotli() is True  # looked up anew: accepted() keeps its first answer


@pytest.mark.parametrize(
    "module",
    [None, types.SimpleNamespace(Decompressor=type("Decompressor", (), {}))],
    ids=["not-installed", "older-than-1.2"],
)
def test_br_is_not_asked_for_without_a_brotli_that_bounds_its_output(
    monkeypatch: pytest.MonkeyPatch, module: object
) -> None:
    monkeypatch.setitem(sys.modules, "brotli", module)  # None: importing it raises ImportError
    assert _bounded_brotli() is False
    accepted.cache_clear()
    try:
        assert accept_encoding() == "gzip, deflate"
        assert refusal(["br"]) == (
            "the response body is encoded as 'br', which the SDK did not ask for "
            "(Accept-Encoding: gzip, deflate) and does not decode"
        )
    finally:
        accepted.cache_clear()


@pytest.mark.parametrize(
    ("stack", "reason"),
    [
        (["zstd"], "encoded as 'zstd', which the SDK did not ask for"),
        (["gzip", "compress"], "encoded as 'gzip, compress', which the SDK did not ask for"),
        (["gzip"] * (MAX_CODINGS + 1), f"encoded {MAX_CODINGS + 1} times (gzip, gzip, gzip)"),
        (["br", "br"], "encoded 2 times (br, br); the SDK undoes at most 2 content codings, br at"),
    ],
)
def test_a_coding_not_asked_for_or_too_deep_a_stack_is_refused(
    stack: list[str], reason: str
) -> None:
    message = refusal(stack)
    assert message is not None
    assert reason in message
    assert "Accept-Encoding: gzip, deflate, br" in message or "at most 2" in message


def test_a_stack_as_deep_as_allowed_is_not_refused() -> None:
    assert refusal(["br", "deflate"][:MAX_CODINGS]) is None


# -- decoding ---------------------------------------------------------------------------------

STACKS = st.lists(st.sampled_from(sorted(ENCODERS)), max_size=MAX_CODINGS + 1).filter(
    lambda stack: (
        len([c for c in stack if c != "identity"]) <= MAX_CODINGS and stack.count("br") <= 1
    )
)


@settings(max_examples=200, deadline=None, database=None)
@given(
    stack=STACKS,
    data=st.binary(max_size=3000) | st.builds(bytes, st.integers(0, 300_000)),
    piece=st.none() | st.integers(1, 5000),
)
def test_any_stack_decodes_to_the_body_in_any_pieces_a_piece_at_a_time(
    stack: list[str], data: bytes, piece: int | None
) -> None:
    body, sizes = decode(stack, encode(stack, data), piece)
    assert body == data
    # identity alone passes the pieces on as they came
    most = MOST_AT_ONCE if set(stack) - {"identity"} else piece or len(data)
    assert all(0 < size <= most for size in sizes)


class Enough(Exception):
    """What the size cap raises from ``emit``."""


@pytest.mark.parametrize(
    "stack",
    [
        ["gzip"],
        ["deflate"],
        ["deflate-raw"],
        ["br"],
        ["gzip", "gzip"],
        ["deflate", "gzip"],
        ["br", "gzip"],
        ["gzip", "br"],
        ["br", "br"],
    ],
)
def test_a_bomb_in_any_stack_stops_a_piece_past_the_limit(stack: list[str]) -> None:
    limit = 1024 * 1024
    bomb = encode(stack, bytes(64 * 1024 * 1024))
    taken = 0

    def emit(piece: bytes) -> None:
        nonlocal taken
        taken += len(piece)
        if taken > limit:
            raise Enough

    decoder = Decoder(codings([", ".join(header_names(stack)).encode()]), emit)
    with pytest.raises(Enough):
        decoder.feed(bomb)  # all of it at once: the layers still yield a piece at a time
    assert limit < taken <= limit + MOST_AT_ONCE


def test_a_multi_member_gzip_body_is_its_members_one_after_the_other() -> None:
    body = gzip.compress(b'[{"id":') + gzip.compress(b"1}]")
    assert decode(["gzip"], body)[0] == decode(["gzip"], body, 1)[0] == b'[{"id":1}]'


def test_an_empty_body_is_empty_in_any_coding() -> None:
    assert decode(["br", "gzip"], b"") == (b"", [])


@pytest.mark.parametrize("coding", ["gzip", "deflate", "deflate-raw", "br"])
@pytest.mark.parametrize("piece", [None, 1])
def test_a_body_cut_short_or_with_bytes_after_its_end_is_corrupt(
    coding: str, piece: int | None
) -> None:
    whole = ENCODERS[coding](b'[{"id": 1}]' * 50)
    for body, says in [
        (whole[:-1], "ends inside its"),
        # gzip: not another member; br: found inside the piece that ends it, or after it
        (whole + b"garbage!", "bytes after the end" if "deflate" in coding else "not valid|after"),
        # brotli has no header: what another start gives depends on the bits that follow
        (b"\x1f\x8b" + whole[2:] if coding != "gzip" else b"\x00" + whole, "not valid|ends"),
    ]:
        with pytest.raises(DecodeError, match=says):
            decode([coding], body, piece)


def test_deflate_tells_the_zlib_format_from_raw_deflate_by_its_header() -> None:
    data = b'{"id": 1}' * 100
    assert decode(["deflate"], zlib.compress(data), 1)[0] == data
    assert decode(["deflate"], raw_deflate(data), 1)[0] == data


def test_a_piece_of_exactly_one_step_is_not_taken_for_the_end_of_the_output() -> None:
    # All the input taken and a full piece out: zlib may still hold output (here one byte).
    data = bytes(STEP + 1)
    assert decode(["deflate-raw"], raw_deflate(data)) == (data, [STEP, 1])
    assert decode(["deflate"], zlib.compress(data)) == (data, [STEP, 1])
    assert decode(["gzip"], gzip.compress(data)) == (data, [STEP, 1])


@pytest.mark.parametrize(
    ("coding", "body"),
    [("gzip", b"\x1f"), ("deflate", b"\x78"), ("deflate", b"\x00"), ("gzip", b"\x00")],
)
def test_a_one_byte_body_ends_inside_its_coded_data(coding: str, body: bytes) -> None:
    # One byte cannot yet tell zlib's format from raw deflate: kept, never taken for empty.
    pieces: list[bytes] = []
    decoder = Decoder([coding], pieces.append)
    decoder.feed(body)
    assert pieces == []
    with pytest.raises(DecodeError) as raised:
        decoder.end()
    assert str(raised.value) == f"the response body ends inside its {coding} data"


@pytest.mark.parametrize(
    "body",
    [
        zlib.compress(b'[{"id": 1}]'),  # the zlib format is deflate, not gzip
        gzip.compress(b'[{"id": 1}]') + zlib.compress(b'[{"id": 2}]'),  # nor is a next member
    ],
    ids=["first", "next"],
)
def test_gzip_is_only_gzip_members(body: bytes) -> None:
    with pytest.raises(DecodeError) as raised:
        decode(["gzip"], body)
    assert str(raised.value) == (
        "the response body is not valid gzip "
        "(Error -3 while decompressing data: incorrect header check)"
    )


def stored_block(first: int, payload: bytes) -> bytes:
    """A stored deflate block whose first byte is ``first``: its bit 0 says whether it is the
    last; bits 1-2 are 00 (stored); bits 3-7 are padding, which inflaters skip."""
    return bytes([first]) + struct.pack("<HH", len(payload), len(payload) ^ 0xFFFF) + payload


@pytest.mark.parametrize(
    "first",
    [
        # a window of 2**16 (CINFO 8), which the zlib format does not allow; the check bits hold
        stored_block(0x88, bytes(range(65, 65 + 28))),
        # a zlib format's first byte (CINFO 0, CM 8), but not its check bits
        stored_block(0x08, b"hello"),
    ],
    ids=["window-too-large", "check-bits-wrong"],
)
def test_raw_deflate_that_only_looks_like_a_zlib_header_is_raw_deflate(first: bytes) -> None:
    body = first + stored_block(0x01, b"!")
    expected = zlib.decompress(body, -zlib.MAX_WBITS)
    assert expected == first[5:] + b"!"
    assert decode(["deflate"], body) == (expected, [len(expected)])
    assert decode(["deflate"], body, 1)[0] == expected


def test_a_br_body_cut_short_or_with_bytes_after_its_end_says_so() -> None:
    whole = brotli.compress(b'[{"id": 1}]' * 50, quality=4)
    decoder = Decoder(["br"], lambda piece: None)
    decoder.feed(whole[:-1])
    with pytest.raises(DecodeError) as raised:
        decoder.end()
    assert str(raised.value) == "the response body ends inside its br data"
    decoder.feed(whole[-1:])
    decoder.end()
    with pytest.raises(DecodeError) as raised:
        decoder.feed(b"!")
    assert str(raised.value) == "the response body has bytes after the end of its br data"
