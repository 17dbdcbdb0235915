"""The httpx objects the aiohttp backend assembles are the ones httpx's constructors make.

Every attribute is compared, so that an httpx release that adds or changes one fails here.
"""

from __future__ import annotations

import gzip
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client._httpx_parts import RequestTemplate, response_from

HEADER_NAMES = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-", min_size=1, max_size=12
)
HEADER_VALUES = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
PARAMS = st.dictionaries(
    st.text(min_size=1, max_size=8), st.one_of(st.integers(), st.text(max_size=8)), max_size=3
)


def request_state(request: httpx.Request) -> dict[str, Any]:
    state = dict(vars(request))
    headers, stream = state.pop("headers"), state.pop("stream")
    return {
        **state,
        "headers": (headers.raw, headers.encoding, type(headers)),
        "stream": (type(stream), list(stream)),
    }


def response_state(response: httpx.Response) -> dict[str, Any]:
    state = dict(vars(response))
    headers, stream = state.pop("headers"), state.pop("stream")
    # httpx makes its content decoder while reading; the assembled response has none to make.
    state.pop("_decoder", None)
    return {
        **state,
        "headers": (headers.raw, type(headers)),
        "stream": (type(stream), list(stream)),
        "text": response.text,
    }


@settings(max_examples=100, deadline=None, database=None)
@given(
    method=st.sampled_from(["GET", "get", "DELETE", "HEAD"]),
    path=st.text("abc/-_.~%20", max_size=12),
    params=st.one_of(st.none(), PARAMS),
    headers=st.one_of(st.none(), st.dictionaries(HEADER_NAMES, HEADER_VALUES, max_size=4)),
    client_headers=st.dictionaries(HEADER_NAMES, HEADER_VALUES, max_size=3),
)
def test_an_assembled_request_is_the_one_httpx_builds(
    method: str,
    path: str,
    params: dict[str, Any] | None,
    headers: dict[str, str] | None,
    client_headers: dict[str, str],
) -> None:
    client = httpx.AsyncClient(headers=client_headers)
    url = f"https://api.test:8443/v1/{path}"
    extensions = {"timeout": {"connect": 1.0, "read": 2.0, "write": 3.0, "pool": 4.0}}

    def build() -> httpx.Request:
        return client.build_request(
            method, url, params=params, headers=headers, extensions=extensions
        )

    template = RequestTemplate(build())
    assembled = template.request(dict(extensions))

    assert request_state(assembled) == request_state(build())
    assert repr(assembled) == repr(build())


def test_assembled_requests_share_no_headers() -> None:
    template = RequestTemplate(httpx.Request("GET", "https://api.test/v1/pets", headers={"a": "1"}))
    first, second = template.request({}), template.request({})
    first.headers["a"] = "changed"
    first.headers["b"] = "added"

    assert second.headers.raw == [(b"Host", b"api.test"), (b"a", b"1")]
    assert template.request({}).headers.raw == second.headers.raw


RAW_HEADERS = st.lists(
    st.tuples(HEADER_NAMES.map(str.encode), HEADER_VALUES.map(str.encode)).filter(
        lambda item: item[0].lower() != b"content-encoding"
    ),
    max_size=6,
)


@settings(max_examples=100, deadline=None, database=None)
@given(
    status=st.integers(100, 599),
    raw_headers=RAW_HEADERS,
    body=st.binary(max_size=200),
    reason=st.one_of(st.none(), st.sampled_from([b"OK", b"Not Found", b"Weird"])),
)
def test_an_assembled_response_is_the_one_httpx_reads(
    status: int, raw_headers: list[tuple[bytes, bytes]], body: bytes, reason: bytes | None
) -> None:
    request = httpx.Request("GET", "https://api.test/v1/pets")
    extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
    if reason is not None:
        extensions["reason_phrase"] = reason
    expected = httpx.Response(
        status,
        headers=raw_headers,
        stream=httpx.ByteStream(body),
        request=request,
        extensions=dict(extensions),
    )
    expected.read()

    assembled = response_from(status, tuple(raw_headers), body, request, dict(extensions))

    assert response_state(assembled) == response_state(expected)
    assert assembled.request is request
    assert (assembled.http_version, assembled.reason_phrase) == (
        expected.http_version,
        expected.reason_phrase,
    )


@pytest.mark.parametrize("encoding", ["gzip", "identity"])
def test_an_encoded_body_is_decoded_by_httpx(encoding: str) -> None:
    request = httpx.Request("GET", "https://api.test/v1/pets")
    payload = b'[{"id": 1}]'
    body = gzip.compress(payload) if encoding == "gzip" else payload

    response = response_from(200, ((b"Content-Encoding", encoding.encode()),), body, request, {})

    assert response.content == payload
    assert response.json() == [{"id": 1}]


def test_a_body_that_does_not_decode_is_httpxs_decoding_error() -> None:
    request = httpx.Request("GET", "https://api.test/v1/pets")

    with pytest.raises(httpx.DecodingError):
        response_from(200, ((b"Content-Encoding", b"gzip"),), b"not gzip", request, {})
