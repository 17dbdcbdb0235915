"""Tests of the fake animal store, driven with plain httpx (not the SDK client)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

from animalstore_client import PetStatusLiteral
from animalstore_client._core.models import Pet, PetStatus
from animalstore_client.testing import FakeAnimalStore, RecordedRequest
from tests.conftest import read_lines, sigint_as_in_a_terminal
from tests.contract.operations import operations

KEY = "test-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store() -> FakeAnimalStore:
    return FakeAnimalStore()


@pytest.fixture
def client(store: FakeAnimalStore) -> Iterator[httpx.Client]:
    with httpx.Client(
        transport=store.transport(), base_url="http://fake.test/v1", headers=AUTH
    ) as client:
        yield client


def error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "status": status}


def assert_error(response: httpx.Response, status: int, code: str, message: str) -> None:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == error(status, code, message)


# -- creating pets ------------------------------------------------------------------------


def test_create_assigns_ids_in_sequence_and_echoes_the_pet(client: httpx.Client) -> None:
    bodies = [
        {"name": "Rex", "categoryId": 1, "status": "available"},
        {"name": "Tom", "categoryId": 2, "status": "pending"},
        {"name": "Kiki", "categoryId": 1, "status": "sold"},
    ]
    responses = [client.post("/pets", json=body) for body in bodies]
    assert [r.status_code for r in responses] == [201, 201, 201]
    assert [r.json() for r in responses] == [
        {"id": i, **body} for i, body in enumerate(bodies, start=1)
    ]
    assert all(r.headers["content-type"] == "application/json" for r in responses)


def test_create_without_status_keeps_none(client: httpx.Client, store: FakeAnimalStore) -> None:
    response = client.post("/pets", json={"name": "Rex", "categoryId": 7})
    assert response.status_code == 201
    assert response.json() == {"id": 1, "name": "Rex", "categoryId": 7}
    assert store.pets == [Pet(id=1, name="Rex", category_id=7, status=None)]


def test_create_stores_a_pet_model(client: httpx.Client, store: FakeAnimalStore) -> None:
    client.post("/pets", json={"name": "Rex", "categoryId": 7, "status": "sold"})
    [pet] = store.pets
    assert pet == Pet(id=1, name="Rex", category_id=7, status=PetStatus.SOLD)
    assert isinstance(pet.status, PetStatus)


def test_create_ignores_unknown_fields(client: httpx.Client) -> None:
    body = {"name": "Rex", "categoryId": 7, "id": 99, "colour": "brown"}
    response = client.post("/pets", json=body)
    assert response.status_code == 201
    assert response.json() == {"id": 1, "name": "Rex", "categoryId": 7}


@pytest.mark.parametrize("category_id", [INT64_MIN, -1, 0, INT64_MAX])
def test_create_accepts_the_int64_range(client: httpx.Client, category_id: int) -> None:
    response = client.post("/pets", json={"name": "Rex", "categoryId": category_id})
    assert response.status_code == 201
    assert response.json()["categoryId"] == category_id


def test_create_keeps_unicode_names(client: httpx.Client) -> None:
    response = client.post("/pets", json={"name": "Café 🐈", "categoryId": 1})
    assert response.json()["name"] == "Café 🐈"
    assert client.get("/pets/1").json()["name"] == "Café 🐈"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the request body is empty; expected a JSON object"),
        (b"  \n", "the request body is empty; expected a JSON object"),
        (b"{not json", "the request body is not valid UTF-8 JSON"),
        (b'{"name": "Rex", "categoryId": NaN}', "the request body is not valid UTF-8 JSON"),
        (b"\xff\xfe\xfa", "the request body is not valid UTF-8 JSON"),
        (
            b'[{"name": "Rex", "categoryId": 1}]',
            "the request body must be a JSON object, got array",
        ),
        (b'"Rex"', "the request body must be a JSON object, got string"),
        (b"42", "the request body must be a JSON object, got number"),
        (b"null", "the request body must be a JSON object, got null"),
    ],
)
def test_create_rejects_a_body_that_is_not_a_json_object(
    client: httpx.Client, store: FakeAnimalStore, content: bytes, message: str
) -> None:
    response = client.post("/pets", content=content)
    assert_error(response, 400, "invalid_body", message)
    assert store.pets == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"categoryId": 1}, "name is required"),
        ({"name": "Rex"}, "categoryId is required"),
        ({}, "name is required"),
        ({"name": 5, "categoryId": 1}, "name must be a string, got number"),
        ({"name": None, "categoryId": 1}, "name must be a string, got null"),
        ({"name": ["Rex"], "categoryId": 1}, "name must be a string, got array"),
        ({"name": "Rex", "categoryId": "7"}, "categoryId must be an integer, got string"),
        ({"name": "Rex", "categoryId": 7.0}, "categoryId must be an integer, got number"),
        ({"name": "Rex", "categoryId": 7.5}, "categoryId must be an integer, got number"),
        ({"name": "Rex", "categoryId": True}, "categoryId must be an integer, got boolean"),
        ({"name": "Rex", "categoryId": False}, "categoryId must be an integer, got boolean"),
        ({"name": "Rex", "categoryId": None}, "categoryId must be an integer, got null"),
        ({"name": "Rex", "categoryId": {}}, "categoryId must be an integer, got object"),
        (
            {"name": "Rex", "categoryId": INT64_MAX + 1},
            f"categoryId must be an int64 integer, between {INT64_MIN} and {INT64_MAX}",
        ),
        (
            {"name": "Rex", "categoryId": INT64_MIN - 1},
            f"categoryId must be an int64 integer, between {INT64_MIN} and {INT64_MAX}",
        ),
        (
            {"name": "Rex", "categoryId": 1, "status": "lost"},
            "status must be one of available, pending, sold, got 'lost'",
        ),
        (
            {"name": "Rex", "categoryId": 1, "status": "AVAILABLE"},
            "status must be one of available, pending, sold, got 'AVAILABLE'",
        ),
        (
            {"name": "Rex", "categoryId": 1, "status": None},
            "status must be one of available, pending, sold, got null",
        ),
        (
            {"name": "Rex", "categoryId": 1, "status": ["sold"]},
            "status must be one of available, pending, sold, got array",
        ),
    ],
)
def test_create_rejects_missing_or_invalid_fields(
    client: httpx.Client, store: FakeAnimalStore, body: dict[str, Any], message: str
) -> None:
    response = client.post("/pets", json=body)
    assert_error(response, 400, "invalid_field", message)
    assert store.pets == []


def test_a_rejected_create_does_not_use_up_an_id(client: httpx.Client) -> None:
    client.post("/pets", json={"name": "Rex"})
    assert client.post("/pets", json={"name": "Rex", "categoryId": 1}).json()["id"] == 1


# -- getting one pet ----------------------------------------------------------------------


def test_get_returns_the_pet(client: httpx.Client, store: FakeAnimalStore) -> None:
    store.add_pet("Rex", 3, PetStatus.AVAILABLE)
    store.add_pet("Tom", 4)
    response = client.get("/pets/2")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"id": 2, "name": "Tom", "categoryId": 4}
    assert client.get("/pets/1").json() == {
        "id": 1,
        "name": "Rex",
        "categoryId": 3,
        "status": "available",
    }


@pytest.mark.parametrize("pet_id", ["2", "0", "-1", str(INT64_MAX)])
def test_get_unknown_pet_is_404(client: httpx.Client, store: FakeAnimalStore, pet_id: str) -> None:
    store.add_pet("Rex", 3)
    response = client.get(f"/pets/{pet_id}")
    assert_error(response, 404, "not_found", f"no pet with petId '{pet_id}'")


@pytest.mark.parametrize("pet_id", ["abc", "1.0", "+1", " 1", "1_0", "٣", str(INT64_MAX + 1)])
def test_get_with_a_non_int64_pet_id_is_404(
    client: httpx.Client, store: FakeAnimalStore, pet_id: str
) -> None:
    store.add_pet("Rex", 3)
    response = client.get(f"/pets/{pet_id}")
    assert_error(
        response, 404, "not_found", f"no pet with petId {pet_id!r}: petId must be an int64 integer"
    )


# -- listing pets -------------------------------------------------------------------------


def test_list_is_empty_at_first(client: httpx.Client) -> None:
    response = client.get("/pets")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == []


def test_list_defaults_to_20_in_id_order(client: httpx.Client, store: FakeAnimalStore) -> None:
    for i in range(25):
        store.add_pet(f"pet{i}", i)
    pets = client.get("/pets").json()
    assert [p["id"] for p in pets] == list(range(1, 21))
    assert pets[0] == {"id": 1, "name": "pet0", "categoryId": 0}


@pytest.mark.parametrize(("limit", "expected"), [("1", 1), ("5", 5), ("100", 100), ("007", 7)])
def test_list_honours_limit(
    client: httpx.Client, store: FakeAnimalStore, limit: str, expected: int
) -> None:
    for i in range(120):
        store.add_pet(f"pet{i}", 1)
    pets = client.get("/pets", params={"limit": limit}).json()
    assert [p["id"] for p in pets] == list(range(1, expected + 1))


def test_list_limit_larger_than_the_store(client: httpx.Client, store: FakeAnimalStore) -> None:
    store.add_pet("Rex", 1)
    assert len(client.get("/pets", params={"limit": 100}).json()) == 1


def test_list_filters_by_status_then_limits(client: httpx.Client, store: FakeAnimalStore) -> None:
    statuses: list[PetStatusLiteral | None] = [
        "sold",
        None,
        "available",
        "sold",
        "pending",
        "sold",
        "sold",
    ]
    for i, status in enumerate(statuses):
        store.add_pet(f"pet{i}", 1, status)
    sold = client.get("/pets", params={"status": "sold"}).json()
    assert [p["id"] for p in sold] == [1, 4, 6, 7]
    assert all(p["status"] == "sold" for p in sold)
    first_two = client.get("/pets", params={"status": "sold", "limit": 2}).json()
    assert [p["id"] for p in first_two] == [1, 4]
    assert [p["id"] for p in client.get("/pets", params={"status": "pending"}).json()] == [5]
    assert [p["id"] for p in client.get("/pets").json()] == list(range(1, 8))


def test_list_ignores_unknown_query_parameters(client: httpx.Client) -> None:
    assert client.get("/pets", params={"page": "2"}).status_code == 200


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "", "1.5", " 5", "+5", "1e2", "9" * 30])
def test_list_rejects_a_bad_limit(client: httpx.Client, limit: str) -> None:
    response = client.get("/pets", params={"limit": limit})
    assert_error(
        response,
        400,
        "invalid_parameter",
        f"limit must be an integer between 1 and 100, got {limit!r}",
    )


@pytest.mark.parametrize("status", ["lost", "", "SOLD", "sold "])
def test_list_rejects_a_bad_status(client: httpx.Client, status: str) -> None:
    response = client.get("/pets", params={"status": status})
    assert_error(
        response,
        400,
        "invalid_parameter",
        f"status must be one of available, pending, sold, got {status!r}",
    )


@pytest.mark.parametrize("name", ["limit", "status"])
def test_list_rejects_a_repeated_parameter(client: httpx.Client, name: str) -> None:
    value = "5" if name == "limit" else "sold"
    response = client.get("/pets", params=[(name, value), (name, value)])
    assert_error(response, 400, "invalid_parameter", f"{name} must be given at most once")


# -- authentication -----------------------------------------------------------------------

ROUTES = [
    ("GET", "/v1/pets", None),
    ("POST", "/v1/pets", {"name": "Rex", "categoryId": 1}),
    ("GET", "/v1/pets/1", None),
]

BAD_AUTH = [
    ({}, "missing Authorization header; send 'Authorization: Bearer <API key>'"),
    ({"Authorization": f"Basic {KEY}"}, "the Authorization header must use the Bearer scheme"),
    ({"Authorization": f"Token {KEY}"}, "the Authorization header must use the Bearer scheme"),
    ({"Authorization": KEY}, "the Authorization header must use the Bearer scheme"),
    ({"Authorization": "Bearer wrong-key"}, "invalid API key"),
    ({"Authorization": "Bearer"}, "invalid API key"),
    ({"Authorization": "Bearer "}, "invalid API key"),
    ({"Authorization": f"Bearer {KEY}x"}, "invalid API key"),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
@pytest.mark.parametrize(("headers", "message"), BAD_AUTH)
def test_every_route_requires_a_valid_bearer_key(
    store: FakeAnimalStore,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    headers: dict[str, str],
    message: str,
) -> None:
    store.add_pet("Rex", 1)
    with httpx.Client(transport=store.transport(), base_url="http://fake.test") as client:
        response = client.request(method, path, json=body, headers=headers)
    assert_error(response, 401, "unauthorized", message)
    assert response.headers["www-authenticate"] == "Bearer"
    assert store.pets == [Pet(id=1, name="Rex", category_id=1)]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("POST", "/v1/pets", b"not json"), ("GET", "/v1/nowhere", b""), ("DELETE", "/v1/pets", b"")],
)
def test_authentication_is_checked_before_anything_else(
    store: FakeAnimalStore, method: str, path: str, body: bytes
) -> None:
    with httpx.Client(transport=store.transport(), base_url="http://fake.test") as client:
        response = client.request(method, path, content=body)
    assert_error(
        response,
        401,
        "unauthorized",
        "missing Authorization header; send 'Authorization: Bearer <API key>'",
    )


@pytest.mark.parametrize("value", [f"bearer {KEY}", f"BEARER {KEY}", f"Bearer  {KEY} "])
def test_the_scheme_is_case_insensitive_and_spaces_are_tolerated(
    store: FakeAnimalStore, value: str
) -> None:
    with httpx.Client(transport=store.transport(), base_url="http://fake.test") as client:
        assert client.get("/v1/pets", headers={"Authorization": value}).status_code == 200


@pytest.mark.parametrize("keys", [{"a", "b"}, ["a", "b"], ("a", "b"), frozenset({"a", "b"})])
def test_every_configured_key_is_accepted(keys: Any) -> None:
    store = FakeAnimalStore(api_keys=keys)
    with httpx.Client(transport=store.transport(), base_url="http://fake.test/v1") as client:
        for key in ("a", "b"):
            assert client.get("/pets", headers={"Authorization": f"Bearer {key}"}).is_success
        response = client.get("/pets", headers=AUTH)
    assert_error(response, 401, "unauthorized", "invalid API key")


def test_a_single_string_of_keys_is_refused() -> None:
    with pytest.raises(TypeError, match="not a single str"):
        FakeAnimalStore(api_keys="test-key")


# -- routing ------------------------------------------------------------------------------


def allowed(template: str) -> str:
    """The methods the document lists for a path, as the store's ``Allow`` header says them."""
    return ", ".join(operation.method for operation in operations() if operation.path == template)


