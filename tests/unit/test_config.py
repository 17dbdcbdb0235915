"""The clients' constructor: key, address, timeout, retries, headers, http_client, logging."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from animalstore_client import BASE_URLS, AsyncClient, Client, Environment
from animalstore_client._core import logging as sdk_logging
from animalstore_client._core.config import resolve_options
from tests.conftest import Api

PRODUCTION = "https://api.animalstore.example/v1/"
STAGING = "https://staging.api.animalstore.example/v1/"
KEY = "config-key-42"
PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}

MakeApi = Callable[..., Any]
ROOT = Path(__file__).resolve().parents[2]
ClientPair = tuple[type[Client] | type[AsyncClient], type[httpx.Client] | type[httpx.AsyncClient]]

CLIENT_KINDS = [
    pytest.param((Client, httpx.Client), id="sync"),
    pytest.param((AsyncClient, httpx.AsyncClient), id="async"),
]


def run(loop: asyncio.AbstractEventLoop, value: Any) -> Any:
    return loop.run_until_complete(value) if inspect.isawaitable(value) else value


def close(loop: asyncio.AbstractEventLoop, client: Any) -> None:
    """Close an SDK client or an httpx client of either kind."""
    closer = getattr(client, "aclose", None) or client.close
    run(loop, closer())


@pytest.fixture
def pets_route(mock_api: respx.MockRouter) -> respx.Route:
    return mock_api.get("/pets").respond(200, json=[PET])


# --- API key ------------------------------------------------------------------------------


def test_api_key_is_read_from_the_environment_at_construction(
    make_api: MakeApi, pets_route: respx.Route, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "env-key-1")
    api = make_api(api_key=None)
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "env-key-2")
    api.list_pets()
    assert pets_route.calls.last.request.headers.get_list("Authorization") == ["Bearer env-key-1"]


def test_explicit_api_key_beats_the_environment(
    make_api: MakeApi, pets_route: respx.Route, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "env-key")
    make_api(api_key=KEY).list_pets()
    assert pets_route.calls.last.request.headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("variable", [None, ""], ids=["unset", "empty"])
def test_no_api_key_is_an_error_at_construction(
    make_api: MakeApi,
    mock_api: respx.MockRouter,
    pets_route: respx.Route,
    monkeypatch: pytest.MonkeyPatch,
    variable: str | None,
) -> None:
    if variable is not None:
        monkeypatch.setenv("ANIMALSTORE_API_KEY", variable)
    # An empty variable is a missing key, not a malformed one: that message says what to do.
    missing = r"^no API key: pass api_key= or set the ANIMALSTORE_API_KEY variable$"
    with pytest.raises(ValueError, match=missing) as excinfo:
        make_api(api_key=None)
    assert excinfo.type is ValueError
    assert not mock_api.calls


MALFORMED_KEYS = [
    pytest.param("sk-secret with-space", id="space"),
    pytest.param("sk-secret\twith-tab", id="tab"),
    pytest.param("sk-secret\nwith-newline", id="newline"),
    pytest.param("sk-secret\r\nX-Injected: 1", id="crlf"),
    pytest.param("sk-secret-\u00e9t\u00e9", id="non-ascii"),
    pytest.param("sk-secret-\u00a0nbsp", id="nbsp"),
]


@pytest.mark.parametrize("key", [*MALFORMED_KEYS, pytest.param("sk-secret\x00with-nul", id="nul")])
def test_malformed_api_key_argument_is_rejected_without_echoing_it(
    make_api: MakeApi, mock_api: respx.MockRouter, pets_route: respx.Route, key: str
) -> None:
    with pytest.raises(ValueError, match=r"\bapi_key\b") as excinfo:
        make_api(api_key=key)
    assert excinfo.type is ValueError
    assert "sk-secret" not in str(excinfo.value)
    assert not mock_api.calls


@pytest.mark.parametrize("key", MALFORMED_KEYS)  # an environment variable cannot hold NUL
def test_malformed_api_key_variable_is_rejected_without_echoing_it(
    make_api: MakeApi,
    mock_api: respx.MockRouter,
    pets_route: respx.Route,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", key)
    with pytest.raises(ValueError, match=r"^ANIMALSTORE_API_KEY must be") as excinfo:
        make_api(api_key=None)
    assert excinfo.type is ValueError
    assert "sk-secret" not in str(excinfo.value)
    assert not mock_api.calls


def test_repr_shows_every_option_and_no_part_of_the_key_or_header_values(
    make_api: MakeApi,
) -> None:
    key = "sk-Zq9x7Wv4Tt"
    api = make_api(api_key=key, default_headers={"X-Team": "sk-Zq9x7Wv4Tt-too"})
    copy = api.target.with_options(
        max_retries=0, deadline=2.5, max_response_bytes=None, default_headers={"x-trace": "1"}
    )
    policy = "initial_delay=0.5, max_delay=8.0, jitter=0.25, statuses=frozenset({{{}}})".format(
        "408, 429, 500, 502, 503, 504"
    )
    original = (
        f"retry=RetryPolicy(max_retries=2, {policy}), deadline=None, max_response_bytes=16777216"
    )
    copied = f"retry=RetryPolicy(max_retries=0, {policy}), deadline=2.5, max_response_bytes=None"
    for client, options in (
        (api.target, f"{original}, default_headers=['X-Team']"),
        (copy, f"{copied}, default_headers=['X-Team', 'x-trace']"),
    ):
        shown = repr(client)
        assert shown == (
            f"{type(client).__name__}(base_url='https://api.test/v1/', "
            f"timeout=Timeout(connect=5.0, read=30.0, write=30.0, pool=30.0), {options})"
        )
        assert not any(key[i : i + 3] in shown for i in range(len(key) - 2))


def test_empty_explicit_api_key_is_rejected(make_api: MakeApi) -> None:
    with pytest.raises(ValueError, match=r"\bapi_key\b"):
        make_api(api_key="")


@pytest.mark.parametrize("key", [12345, b"sk-bytes", ["sk-list"]], ids=["int", "bytes", "list"])
def test_non_str_api_key_is_a_type_error(make_api: MakeApi, key: object) -> None:
    with pytest.raises(TypeError, match=r"\bapi_key\b") as excinfo:
        make_api(api_key=key)
    assert excinfo.type is TypeError


@pytest.mark.parametrize(
    "key",
    [b"sk-bytes-secret-0123", bytearray(b"sk-bytes-secret-0123")],
    ids=["bytes", "bytearray"],
)
def test_non_str_api_key_is_not_echoed(make_api: MakeApi, key: object) -> None:
    # A key read from a file in binary mode is still a secret: it must not reach tracebacks.
    with pytest.raises(TypeError, match=r"\bapi_key\b") as excinfo:
        make_api(api_key=key)
    assert "sk-bytes-secret-0123" not in str(excinfo.value)


# --- address ------------------------------------------------------------------------------


def test_base_urls_are_production_and_staging() -> None:
    assert dict(BASE_URLS) == {
        Environment.PRODUCTION: "https://api.animalstore.example/v1",
        Environment.STAGING: "https://staging.api.animalstore.example/v1",
    }


@pytest.mark.parametrize(
    ("arguments", "variable", "expected"),
    [
        pytest.param({}, None, PRODUCTION, id="default-production"),
        pytest.param({"environment": "production"}, None, PRODUCTION, id="production-str"),
        pytest.param({"environment": "staging"}, None, STAGING, id="staging-str"),
        pytest.param({"environment": Environment.STAGING}, None, STAGING, id="staging-enum"),
        pytest.param({}, "http://env.test/v1", "http://env.test/v1/", id="variable"),
        pytest.param(
            {"environment": "staging"}, "http://env.test/v1", STAGING, id="environment-beats-var"
        ),
        pytest.param(
            {"environment": Environment.PRODUCTION},
            "http://env.test/v1",
            PRODUCTION,
            id="production-beats-var",
        ),
        pytest.param(
            {"base_url": "https://own.test/v1"},
            "http://env.test/v1",
            "https://own.test/v1/",
            id="base-url-beats-var",
        ),
        pytest.param(
            {"base_url": "https://own.test/v1/"}, None, "https://own.test/v1/", id="slash-kept"
        ),
        pytest.param(
            {"base_url": httpx.URL("https://own.test:8443/x/v1")},
            None,
            "https://own.test:8443/x/v1/",
            id="httpx-url",
        ),
    ],
)
def test_base_url_resolution(
    make_api: MakeApi,
    monkeypatch: pytest.MonkeyPatch,
    arguments: dict[str, object],
    variable: str | None,
    expected: str,
) -> None:
    if variable is not None:
        monkeypatch.setenv("ANIMALSTORE_BASE_URL", variable)
    arguments = {"base_url": None, **arguments}
    assert make_api(**arguments).base_url == expected


@pytest.mark.parametrize(
    ("base_url", "kind"),
    [(b"https://api.test/v1", "bytes"), (8080, "int"), (["https://api.test/v1"], "list")],
    ids=["bytes", "int", "list"],
)
def test_a_base_url_of_the_wrong_type_is_a_type_error(
    make_api: MakeApi, mock_api: respx.MockRouter, base_url: object, kind: str
) -> None:
    with pytest.raises(TypeError) as excinfo:
        make_api(base_url=base_url)
    assert str(excinfo.value) == f"base_url must be a str or httpx.URL, got {kind}"
    assert not mock_api.calls


@pytest.mark.parametrize("environment", ["staging", Environment.PRODUCTION])
def test_environment_and_base_url_together_are_rejected(
    make_api: MakeApi, environment: object
) -> None:
    with pytest.raises(ValueError, match=r"\benvironment\b.*\bbase_url\b") as excinfo:
        make_api(environment=environment, base_url="https://own.test/v1")
    assert excinfo.type is ValueError


@pytest.mark.parametrize("environment", ["qa", "Staging", "PRODUCTION", ""])
def test_unknown_environment_is_rejected(make_api: MakeApi, environment: str) -> None:
    with pytest.raises(ValueError, match=r"^environment\b") as excinfo:
        make_api(environment=environment)
    assert excinfo.type is ValueError


INVALID_URLS = [
    pytest.param("api.test/v1", id="no-scheme"),
    pytest.param("ftp://api.test/v1", id="ftp"),
    pytest.param("https://api.test/v1?region=eu", id="query"),
    pytest.param("https://api.test/v1#top", id="fragment"),
    pytest.param("https:///v1", id="no-host"),
]


@pytest.mark.parametrize("url", INVALID_URLS)
def test_invalid_base_url_argument_is_rejected(make_api: MakeApi, url: str) -> None:
    with pytest.raises(ValueError, match=r"^base_url\b") as excinfo:
        make_api(base_url=url)
    assert excinfo.type is ValueError


@pytest.mark.parametrize("url", INVALID_URLS)
def test_invalid_base_url_variable_is_rejected(
    make_api: MakeApi, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("ANIMALSTORE_BASE_URL", url)
    with pytest.raises(ValueError, match=r"^ANIMALSTORE_BASE_URL\b") as excinfo:
        make_api(base_url=None)
    assert excinfo.type is ValueError


@pytest.mark.parametrize(
    "url",
    [
        "https://user:hunter2-pw@api.test/v1",
        "https://:hunter2-pw@api.test/v1",
        "https://hunter2-pw@api.test/v1",
        "https://user:hunter2-pw@api.test/v1?x=1",
    ],
)
@pytest.mark.parametrize("source", ["base_url", "ANIMALSTORE_BASE_URL"])
def test_credentials_in_the_base_url_are_refused_without_showing_them(
    make_api: MakeApi, monkeypatch: pytest.MonkeyPatch, url: str, source: str
) -> None:
    arguments: dict[str, str | None] = {"base_url": url}
    if source != "base_url":
        monkeypatch.setenv("ANIMALSTORE_BASE_URL", url)
        arguments = {"base_url": None}
    with pytest.raises(ValueError, match=rf"^{source} must not contain credentials") as caught:
        make_api(**arguments)
    assert "api_key=" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    assert "hunter2" not in repr(caught.value)


ABSOLUTE = "base_url must be an absolute http(s) URL, got "
CREDENTIALS = "base_url must not contain credentials (user:password@); pass the key as api_key="


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("user:hunter2@api.test/v1", f"{ABSOLUTE}'***@api.test/v1'"),
        ("us@r:hunter2@api.test/v1", f"{ABSOLUTE}'***@api.test/v1'"),  # up to the last "@"
        ("api.test//u:hunter2@x/v1", f"{ABSOLUTE}'***@x/v1'"),
        ("https:///u:hunter2@x", f"{ABSOLUTE}'***@x'"),
        ("https:u:hunter2@x/v1", f"{ABSOLUTE}'***@x/v1'"),
        (
            "http://a.test/u:hun/ter2@x/v1?q=1",
            "base_url must not have a query or fragment, got '***@x/v1?q=1'",
        ),
        ("//user:hunter2@api.test/v1", CREDENTIALS),
        ("ftp://u:hunter2@h/v1", CREDENTIALS),
        (
            "https://api.test/v1?token=a@b",
            "base_url must not have a query or fragment, got '***@b'",
        ),
        ("api.test/v1", f"{ABSOLUTE}'api.test/v1'"),
    ],
)
def test_a_malformed_base_url_with_credentials_is_shown_without_them(
    make_api: MakeApi, url: str, message: str
) -> None:
    with pytest.raises(ValueError, match=r"^base_url must ") as caught:
        make_api(base_url=url)
    assert str(caught.value) == message


@pytest.mark.parametrize("base_url", ["http://h.test/api/v1", "http://h.test/api/v1/"])
def test_base_url_path_is_kept_in_requests(make_api: MakeApi, base_url: str) -> None:
    with respx.mock() as router:
        route = router.get("http://h.test/api/v1/pets").respond(200, json=[PET])
        api = make_api(base_url=base_url)
        api.list_pets()
    assert api.base_url == "http://h.test/api/v1/"
    assert route.call_count == 1
    assert str(route.calls.last.request.url) == "http://h.test/api/v1/pets"


# --- timeout ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param({}, httpx.Timeout(30.0, connect=5.0), id="default"),
        pytest.param({"timeout": 5.5}, httpx.Timeout(5.5), id="float"),
        pytest.param({"timeout": 2}, httpx.Timeout(2.0), id="int"),
        pytest.param(
            {"timeout": httpx.Timeout(1.0, read=9.0)}, httpx.Timeout(1.0, read=9.0), id="timeout"
        ),
    ],
)
def test_timeout_is_configured_and_reaches_the_request(
    make_api: MakeApi,
    pets_route: respx.Route,
    arguments: dict[str, object],
    expected: httpx.Timeout,
) -> None:
    api = make_api(**arguments)
    assert api.timeout == expected
    api.list_pets()
    assert pets_route.calls.last.request.extensions["timeout"] == expected.as_dict()


def test_number_timeout_applies_to_every_phase(make_api: MakeApi) -> None:
    assert make_api(timeout=7.5).timeout.as_dict() == {
        "connect": 7.5,
        "read": 7.5,
        "write": 7.5,
        "pool": 7.5,
    }


def test_httpx_timeout_is_used_as_given(make_api: MakeApi) -> None:
    timeout = httpx.Timeout(3.0, pool=1.0)
    assert make_api(timeout=timeout).timeout is timeout


@pytest.mark.parametrize(
    ("timeout", "error"),
    [
        (0, ValueError),
        (0.0, ValueError),
        (-1, ValueError),
        (-0.5, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (1e10, ValueError),
        (10**400, ValueError),
        ("5", TypeError),
        (True, TypeError),
        ([5], TypeError),
    ],
)
def test_invalid_timeout_is_rejected(
    make_api: MakeApi, timeout: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=r"^timeout\b") as excinfo:
        make_api(timeout=timeout)
    assert excinfo.type is error


# --- max_retries --------------------------------------------------------------------------


@pytest.mark.parametrize("max_retries", [0, 1, 5])
def test_max_retries_is_configured(make_api: MakeApi, max_retries: int) -> None:
    assert make_api(max_retries=max_retries).max_retries == max_retries


def test_max_retries_defaults_to_two(make_api: MakeApi) -> None:
    assert make_api().max_retries == 2


@pytest.mark.parametrize(
    ("max_retries", "error"),
    [(-1, ValueError), (True, TypeError), (False, TypeError), (1.0, TypeError), ("2", TypeError)],
)
def test_invalid_max_retries_is_rejected(
    make_api: MakeApi, max_retries: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=r"^max_retries\b") as excinfo:
        make_api(max_retries=max_retries)
    assert excinfo.type is error


# --- default_headers ----------------------------------------------------------------------


def test_default_headers_are_sent_on_every_request(
    make_api: MakeApi, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(200, json=[PET])
    mock_api.post("/pets").respond(201, json=PET)
    mock_api.get("/pets/1").respond(200, json=PET)
    api = make_api(default_headers={"X-Trace": "abc", "X-Team": "pets"})
    api.list_pets()
    api.create_pet(name="Rex", category_id=3)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        api.get_pet(1)
    assert len(mock_api.calls) == 3
    for call in mock_api.calls:
        assert call.request.headers.get_list("X-Trace") == ["abc"]
        assert call.request.headers.get_list("X-Team") == ["pets"]


@pytest.mark.parametrize("spelling", ["X-Team", "x-team", "X-TEAM"])
def test_with_options_replaces_a_default_header_whatever_its_case(
    make_api: MakeApi, pets_route: respx.Route, spelling: str
) -> None:
    api = make_api(default_headers={"X-Team": "pets", "X-Trace": "abc"})
    copy = api.target.with_options(default_headers={spelling: "vets"})
    api.run(copy.list_pets)
    api.list_pets()
    sent_by_copy, sent_by_original = (call.request for call in pets_route.calls)
    assert sent_by_copy.headers.get_list("X-Team") == ["vets"]  # one header, the copy's value
    assert [value for name, value in sent_by_copy.headers.raw if name.lower() == b"x-team"] == [
        b"vets"
    ]
    assert sent_by_copy.headers.get_list("X-Trace") == ["abc"]
    assert sent_by_original.headers.get_list("X-Team") == ["pets"]
    # The copy holds the name once, as it spelled it (its repr lists the names).
    assert repr(copy).endswith(f"default_headers={sorted([spelling, 'X-Trace'])!r})")


@pytest.mark.parametrize("name", ["Authorization", "authorization", "AUTHORIZATION"])
def test_authorization_in_default_headers_is_refused_pointing_at_api_key(
    make_api: MakeApi, pets_route: respx.Route, name: str
) -> None:
    with pytest.raises(ValueError, match=r"^default_headers must not set .*: pass api_key=$") as e:
        make_api(api_key=KEY, default_headers={name: "Bearer someone-else"})
    assert "someone-else" not in str(e.value)
    assert name in str(e.value)
    assert pets_route.calls.call_count == 0


@pytest.mark.parametrize(
    "headers",
    [{"X-Number": 1}, {"X-Bytes": b"x"}, {"X-None": None}, {1: "x"}],
    ids=["int-value", "bytes-value", "none-value", "int-name"],
)
def test_non_str_default_header_is_a_type_error(
    make_api: MakeApi, headers: dict[object, object]
) -> None:
    with pytest.raises(TypeError, match=r"^default_headers\b") as excinfo:
        make_api(default_headers=headers)
    assert excinfo.type is TypeError


# --- http_client --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client_class", "http_class"),
    [(Client, httpx.AsyncClient), (AsyncClient, httpx.Client)],
    ids=["sync-given-async", "async-given-sync"],
)
def test_http_client_of_the_other_kind_is_a_type_error(
    loop: asyncio.AbstractEventLoop, client_class: type[Any], http_class: type[Any]
) -> None:
    http = http_class()
    try:
        with pytest.raises(TypeError, match=r"^http_client\b") as excinfo:
            client_class(api_key=KEY, base_url="https://api.test/v1", http_client=http)
        assert excinfo.type is TypeError
    finally:
        close(loop, http)


@pytest.mark.parametrize("kinds", CLIENT_KINDS)
def test_given_http_client_is_used_and_not_closed(
    loop: asyncio.AbstractEventLoop, pets_route: respx.Route, kinds: ClientPair
) -> None:
    client_class, http_class = kinds
    # Each kind pairs a client with its own httpx class, a link the checker cannot follow.
    http: Any = http_class(headers={"X-Proxy": "1"})
    client = client_class(api_key=KEY, base_url="https://api.test/v1", http_client=http)
    try:
        run(loop, client.list_pets())
        headers = pets_route.calls.last.request.headers
        assert headers.get_list("X-Proxy") == ["1"]
        assert headers.get_list("Authorization") == [f"Bearer {KEY}"]
        close(loop, client)
        assert http.is_closed is False
    finally:
        close(loop, http)


@pytest.mark.parametrize("kinds", CLIENT_KINDS)
def test_own_connection_pool_is_closed(
    loop: asyncio.AbstractEventLoop, kinds: ClientPair, pets_route: respx.Route
) -> None:
    client_class, _ = kinds
    client = client_class(api_key=KEY, base_url="https://api.test/v1")
    run(loop, client.list_pets())
    pool = client._pool.http  # the pool is not public; only its closing is under test
    assert pool.is_closed is False
    close(loop, client)
    assert pool.is_closed is True


# --- ANIMALSTORE_LOG ----------------------------------------------------------------------


def logged_run(value: str | None, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh Python with ``ANIMALSTORE_LOG`` set to ``value`` (or unset).

    The variable is read as the package is imported: only a new process shows what it does.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ANIMALSTORE_")}
    if value is not None:
        environ["ANIMALSTORE_LOG"] = value
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=environ,
        cwd=ROOT,
        timeout=30,
        check=True,
    )


#: Three clients built, then the SDK logger's handlers (kind and stream) and level printed.
_SHOW_LOGGER = """
import logging, sys
from animalstore_client.testing import FakeAnimalStore
store = FakeAnimalStore()
for _ in range(3):
    store.client().close()
