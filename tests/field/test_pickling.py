"""Every SDK exception and model survives pickle and copy, and crosses process boundaries.

The pickled bytes never hold the API key, though the request each error carries was sent with
it in its ``Authorization`` header.
"""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import httpx
import pytest

from animalstore_client import (
    NOT_GIVEN,
    AnimalStoreError,
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    Client,
    Error,
    InternalServerError,
    NewPet,
    NotFoundError,
    Pet,
    PetStatus,
    RateLimitError,
)
from animalstore_client._backends.httpx import family
from animalstore_client._core import operations as ops
from animalstore_client._core.call import Call
from animalstore_client._core.config import resolve_options
from animalstore_client._core.response import connection_error, parse_body, status_error
from animalstore_client._core.wire import Answer, Request
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import VirtualClock, httpx_answer
from tests.field import workers

KEY = "sk-pickle-SECRET-3b8e"
PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)
OPTIONS = resolve_options(
    KEY,
    environment=None,
    base_url="https://api.test/v1",
    timeout=5.0,
    max_retries=0,
    default_headers={"X-Team": "pets"},
    environ={},
)


def sent_request(operation: ops.Operation[Any]) -> httpx.Request:
    """The request the SDK would send for ``operation``: with the key in its headers."""
    with httpx.Client() as http:
        request: httpx.Request = family(httpx).build(
            http, Call(operation, OPTIONS).request, lambda r: r.headers
        )
    assert request.headers["authorization"] == f"Bearer {KEY}"
    return request


def status_response(status: int, body: object) -> Answer:
    request = sent_request(ops.create_pet(name="Rex", category_id=3, status=None))
    return httpx_answer(
        httpx.Response(status, json=body, headers={"x-request-id": "req_7"}, request=request)
    )


def failed(error: httpx.RequestError, request: httpx.Request) -> AnimalStoreError:
    """The SDK's error for an attempt that ended in ``error``, as a client raises it."""
    core_request = Request(request.method, str(request.url), None, {}, None, {})
    return connection_error(
        family(httpx).classify(error, core_request, request), core_request, idempotent=True
    )


def error_body(status: int) -> dict[str, object]:
    return {"code": "some_code", "message": f"failed with {status}", "status": status}


def make_errors() -> dict[str, AnimalStoreError]:
    list_request = sent_request(ops.list_pets(limit=5, status="sold"))
    errors: dict[str, AnimalStoreError] = {
        "AnimalStoreError": AnimalStoreError("base"),
        "APIError": APIError("generic", request=list_request),
        "APIConnectionError": failed(httpx.ConnectError("refused"), list_request),
        "APITimeoutError": failed(httpx.ReadTimeout("slow"), list_request),
        "APIStatusError": status_error(status_response(418, error_body(418))),
        "APIStatusError-not-an-Error-body": status_error(status_response(409, ["not", "it"])),
    }
    for status in (400, 401, 404, 429, 503):
        error = status_error(status_response(status, error_body(status)))
        errors[type(error).__name__] = error
    try:
        parse_body(status_response(200, {"id": "7"}), Pet)
    except APIResponseValidationError as exc:
        errors["APIResponseValidationError"] = exc
    return errors


ERRORS = make_errors()


def test_every_exception_class_is_covered() -> None:
    classes = {type(error) for error in ERRORS.values()}
    assert classes == {
        AnimalStoreError,
        APIError,
        APIConnectionError,
        APITimeoutError,
        APIResponseValidationError,
        APIStatusError,
        BadRequestError,
        AuthenticationError,
        NotFoundError,
        RateLimitError,
        InternalServerError,
    }


def observable(error: BaseException) -> dict[str, object]:
    """What a user reads off an SDK error."""
    seen: dict[str, object] = {"class": type(error), "str": str(error), "repr": repr(error)}
    for name in ("message", "status_code", "code", "error", "request_id"):
        if hasattr(error, name):
            seen[name] = getattr(error, name)
    if isinstance(error, APIError):
        seen["method"], seen["url"] = error.request.method, str(error.request.url)
    for name in ("response",):
        if hasattr(error, name):
            response = getattr(error, name)
            seen["response"] = (response.status_code, response.content, response.headers.raw)
    return seen


def pickled(protocol: int) -> Callable[[Any], Any]:
    return lambda value: pickle.loads(pickle.dumps(value, protocol))