#: Each path (as sent, and as the document writes it) with every method it does not take.
WRONG_METHODS = [
    (method, path, allowed(template))
    for path, template in (
        ("/pets", "/pets"),
        ("/pets/1", "/pets/{petId}"),
        ("/pets/abc", "/pets/{petId}"),
    )
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
    if method not in allowed(template).split(", ")
]


@pytest.mark.parametrize(("method", "path", "allow"), WRONG_METHODS)
def test_wrong_method_is_405_with_allow(
    client: httpx.Client, method: str, path: str, allow: str
) -> None:
    response = client.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    if method != "HEAD":
        assert response.json() == error(
            405,
            "method_not_allowed",
            f"method {method} is not allowed on /v1{path}; allowed: {allow}",
        )


@pytest.mark.parametrize(
    "path",
    ["/v1/orders", "/v1/store/orders", "/v1/pets/", "/v1/pets/1/", "/v1/pets/1/x", "/pets", "/"],
)
def test_unknown_route_is_404(store: FakeAnimalStore, path: str) -> None:
    with httpx.Client(transport=store.transport(), base_url="http://fake.test") as client:
        response = client.get(path, headers=AUTH)
    assert_error(response, 404, "not_found", f"no such route: GET {path}")


def test_unknown_route_is_404_for_any_method(client: httpx.Client) -> None:
    response = client.post("/orders", json={})
    assert_error(response, 404, "not_found", "no such route: POST /v1/orders")


