"""Every request the SDK builds fits the OpenAPI document, for ``Client`` and ``AsyncClient``.

The requests are captured as httpx sends them (a recording transport in front of the reference
store) with the SDK pointed at each of the document's servers, and validated by openapi-core:
server, path, method, parameters, body and the bearer security requirement. The same calls are
also made over a real socket, and the requests as the store received them are validated too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from openapi_core.validation.request.exceptions import SecurityValidationError

from animalstore_client import AsyncClient, Client, Environment, PetStatus
from animalstore_client.testing import FakeAnimalStore

from .conftest import API_KEY, Contract, OpenAPIRequest, OpenAPIResponse

INT64_MAX = 2**63 - 1

Exchange = tuple[httpx.Request, httpx.Response]


class RecordingTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Passes requests to another transport and keeps every (request, response) pair."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response: httpx.Response = self.inner.handle_request(request)
        self.exchanges.append((request, response))
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response: httpx.Response = await self.inner.handle_async_request(request)
        self.exchanges.append((request, response))
        return response


class Call:
    """One SDK call, with the operation, query and body the document expects it to send."""

    def __init__(
        self,
        invoke: Callable[[Any], Any],
        operation_id: str,
        query: dict[str, str],
        body: dict[str, Any] | None = None,
        *,
        deprecated: bool = False,
    ) -> None:
        self.invoke = invoke
        self.operation_id = operation_id
        self.query = query
        self.body = body
        self.deprecated = deprecated


CALLS = {
    "list": Call(lambda c: c.list_pets(), "listPets", {}),
    "list-limit": Call(lambda c: c.list_pets(limit=7), "listPets", {"limit": "7"}),
    "list-status": Call(
        lambda c: c.list_pets(status=PetStatus.SOLD), "listPets", {"status": "sold"}
    ),
    "list-status-str": Call(
        lambda c: c.list_pets(status="pending"), "listPets", {"status": "pending"}
    ),
    "list-both": Call(
        lambda c: c.list_pets(limit=100, status="available"),
        "listPets",
        {"limit": "100", "status": "available"},
    ),
    "create": Call(
        lambda c: c.create_pet(name="Rex", category_id=3),
        "createPet",
        {},
        {"name": "Rex", "categoryId": 3},
    ),
    "create-status": Call(
        lambda c: c.create_pet(name="Rex", category_id=3, status=PetStatus.PENDING),
        "createPet",
        {},
        {"name": "Rex", "categoryId": 3, "status": "pending"},
    ),
    "create-edge-values": Call(
        lambda c: c.create_pet(name='Zoë 🐕 "q" \\ \n', category_id=INT64_MAX, status="sold"),
        "createPet",
        {},
        {"name": 'Zoë 🐕 "q" \\ \n', "categoryId": INT64_MAX, "status": "sold"},
    ),
    "get": Call(lambda c: c.get_pet(1), "getPet", {}, deprecated=True),
}


def run(kind: str, call: Call, transport: Any, **options: Any) -> Any:
    """Make ``call`` with a fresh ``Client`` or ``AsyncClient`` sending through ``transport``."""
    options = {"api_key": API_KEY, "max_retries": 0, **options}

    def warns() -> contextlib.AbstractContextManager[object]:
        if not call.deprecated:
            return contextlib.nullcontext()
        return pytest.warns(DeprecationWarning, match="5 December 2030")

    if kind == "sync":
        with (
            httpx.Client(transport=transport) as http,
            Client(http_client=http, **options) as c,
            warns(),
        ):
            return call.invoke(c)

    async def main() -> Any:
        async with (
            httpx.AsyncClient(transport=transport) as http,
            AsyncClient(http_client=http, **options) as c,
        ):
            with warns():  # AsyncClient's get_pet warns when awaited
                return await call.invoke(c)

    return asyncio.run(main())


@pytest.fixture
def seeded_store() -> FakeAnimalStore:
    store = FakeAnimalStore(api_keys=(API_KEY,))
    store.add_pet("Rex", 3, "available")  # id 1, for getPet
    store.add_pet("Tom", 4)
    return store


@pytest.mark.parametrize("environment", list(Environment), ids=lambda e: e.value)
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("name", list(CALLS))
def test_sdk_request_fits_the_document(
    contract: Contract,
    seeded_store: FakeAnimalStore,
    name: str,
    kind: str,
    environment: Environment,
) -> None:
    call = CALLS[name]
    recorder = RecordingTransport(seeded_store.transport())
    run(kind, call, recorder, environment=environment)

    ((request, response),) = recorder.exchanges
    assert str(request.url).startswith(contract.servers[list(Environment).index(environment)])
    wrapped = OpenAPIRequest.from_httpx(request)
    contract.validate_request(wrapped)
    operation = contract.operation(request.method, request.url.path)
    assert operation is not None
    assert operation["operationId"] == call.operation_id
    # The security requirement is met with the client's own key, not just any bearer token.
    assert request.headers.get_list("authorization") == [f"Bearer {API_KEY}"]
    assert dict(wrapped.parameters.query) == call.query
    if call.body is None:
        assert request.content == b""
    else:
        assert request.headers["content-type"] == "application/json"
        assert json.loads(request.content) == call.body
    # The answer fits the document too (and is a 2xx: the request was accepted).
    assert response.is_success
    contract.check_store_response(wrapped, OpenAPIResponse.from_httpx(response), request.url.path)


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("name", list(CALLS))
def test_sdk_request_over_a_socket_fits_the_document(
    contract: Contract, seeded_store: FakeAnimalStore, name: str, kind: str
) -> None:
    call = CALLS[name]
    with seeded_store.serve() as base_url:
        run(
            kind,
            call,
            httpx.HTTPTransport() if kind == "sync" else httpx.AsyncHTTPTransport(),
            base_url=base_url,
        )
    (received,) = seeded_store.requests
    request = OpenAPIRequest.from_store(
        received.method,
        received.path,
        received.query,
        received.headers,
        received.body,
        contract.production_host,
    )
    contract.validate_request(request)
    operation = contract.operation(received.method, received.path)
    assert operation is not None
    assert operation["operationId"] == call.operation_id
    assert received.headers["authorization"] == f"Bearer {API_KEY}"


# -- the validator is not vacuous: a broken request is caught -----------------------------


def captured(store: FakeAnimalStore, call: Call) -> httpx.Request:
    recorder = RecordingTransport(store.transport())
    run("sync", call, recorder)
    ((request, _),) = recorder.exchanges
    return request


def rebuilt(
    request: httpx.Request,
    *,
    drop: str | None = None,
    set_headers: dict[str, str] | None = None,
    url: str | None = None,
    content: bytes | None = None,
) -> OpenAPIRequest:
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != drop]
    headers = [
        (k, v) for k, v in headers if k.lower() not in {h.lower() for h in set_headers or {}}
    ]
    headers += list((set_headers or {}).items())
    return OpenAPIRequest(
        request.method,
        url or str(request.url),
        headers,
        request.content if content is None else content,
    )


@pytest.mark.parametrize("name", ["list-both", "create-status", "get"])
def test_a_request_without_the_bearer_credential_is_caught(
    contract: Contract, seeded_store: FakeAnimalStore, name: str
) -> None:
    request = captured(seeded_store, CALLS[name])
    for broken in (
        rebuilt(request, drop="authorization"),
        rebuilt(request, set_headers={"Authorization": f"Basic {API_KEY}"}),
        rebuilt(request, set_headers={"Authorization": API_KEY}),
    ):
        errors = contract.request_errors(broken)
        assert [type(e) for e in errors] == [SecurityValidationError]


def test_broken_parameters_and_bodies_are_caught(
    contract: Contract, seeded_store: FakeAnimalStore
) -> None:
    listing = captured(seeded_store, CALLS["list-both"])
    base = str(listing.url).split("?")[0]
    for query in ("limit=0", "limit=101", "limit=ten", "status=lost"):
        assert contract.request_errors(rebuilt(listing, url=f"{base}?{query}")), query
    creating = captured(seeded_store, CALLS["create-status"])
    for body in (
        b'{"name": "Rex"}',
        b'{"categoryId": 3}',
        b'{"name": "Rex", "categoryId": "3"}',
        b'{"name": "Rex", "categoryId": true}',
        b'{"name": "Rex", "categoryId": 9223372036854775808}',
        b'{"name": "Rex", "categoryId": 3, "status": "lost"}',
        b"[]",
        b"",
    ):
        assert contract.request_errors(rebuilt(creating, content=body)), body
    assert contract.request_errors(rebuilt(creating, drop="content-type"))
    getting = captured(seeded_store, CALLS["get"])
    assert contract.request_errors(
        rebuilt(getting, url=str(getting.url).rsplit("/", 1)[0] + "/one")
    )
    # And off the document's servers or paths, nothing matches.
    assert contract.request_errors(rebuilt(listing, url="https://elsewhere.example/v1/pets"))
    assert contract.request_errors(rebuilt(listing, url=base.replace("/v1/", "/v2/")))
