"""The API key stays secret over real sockets: in no log record (httpx and httpcore at DEBUG
included), no exception message or repr along the whole chain, no client repr; and a redirect
never carries it to another origin.
"""

from __future__ import annotations

import gc
import logging
import traceback
import types
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from animalstore_client import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    Pet,
    RateLimitError,
)
from tests.reliability.conftest import (
    API_KEY,
    PET,
    Api,
    close_in,
    error_body,
    exception_chain,
    free_port,
    new_http_client,
    raised_exactly,
)
from tests.reliability.faultserver import Action, FaultServer, Hangup, Raw, Reply, Reset

REX = Pet.from_dict(PET)


def failure(status: int) -> Reply:
    return Reply(status, json=error_body(status, message=f"failed with {status}"))


#: id -> (script, operation, client options, the exception class expected, or None)
SCENARIOS: dict[str, tuple[list[Action], str, dict[str, Any], type[Exception] | None]] = {
    "list-ok": ([Reply(200, json=[PET])], "list_pets", {}, None),
    "create-ok": ([Reply(201, json=PET)], "create_pet", {}, None),
    "get-ok": ([Reply(200, json=PET)], "get_pet", {}, None),
    "retry-then-ok": ([failure(503), Reply(200, json=[PET])], "list_pets", {}, None),
    "400": ([failure(400)], "create_pet", {}, BadRequestError),
    "401": ([failure(401)], "list_pets", {}, AuthenticationError),
    "404": ([failure(404)], "get_pet", {}, NotFoundError),
    "418": ([failure(418)], "list_pets", {}, APIStatusError),
    "429-retries-used-up": ([failure(429)] * 3, "list_pets", {}, RateLimitError),
    "500-retries-used-up": ([failure(500)] * 3, "get_pet", {}, InternalServerError),
    "create-502": ([failure(502)], "create_pet", {}, InternalServerError),
    "redirect": (
        [Reply(302, headers={"Location": "http://127.0.0.1:9/steal"})],
        "list_pets",
        {},
        APIStatusError,
    ),
    "malformed-body": ([Reply(200, json={"id": "1"})], "get_pet", {}, APIResponseValidationError),
    "hangup-retries-used-up": ([Hangup()] * 3, "list_pets", {}, APIConnectionError),
    "reset": ([Reset(body=b"[" * 1000, sent=10)], "create_pet", {}, APIConnectionError),
    "stall": ([Hangup(delay=1)], "list_pets", {"timeout": 0.05, "max_retries": 0}, APITimeoutError),
    "refused": ([], "list_pets", {"base_url": "refused"}, APIConnectionError),
    # Where aiohttp raises ClientResponseError, whose repr, args and request_info hold the
    # request's headers.
    "malformed-status-line": (
        [Raw(b"HTTP/1.1 two hundred OK\r\n\r\n")],
        "create_pet",
        {},
        APIConnectionError,
    ),
    "malformed-header": (
        [Raw(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n[]")],
        "create_pet",
        {},
        APIConnectionError,
    ),
}


ANSWERS = {"list_pets": Reply(200, json=[PET]), "create_pet": Reply(201, json=PET)}


#: Not followed by ``reachable_texts``: code and classes, and the traceback's frames, which
#: the traceback formatted with captured locals stands for.
_NOT_FOLLOWED = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.CodeType,
    types.FrameType,
    types.TracebackType,
)


def reachable_texts(exc: BaseException) -> Iterator[str]:
    """Every string and bytes object reachable from an exception's own state, private
    attributes included, through any chain of references (as ``gc`` sees them)."""
    seen = {id(exc)}
    pending: list[object] = [exc]
    while pending:
        for referent in gc.get_referents(pending.pop()):
            if id(referent) in seen or isinstance(referent, _NOT_FOLLOWED):
                continue
            seen.add(id(referent))
            if isinstance(referent, str):
                yield referent
            elif isinstance(referent, (bytes, bytearray)):
                yield bytes(referent).decode("latin-1")
            else:
                pending.append(referent)


def texts_of(exc: BaseException) -> Iterator[str]:
    """Everything reachable from an exception: str, repr, args, every attribute (the headers of
    its request views by value, not through httpx's masking repr), every object it holds on
    to, the whole chain, and the traceback formatted with each frame's local variables."""
    for link in exception_chain(exc):
        yield from reachable_texts(link)
        yield str(link)
        yield repr(link)
        yield repr(link.args)
        yield repr(vars(link))
        for name in ("request", "response", "error"):
            value = getattr(link, name, None)
            yield repr(value)
            for request in (value, getattr(value, "request", None)):
                if isinstance(request, httpx.Request):
                    yield repr(request.headers.multi_items())
                    yield repr(request.content)
    yield "".join(traceback.format_exception(exc))
    yield "".join(traceback.TracebackException.from_exception(exc, capture_locals=True).format())


def texts_of_records(records: list[logging.LogRecord]) -> Iterator[str]:
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    for record in records:
        yield record.getMessage()
        yield repr(record.args)
        yield formatter.format(record)  # with any exc_info, formatted


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Capture every logger at DEBUG: the root logger, and the SDK's, httpx's, httpcore's and
    aiohttp's."""
    caplog.set_level(logging.DEBUG)
    for name in ("animalstore_client", "httpx", "httpcore", "aiohttp"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


@pytest.mark.parametrize("scenario", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_the_key_is_in_no_log_record_exception_or_repr(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    debug_logs: pytest.LogCaptureFixture,
    scenario: tuple[list[Action], str, dict[str, Any], type[Exception] | None],
    kind: str,
) -> None:
    script, operation, options, error_class = scenario
    options = {"max_retries": 2, **options}
    if options.get("base_url") == "refused":
        options["base_url"] = f"http://127.0.0.1:{free_port()}/v1"
    server.script(*script)
    api = make_client(options.pop("base_url", server), **options)

    shown: list[str] = [repr(api.target), str(api.target), repr(api.target.with_raw_response)]
    if error_class is None:
        result = api.invoke(operation)
        shown.append(repr(result))
        assert result in ([REX], REX)
    else:
        error = raised_exactly(error_class, lambda: api.invoke(operation))
        shown.extend(texts_of(error))

    records = debug_logs.records
    shown.extend(texts_of_records(records))
    shown.append(debug_logs.text)
    # The capture works: the SDK's attempt lines and httpcore's connection lines are there
    # (aiohttp logs nothing per request).
    assert any(r.name == "animalstore_client" and r.levelno == logging.DEBUG for r in records)
    assert kind == "aiohttp" or any(r.name.startswith("httpcore") for r in records)
    # The key was really in play: every request that arrived carried it.
    assert all(r.header("authorization") == f"Bearer {API_KEY}" for r in server.requests)
    assert len(server.requests) == len(script)

    leaks = [text for text in shown if API_KEY in text]
    assert leaks == []


def test_the_key_is_in_no_repr_of_a_copy_or_of_a_raw_response(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.script(Reply(200, json=[PET]))
    api = make_client(server)

    raw = api.raw.list_pets()
    copy = api.target.with_options(timeout=1.0, max_retries=0)

    for text in (repr(raw), repr(raw.http_response), repr(copy), repr(api.target._options)):
        assert API_KEY not in text


# -- redirects --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_the_default_client_does_not_follow_redirects(
    server: FaultServer,
    make_server: Callable[..., FaultServer],
    make_client: Callable[..., Api],
    status: int,
) -> None:
    elsewhere = make_server(default=Reply(200, json=[PET]))
    server.script(Reply(status, headers={"Location": f"{elsewhere.base_url}/pets"}))
    api = make_client(server, max_retries=2)

    error = raised_exactly(APIStatusError, api.list_pets)

    assert error.status_code == status
    assert len(server.requests) == 1
    assert elsewhere.requests == []


@pytest.fixture
def following_http_client(kind: str, aloop: Any) -> Iterator[Any]:
    """A user's own client that follows redirects, for httpx; the SDK must not close it.

    An aiohttp session has no such setting: whether to follow is chosen per request, and the
    SDK chooses never to.
    """
    client = (
        new_http_client(kind, aloop)
        if kind == "aiohttp"
        else new_http_client(kind, follow_redirects=True)
    )
    yield client
    close_in(aloop, client)


@pytest.mark.parametrize(
    ("operation", "status"),
    [("list_pets", 302), ("list_pets", 301), ("create_pet", 307), ("create_pet", 308)],
)
def test_a_followed_redirect_to_another_origin_drops_the_authorization_header(
    server: FaultServer,
    make_server: Callable[..., FaultServer],
    make_client: Callable[..., Api],
    following_http_client: httpx.Client | httpx.AsyncClient,
    operation: str,
    status: int,
    kind: str,
) -> None:
    elsewhere = make_server()  # same host, another port: another origin
    elsewhere.script(ANSWERS[operation])
    server.script(Reply(status, headers={"Location": f"{elsewhere.base_url}/pets"}))
    api = make_client(server, http_client=following_http_client, max_retries=0)

    if kind == "aiohttp":
        # The SDK sends with allow_redirects=False: the redirect is the answer, and the key
        # goes nowhere else.
        with pytest.raises(APIStatusError) as caught:
            api.invoke(operation)
        assert caught.value.status_code == status
        assert elsewhere.requests == []
        return
    assert api.invoke(operation) in ([REX], REX)

    (original,) = server.requests
    (redirected,) = elsewhere.requests
    assert original.header("authorization") == f"Bearer {API_KEY}"
    assert "authorization" not in redirected.header_names()
    assert all(API_KEY not in value for _, value in redirected.headers)
    assert API_KEY.encode() not in redirected.body
    assert (redirected.method, redirected.path) == (original.method, "/v1/pets")