# -- headers and recording ----------------------------------------------------------------


def test_every_response_carries_a_fresh_request_id(client: httpx.Client) -> None:
    responses = [
        client.get("/pets"),
        client.post("/pets", json={"name": "Rex", "categoryId": 1}),
        client.get("/pets/99"),
        client.delete("/pets"),
        client.get("/pets", headers={"Authorization": "Bearer nope"}),
    ]
    ids = [r.headers["x-request-id"] for r in responses]
    assert ids == ["req_1", "req_2", "req_3", "req_4", "req_5"]


def test_responses_carry_an_exact_content_length(client: httpx.Client) -> None:
    response = client.post("/pets", json={"name": "Café", "categoryId": 1})
    assert int(response.headers["content-length"]) == len(response.content)


def test_requests_are_recorded_including_rejected_ones(
    client: httpx.Client, store: FakeAnimalStore
) -> None:
    client.post("/pets", json={"name": "Rex", "categoryId": 1}, headers={"X-Trace": "abc"})
    client.get("/pets", params={"limit": 5, "status": "sold"})
    client.get("/pets/1", headers={"Authorization": "Bearer nope"})
    client.post("/pets", content=b"junk")

    recorded = store.requests
    assert [(r.method, r.path, r.query) for r in recorded] == [
        ("POST", "/v1/pets", ""),
        ("GET", "/v1/pets", "limit=5&status=sold"),
        ("GET", "/v1/pets/1", ""),
        ("POST", "/v1/pets", ""),
    ]
    first = recorded[0]
    assert first.json() == {"name": "Rex", "categoryId": 1}
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.headers["x-trace"] == "abc"
    assert first.headers["content-type"] == "application/json"
    assert all(name == name.lower() for name in first.headers)
    assert recorded[1].body == b""
    assert recorded[2].headers["authorization"] == "Bearer nope"
    assert recorded[3].body == b"junk"


