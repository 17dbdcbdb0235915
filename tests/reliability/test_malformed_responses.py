"""Bodies that do not fit, over real sockets: success bodies that are not the schema, gzip,
proxy pages instead of Error bodies, and the one-line message promise.
"""

from __future__ import annotations

import gzip
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from animalstore_client import (
    AnimalStoreError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    Pet,
    PetStatus,
)
from tests.reliability.conftest import PET, Api, json_bytes, raised_exactly
from tests.reliability.faultserver import FaultServer, Raw, Reply

REX = Pet(id=1, name="Rex", category_id=3, status=PetStatus.AVAILABLE)
TEN_MB_OF_GARBAGE = bytes(range(256)) * (10 * 1024 * 1024 // 256)
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
    b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>\n"
    b"</body></html>\n" + b"<!-- padding -->\n" * 100
)
LEAKS = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError)


def one(**changes: Any) -> dict[str, Any]:
    return {**PET, **changes}


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in PET.items() if k != key}


#: (operation, status, body, content type, what the message must say)
MALFORMED: dict[str, tuple[str, int, bytes, str | None, str]] = {
    "not-json": ("list_pets", 200, b"not json", "application/json", "not valid JSON"),
    "html-page": ("list_pets", 200, HTML_PAGE, "text/html", "not valid JSON"),
    "empty-200": ("list_pets", 200, b"", "application/json", "not valid JSON"),
    "empty-204": ("create_pet", 204, b"", None, "not valid JSON"),
    "trailing-garbage": ("list_pets", 200, b"[] []", "application/json", "not valid JSON"),
    "object-for-array": (
        "list_pets",
        200,
        json_bytes(PET),
        "application/json",
        "$: expected a JSON array, got dict",
    ),
    "array-for-object": (
        "create_pet",
        201,
        json_bytes([PET]),
        "application/json",
        "$: expected a JSON object, got list",
    ),
    "null-for-array": ("list_pets", 200, b"null", "application/json", "$: expected a JSON array"),
    "missing-id": (
        "create_pet",
        201,
        json_bytes(without("id")),
        "application/json",
        "$.id: required field is missing",
    ),
    "id-as-string": (
        "get_pet",
        200,
        json_bytes(one(id="7")),
        "application/json",
        "$.id: expected an integer, got str '7'",
    ),
    "id-as-bool": (
        "get_pet",
        200,
        json_bytes(one(id=True)),
        "application/json",
        "$.id: expected an integer, got bool",
    ),
    "id-beyond-int64": (
        "get_pet",
        200,
        json_bytes(one(id=2**64)),
        "application/json",
        "$.id: expected an int64",
    ),
    "id-nan": (
        "get_pet",
        200,
        b'{"id": NaN, "name": "Rex", "categoryId": 3}',
        "application/json",
        "$.id: expected an integer, got float nan",
    ),
    "name-null": (
        "list_pets",
        200,
        json_bytes([PET, one(name=None)]),
        "application/json",
        "$[1].name: expected a string, got null",
    ),
    "category-as-string": (
        "list_pets",
        200,
        json_bytes([one(categoryId="3")]),
        "application/json",
        "$[0].categoryId: expected an integer, got str '3'",
    ),
    "status-as-number": (
        "get_pet",
        200,
        json_bytes(one(status=5)),
        "application/json",
        "$.status: expected a string, got int 5",
    ),
    "ten-mb-of-garbage": (
        "list_pets",
        200,
        TEN_MB_OF_GARBAGE,
        "application/octet-stream",
        "not valid JSON",
    ),
    "non-utf8": (
        "list_pets",
        200,
        b'[{"id": 1, "name": "R\xe9x", "categoryId": 3}]',
        "application/json",
        "not valid JSON",
    ),
    "absurdly-nested": (
        "list_pets",
        200,
        b"[" * 200_000 + b"]" * 200_000,
        "application/json",
        "JSON nested too deeply",
    ),
    "nested-within-limits": (
        "get_pet",
        200,
        b"[" * 500 + b"]" * 500,
        "application/json",
        "$: expected a JSON object",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_success_body_raises_apiresponsevalidationerror(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    case: tuple[str, int, bytes, str | None, str],
) -> None:
    operation, status, body, content_type, expected = case
    server.script(Reply(status, body=body, content_type=content_type))
    api = make_client(server, max_retries=2)

    with pytest.raises(APIResponseValidationError) as caught:
        api.invoke(operation)

    exc = caught.value
    assert type(exc) is APIResponseValidationError
    assert expected in str(exc)
    assert len(str(exc)) < 1000  # names the problem; does not echo megabytes of body
    assert exc.response.status_code == status
    assert exc.request is exc.response.request
    assert not isinstance(exc, LEAKS)
    assert len(server.requests) == 1  # a bad body is not retried
    assert sleeps == []


def test_valid_json_with_a_wrong_content_type_is_parsed(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    # The SDK decodes JSON whatever Content-Type says: a mislabelled but valid body succeeds.
    server.script(
        Reply(200, json=[PET], content_type="text/plain; charset=iso-8859-1"),
        Reply(200, json=[PET], content_type=None),
        Reply(200, json=[PET], content_type="text/html"),
    )
    api = make_client(server)

    assert [api.list_pets() for _ in range(3)] == [[REX]] * 3


def test_unknown_fields_and_an_unknown_status_are_tolerated(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.script(Reply(200, json=[one(status="adopted", colour="brown", tags=[1, {}])]))
    api = make_client(server)

    assert api.list_pets() == [Pet(id=1, name="Rex", category_id=3, status="adopted")]


def test_a_gzipped_body_is_decoded_and_parsed(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    big = [one(id=i, name=f"pet-{i}") for i in range(1, 101)]
    server.script(Reply(200, json=big, gzip=True))
    api = make_client(server)

    pets = api.list_pets(limit=100)

    assert [p.name for p in pets] == [f"pet-{i}" for i in range(1, 101)]
    assert "gzip" in (server.requests[0].header("accept-encoding") or "")


def test_a_gzipped_error_body_is_decoded(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    error = {"code": "invalid_field", "message": "name is required", "status": 400}
    server.script(Reply(400, json=error, gzip=True))
    api = make_client(server)

    with pytest.raises(BadRequestError) as caught:
        api.create_pet(name="Rex", category_id=3)

    assert (caught.value.code, caught.value.message) == ("invalid_field", "name is required")


@pytest.mark.parametrize(
    "body",
    [b"definitely not gzip", gzip.compress(json_bytes([PET]))[:-12], b"\x1f\x8b\x08\x00garbage"],
    ids=["not-gzip", "cut-short", "bad-header"],
)
def test_a_corrupt_gzip_body_raises_an_sdk_error(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float], body: bytes
) -> None:
    server.script(Reply(200, body=body, headers={"Content-Encoding": "gzip"}))
    server.script(Reply(200, json=[PET]))
    api = make_client(server, max_retries=2)

    with pytest.raises(AnimalStoreError) as caught:
        api.list_pets()

    assert isinstance(caught.value, APIError)
    assert caught.value.request.url == f"{server.base_url}/pets"
    assert not isinstance(caught.value, LEAKS)
    # A corrupt body is what arrived, not a transient fault: not retried.
    assert len(server.requests) == 1


# -- non-2xx answers that are not Error bodies ------------------------------------------------


def test_a_proxy_html_page_gives_the_status_class_with_an_excerpt(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.script(Reply(502, body=HTML_PAGE, content_type="text/html"))
    api = make_client(server, max_retries=0)

    with pytest.raises(InternalServerError) as caught:
        api.list_pets()

    exc = caught.value
    assert type(exc) is InternalServerError
    assert (exc.status_code, exc.code, exc.error) == (502, None, None)
    assert exc.message.startswith("<!DOCTYPE html> <html><head><title>502 Bad Gateway</title>")
    assert exc.message.endswith(" ...")
    assert len(exc.message) <= 304
    assert "\n" not in str(exc)


@pytest.mark.parametrize(
    ("status", "body"),
    [(401, b""), (418, b"\xff\xfe\x00garbage"), (500, b"{broken json"), (503, b"[1, 2]")],
)
def test_a_non_error_body_still_gives_the_right_class(
    server: FaultServer, make_client: Callable[..., Api], status: int, body: bytes
) -> None:
    server.script(Reply(status, body=body, content_type="text/plain"))
    api = make_client(server, max_retries=0)

    with pytest.raises(APIStatusError) as caught:
        api.list_pets()

    expected = {401: AuthenticationError, 418: APIStatusError}.get(status, InternalServerError)
    assert type(caught.value) is expected
    assert caught.value.code is None
    assert caught.value.error is None
    assert caught.value.message  # never empty: the excerpt, or the reason phrase
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "message",
    ["first line\nsecond line", "a\r\nFAKE LOG LINE", "tab\tand\x0bvertical\x0cfeed"],
    ids=["lf", "crlf", "vt-ff"],
)
def test_str_of_a_status_error_is_one_line_even_when_the_message_is_not(
    server: FaultServer, make_client: Callable[..., Api], message: str
) -> None:
    # README: "str(exc) is one line". A server (or a proxy) chooses the Error message.
    error = {"code": "invalid\nfield", "message": message, "status": 400}
    server.script(Reply(400, json=error, headers={"X-Request-Id": "req_1"}))
    api = make_client(server, max_retries=0)

    with pytest.raises(BadRequestError) as caught:
        api.create_pet(name="Rex", category_id=3)

    text = str(caught.value)
    assert text.splitlines() == [text]
    assert text.startswith("400 ")
    assert text.endswith("(request id req_1)")


@pytest.mark.parametrize("status", [600, 799, 999])
def test_a_status_beyond_5xx_is_a_plain_apistatuserror(
    server: FaultServer, make_client: Callable[..., Api], status: int
) -> None:
    # README: InternalServerError is "any 5xx"; "any other non-2xx status raises
    # APIStatusError itself". HTTP status codes are any three digits.
    server.script(Reply(status, json={"code": "odd", "message": "odd", "status": status}))
    api = make_client(server, max_retries=2)

    error = raised_exactly(APIStatusError, api.list_pets)

    assert error.status_code == status
    assert len(server.requests) == 1


def raw_answer(status_line: bytes, headers: list[bytes], body: bytes) -> Raw:
    """An answer written byte for byte, header values included."""
    head = b"\r\n".join([status_line, *headers, b"Content-Length: %d" % len(body)])
    return Raw(head + b"\r\n\r\n" + body)


def test_a_header_value_outside_ascii_is_kept_in_the_errors_response(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    # RFC 9110 allows any byte above 0x7f in a field value (obs-text); httpx shows it as
    # Latin-1. Building the error's httpx.Response from text would fail to encode it.
    body = b'{"code":"not_found","message":"no such pet","status":404}'
    server.script(
        raw_answer(
            b"HTTP/1.1 404 Not Found",
            [b"Content-Type: application/json", b"X-Note: caf\xe9"],
            body,
        )
    )
    api = make_client(server)

    with pytest.raises(NotFoundError) as caught:
        api.invoke("get_pet")

    exc = caught.value
    assert exc.message == "no such pet"
    assert exc.response.headers["x-note"] == "caf\xe9"
    assert (b"X-Note", b"caf\xe9") in exc.response.headers.raw
    assert exc.response.content == body
    copy = pickle.loads(pickle.dumps(exc))
    assert copy.response.headers["x-note"] == "caf\xe9"
    assert len(server.requests) == 1


def test_deprecation_signals_beside_a_header_outside_ascii_still_warn(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    # The warning reads the Link header from the httpx view of the answer: that view must
    # build whatever bytes the other headers hold.
    server.script(
        raw_answer(
            b"HTTP/1.1 200 OK",
            [
                b"Content-Type: application/json",
                b"Deprecation: @1796428800",
                b"Sunset: Thu, 05 Dec 2030 00:00:00 GMT",
                b'Link: <https://docs.example/v1/changes>; rel="deprecation"',
                b"X-Note: caf\xe9",
            ],
            b"[]",
        )
    )
    api = make_client(server)

    with pytest.warns(DeprecationWarning, match=r"see https://docs\.example/v1/changes$"):
        assert api.invoke("list_pets") == []
    assert len(server.requests) == 1