logger = logging.getLogger("animalstore_client")
print([(type(h).__name__, h.stream is sys.stderr) for h in logger.handlers], logger.level)
"""


@pytest.mark.parametrize(
    ("value", "level"),
    [("debug", logging.DEBUG), ("DEBUG", logging.DEBUG), (" info ", logging.INFO)],
)
def test_log_variable_installs_one_stderr_handler_at_import(value: str, level: int) -> None:
    shown = logged_run(value, _SHOW_LOGGER).stdout
    assert shown == f"[('StreamHandler', True)] {level}\n"


@pytest.mark.parametrize("value", ["verbose", "trace", "1", "", None])
def test_unknown_log_value_installs_nothing(value: str | None) -> None:
    assert logged_run(value, _SHOW_LOGGER).stdout == f"[] {logging.NOTSET}\n"


def test_debug_log_reaches_stderr() -> None:
    script = (
        "from animalstore_client.testing import FakeAnimalStore\n"
        "store = FakeAnimalStore(api_keys=['sk-hidden-0123456789'])\n"
        "store.client().list_pets()\n"
    )
    err = logged_run("debug", script).stderr
    # The whole line: time, logger, level, message.
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} animalstore_client DEBUG "
        r"GET http://animalstore\.test/v1/pets -> 200 in \d+\.\d ms \(retry 0\)\n",
        err,
    ), err
    assert "sk-hidden" not in err


def test_building_a_client_leaves_logging_alone(
    make_api: MakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The variable set after the import changes nothing: logging is the application's.
    logger = logging.getLogger("animalstore_client")
    handlers, level = list(logger.handlers), logger.level
    monkeypatch.setenv("ANIMALSTORE_LOG", "debug")
    make_api()
    assert (logger.handlers, logger.level) == (handlers, level)


def test_debug_to_stderr_lasts_for_its_block(capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("animalstore_client")
    handlers, level = list(logger.handlers), logger.level
    with sdk_logging.debug_to_stderr():
        assert logger.level == logging.DEBUG
        logging.getLogger("animalstore_client.cli").debug("inside")
    logging.getLogger("animalstore_client.cli").debug("after")
    assert (logger.handlers, logger.level) == (handlers, level)
    err = capsys.readouterr().err
    assert err.endswith(" animalstore_client.cli DEBUG inside\n")
    assert "after" not in err


@pytest.mark.parametrize(
    ("timeout", "phase"),
    [
        (httpx.Timeout(-1.0), "connect"),
        (httpx.Timeout(5.0, read=float("nan")), "read"),
        (httpx.Timeout(5.0, write=float("inf")), "write"),
        (httpx.Timeout(5.0, pool=1e10), "pool"),
    ],
)
def test_an_httpx_timeout_is_checked_phase_by_phase(
    make_api: MakeApi, timeout: httpx.Timeout, phase: str
) -> None:
    with pytest.raises(ValueError, match=rf"^timeout \({phase}\) must be positive"):
        make_api(timeout=timeout)


def test_an_httpx_timeout_without_a_limit_is_accepted(make_api: MakeApi) -> None:
    assert make_api(timeout=httpx.Timeout(None)).timeout == httpx.Timeout(None)


NO_LIMIT: dict[str, float | None] = {"connect": None, "read": None, "write": None, "pool": None}


def test_timeout_none_means_no_limit_as_in_httpx(
    make_api: MakeApi, pets_route: respx.Route
) -> None:
    api = make_api(timeout=None)
    assert api.timeout == httpx.Timeout(None)
    api.list_pets()
    assert pets_route.calls.last.request.extensions["timeout"] == NO_LIMIT


def test_with_options_timeout_none_means_no_limit_and_omitted_keeps(
    make_api: MakeApi, pets_route: respx.Route
) -> None:
    api = make_api(timeout=3.0, max_retries=4)
    unlimited = Api(api.target.with_options(timeout=None), api._loop)
    assert unlimited.timeout == httpx.Timeout(None)
    assert unlimited.max_retries == 4
    assert api.with_options(max_retries=0).timeout == httpx.Timeout(3.0)
    unlimited.list_pets()
    assert pets_route.calls.last.request.extensions["timeout"] == NO_LIMIT


@pytest.mark.parametrize("kinds", CLIENT_KINDS)
def test_the_given_http_clients_own_timeout_applies_when_none_is_passed(
    loop: asyncio.AbstractEventLoop, kinds: ClientPair, pets_route: respx.Route
) -> None:
    client_class, http_class = kinds
    http: Any = http_class(timeout=httpx.Timeout(7.0, connect=1.0))
    try:
        client = client_class(api_key=KEY, base_url="https://api.test/v1", http_client=http)
        assert client.timeout == httpx.Timeout(7.0, connect=1.0)
        run(loop, client.list_pets())
        sent = pets_route.calls.last.request.extensions["timeout"]
        assert sent == {"connect": 1.0, "read": 7.0, "write": 7.0, "pool": 7.0}

        explicit = client_class(
            api_key=KEY, base_url="https://api.test/v1", http_client=http, timeout=2.0
        )
        assert explicit.timeout == httpx.Timeout(2.0)
        run(loop, explicit.list_pets())
        assert pets_route.calls.last.request.extensions["timeout"] == httpx.Timeout(2.0).as_dict()
    finally:
        close(loop, http)


@pytest.mark.parametrize("kinds", CLIENT_KINDS)
def test_the_given_http_clients_timeout_cuts_a_slow_answer_over_a_socket(
    loop: asyncio.AbstractEventLoop, kinds: ClientPair
) -> None:
    from animalstore_client import APITimeoutError
    from tests.reliability.faultserver import FaultServer, Reply

    client_class, http_class = kinds
    with FaultServer() as server:
        server.script(Reply(200, json=[], delay=2.0))
        http: Any = http_class(timeout=0.2)
        client = client_class(
            api_key=KEY, base_url=server.base_url, http_client=http, max_retries=0
        )
        try:
            with pytest.raises(APITimeoutError):
                run(loop, client.list_pets())
        finally:
            close(loop, http)
        assert len(server.requests) == 1


@pytest.mark.parametrize("value", ["caf\u00e9", "\u2603"])
def test_a_non_ascii_default_header_value_is_refused_naming_the_header(
    make_api: MakeApi, value: str
) -> None:
    with pytest.raises(ValueError, match=r"^default_headers\['X-Name'\] must be ASCII") as caught:
        make_api(default_headers={"X-Name": value})
    assert value not in str(caught.value)


def test_a_malformed_key_from_the_environment_is_reported_as_such(
    make_api: MakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "two words")
    with pytest.raises(ValueError, match=r"^ANIMALSTORE_API_KEY must be non-empty printable ASCII"):
        make_api(api_key=None)


@pytest.mark.parametrize("value", [1, 2**63 - 1, None])
def test_max_response_bytes_takes_1_to_int64_or_none(make_api: MakeApi, value: int | None) -> None:
    assert make_api(max_response_bytes=value).target.max_response_bytes == value


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (0, ValueError, f"max_response_bytes must be between 1 and {2**63 - 1}, got 0"),
        (2**63, ValueError, f"max_response_bytes must be between 1 and {2**63 - 1}, got {2**63}"),
        (1.0, TypeError, "max_response_bytes must be an int, got float 1.0"),
    ],
)
def test_max_response_bytes_out_of_range_is_refused_by_name(
    make_api: MakeApi, value: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        make_api(max_response_bytes=value)
    assert str(caught.value) == message


def test_a_timeout_of_a_billion_seconds_is_the_longest_taken(make_api: MakeApi) -> None:
    assert make_api(timeout=1e9).target.timeout == httpx.Timeout(1e9)
    with pytest.raises(ValueError, match=r"^timeout "):
        make_api(timeout=1e9 * 1.0000001)


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        (
            {"api_key": 5},
            TypeError,
            "api_key must be a str or a function that returns one, got int",
        ),
        (
            {"environment": "staging", "base_url": "https://h.test/v1"},
            ValueError,
            "pass either environment= or base_url=, not both",
        ),
        ({"deadline": "soon"}, TypeError, "deadline must be a number of seconds or None, got str"),
        (
            {"deadline": 0},
            ValueError,
            "deadline must be positive and at most 1e+09 seconds, got 0.0",
        ),
        (
            {"deadline": 10**400},
            ValueError,
            "deadline must be positive and at most 1e+09 seconds, got inf",
        ),
    ],
)
def test_a_bad_setting_is_refused_saying_what_it_must_be(
    make_api: MakeApi, arguments: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        make_api(**arguments)
    assert str(caught.value) == message


def test_the_longest_deadline_is_a_billion_seconds(make_api: MakeApi) -> None:
    assert make_api(deadline=1e9).target.deadline == 1e9


def test_a_base_url_path_keeps_all_but_its_trailing_slashes(make_api: MakeApi) -> None:
    assert make_api(base_url="https://h.test/v1X//").target.base_url == "https://h.test/v1X/"


def test_a_base_url_that_does_not_parse_is_named(make_api: MakeApi) -> None:
    with pytest.raises(ValueError, match=r"^base_url is not a valid URL: \S"):
        make_api(base_url="http://[::1/v1")


def test_the_variables_read_are_those_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "from-the-process")
    options = resolve_options(
        None,
        environment=None,
        base_url=None,
        timeout=5.0,
        max_retries=0,
        default_headers=None,
        environ={"ANIMALSTORE_API_KEY": "from-the-mapping"},
    )
    assert options.api_key == "from-the-mapping"