def test_recorded_requests_are_frozen_snapshots(
    client: httpx.Client, store: FakeAnimalStore
) -> None:
    client.get("/pets")
    snapshot = store.requests
    [request] = snapshot
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        request.method = "POST"  # type: ignore[misc]
    client.get("/pets")
    assert len(snapshot) == 1
    assert len(store.requests) == 2
    assert request == RecordedRequest("GET", "/v1/pets", "", dict(request.headers), b"")


def test_handle_works_without_any_transport(store: FakeAnimalStore) -> None:
    body = b'{"name": "Rex", "categoryId": 1}'
    status, headers, content = store.handle(
        "POST", "/v1/pets", "", {"AUTHORIZATION": f"Bearer {KEY}"}, body
    )
    assert status == 201
    assert headers == [
        ("content-type", "application/json"),
        ("content-length", str(len(content))),
        ("x-request-id", "req_1"),
    ]
    assert json.loads(content) == {"id": 1, "name": "Rex", "categoryId": 1}
    assert store.requests[0].headers == {"authorization": f"Bearer {KEY}"}


# -- seeding and inspection ---------------------------------------------------------------


def test_add_pet_assigns_ids_shared_with_the_api(
    client: httpx.Client, store: FakeAnimalStore
) -> None:
    assert store.add_pet("Rex", 3) == Pet(id=1, name="Rex", category_id=3)
    created = client.post("/pets", json={"name": "Tom", "categoryId": 4}).json()
    assert created["id"] == 2
    assert store.add_pet("Kiki", 5, "sold") == Pet(
        id=3, name="Kiki", category_id=5, status=PetStatus.SOLD
    )
    assert [p.id for p in store.pets] == [1, 2, 3]


