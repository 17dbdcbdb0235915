"""Method arguments: bad ones are refused before anything is sent, good ones are sent exactly."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from animalstore_client import Pet, PetStatus
from tests.unit.conftest import BoolScalar

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
LARGE_NAME = "ñ🐕x" * 15_000  # 105,000 bytes of UTF-8
PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}


@pytest.fixture
def routes(mock_api: respx.MockRouter) -> respx.MockRouter:
    """Every operation answered successfully, so that only argument checks can stop a call."""

    def created(request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, json={"id": 1, **json.loads(request.content)})

    mock_api.get("/pets", name="list").respond(200, json=[PET])
    mock_api.post("/pets", name="create").mock(side_effect=created)
    mock_api.get(path__regex=r"/pets/[^/]+$", name="get").respond(200, json=PET)
    return mock_api


def call(api: Any, operation: str, arguments: dict[str, object]) -> Any:
    """Call one operation; create_pet gets valid defaults for the arguments not given."""
    if operation == "create_pet":
        arguments = {"name": "Rex", "category_id": 3, **arguments}
    return getattr(api, operation)(**arguments)


def _invalid_cases() -> Iterator[Any]:
    table: list[tuple[str, str, list[object], type[Exception]]] = [
        ("list_pets", "limit", [0, 101, -1, 2**64], ValueError),
        ("list_pets", "limit", [True, 5.0, "5", [5]], TypeError),
        ("list_pets", "status", ["AVAILABLE", "reserved", "", " available"], ValueError),
        ("list_pets", "status", [1, b"available", ["available"]], TypeError),
        ("create_pet", "status", ["AVAILABLE", "reserved", ""], ValueError),
        ("create_pet", "status", [1, b"sold"], TypeError),
        ("create_pet", "name", [5, None, b"x", ["Rex"]], TypeError),
        ("create_pet", "category_id", [2**63, INT64_MIN - 1], ValueError),
        ("create_pet", "category_id", [True, "3", 3.0, None], TypeError),
        ("get_pet", "pet_id", [2**63, INT64_MIN - 1], ValueError),
        ("get_pet", "pet_id", ["1/../admin", "1?x=y", "1", 1.5, True, None], TypeError),
    ]
    for operation, argument, values, error in table:
        for value in values:
            case_id = f"{operation}-{argument}={value!r}"
            yield pytest.param(operation, argument, value, error, id=case_id)


@pytest.mark.parametrize(("operation", "argument", "value", "error"), list(_invalid_cases()))
def test_invalid_argument_is_refused_before_sending(
    api: Any,
    routes: respx.MockRouter,
    operation: str,
    argument: str,
    value: object,
    error: type[Exception],
) -> None:
    # Warnings are errors here: a refused get_pet must not warn first.
    with pytest.raises(error) as excinfo:
        call(api, operation, {argument: value})
    assert excinfo.type is error
    assert re.match(rf"{argument} must be\b", str(excinfo.value))
    assert len(routes.calls) == 0


# --- accepted values, sent exactly --------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "url"),
    [
        ({}, "https://api.test/v1/pets"),
        ({"limit": 1}, "https://api.test/v1/pets?limit=1"),
        ({"limit": 100}, "https://api.test/v1/pets?limit=100"),
        ({"status": PetStatus.PENDING}, "https://api.test/v1/pets?status=pending"),
        ({"status": "pending"}, "https://api.test/v1/pets?status=pending"),
        ({"status": PetStatus.SOLD, "limit": 5}, "https://api.test/v1/pets?limit=5&status=sold"),
    ],
)
def test_list_arguments_are_sent_exactly(
    api: Any, routes: respx.MockRouter, arguments: dict[str, object], url: str
) -> None:
    assert api.list_pets(**arguments) == [Pet.from_dict(PET)]
    assert len(routes.calls) == 1
    assert str(routes.calls.last.request.url) == url


@pytest.mark.parametrize(
    ("arguments", "body"),
    [
        ({"category_id": INT64_MAX}, {"name": "Rex", "categoryId": INT64_MAX}),
        ({"category_id": INT64_MIN}, {"name": "Rex", "categoryId": INT64_MIN}),
        ({"category_id": 0}, {"name": "Rex", "categoryId": 0}),
        ({"status": PetStatus.PENDING}, {"name": "Rex", "categoryId": 3, "status": "pending"}),
        ({"status": "pending"}, {"name": "Rex", "categoryId": 3, "status": "pending"}),
        ({"status": None}, {"name": "Rex", "categoryId": 3}),
    ],
)
def test_create_arguments_are_sent_exactly(
    api: Any, routes: respx.MockRouter, arguments: dict[str, object], body: dict[str, object]
) -> None:
    pet = call(api, "create_pet", arguments)
    assert len(routes.calls) == 1
    request = routes.calls.last.request
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == body
    assert pet == Pet.from_dict({"id": 1, **body})


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Rëx 🐕 名前 Ωμέγα", id="unicode"),
        pytest.param("\"Rex\" 'the' \\dog\\", id="quotes-backslashes"),
        pytest.param("line one\nline two\r\n\ttabbed\u2028", id="newlines"),
        pytest.param("", id="empty"),
        pytest.param("\x00\x1f control", id="control"),
        pytest.param(LARGE_NAME, id="105KB"),
    ],
)
def test_name_is_sent_json_encoded_exactly(api: Any, routes: respx.MockRouter, name: str) -> None:
    pet = api.create_pet(name=name, category_id=3)
    assert len(routes.calls) == 1
    assert json.loads(routes.calls.last.request.content) == {"name": name, "categoryId": 3}
    assert pet.name == name


@pytest.mark.parametrize("pet_id", [0, 1, -1, INT64_MAX, INT64_MIN])
def test_pet_id_is_sent_in_the_path(api: Any, routes: respx.MockRouter, pet_id: int) -> None:
    with pytest.warns(DeprecationWarning, match="deprecated"):
        pet = api.get_pet(pet_id)
    assert pet == Pet.from_dict(PET)
    assert len(routes.calls) == 1
    assert str(routes.calls.last.request.url) == f"https://api.test/v1/pets/{pet_id}"


@pytest.mark.parametrize("name", ["\ud800", "Rex\udfff"])
def test_a_name_with_a_lone_surrogate_is_rejected_before_sending(
    api: Any, mock_api: respx.MockRouter, name: str
) -> None:
    route = mock_api.post("/pets").respond(201, json={"id": 1, "name": "x", "categoryId": 3})

    with pytest.raises(
        ValueError, match=r"^name must be valid Unicode text, got a lone surrogate$"
    ):
        api.create_pet(name=name, category_id=3)

    assert route.call_count == 0


# --- what a refusal says, exactly -----------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "arguments", "error", "message"),
    [
        (
            "list_pets",
            {"status": 5},
            TypeError,
            "status must be a str, got int 5",
        ),
        (
            "create_pet",
            {"name": 5},
            TypeError,
            "name must be a str, got int 5",
        ),
        ("list_pets", {"limit": 5.0}, TypeError, "limit must be an int, got float 5.0"),
        ("list_pets", {"limit": True}, TypeError, "limit must be an int, got bool True"),
        (
            "create_pet",
            {"status": "lost"},
            ValueError,
            "status must be one of 'available', 'pending', 'sold', got 'lost'",
        ),
        # A repr of 60 characters is shown whole; a longer one, its first 57 and "...".
        (
            "create_pet",
            {"status": "s" * 58},
            ValueError,
            f"status must be one of 'available', 'pending', 'sold', got '{'s' * 58}'",
        ),
        (
            "create_pet",
            {"status": "s" * 59},
            ValueError,
            f"status must be one of 'available', 'pending', 'sold', got '{'s' * 56}...",
        ),
        (
            "create_pet",
            {"idempotency_key": ""},
            ValueError,
            "idempotency_key must be 1 to 255 printable ASCII characters without whitespace, "
            "got ''",
        ),
        (
            "create_pet",
            {"idempotency_key": "a b"},
            ValueError,
            "idempotency_key must be 1 to 255 printable ASCII characters without whitespace, "
            "got 'a b'",
        ),
        # An int of 192 bits is shown whole; a longer one, by its leading digits.
        (
            "get_pet",
            {"pet_id": 2**192 - 1},
            ValueError,
            f"pet_id must be between {INT64_MIN} and {INT64_MAX}, got {2**192 - 1}",
        ),
        (
            "get_pet",
            {"pet_id": 2**192},
            ValueError,
            f"pet_id must be between {INT64_MIN} and {INT64_MAX}, "
            "got 6.277102e+57 (approximately; too long to show)",
        ),
        (
            "get_pet",
            {"pet_id": -(2**200)},
            ValueError,
            f"pet_id must be between {INT64_MIN} and {INT64_MAX}, "
            "got -1.606938e+60 (approximately; too long to show)",
        ),
    ],
    ids=repr,
)
def test_a_refusal_names_the_argument_what_it_must_be_and_what_it_got(
    api: Any,
    routes: respx.MockRouter,
    operation: str,
    arguments: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error) as excinfo:
        call(api, operation, arguments)
    assert excinfo.type is error
    assert str(excinfo.value) == message
    assert len(routes.calls) == 0


def test_a_one_character_idempotency_key_is_sent(api: Any, routes: respx.MockRouter) -> None:
    call(api, "create_pet", {"idempotency_key": "k"})
    assert routes.calls.last.request.headers["idempotency-key"] == "k"


class HostileScalar:
    """An index whose ``dtype`` raises: no reason to refuse the number it is."""

    @property
    def dtype(self) -> object:
        raise RuntimeError("no dtype here")

    def __index__(self) -> int:
        return 4


def test_a_boolean_of_the_array_protocol_is_not_taken_for_a_number(
    api: Any, routes: respx.MockRouter
) -> None:
    with pytest.raises(TypeError) as excinfo:
        api.list_pets(limit=BoolScalar())
    assert str(excinfo.value) == "limit must be an int, got BoolScalar True"
    assert len(routes.calls) == 0

    api.list_pets(limit=HostileScalar())
    assert str(routes.calls.last.request.url) == "https://api.test/v1/pets?limit=4"