COPIERS: dict[str, Callable[[Any], Any]] = {
    **{f"pickle-{protocol}": pickled(protocol) for protocol in PROTOCOLS},
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("copier", list(COPIERS))
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_survive_pickle_and_copy(name: str, copier: str) -> None:
    error = ERRORS[name]
    copied = COPIERS[copier](error)

    assert copied is not error
    assert observable(copied) == observable(error)
    if isinstance(copied, APIError):
        assert "authorization" not in copied.request.headers


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", list(ERRORS))
def test_pickled_errors_never_hold_the_key(name: str, protocol: int) -> None:
    assert KEY.encode() not in pickle.dumps(ERRORS[name], protocol)


def test_notes_and_attributes_added_by_the_application_are_kept() -> None:
    error = status_error(status_response(404, error_body(404)))
    assert str(error) == "404 some_code: failed with 404 (request id req_7)"  # no base_url: no hint
    if sys.version_info >= (3, 11):
        error.add_note("while restocking")
    error.shelf = 7  # type: ignore[attr-defined]

    copied = pickle.loads(pickle.dumps(error))

    if sys.version_info >= (3, 11):
        assert copied.__notes__ == ["while restocking"]
    assert copied.shelf == 7


MODELS: list[object] = [
    Pet(id=1, name="Rex", category_id=3, status=PetStatus.AVAILABLE),
    Pet(id=2, name="Kit", category_id=3, status="adopted"),
    Pet(id=3, name="Tom", category_id=-(2**63)),
    NewPet(name="Rex", category_id=3, status=PetStatus.SOLD),
    NewPet(name="Rex", category_id=3),
    Error(code="not_found", message="no such pet", status=404),
    PetStatus.PENDING,
    NOT_GIVEN,
]


@pytest.mark.parametrize("copier", list(COPIERS))
@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_models_survive_pickle_and_copy(model: object, copier: str) -> None:
    copied = COPIERS[copier](model)
    assert type(copied) is type(model)
    assert copied == model
    assert repr(copied) == repr(model)
    if isinstance(model, PetStatus):
        assert copied is model


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with FakeAnimalStore(api_keys={KEY}).serve() as url:
        yield url


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_an_sdk_error_raised_in_a_process_pool_worker_arrives_as_itself(
    base_url: str, start_method: str
) -> None:
    context = multiprocessing.get_context(start_method)
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        with pytest.raises(AuthenticationError) as refused:
            pool.submit(workers.list_pets, base_url, "sk-wrong-key").result(timeout=60)
        with pytest.raises(APIConnectionError) as unreachable:
            pool.submit(workers.list_pets, "http://127.0.0.1:9/v1", KEY).result(timeout=60)
        # The pool is not broken: the same worker answers again.
        assert pool.submit(workers.list_pets, base_url, KEY).result(timeout=60) == 0

    error = refused.value
    assert (error.status_code, error.code, error.message) == (
        401,
        "unauthorized",
        "invalid API key",
    )
    assert str(error) == f"401 unauthorized: invalid API key (request id {error.request_id})"
    assert (error.request.method, str(error.request.url)) == ("GET", f"{base_url}/pets")
    assert type(unreachable.value) is APIConnectionError
    assert str(unreachable.value).startswith("GET http://127.0.0.1:9/v1/pets failed: ")


def test_errors_raised_over_sockets_on_either_httpx_library_pickle_without_the_key(
    httpx_module: Any, clock: VirtualClock
) -> None:
    """(The refused call's retries wait on the test's clock, not for real.)"""
    from tests.reliability.conftest import free_port
    from tests.reliability.faultserver import FaultServer, Reply

    errors: list[AnimalStoreError] = []
    with FaultServer() as server:
        server.script(
            Reply(404, json=error_body(404)), Reply(200, json={"id": "7"}), Reply(200, body=b"{")
        )
        with (
            httpx_module.Client() as http,
            Client(api_key=KEY, base_url=server.base_url, http_client=http) as client,
        ):
            for _ in range(3):
                with pytest.raises(AnimalStoreError) as caught:
                    client.create_pet(name="Rex", category_id=3)
                errors.append(caught.value)
            refused = Client(
                api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}/v1", http_client=http
            )
            with pytest.raises(APIConnectionError) as caught:
                refused.list_pets()
            errors.append(caught.value)
    assert [type(e) for e in errors] == [
        NotFoundError,
        APIResponseValidationError,
        APIResponseValidationError,
        APIConnectionError,
    ]
    for error in errors:
        for protocol in PROTOCOLS:
            data = pickle.dumps(error, protocol)
            assert KEY.encode() not in data
            assert observable(pickle.loads(data)) == observable(error)