def test_add_pet_can_seed_a_status_unknown_to_the_sdk(
    client: httpx.Client, store: FakeAnimalStore
) -> None:
    pet = store.add_pet("Rex", 3, "quarantined")  # type: ignore[arg-type]
    assert pet.status == "quarantined"
    assert not isinstance(pet.status, PetStatus)
    assert client.get("/pets/1").json()["status"] == "quarantined"
    assert client.get("/pets", params={"status": "sold"}).json() == []


def test_pets_is_a_snapshot(store: FakeAnimalStore) -> None:
    snapshot = store.pets
    store.add_pet("Rex", 3)
    assert snapshot == []
    assert len(store.pets) == 1


def test_reset_forgets_everything_but_the_keys(
    client: httpx.Client, store: FakeAnimalStore
) -> None:
    client.post("/pets", json={"name": "Rex", "categoryId": 1})
    store.reset()
    assert store.pets == []
    assert store.requests == []
    response = client.post("/pets", json={"name": "Tom", "categoryId": 2})
    assert response.json()["id"] == 1
    assert response.headers["x-request-id"] == "req_1"


# -- async transport ----------------------------------------------------------------------


def test_the_transport_works_with_an_async_client(store: FakeAnimalStore) -> None:
    async def scenario() -> list[httpx.Response]:
        async with httpx.AsyncClient(
            transport=store.transport(), base_url="http://fake.test/v1", headers=AUTH
        ) as client:
            created = await asyncio.gather(
                *(client.post("/pets", json={"name": f"p{i}", "categoryId": i}) for i in range(5))
            )
            unauthorised = await client.get("/pets", headers={"Authorization": "Bearer x"})
            listed = await client.get("/pets", params={"limit": 3})
            return [*created, unauthorised, listed]

    *created, unauthorised, listed = asyncio.run(scenario())
    assert [r.status_code for r in created] == [201] * 5
    assert sorted(r.json()["id"] for r in created) == [1, 2, 3, 4, 5]
    assert_error(unauthorised, 401, "unauthorized", "invalid API key")
    assert [p["id"] for p in listed.json()] == [1, 2, 3]


# -- the socket server --------------------------------------------------------------------


def port_of(base_url: str) -> int:
    return httpx.URL(base_url).port or 0


def connection_refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def test_serve_yields_a_v1_base_url_and_answers(store: FakeAnimalStore) -> None:
    with store.serve() as base_url:
        assert base_url.startswith("http://127.0.0.1:")
        assert base_url.endswith("/v1")
        with httpx.Client(base_url=base_url, headers=AUTH, timeout=5) as client:
            created = client.post("/pets", json={"name": "Rex", "categoryId": 1})
            fetched = client.get("/pets/1")
            missing = client.get("/pets/2")
            wrong_method = client.request("BREW", "/pets/1")  # no operation's method
            unknown = client.get("/pets/1/toys")
            anonymous = client.get("/pets", headers={"Authorization": ""})
    assert created.status_code == 201
    assert created.json() == {"id": 1, "name": "Rex", "categoryId": 1}
    assert created.headers["x-request-id"] == "req_1"
    assert fetched.json() == created.json()
    assert_error(missing, 404, "not_found", "no pet with petId '2'")
    assert_error(
        wrong_method,
        405,
        "method_not_allowed",
        f"method BREW is not allowed on /v1/pets/1; allowed: {allowed('/pets/{petId}')}",
    )
    assert wrong_method.headers["allow"] == allowed("/pets/{petId}")
    assert_error(unknown, 404, "not_found", "no such route: GET /v1/pets/1/toys")
    assert_error(
        anonymous, 401, "unauthorized", "the Authorization header must use the Bearer scheme"
    )
    assert len(store.requests) == 6


