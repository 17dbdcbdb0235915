"""Every response the reference store gives fits the OpenAPI document.

Where the document lists the operation and status, openapi-core validates the response against
it. The store also gives responses the spec does not list (400 on GET /pets, 405, 404 on an
unknown path, 401 on an unknown path); the document deliberately does not list them either
(see the comment at the top of openapi.yaml), so those are checked against the Error schema
alone, with ``status`` equal to the HTTP status. Each case below also asserts which of the two
it is, so the decision cannot drift silently.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from animalstore_client.testing import FakeAnimalStore

from .conftest import API_KEY, AUTH, Contract, OpenAPIRequest, OpenAPIResponse, StoreDriver
from .operations import operations

JSON = {**AUTH, "Content-Type": "application/json"}
INT64_MAX = 2**63 - 1


def body(response: OpenAPIResponse) -> Any:
    return json.loads(response.data)


def seed(store: FakeAnimalStore) -> None:
    store.add_pet("Rex", 3, "available")
    store.add_pet("Tom", 4, "sold")
    store.add_pet("Kit", 5, "pending")
    store.add_pet("Ada", 6)  # no status: the key is absent from its JSON
    store.add_pet("Max", 7, "sold")


# -- successes ----------------------------------------------------------------------------


def test_list_empty(driver: StoreDriver) -> None:
    response, documented = driver.send("GET", "/v1/pets")
    assert (response.status_code, documented, body(response)) == (200, True, [])


def test_list_several(driver: StoreDriver, store: FakeAnimalStore) -> None:
    seed(store)
    response, documented = driver.send("GET", "/v1/pets")
    assert (response.status_code, documented) == (200, True)
    assert [pet["name"] for pet in body(response)] == ["Rex", "Tom", "Kit", "Ada", "Max"]


@pytest.mark.parametrize("status", ["available", "pending", "sold"])
def test_list_filtered(driver: StoreDriver, store: FakeAnimalStore, status: str) -> None:
    seed(store)
    response, documented = driver.send("GET", "/v1/pets", f"status={status}")
    assert (response.status_code, documented) == (200, True)
    pets = body(response)
    assert pets
    assert all(pet["status"] == status for pet in pets)


def test_list_limited_and_filtered(driver: StoreDriver, store: FakeAnimalStore) -> None:
    seed(store)
    response, documented = driver.send("GET", "/v1/pets", "limit=1&status=sold")
    assert (response.status_code, documented) == (200, True)
    assert [pet["name"] for pet in body(response)] == ["Tom"]


def test_list_ignores_unknown_parameters(driver: StoreDriver, store: FakeAnimalStore) -> None:
    seed(store)
    response, documented = driver.send("GET", "/v1/pets", "colour=brown")
    assert (response.status_code, documented) == (200, True)


@pytest.mark.parametrize(
    "sent",
    [
        {"name": "Rex", "categoryId": 3},
        {"name": "Rex", "categoryId": 3, "status": "pending"},
        {"name": "", "categoryId": -(2**63), "status": "sold"},
        {"name": "Zoë 🐕", "categoryId": INT64_MAX, "status": "available"},
    ],
)
def test_create(driver: StoreDriver, sent: dict[str, object]) -> None:
    response, documented = driver.send(
        "POST", "/v1/pets", headers=JSON, body=json.dumps(sent).encode()
    )
    assert (response.status_code, documented) == (201, True)
    created = body(response)
    assert isinstance(created, dict)
    assert created.pop("id") == 1
    assert created == sent


def test_create_ignores_unknown_fields(driver: StoreDriver) -> None:
    sent = {"name": "Rex", "categoryId": 3, "colour": "brown", "id": 99}
    response, documented = driver.send(
        "POST", "/v1/pets", headers=JSON, body=json.dumps(sent).encode()
    )
    assert (response.status_code, documented) == (201, True)
    assert body(response) == {"id": 1, "name": "Rex", "categoryId": 3}


@pytest.mark.parametrize("pet_id", ["1", "4", "5"])
def test_get(driver: StoreDriver, store: FakeAnimalStore, pet_id: str) -> None:
    seed(store)
    response, documented = driver.send("GET", f"/v1/pets/{pet_id}")
    assert (response.status_code, documented) == (200, True)
    assert body(response)["id"] == int(pet_id)


# -- errors the document lists ------------------------------------------------------------


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"   ", id="blank"),
        pytest.param(b"{", id="broken-json"),
        pytest.param(b'{"name": "Rex", "categoryId": NaN}', id="nan"),
        pytest.param(b"[]", id="array"),
        pytest.param(b'"Rex"', id="string"),
        pytest.param(b"3", id="number"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"categoryId": 3}', id="no-name"),
        pytest.param(b'{"name": "Rex"}', id="no-category"),
        pytest.param(b"{}", id="no-fields"),
        pytest.param(b'{"name": 5, "categoryId": 3}', id="name-number"),
        pytest.param(b'{"name": null, "categoryId": 3}', id="name-null"),
        pytest.param(b'{"name": "Rex", "categoryId": "3"}', id="category-string"),
        pytest.param(b'{"name": "Rex", "categoryId": true}', id="category-bool"),
        pytest.param(b'{"name": "Rex", "categoryId": 3.5}', id="category-float"),
        pytest.param(b'{"name": "Rex", "categoryId": 9223372036854775808}', id="category-over"),
        pytest.param(b'{"name": "Rex", "categoryId": -9223372036854775809}', id="category-under"),
        pytest.param(b'{"name": "Rex", "categoryId": 3, "status": "lost"}', id="status-unknown"),
        pytest.param(b'{"name": "Rex", "categoryId": 3, "status": null}', id="status-null"),
        pytest.param(b'{"name": "Rex", "categoryId": 3, "status": "SOLD"}', id="status-case"),
        pytest.param(b'{"name": "\xff\xfe", "categoryId": 3}', id="not-utf8"),
        pytest.param(b"\x80\x81\x82", id="binary"),
    ],
)
def test_create_400(driver: StoreDriver, store: FakeAnimalStore, sent: bytes) -> None:
    response, documented = driver.send("POST", "/v1/pets", headers=JSON, body=sent)
    assert (response.status_code, documented) == (400, True)
    assert store.pets == []


UNAUTHORIZED_HEADERS = [
    pytest.param({}, id="missing"),
    pytest.param({"Authorization": "Bearer not-the-key"}, id="wrong-key"),
    pytest.param({"Authorization": f"Basic {API_KEY}"}, id="wrong-scheme"),
    pytest.param({"Authorization": API_KEY}, id="no-scheme"),
    pytest.param({"Authorization": "Bearer"}, id="no-token"),
    pytest.param({"Authorization": ""}, id="empty"),
]
OPERATIONS = [
    pytest.param("GET", "/v1/pets", "", b"", id="listPets"),
    pytest.param("POST", "/v1/pets", "", b'{"name": "Rex", "categoryId": 3}', id="createPet"),
    pytest.param("GET", "/v1/pets/1", "", b"", id="getPet"),
]


@pytest.mark.parametrize("headers", UNAUTHORIZED_HEADERS)
@pytest.mark.parametrize(("method", "path", "query", "sent"), OPERATIONS)
def test_401(
    driver: StoreDriver,
    store: FakeAnimalStore,
    headers: dict[str, str],
    method: str,
    path: str,
    query: str,
    sent: bytes,
) -> None:
    seed(store)
    response, documented = driver.send(
        method, path, query, {**headers, "Content-Type": "application/json"}, sent
    )
    assert (response.status_code, documented) == (401, True)
    assert len(store.pets) == 5


@pytest.mark.parametrize(
    "pet_id", ["6", "0", "-1", str(INT64_MAX), "9223372036854775808", "abc", "1.0", "1e3"]
)
def test_get_404(driver: StoreDriver, store: FakeAnimalStore, pet_id: str) -> None:
    seed(store)
    response, documented = driver.send("GET", f"/v1/pets/{pet_id}")
    assert (response.status_code, documented) == (404, True)


# -- errors the spec does not list: Error bodies, checked against the Error schema ---------


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=ten",
        "limit=",
        "limit=1.5",
        "limit=%2B5",
        "status=lost",
        "status=",
        "status=SOLD",
        "limit=5&limit=6",
        "status=sold&status=sold",
    ],
)
def test_list_400_is_an_error_body_the_document_does_not_list(
    contract: Contract, driver: StoreDriver, query: str
) -> None:
    assert "400" not in contract.document["paths"]["/pets"]["get"]["responses"]
    response, documented = driver.send("GET", "/v1/pets", query)
    assert (response.status_code, documented) == (400, False)


#: Each path of the document, as the store is asked for it.
PATHS = {"/pets": "/v1/pets", "/pets/{petId}": "/v1/pets/1"}
#: Every method each path does not take, by the document (``get``: methods are case-sensitive).
NOT_ALLOWED = [
    (method, url)
    for template, url in PATHS.items()
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get")
    if f"{method} {template}" not in {operation.route for operation in operations()}
]


@pytest.mark.parametrize(("method", "path"), NOT_ALLOWED)
def test_405_is_an_error_body_the_document_does_not_list(
    driver: StoreDriver, store: FakeAnimalStore, method: str, path: str
) -> None:
    seed(store)
    response, documented = driver.send(method, path, headers=JSON, body=b"{}")
    assert (response.status_code, documented) == (405, False)
    assert len(store.pets) == 5


@pytest.mark.parametrize(
    "path",
    ["/", "/v1", "/v1/", "/pets", "/v2/pets", "/v1/pets/", "/v1/pets/1/x", "/v1/store/orders"],
)
@pytest.mark.parametrize("authorized", [True, False])
def test_unknown_paths_get_error_bodies(driver: StoreDriver, path: str, authorized: bool) -> None:
    response, documented = driver.send("GET", path, headers=AUTH if authorized else {})
    assert documented is False
    assert response.status_code == (404 if authorized else 401)


# -- over a real socket -------------------------------------------------------------------


def test_responses_over_a_socket_fit_the_document(
    contract: Contract, store: FakeAnimalStore
) -> None:
    seed(store)
    cases = [
        ("GET", "/pets", {}, None, 200),
        ("GET", "/pets?status=sold&limit=1", {}, None, 200),
        (
            "POST",
            "/pets",
            {"content-type": "application/json"},
            b'{"name":"A","categoryId":1}',
            201,
        ),
        ("POST", "/pets", {"content-type": "application/json"}, b'{"name":"A"}', 400),
        ("GET", "/pets/1", {}, None, 200),
        ("GET", "/pets/999", {}, None, 404),
        ("GET", "/pets", {"authorization": "Bearer nope"}, None, 401),
    ]
    with store.serve() as base_url, httpx.Client(headers=AUTH) as http:
        for method, path, headers, content, expected in cases:
            response = http.request(method, base_url + path, headers=headers, content=content)
            assert response.status_code == expected
            request = response.request
            wrapped = OpenAPIRequest(
                method,
                contract.production_host + request.url.raw_path.decode(),
                request.headers.multi_items(),
                request.content,
            )
            assert contract.check_store_response(
                wrapped, OpenAPIResponse.from_httpx(response), request.url.path
            )


# -- store bugs these checks expose -------------------------------------------------------


def test_a_name_with_a_lone_surrogate_does_not_break_the_store(driver: StoreDriver) -> None:
    # Valid JSON (an escaped, unpaired UTF-16 surrogate) and a string per the document. The
    # store may accept or reject it, but must answer, and must go on answering GET /pets.
    sent = b'{"name": "\\ud800", "categoryId": 3}'
    response, _ = driver.send("POST", "/v1/pets", headers=JSON, body=sent)
    assert response.status_code in (201, 400)
    response, documented = driver.send("GET", "/v1/pets")
    assert (response.status_code, documented) == (200, True)


def test_a_deeply_nested_body_is_a_400(driver: StoreDriver, store: FakeAnimalStore) -> None:
    response, documented = driver.send("POST", "/v1/pets", headers=JSON, body=b"[" * 100_000)
    assert (response.status_code, documented) == (400, True)
    assert store.pets == []


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param('{"name": "Rex", "categoryId": 3}'.encode("utf-16"), id="utf-16"),
        pytest.param('{"name": "Rex", "categoryId": 3}'.encode("utf-16-le"), id="utf-16-le"),
        pytest.param('{"name": "Rex", "categoryId": 3}'.encode("utf-32"), id="utf-32"),
        # U+D800 encoded as if it were a character: not UTF-8 (Python calls it surrogatepass).
        pytest.param(b'{"name": "\xed\xa0\x80", "categoryId": 3}', id="encoded-surrogate"),
    ],
)
def test_a_body_that_is_not_utf8_is_a_400(
    driver: StoreDriver, store: FakeAnimalStore, sent: bytes
) -> None:
    # JSON exchanged between systems must be UTF-8 (RFC 8259, section 8.1); the store says it
    # answers 400 invalid_body to a body that is not valid JSON.
    response, documented = driver.send("POST", "/v1/pets", headers=JSON, body=sent)
    assert (response.status_code, documented) == (400, True)
    assert store.pets == []


# -- deprecation signals ----------------------------------------------------------------------


def test_get_answers_carry_the_documented_deprecation_signals(
    driver: StoreDriver, store: FakeAnimalStore
) -> None:
    seed(store)
    found, _ = driver.send("GET", "/v1/pets/1")
    missing, _ = driver.send("GET", "/v1/pets/99")
    listed, _ = driver.send("GET", "/v1/pets")

    for response in (found, missing):
        assert response.headers["Deprecation"] == "@1796428800"
        assert response.headers["Sunset"] == "Thu, 05 Dec 2030 00:00:00 GMT"
    assert "Deprecation" not in listed.headers
    assert "Sunset" not in listed.headers


def test_the_document_checks_the_deprecation_signals(
    contract: Contract, store: FakeAnimalStore
) -> None:
    # The headers are validated, not just listed: a malformed value is a contract error.
    store.add_pet("Rex", 3, "available")
    status, headers, sent = store.handle("GET", "/v1/pets/1", "", AUTH, b"")
    request = OpenAPIRequest.from_store(
        "GET", "/v1/pets/1", "", AUTH, b"", contract.production_host
    )
    assert not list(
        contract.openapi.iter_response_errors(request, OpenAPIResponse(status, headers, sent))
    )

    for name, bad in (("deprecation", "true"), ("sunset", "2030-12-05")):
        changed = [(key, bad if key == name else value) for key, value in headers]
        response = OpenAPIResponse(status, changed, sent)
        assert list(contract.openapi.iter_response_errors(request, response)), name
