"""How answers that are not a plain success become the SDK's exceptions."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from datetime import timedelta

import httpx
import pytest
import respx

import animalstore_client as sdk
from animalstore_client import (
    AnimalStoreError,
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    Error,
    InternalServerError,
    NotFoundError,
    RateLimitError,
)
from tests.conftest import API_KEY, Api, httpx_answer


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (404, NotFoundError),
        (429, RateLimitError),
        (500, InternalServerError),
        (503, InternalServerError),
        (520, InternalServerError),
        (599, InternalServerError),
        (302, APIStatusError),
        (300, APIStatusError),
        (403, APIStatusError),
        (409, APIStatusError),
        (499, APIStatusError),
        (600, APIStatusError),  # no HTTP status, but a server may send it: not a 5xx
    ],
)
def test_every_status_maps_to_its_class_with_the_error_body(
    make_api: Callable[..., Api],
    mock_api: respx.MockRouter,
    status: int,
    expected: type[APIStatusError],
) -> None:
    api = make_api(max_retries=0)
    body = {"code": "some_code", "message": "what went wrong", "status": status}
    mock_api.get("/pets").respond(status, json=body, headers={"x-request-id": "req-1"})

    with pytest.raises(APIStatusError) as caught:
        api.list_pets()

    exc = caught.value
    assert type(exc) is expected
    assert exc.status_code == status
    assert exc.code == "some_code"
    assert exc.message == "what went wrong"
    assert exc.error == Error(code="some_code", message="what went wrong", status=status)
    assert exc.request_id == "req-1"
    assert exc.response.status_code == status
    assert str(exc.request.url) == "https://api.test/v1/pets"
    assert str(exc) == f"{status} some_code: what went wrong (request id req-1)"


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (
            b"<html><body>\n<h1>502 Bad Gateway</h1>\n</body></html>",
            "text/html",
            "<html><body> <h1>502 Bad Gateway</h1> </body></html>",
        ),
        (b"", "application/json", "Bad Gateway"),
        (b'{"code": "x", "mess', "application/json", '{"code": "x", "mess'),
        (
            b'{"code": 5, "message": "m", "status": 502}',
            "application/json",
            '{"code": 5, "message": "m", "status": 502}',
        ),
        (b"\xff\xfe\x00garbage", "application/octet-stream", "\ufffd\ufffd\x00garbage"),
    ],
)
def test_a_body_that_is_not_an_error_still_gives_the_right_class(
    make_api: Callable[..., Api],
    mock_api: respx.MockRouter,
    body: bytes,
    content_type: str,
    message: str,
) -> None:
    api = make_api(max_retries=0)
    mock_api.get("/pets").respond(502, content=body, headers={"content-type": content_type})

    with pytest.raises(InternalServerError) as caught:
        api.list_pets()

    assert caught.value.status_code == 502
    assert caught.value.error is None
    assert caught.value.code is None
    assert caught.value.message == message
    # `message` keeps what came; `str()` escapes what is not printable (here a NUL).
    assert str(caught.value) == "502: " + message.replace("\x00", "\\x00")


@pytest.mark.parametrize(
    "request_id",
    ["req-1\r\nINFO forged line", "req-1\nERROR x", "req-1\rx", "req-1\x85x", "req-1\u2028x"],
)
def test_the_request_id_is_folded_into_one_line(
    api: Api, mock_api: respx.MockRouter, request_id: str
) -> None:
    """A server's x-request-id with a line break cannot forge a line in a log of ``str(exc)``."""
    body = {"code": "nope", "message": "no", "status": 400}
    header = (b"x-request-id", request_id.encode())  # UTF-8, as httpx reads it back
    mock_api.get("/pets").respond(400, json=body, headers=[header])

    with pytest.raises(BadRequestError) as caught:
        api.list_pets()

    assert caught.value.request_id == request_id  # the field keeps what the server sent
    shown = str(caught.value)
    assert shown.startswith("400 nope: no (request id req-1 ")
    assert len(shown.splitlines()) == 1


def test_a_long_non_error_body_is_cut_to_one_line(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.get("/pets").respond(404, text="line\n" * 500)

    with pytest.raises(NotFoundError) as caught:
        api.list_pets()

    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith("404: line line")
    assert text.endswith(" ...")
    assert len(text) < 400


EMOJI = "🐕"  # four bytes of UTF-8


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        # At most 300 characters, from at most 1,200 bytes: " ..." says there was more.
        ("a" * 300, "a" * 300),
        ("a" * 301, "a" * 300 + " ..."),
        (EMOJI * 300, EMOJI * 300),  # 1,200 bytes
        (EMOJI * 300 + "b", EMOJI * 300 + " ..."),  # 1,201 bytes, still 300 characters read
        ("a\n\t b\r\n", "a b"),  # whitespace folded
    ],
    ids=["300-chars", "301-chars", "1200-bytes", "1201-bytes", "folded"],
)
def test_a_non_error_body_is_shown_up_to_its_limits(
    api: Api, mock_api: respx.MockRouter, body: str, shown: str
) -> None:
    mock_api.get("/pets").respond(418, content=body.encode())  # not retried

    with pytest.raises(sdk.APIStatusError) as caught:
        api.list_pets()

    assert caught.value.message == shown
    assert str(caught.value) == f"418: {shown}"