def test_serve_records_what_the_socket_received(store: FakeAnimalStore) -> None:
    with store.serve() as base_url, httpx.Client(base_url=base_url, headers=AUTH) as client:
        client.post("/pets", json={"name": "Rex", "categoryId": 1}, headers={"X-Trace": "t"})
        client.get("/pets", params={"status": "sold", "limit": "2"})
    post, get = store.requests
    assert (post.method, post.path, post.query) == ("POST", "/v1/pets", "")
    assert post.json() == {"name": "Rex", "categoryId": 1}
    assert post.headers["x-trace"] == "t"
    assert post.headers["authorization"] == f"Bearer {KEY}"
    assert (get.method, get.path, get.query, get.body) == (
        "GET",
        "/v1/pets",
        "status=sold&limit=2",
        b"",
    )


def test_serve_answers_any_method_like_the_transport(store: FakeAnimalStore) -> None:
    with store.serve() as base_url, httpx.Client(base_url=base_url, headers=AUTH) as client:
        odd = client.request("BREW", "/pets")
        head = client.head("/pets")
        after_head = client.get("/pets")  # the kept-alive connection is still in step
    assert_error(
        odd, 405, "method_not_allowed", "method BREW is not allowed on /v1/pets; allowed: GET, POST"
    )
    assert head.status_code == 405
    assert head.content == b""
    assert int(head.headers["content-length"]) > 0
    assert after_head.status_code == 200


def test_serve_reads_a_chunked_body(store: FakeAnimalStore) -> None:
    parts = [b'{"name": "Re', b'x", "categoryId"', b": 4}"]
    with store.serve() as base_url, httpx.Client(base_url=base_url, headers=AUTH) as client:
        response = client.post("/pets", content=iter(parts))
        again = client.get("/pets/1")
    assert store.requests[0].headers["transfer-encoding"] == "chunked"
    assert response.status_code == 201
    assert again.json() == {"id": 1, "name": "Rex", "categoryId": 4}


def test_serve_answers_a_malformed_request_with_an_error_body(store: FakeAnimalStore) -> None:
    with (
        store.serve() as base_url,
        socket.create_connection(("127.0.0.1", port_of(base_url)), timeout=5) as raw,
    ):
        raw.sendall(b"POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n")
        received = b""
        while chunk := raw.recv(4096):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"\r\nconnection: close" in head
    assert json.loads(body) == error(400, "protocol_error", "invalid Content-Length header: 'lots'")
    assert store.requests == []


def test_serve_ignores_a_request_whose_body_never_arrives_whole(store: FakeAnimalStore) -> None:
    # A client killed while it sends: were the half body processed (a 400), a deduplicating
    # store would answer that 400 again to the same key sent whole by a resumed client.
    store.honour_idempotency_keys = True
    head = b"POST /v1/pets HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k-1\r\nContent-Length: 40\r\n"
    with store.serve() as base_url:
        with socket.create_connection(("127.0.0.1", port_of(base_url)), timeout=5) as raw:
            raw.sendall(head + f"Authorization: Bearer {KEY}\r\n\r\n".encode() + b'{"name": "Re')
            raw.shutdown(socket.SHUT_WR)
            assert raw.recv(4096) == b""  # hung up, without an answer
        with httpx.Client(base_url=base_url, headers={**AUTH, "Idempotency-Key": "k-1"}) as client:
            created = client.post("/pets", json={"name": "Rex", "categoryId": 4})
    assert created.status_code == 201
    assert [request.body for request in store.requests] == [b'{"name":"Rex","categoryId":4}']
    assert len(store.pets) == 1


def test_serve_handles_concurrent_clients(store: FakeAnimalStore) -> None:
    threads, per_thread = 8, 10

    def create_pets(worker: int) -> list[int]:
        with httpx.Client(base_url=base_url, headers=AUTH, timeout=5) as client:
            return [
                client.post("/pets", json={"name": f"w{worker}-{i}", "categoryId": worker}).json()[
                    "id"
                ]
                for i in range(per_thread)
            ]

    with store.serve() as base_url, ThreadPoolExecutor(max_workers=threads) as pool:
        ids = [pet_id for batch in pool.map(create_pets, range(threads)) for pet_id in batch]
    assert sorted(ids) == list(range(1, threads * per_thread + 1))
    assert len(store.pets) == threads * per_thread
    assert {p.name for p in store.pets} == {
        f"w{w}-{i}" for w in range(threads) for i in range(per_thread)
    }


def test_leaving_serve_closes_the_port_and_joins_every_thread(store: FakeAnimalStore) -> None:
    before = set(threading.enumerate())
    with store.serve() as base_url:
        # Left open on purpose: an idle keep-alive connection must not hold up the exit.
        idle = httpx.Client(base_url=base_url, headers=AUTH)
        assert idle.get("/pets").status_code == 200
        assert set(threading.enumerate()) - before  # the server and a handler run meanwhile
    try:
        assert set(threading.enumerate()) == before
        assert connection_refused(port_of(base_url))
    finally:
        idle.close()


