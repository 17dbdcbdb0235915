"""Per-call options (timeout, extra_headers, idempotency_key) and with_options' new arguments."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import httpx
import pytest
import respx

from animalstore_client import (
    NOT_GIVEN,
    APIConnectionError,
    AuthenticationError,
    RateLimitError,
)
from tests.conftest import API_KEY, Api
from tests.unit.typecheck import mypy_run

PET = {"id": 7, "name": "Rex", "categoryId": 3, "status": "available"}
CLIENT_TIMEOUT = httpx.Timeout(30.0, connect=5.0).as_dict()


@pytest.fixture
def routes(mock_api: respx.MockRouter) -> respx.MockRouter:
    mock_api.get("/pets").respond(200, json=[PET])
    mock_api.post("/pets").respond(201, json=PET)
    mock_api.get("/pets/7").respond(200, json=PET)
    return mock_api


def call_each(api: Api, **options: object) -> None:
    """Call every operation once with the same per-call options."""
    api.list_pets(**options)
    api.create_pet(name="Rex", category_id=3, **options)
    with pytest.warns(DeprecationWarning, match="5 December 2030"):
        api.get_pet(7, **options)


# -- timeout ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timeout", "expected"),
    [
        (2.5, httpx.Timeout(2.5).as_dict()),
        (httpx.Timeout(9.0, connect=1.0), httpx.Timeout(9.0, connect=1.0).as_dict()),
        (None, {"connect": None, "read": None, "write": None, "pool": None}),
        (NOT_GIVEN, CLIENT_TIMEOUT),
    ],
    ids=["seconds", "httpx-timeout", "none-is-no-limit", "not-given-is-the-clients"],
)
def test_a_calls_timeout_applies_to_that_call_only(
    api: Api, routes: respx.MockRouter, timeout: object, expected: dict[str, float | None]
) -> None:
    call_each(api, timeout=timeout)
    call_each(api)

    sent = [call.request.extensions["timeout"] for call in routes.calls]
    assert sent == [expected] * 3 + [CLIENT_TIMEOUT] * 3
    assert api.timeout == httpx.Timeout(30.0, connect=5.0)


def test_a_calls_timeout_applies_to_each_of_its_attempts(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    route = mock_api.get("/pets").mock(
        side_effect=[httpx.Response(503), httpx.Response(200, json=[])]
    )

    api.with_raw_response.list_pets(timeout=1.5)

    assert route.call_count == 2
    assert [c.request.extensions["timeout"] for c in route.calls] == [
        httpx.Timeout(1.5).as_dict()
    ] * 2


@pytest.mark.parametrize(
    ("timeout", "error", "message"),
    [
        (-1, ValueError, r"timeout must be positive and at most 1e\+09 seconds, got -1\.0$"),
        (float("inf"), ValueError, "timeout must be positive"),
        (httpx.Timeout(5.0, read=0.0), ValueError, r"timeout \(read\) must be positive"),
        ("5", TypeError, "timeout must be a number of seconds, None or an httpx.Timeout, got str"),
        (True, TypeError, "got bool"),
    ],
)
def test_a_bad_call_timeout_is_refused_before_sending(
    api: Api, routes: respx.MockRouter, timeout: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as caught:
        api.list_pets(timeout=timeout)
    with pytest.raises(error, match=message):
        api.create_pet(name="Rex", category_id=3, timeout=timeout)
    with pytest.raises(error, match=message):  # refused before it warns (warnings are errors)
        api.get_pet(7, timeout=timeout)

    assert caught.type is error
    assert len(routes.calls) == 0


def test_a_short_call_timeout_cuts_a_silent_server_short(make_api: Callable[..., Api]) -> None:
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        api = make_api(base_url=f"http://127.0.0.1:{silent.getsockname()[1]}/v1", max_retries=0)

        with pytest.raises(APIConnectionError) as caught:
            api.list_pets(timeout=0.05)

    assert type(caught.value).__name__ == "APITimeoutError"
    assert caught.value.request.extensions["timeout"] == httpx.Timeout(0.05).as_dict()


# -- extra_headers ----------------------------------------------------------------------------


def test_extra_headers_are_sent_on_that_call_only(api: Api, routes: respx.MockRouter) -> None:
    extra = {"X-Trace": "abc", "X-Team": "pets"}

    call_each(api, extra_headers=extra)
    call_each(api)

    with_extra, without = routes.calls[:3], routes.calls[3:]
    for call in with_extra:
        assert call.request.headers.get_list("x-trace") == ["abc"]
        assert call.request.headers.get_list("x-team") == ["pets"]
        assert call.request.headers["authorization"] == f"Bearer {API_KEY}"
    for call in without:
        assert "x-trace" not in call.request.headers
        assert "x-team" not in call.request.headers
    assert extra == {"X-Trace": "abc", "X-Team": "pets"}  # not changed by the SDK


def sent_by_call(routes: respx.MockRouter, *names: str) -> list[dict[str, list[str]]]:
    """For each call ``routes`` took, in turn: each of ``names`` (lower case), with every value
    of it the request had."""
    return [{name: call.request.headers.get_list(name) for name in names} for call in routes.calls]


@pytest.mark.parametrize("name", ["X-Team", "x-team", "X-TEAM"])
def test_extra_headers_replace_the_clients_whatever_their_case(
    make_api: Callable[..., Api], routes: respx.MockRouter, name: str
) -> None:
    api = make_api(default_headers={"X-Team": "everyone", "X-Keep": "kept"})

    api.list_pets(extra_headers={name: "pets", "User-Agent": "my-app/2"})
    api.list_pets()

    first, second = sent_by_call(routes, "x-team", "user-agent", "x-keep")
    assert first == {"x-team": ["pets"], "user-agent": ["my-app/2"], "x-keep": ["kept"]}
    assert second["x-team"] == ["everyone"]
    assert [agent.split("/")[0] for agent in second["user-agent"]] == ["animalstore-client-python"]


@pytest.mark.parametrize("source", ["extra_headers", "default_headers"])
@pytest.mark.parametrize("name", ["Content-Type", "content-type"])
def test_a_callers_content_type_replaces_the_sdks_and_is_sent_once(
    make_api: Callable[..., Api], routes: respx.MockRouter, source: str, name: str
) -> None:
    value = "application/json; charset=utf-8"
    if source == "extra_headers":
        api = make_api()
        api.create_pet(name="Rex", category_id=3, extra_headers={name: value})
    else:
        api = make_api(default_headers={name: value})
        api.create_pet(name="Rex", category_id=3)
    api.create_pet(name="Tom", category_id=3, extra_headers={"X-Trace": "1"})

    with_own, without = (call.request.headers for call in routes.calls)
    assert with_own.get_list("content-type") == [value]
    expected = [value] if source == "default_headers" else ["application/json"]
    assert without.get_list("content-type") == expected


def test_extra_headers_never_replace_the_idempotency_key_of_a_create(
    api: Api, routes: respx.MockRouter
) -> None:
    api.create_pet(name="Rex", category_id=3, extra_headers={"X-Trace": "1"})

    (key,) = routes.calls.last.request.headers.get_list("idempotency-key")
    assert uuid.UUID(key).version == 4


@pytest.mark.parametrize(
    ("name", "argument"),
    [
        ("Authorization", "api_key="),
        ("authorization", "api_key="),
        ("Idempotency-Key", "idempotency_key= to create_pet"),
        ("IDEMPOTENCY-KEY", "idempotency_key= to create_pet"),
    ],
)
def test_reserved_extra_headers_are_refused_pointing_at_the_argument(
    api: Api, routes: respx.MockRouter, name: str, argument: str
) -> None:
    expected = f"extra_headers must not set {name!r}: pass {argument}"
    headers = {name: "secret-value"}
    calls: list[Callable[[], object]] = [
        lambda: api.list_pets(extra_headers=headers),
        lambda: api.create_pet(name="Rex", category_id=3, extra_headers=headers),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"^extra_headers") as caught:
            call()
        assert str(caught.value) == expected
        assert "secret-value" not in str(caught.value)
    with pytest.raises(ValueError, match=r"^extra_headers"):  # and no warning
        api.get_pet(7, extra_headers=headers)
    assert len(routes.calls) == 0


@pytest.mark.parametrize(
    ("headers", "error", "message"),
    [
        ([("X-A", "1")], TypeError, "extra_headers must be a mapping, got list"),
        ({"X-A": 1}, TypeError, r"extra_headers\['X-A'\] must be a str, got int"),
        ({1: "x"}, TypeError, "extra_headers key must be a str, got int"),
        ({"X A": "1"}, ValueError, "extra_headers key 'X A' is not a valid HTTP header name"),
        ({"X-A": "1\r\nX-Injected: 2"}, ValueError, r"extra_headers\['X-A'\] must be ASCII"),
        ({"X-A": "caf\u00e9"}, ValueError, r"extra_headers\['X-A'\] must be ASCII"),
        (
            {"Content-Length": "0"},
            ValueError,
            "extra_headers must not set 'Content-Length': it is computed from the request body",
        ),
        (
            {"transfer-encoding": "chunked"},
            ValueError,
            "extra_headers must not set 'transfer-encoding': it is computed from the request body",
        ),
    ],
)
def test_bad_extra_headers_are_refused_before_sending(
    api: Api, routes: respx.MockRouter, headers: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{message}") as caught:
        api.list_pets(extra_headers=headers)

    assert caught.type is error
    assert len(routes.calls) == 0


def test_the_raw_views_take_every_per_call_option(api: Api, routes: respx.MockRouter) -> None:
    raw = api.with_raw_response
    options = {"timeout": 3.0, "extra_headers": {"X-Trace": "raw"}}

    listed = raw.list_pets(**options)
    created = raw.create_pet(name="Rex", category_id=3, idempotency_key="raw-key", **options)
    with pytest.warns(DeprecationWarning, match="5 December 2030"):
        fetched = raw.get_pet(7, **options)

    assert [r.status_code for r in (listed, created, fetched)] == [200, 201, 200]
    for call in routes.calls:
        assert call.request.extensions["timeout"] == httpx.Timeout(3.0).as_dict()
        assert call.request.headers["x-trace"] == "raw"
    assert routes.calls[1].request.headers["idempotency-key"] == "raw-key"


# -- idempotency_key --------------------------------------------------------------------------


def test_a_given_idempotency_key_is_sent_verbatim_on_every_attempt(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    route = mock_api.post("/pets").mock(
        side_effect=[httpx.Response(503), httpx.Response(429), httpx.Response(201, json=PET)]
    )

    api.create_pet(name="Rex", category_id=3, idempotency_key="order-42/rex:1")

    assert route.call_count == 3
    sent = [call.request.headers.get_list("idempotency-key") for call in route.calls]
    assert sent == [["order-42/rex:1"]] * 3


def test_the_same_idempotency_key_is_sent_by_separate_calls_and_clients(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    # An application retrying after a restart: a new client, the same key.
    route = mock_api.post("/pets").respond(201, json=PET)
    key = "restock-2026-11-23-rex"

    make_api().create_pet(name="Rex", category_id=3, idempotency_key=key)
    make_api().create_pet(name="Rex", category_id=3, idempotency_key=key)

    assert [call.request.headers["idempotency-key"] for call in route.calls] == [key, key]


def test_without_an_idempotency_key_each_call_gets_a_fresh_uuid4(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    route = mock_api.post("/pets").mock(
        side_effect=[
            httpx.Response(503),
            httpx.Response(201, json=PET),
            httpx.Response(201, json=PET),
        ]
    )

    api.create_pet(name="Rex", category_id=3)
    api.create_pet(name="Rex", category_id=3, idempotency_key=None)

    first, retried, second = (call.request.headers["idempotency-key"] for call in route.calls)
    assert first == retried
    assert first != second
    assert {uuid.UUID(first).version, uuid.UUID(second).version} == {4}


def test_fresh_idempotency_keys_are_canonical_random_uuid4s(
    api: Api, mock_api: respx.MockRouter
) -> None:
    route = mock_api.post("/pets").mock(return_value=httpx.Response(201, json=PET))

    for _ in range(500):
        api.create_pet(name="Rex", category_id=3)

    keys = [call.request.headers["idempotency-key"] for call in route.calls]
    parsed = [uuid.UUID(key) for key in keys]
    assert [str(key) for key in parsed] == keys  # lower-case hex, 8-4-4-4-12
    assert {(key.version, key.variant) for key in parsed} == {(4, uuid.RFC_4122)}
    assert len(set(keys)) == 500
    # Every one of the 122 random bits varies across the keys.
    fixed = uuid.UUID("00000000-0000-4000-8000-000000000000").int
    random_mask = ((1 << 128) - 1) ^ (0xF << 76) ^ (0x3 << 62)
    varying = 0
    for key in parsed:
        varying |= key.int ^ parsed[0].int
    assert varying == random_mask
    assert all(key.int & ~random_mask == fixed for key in parsed)
    # Each random bit is its own: no octet's bits repeat a neighbour's (1 chance in 16 ** 500
    # of failing by luck for the version's octet, 64 ** 500 for the variant's).
    octets = [key.bytes for key in parsed]
    assert any(o[6] & 0x0F != o[7] & 0x0F for o in octets)
    assert any(o[8] & 0x3F != o[9] & 0x3F for o in octets)


def test_an_idempotency_key_of_255_characters_is_accepted(
    api: Api, routes: respx.MockRouter
) -> None:
    key = "k" * 254 + "~"
    api.create_pet(name="Rex", category_id=3, idempotency_key=key)
    assert routes.calls.last.request.headers["idempotency-key"] == key


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ("", ValueError),
        ("k" * 256, ValueError),
        ("two words", ValueError),
        ("tab\there", ValueError),
        ("line\nbreak", ValueError),
        ("nul\x00", ValueError),
        ("caf\u00e9", ValueError),
        ("\ud800", ValueError),
        (b"bytes-key", TypeError),
        (42, TypeError),
        (uuid.UUID(int=1), TypeError),
    ],
    ids=[
        "empty",
        "too-long",
        "space",
        "tab",
        "newline",
        "nul",
        "non-ascii",
        "lone-surrogate",
        "bytes",
        "int",
        "uuid-object",
    ],
)
def test_a_bad_idempotency_key_is_refused_before_sending(
    api: Api, routes: respx.MockRouter, key: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=r"^idempotency_key must be") as caught:
        api.create_pet(name="Rex", category_id=3, idempotency_key=key)

    assert caught.type is error
    if error is ValueError and key != "\ud800":
        assert "1 to 255 printable ASCII characters without whitespace" in str(caught.value)
    assert len(routes.calls) == 0


def test_create_pet_retries_stay_bounded_with_a_given_key(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    route = mock_api.post("/pets").respond(429)
    api = make_api(max_retries=1)

    with pytest.raises(RateLimitError):
        api.create_pet(name="Rex", category_id=3, idempotency_key="fixed")

    assert route.call_count == 2


# -- with_options -----------------------------------------------------------------------------


def test_with_options_default_headers_merge_over_the_clients(
    make_api: Callable[..., Api], routes: respx.MockRouter
) -> None:
    api = make_api(default_headers={"X-Team": "everyone", "X-Trace": "t1"})
    copy = Api(api.target.with_options(default_headers={"x-team": "pets", "X-New": "n"}), api._loop)

    copy.list_pets()
    api.list_pets()

    from_copy, from_original = sent_by_call(routes, "x-team", "x-trace", "x-new")
    assert from_copy == {"x-team": ["pets"], "x-trace": ["t1"], "x-new": ["n"]}
    assert from_original == {"x-team": ["everyone"], "x-trace": ["t1"], "x-new": []}
    assert copy.target._pool is api.target._pool


@pytest.mark.parametrize(
    ("headers", "error", "message"),
    [
        ({"Authorization": "Bearer x"}, ValueError, "default_headers must not set 'Authorization'"),
        ({"Idempotency-Key": "k"}, ValueError, "default_headers must not set 'Idempotency-Key'"),
        ({"X-A": None}, TypeError, r"default_headers\['X-A'\] must be a str"),
        ("X-A: 1", TypeError, "default_headers must be a mapping"),
    ],
)
def test_with_options_checks_default_headers_as_the_constructor_does(
    api: Api, headers: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{message}"):
        api.target.with_options(default_headers=headers)


def test_with_options_api_key_changes_the_copys_key_only(
    api: Api, routes: respx.MockRouter
) -> None:
    copy = Api(api.target.with_options(api_key="other-key-42"), api._loop)

    copy.list_pets()
    copy.with_raw_response.create_pet(name="Rex", category_id=3)
    api.list_pets()

    sent = [call.request.headers["authorization"] for call in routes.calls]
    assert sent == ["Bearer other-key-42", "Bearer other-key-42", f"Bearer {API_KEY}"]
    assert "other-key-42" not in repr(copy.target)


@pytest.mark.parametrize(
    ("key", "error"), [("", ValueError), ("two words", ValueError), (42, TypeError)]
)
def test_with_options_checks_the_api_key(api: Api, key: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"^api_key must be"):
        api.target.with_options(api_key=key)


def test_with_options_api_key_none_is_refused_not_read_from_the_environment(
    api: Api, routes: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "key-from-the-environment")
    with pytest.raises(TypeError, match=r"^api_key must be a str, got None"):
        api.target.with_options(api_key=None)

    api.list_pets()
    assert routes.calls.last.request.headers["authorization"] == f"Bearer {API_KEY}"


def test_with_options_api_key_is_the_one_the_service_judges(
    api: Api, mock_api: respx.MockRouter
) -> None:
    def judge(request: httpx.Request) -> httpx.Response:
        if request.headers["authorization"] == f"Bearer {API_KEY}":
            return httpx.Response(200, json=[])
        return httpx.Response(401, json={"code": "unauthorized", "message": "no", "status": 401})

    route = mock_api.get("/pets").mock(side_effect=judge)
    copy = Api(api.target.with_options(api_key="revoked-key", max_retries=0), api._loop)

    with pytest.raises(AuthenticationError):
        copy.list_pets()
    assert api.list_pets() == []
    assert route.call_count == 2


# -- what type checkers see -------------------------------------------------------------------


def test_type_checkers_accept_the_options_and_flag_wrong_ones() -> None:
    """A user's code (``SNIPPETS["call_options_user"]`` in ``tests/unit/typecheck.py``)."""
    run = mypy_run()  # --strict --python-version 3.10 (and deprecated enabled)
    stdout, status = run.output("call_options_user"), run.status

    flagged = [line.split(":")[1] for line in stdout.splitlines() if ": error: " in line]
    assert status == 1
    assert flagged == ["13", "14", "15", "16", "17"], stdout