def test_an_empty_body_is_shown_by_its_reason_or_said_empty(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(418, content=b"")
    with pytest.raises(sdk.APIStatusError) as caught:
        api.list_pets()
    assert str(caught.value) == "418: I'm a teapot"

    mock_api.get("/pets").respond(499, content=b"")  # a status without a reason phrase
    with pytest.raises(sdk.APIStatusError) as caught:
        api.list_pets()
    assert str(caught.value) == "499: (empty body)"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"not json", "response body is not valid JSON"),
        (b"[" * 100_000, "response body is not valid JSON"),
        (b'{"id": 1}', "$: expected a JSON array, got dict"),
        (b'[{"name": "Rex", "categoryId": 3}]', "$[0].id: required field is missing"),
        (b'[{"id": "1", "name": "Rex", "categoryId": 3}]', "$[0].id: expected an integer, got str"),
        (b'[{"id": 1, "name": null, "categoryId": 3}]', "$[0].name: expected a string, got null"),
        (b'[{"id": 1, "name": "R", "categoryId": true}]', "$[0].categoryId: expected an integer"),
        (b'[{"id": 1, "name": "R", "categoryId": 3, "status": 4}]', "$[0].status: expected a str"),
    ],
)
def test_a_success_body_that_does_not_fit_is_a_validation_error(
    api: Api, mock_api: respx.MockRouter, body: bytes, problem: str
) -> None:
    route = mock_api.get("/pets").respond(200, content=body)

    with pytest.raises(APIResponseValidationError) as caught:
        api.list_pets()

    assert problem in str(caught.value)
    assert caught.value.response.status_code == 200
    assert caught.value.request is caught.value.response.request
    assert caught.value.__cause__ is None
    assert route.call_count == 1  # a body that does not fit is not retried