def test_leaving_serve_after_an_error_still_cleans_up(store: FakeAnimalStore) -> None:
    before = set(threading.enumerate())
    with pytest.raises(RuntimeError, match="boom"), store.serve() as base_url:
        raise RuntimeError("boom")
    assert set(threading.enumerate()) == before
    assert connection_refused(port_of(base_url))


def test_serve_on_a_busy_port_raises_oserror(store: FakeAnimalStore) -> None:
    with store.serve() as base_url:
        second = store.serve(port_of(base_url))
        with pytest.raises(OSError, match="in use"):
            second.__enter__()


# -- python -m animalstore_client.testing -------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX")
def test_the_command_line_serves_until_sigint() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "animalstore_client.testing", "--port", "0", "--api-key", "k1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        assert process.stdout is not None
        url_line, key_line = read_lines(process.stdout, 2, timeout=10)
        assert url_line.startswith("export ANIMALSTORE_BASE_URL=http://127.0.0.1:")
        assert key_line == "export ANIMALSTORE_API_KEY=k1"
        base_url = url_line.partition("=")[2]
        assert base_url.endswith("/v1")
        response = httpx.get(f"{base_url}/pets", headers={"Authorization": "Bearer k1"}, timeout=5)
        assert response.status_code == 200
        assert response.json() == []
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert b"Traceback" not in stderr
    assert connection_refused(port_of(base_url))


# --- SDK clients wired in process --------------------------------------------------------


def test_store_client_talks_to_the_store_in_process() -> None:
    from animalstore_client import AuthenticationError, Pet, PetStatus
    from animalstore_client.testing import IN_PROCESS_BASE_URL

    store = FakeAnimalStore(api_keys=["first-key", "second-key"])
    with store.client(max_retries=0) as client:
        created = client.create_pet(name="Rex", category_id=3, status="sold")
        assert client.list_pets(status=PetStatus.SOLD) == [created]
        assert client.max_retries == 0
        assert client.base_url == IN_PROCESS_BASE_URL + "/"
    assert created == Pet(id=1, name="Rex", category_id=3, status=PetStatus.SOLD)
    assert store.pets == [created]
    assert [r.headers["authorization"] for r in store.requests] == ["Bearer first-key"] * 2
    with store.client(api_key="wrong") as client, pytest.raises(AuthenticationError):
        client.list_pets()


def test_store_async_client_talks_to_the_store_in_process() -> None:
    from animalstore_client import Pet

    store = FakeAnimalStore()

    async def scenario() -> list[Pet]:
        async with store.async_client() as client:
            await client.create_pet(name="Tom", category_id=2)
            return await client.list_pets()

    assert asyncio.run(scenario()) == [Pet(id=1, name="Tom", category_id=2)]
    sent = [(r.method, r.path) for r in store.requests]
    assert sent == [("POST", "/v1/pets"), ("GET", "/v1/pets")]


def test_store_client_needs_a_key() -> None:
    with pytest.raises(ValueError, match="no API key"):
        FakeAnimalStore(api_keys=[]).client()


def test_store_client_without_a_key_ignores_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", "developer-key")
    with pytest.raises(ValueError, match="this store accepts none"):
        FakeAnimalStore(api_keys=[]).client()
    with pytest.raises(ValueError, match="this store accepts none"):
        FakeAnimalStore(api_keys=[]).async_client()


def _http10_exchange(sock: socket.socket, keep_alive: bool) -> tuple[str, dict[str, str], bytes]:
    """Send one HTTP/1.0 GET on ``sock``; read the status line, headers and whole body."""
    connection = "Connection: keep-alive\r\n" if keep_alive else ""
    sock.sendall(
        b"GET /v1/pets?limit=1 HTTP/1.0\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer test-key\r\n" + connection.encode() + b"\r\n"
    )
    stream = sock.makefile("rb")
    status = stream.readline().decode().strip()
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, stream.read(int(headers["content-length"]))


@pytest.fixture
def http10_server() -> Iterator[tuple[str, int]]:
    store = FakeAnimalStore(api_keys=["test-key"])
    store.add_pet("Rex", 3, "available")
    with store.serve() as base_url:
        url = httpx.URL(base_url)
        assert url.port is not None
        yield url.host, url.port


def test_an_http10_client_asking_for_keep_alive_is_told_and_served_twice(
    http10_server: tuple[str, int],
) -> None:
    with socket.create_connection(http10_server, timeout=5) as sock:
        for _ in range(2):  # the second request goes on the same connection
            status, headers, body = _http10_exchange(sock, keep_alive=True)
            assert status.split()[1] == "200"
            assert headers["connection"].lower() == "keep-alive"
            assert json.loads(body)[0]["name"] == "Rex"


