"""What each operation puts on the wire, for both clients."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import httpx
import pytest
import respx

from animalstore_client import Pet, PetStatus, __version__
from tests.conftest import API_KEY, Api

PET = {"id": 7, "name": "Rex", "categoryId": 3, "status": "available"}


def assert_common_headers(request: httpx.Request) -> None:
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["accept"] == "application/json"
    assert request.headers["user-agent"] == f"animalstore-client-python/{__version__}"
    # The SDK's own headers, each once, and no other but those httpx adds to any request.
    names = [name.lower() for name, _ in request.headers.raw]
    ours = [b"accept", b"accept-encoding", b"user-agent", b"authorization"]
    assert [name for name in names if name not in (b"host", b"connection")][:4] == ours


def test_list_pets_sends_get_with_only_the_given_parameters(
    api: Api, mock_api: respx.MockRouter
) -> None:
    route = mock_api.get("/pets").respond(200, json=[PET])

    assert api.list_pets() == [Pet(id=7, name="Rex", category_id=3, status=PetStatus.AVAILABLE)]
    api.list_pets(limit=10, status=PetStatus.SOLD)

    assert route.call_count == 2
    first, second = (call.request for call in route.calls)
    assert str(first.url) == "https://api.test/v1/pets"
    assert str(second.url) == "https://api.test/v1/pets?limit=10&status=sold"
    for request in (first, second):
        assert request.method == "GET"
        assert request.content == b""
        assert "idempotency-key" not in request.headers
        assert_common_headers(request)


def test_create_pet_posts_the_wire_body_with_an_idempotency_key(
    api: Api, mock_api: respx.MockRouter
) -> None:
    route = mock_api.post("/pets").respond(201, json={**PET, "status": "pending"})

    pet = api.create_pet(name="Rex", category_id=3, status="pending")

    assert pet == Pet(id=7, name="Rex", category_id=3, status=PetStatus.PENDING)
    assert route.call_count == 1
    request = route.calls.last.request
    assert str(request.url) == "https://api.test/v1/pets"
    assert json.loads(request.content) == {"name": "Rex", "categoryId": 3, "status": "pending"}
    assert request.headers["content-type"] == "application/json"
    assert uuid.UUID(request.headers["idempotency-key"]).version == 4
    assert_common_headers(request)


def test_create_pet_omits_status_when_not_given(api: Api, mock_api: respx.MockRouter) -> None:
    route = mock_api.post("/pets").respond(201, json={"id": 1, "name": "Rex", "categoryId": 3})

    assert api.create_pet(name="Rex", category_id=3).status is None
    assert json.loads(route.calls.last.request.content) == {"name": "Rex", "categoryId": 3}


def test_each_create_call_gets_its_own_idempotency_key(
    api: Api, mock_api: respx.MockRouter
) -> None:
    route = mock_api.post("/pets").respond(201, json=PET)

    api.create_pet(name="Rex", category_id=3)
    api.create_pet(name="Rex", category_id=3)

    keys = {call.request.headers["idempotency-key"] for call in route.calls}
    assert len(keys) == 2


def test_get_pet_puts_the_id_in_the_path(api: Api, mock_api: respx.MockRouter) -> None:
    route = mock_api.get("/pets/7").respond(200, json=PET)

    with pytest.warns(DeprecationWarning, match="5 December 2030"):
        pet = api.get_pet(7)

    assert pet.id == 7
    assert route.call_count == 1
    assert route.calls.last.request.method == "GET"
    assert_common_headers(route.calls.last.request)


def test_unknown_fields_and_statuses_in_answers_are_tolerated(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(
        200, json=[{**PET, "status": "reserved", "tags": ["new"]}, {**PET, "id": 8}]
    )

    pets = api.list_pets()

    assert [pet.status for pet in pets] == ["reserved", PetStatus.AVAILABLE]
    assert type(pets[0].status) is str


def test_raw_response_exposes_status_headers_and_parses_once(
    api: Api, mock_api: respx.MockRouter
) -> None:
    route = mock_api.get("/pets").respond(200, json=[PET], headers={"x-request-id": "req-9"})

    raw = api.with_raw_response.list_pets(limit=5)

    assert raw.status_code == 200
    assert raw.headers["x-request-id"] == "req-9"
    assert raw.request_id == "req-9"
    assert raw.retries_taken == 0
    assert isinstance(raw.http_response, httpx.Response)
    assert str(raw.http_response.request.url) == "https://api.test/v1/pets?limit=5"
    parsed = raw.parse()
    assert parsed == [Pet(id=7, name="Rex", category_id=3, status=PetStatus.AVAILABLE)]
    assert raw.parse() is parsed
    assert route.call_count == 1


def test_raw_response_of_create_and_get(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.post("/pets").respond(201, json=PET)
    mock_api.get("/pets/7").respond(200, json=PET)

    created = api.with_raw_response.create_pet(name="Rex", category_id=3)
    with pytest.warns(DeprecationWarning, match="5 December 2030"):
        fetched = api.with_raw_response.get_pet(7)

    assert created.status_code == 201
    assert created.parse() == fetched.parse() == Pet.from_dict(PET)


def test_the_users_http_client_defaults_apply(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    route = mock_api.get("/pets").respond(200, json=[])
    http = httpx.Client(headers={"X-Tenant": "blue"}, params={"trace": "1"})
    from animalstore_client import Client

    with Client(api_key=API_KEY, base_url="https://api.test/v1", http_client=http) as client:
        client.list_pets(limit=2)

    request = route.calls.last.request
    assert request.headers["x-tenant"] == "blue"
    assert request.url.params["trace"] == "1"
    assert request.url.params["limit"] == "2"
    assert not http.is_closed
    http.close()


def test_each_call_sends_its_own_address_and_query(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    # The httpx backend parses each address and query once per process: every call must
    # still send its own, whatever was sent before it.
    mock_api.get("/pets").respond(200, json=[])
    api, other = make_api(), make_api(base_url="https://api.test/v1/tenant-b")
    mock_api.get("/tenant-b/pets").respond(200, json=[])
    calls: list[tuple[Api, dict[str, int | str], str]] = [
        (api, {"limit": 1}, "https://api.test/v1/pets?limit=1"),
        (api, {"limit": 2}, "https://api.test/v1/pets?limit=2"),
        (api, {}, "https://api.test/v1/pets"),
        (api, {"status": "sold"}, "https://api.test/v1/pets?status=sold"),
        (api, {"limit": 1, "status": "pending"}, "https://api.test/v1/pets?limit=1&status=pending"),
        (other, {"limit": 1}, "https://api.test/v1/tenant-b/pets?limit=1"),
        (api, {"limit": 1}, "https://api.test/v1/pets?limit=1"),
        (other, {}, "https://api.test/v1/tenant-b/pets"),
    ]

    for client, arguments, _ in calls:
        client.list_pets(**arguments)

    assert [str(call.request.url) for call in mock_api.calls] == [url for *_, url in calls]


def test_a_users_client_params_merge_in_httpxs_order_the_calls_last(
    mock_api: respx.MockRouter,
) -> None:
    from animalstore_client import Client

    route = mock_api.get("/pets").respond(200, json=[])
    http = httpx.Client(params={"limit": "5", "trace": "1"})

    with Client(api_key=API_KEY, base_url="https://api.test/v1", http_client=http) as client:
        client.list_pets(limit=2)
        client.list_pets()

    first, second = (call.request for call in route.calls)
    assert str(first.url) == "https://api.test/v1/pets?limit=2&trace=1"
    assert str(second.url) == "https://api.test/v1/pets?limit=5&trace=1"
    http.close()


@pytest.mark.parametrize("name", ["Idempotency-Key", "idempotency-key", "IDEMPOTENCY-KEY"])
def test_an_idempotency_key_in_default_headers_is_refused_pointing_at_the_argument(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, name: str
) -> None:
    with pytest.raises(ValueError, match=r"^default_headers must not set .*") as caught:
        make_api(default_headers={name: "fixed"})

    assert str(caught.value) == (
        f"default_headers must not set {name!r}: pass idempotency_key= to create_pet"
    )
    assert len(mock_api.calls) == 0