def test_raw_response_defers_validation_to_parse(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.post("/pets").respond(201, json={"id": "x"})

    raw = api.with_raw_response.create_pet(name="Rex", category_id=3)

    assert raw.status_code == 201
    assert raw.content == b'{"id":"x"}'
    with pytest.raises(APIResponseValidationError, match=r"\$\.id: expected an integer"):
        raw.parse()


def test_a_raw_response_pickles_as_itself(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.post("/pets").respond(201, json={"id": 1, "name": "Rex", "categoryId": 3})

    raw = api.with_raw_response.create_pet(name="Rex", category_id=3)
    copied = pickle.loads(pickle.dumps(raw))

    assert type(copied) is type(raw)
    assert (copied.status_code, copied.content, copied.retries_taken) == (
        201,
        raw.content,
        raw.retries_taken,
    )
    assert copied.parse() == raw.parse()


def test_a_pickled_answer_keeps_its_signals_and_elapsed_time() -> None:
    # What a pickled raw response holds: its status, headers and body, whether it carried a
    # Deprecation or Sunset header, and how long it took (its rebuilt httpx view's elapsed).
    answer = httpx_answer(httpx.Response(200, headers={"Deprecation": "true"}, content=b"[]"))
    answer.elapsed = 0.25

    copied = pickle.loads(pickle.dumps(answer))

    assert (copied.status_code, dict(copied.headers), copied.content) == (
        200,
        {"deprecation": "true", "content-length": "2"},
        b"[]",
    )
    assert (copied.signals, copied.elapsed) == (True, 0.25)
    assert copied.http_response().elapsed == timedelta(seconds=0.25)


#: How a GET that provably was not sent ends its message.
NOT_SENT = "; not sent: the request provably never reached the service, and calling again is safe"


@pytest.mark.parametrize(
    ("error", "expected", "consequence"),
    [
        (httpx.ConnectError("connection refused"), APIConnectionError, NOT_SENT),
        (httpx.ReadError("connection reset by peer"), APIConnectionError, ""),
        (httpx.RemoteProtocolError("server disconnected"), APIConnectionError, ""),
        (httpx.DecodingError("bad gzip"), APIConnectionError, ""),
        (httpx.ConnectTimeout(""), APITimeoutError, NOT_SENT),
        (httpx.ReadTimeout("timed out"), APITimeoutError, ""),
        (httpx.PoolTimeout(""), APITimeoutError, NOT_SENT),
    ],
)
def test_transport_failures_become_connection_errors(
    make_api: Callable[..., Api],
    mock_api: respx.MockRouter,
    error: Exception,
    expected: type[APIError],
    consequence: str,
) -> None:
    api = make_api(max_retries=0)
    mock_api.get("/pets").mock(side_effect=error)

    with pytest.raises(APIConnectionError) as caught:
        api.list_pets()

    assert type(caught.value) is expected
    # httpx's error is told, not chained: its traceback's frames hold the request's headers.
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert str(caught.value.request.url) == "https://api.test/v1/pets"
    detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    assert str(caught.value) == f"GET https://api.test/v1/pets failed: {detail}{consequence}"
    assert API_KEY not in str(caught.value)


def test_the_hierarchy_is_one_tree() -> None:
    for cls in (
        BadRequestError,
        AuthenticationError,
        NotFoundError,
        RateLimitError,
        InternalServerError,
    ):
        assert cls.__bases__ == (APIStatusError,)
    assert APITimeoutError.__bases__ == (APIConnectionError,)
    for api_error in (
        APIConnectionError,
        APIResponseValidationError,
        APIStatusError,
        sdk.ResponseTooLargeError,
    ):
        assert api_error.__bases__ == (APIError,)
    assert APIError.__bases__ == (AnimalStoreError,)
    assert sdk.WireFormatError.__bases__ == (AnimalStoreError, ValueError)
    exported = {name for name in sdk.__all__ if name.endswith("Error") and name != "Error"}
    assert all(issubclass(getattr(sdk, name), AnimalStoreError) for name in exported)
    assert len(exported) == 13


def test_request_id_is_none_without_the_header_and_left_out_of_str(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    api = make_api(max_retries=0)
    body = {"code": "not_found", "message": "no such pet", "status": 404}
    mock_api.get("/pets").respond(404, json=body)

    with pytest.raises(NotFoundError) as caught:
        api.list_pets()

    assert caught.value.request_id is None
    assert str(caught.value) == "404 not_found: no such pet"
    assert len(mock_api.calls) == 1


def test_a_status_error_shows_its_fields_in_repr_and_as_an_escaped_table(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    api = make_api(max_retries=0)
    body = {"code": "not_found", "message": "no pet <b>'12345'</b>", "status": 404}
    mock_api.get("/pets").respond(404, json=body, headers={"x-request-id": "req-<1>"})

    with pytest.raises(NotFoundError) as caught:
        api.list_pets()

    assert repr(caught.value) == (
        "NotFoundError(status_code=404, code='not_found', message=\"no pet <b>'12345'</b>\", "
        "request_id='req-<1>')"
    )
    assert caught.value._repr_html_() == (
        "<table><caption>NotFoundError</caption><tbody>"
        "<tr><th>status_code</th><td>404</td></tr>"
        "<tr><th>code</th><td>not_found</td></tr>"
        "<tr><th>message</th><td>no pet &lt;b&gt;&#x27;12345&#x27;&lt;/b&gt;</td></tr>"
        "<tr><th>request_id</th><td>req-&lt;1&gt;</td></tr>"
        "</tbody></table>"
    )


def test_a_connection_error_shows_its_message_in_repr_and_as_a_table(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    api = make_api(max_retries=0)
    mock_api.get("/pets").mock(side_effect=httpx.ReadError("reset <now>"))

    with pytest.raises(APIConnectionError) as caught:
        api.list_pets()

    message = "GET https://api.test/v1/pets failed: ReadError: reset <now>"
    assert repr(caught.value) == f"APIConnectionError(message={message!r})"
    assert caught.value._repr_html_() == (
        "<table><caption>APIConnectionError</caption><tbody><tr><th>message</th>"
        f"<td>{message.replace('<', '&lt;').replace('>', '&gt;')}</td></tr></tbody></table>"
    )


@pytest.mark.parametrize(
    ("base_url", "hinted"),
    [
        ("https://api.test", True),
        ("https://api.test/", True),
        ("https://api.test/v2", True),
        ("https://api.test/v1", False),
        ("https://api.test/v1/", False),
        ("https://api.test/tenant/v1", False),
        ("https://api.test/v1X", True),  # only slashes are stripped before the /v1 is looked for
    ],
)
def test_a_404_to_a_base_url_without_v1_says_so(
    make_api: Callable[..., Api], base_url: str, hinted: bool
) -> None:
    api = make_api(base_url=base_url, max_retries=0)
    body = {"code": "not_found", "message": "no such route: GET /pets", "status": 404}

    with respx.mock() as router:
        router.get(url__startswith="https://api.test/").respond(404, json=body)
        with pytest.raises(NotFoundError) as caught:
            api.list_pets()

    hint = f" (base_url {api.base_url!r} does not end in /v1, as the API's address does)"
    assert caught.value.message == "no such route: GET /pets" + (hint if hinted else "")
    # The service's own words, untouched.
    assert caught.value.error == Error(code="not_found", message=str(body["message"]), status=404)


def test_json_nested_past_pythons_limit_is_said_so(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.get("/pets").respond(200, content=b"[" * 200_000 + b"]" * 200_000)

    with pytest.raises(APIResponseValidationError) as caught:
        api.list_pets()

    assert str(caught.value) == "response body is not valid JSON: JSON nested too deeply"