def test_an_http10_client_without_keep_alive_gets_its_answer_then_the_close(
    http10_server: tuple[str, int],
) -> None:
    with socket.create_connection(http10_server, timeout=5) as sock:
        status, headers, body = _http10_exchange(sock, keep_alive=False)
        assert status.split()[1] == "200"
        assert headers.get("connection", "close").lower() == "close"
        assert json.loads(body)[0]["name"] == "Rex"
        assert sock.recv(1) == b""  # the server closed the connection (no timeout hit)


# -- text no response could carry -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status", "argument"),
    [
        ("\ud800", None, "name"),
        ("Rex\udfff", "sold", "name"),
        ("Rex", "\ud800", "status"),
    ],
)
def test_add_pet_refuses_a_lone_surrogate_and_stores_nothing(
    client: httpx.Client, store: FakeAnimalStore, name: str, status: Any, argument: str
) -> None:
    with pytest.raises(ValueError, match=rf"^{argument} must be valid Unicode text"):
        store.add_pet(name, 1, status)
    assert store.pets == []
    # The store still answers, and the refused pet used up no id.
    assert client.get("/pets").json() == []
    assert store.add_pet("Rex", 1) == Pet(id=1, name="Rex", category_id=1)


def test_create_over_http_refuses_a_lone_surrogate_name(store: FakeAnimalStore) -> None:
    # Valid JSON: the escape decodes to U+D800 alone, which no response could encode.
    body = b'{"name": "Rex\\ud800", "categoryId": 1}'
    with store.serve() as base_url, httpx.Client(base_url=base_url, headers=AUTH) as client:
        created = client.post("/pets", content=body)
        listed = client.get("/pets")
    assert_error(
        created, 400, "invalid_field", "name must be valid Unicode text, without lone surrogates"
    )
    assert store.pets == []
    assert (listed.status_code, listed.json()) == (200, [])


def test_an_answer_without_a_body_has_no_json_and_no_content_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No operation answers without a body yet (a DELETE would, with 204): a route is added.
    from animalstore_client.testing import _faults, _store

    def forget(store: FakeAnimalStore, call: Any) -> tuple[int, object]:
        return 204, None

    pattern, template, handlers = _store._ROUTES[1]
    routes = (*_store._ROUTES[:1], (pattern, template, {**handlers, "DELETE": forget}))
    monkeypatch.setattr(_store, "_ROUTES", routes)
    monkeypatch.setitem(_faults.OPERATION_OF_ROUTE, "DELETE /pets/{petId}", "delete")
    served = FakeAnimalStore(api_keys=("k",))

    status, headers, body = served.handle(
        "DELETE", "/v1/pets/1", "", {"Authorization": "Bearer k"}, b""
    )

    assert (status, body) == (204, b"")
    assert [name for name, _ in headers] == ["content-length", "x-request-id"]
    assert dict(headers)["content-length"] == "0"
    # Over a socket too, as the SDK's backends read it.
    with served.serve() as base_url:
        answer = httpx.delete(f"{base_url}/pets/1", headers={"Authorization": "Bearer k"})
    assert (answer.status_code, answer.content) == (204, b"")
    assert "content-type" not in answer.headers


def test_a_query_the_spec_does_not_allow_is_answered_as_docs_assumptions_says(
    client: httpx.Client,
) -> None:
    response = client.get("/pets", params={"status": "AAA"})

    message = "status must be one of available, pending, sold, got 'AAA'"
    assert_error(response, 400, "invalid_parameter", message)
    assumptions = (Path(__file__).resolve().parents[2] / "docs" / "assumptions.md").read_text()
    said = " ".join(assumptions.split())
    assert f'`GET /pets?status=AAA` answers 400 `invalid_parameter`, "{message}"' in said


def test_wait_for_requests_returns_once_a_served_store_has_read_them() -> None:
    store = FakeAnimalStore(api_keys=["k"])
    with store.serve() as base_url, httpx.Client() as http:
        assert store.wait_for_requests(0, timeout=0) is True
        assert store.wait_for_requests(1, timeout=0.01) is False  # nothing came

        sent = threading.Thread(
            target=http.get,
            args=(f"{base_url}/pets",),
            kwargs={"headers": {"authorization": "Bearer k"}},
        )
        sent.start()
        assert store.wait_for_requests(1, timeout=5) is True
        assert [request.path for request in store.requests] == ["/v1/pets"]
        sent.join(5)


@pytest.mark.parametrize(
    ("count", "timeout", "message"),
    [
        ("1", 1.0, "count must be an int, got str"),
        (True, 1.0, "count must be an int, got bool"),
        (1, "1", "timeout must be a number of seconds, got str"),
        (1, None, "timeout must be a number of seconds, got NoneType"),
    ],
)
def test_wait_for_requests_refuses_what_is_not_a_count_and_seconds(
    count: object, timeout: object, message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        FakeAnimalStore().wait_for_requests(count, timeout)  # type: ignore[arg-type]
    assert str(caught.value) == message
