"""Integer arguments from notebooks: real numpy scalars, as read out of a pandas column."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from animalstore_client import AsyncClient, Client, Pet, PetStatus, WireFormatError
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import Api

INTEGER_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.fixture
def store() -> FakeAnimalStore:
    store = FakeAnimalStore(api_keys={"test-key"})
    for number in range(1, 8):
        store.add_pet(f"pet{number}", 3, "available")
    return store


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest, store: FakeAnimalStore) -> Iterator[Api]:
    loop = asyncio.new_event_loop()
    client = store.client() if request.param == "sync" else store.async_client()
    yield Api(client, loop)
    Api(client, loop).close()
    loop.close()


@pytest.mark.parametrize("integer", INTEGER_TYPES, ids=lambda t: t.__name__)
def test_numpy_integers_are_sent_as_plain_ints(
    api: Api, store: FakeAnimalStore, integer: type[Any]
) -> None:
    assert [pet.name for pet in api.list_pets(limit=integer(5))] == [f"pet{n}" for n in range(1, 6)]
    created = api.create_pet(name="Rex", category_id=integer(42))
    with pytest.warns(DeprecationWarning, match="deprecated"):
        fetched = api.get_pet(integer(created.id))

    list_request, create_request, get_request = store.requests
    assert list_request.query == "limit=5"
    assert create_request.body == b'{"name":"Rex","categoryId":42}'
    assert get_request.path == f"/v1/pets/{created.id}"
    assert type(created.category_id) is int
    assert fetched == created


@pytest.mark.parametrize("client_class", [Client, AsyncClient])
def test_numpy_max_retries_is_a_plain_int(client_class: type[Client | AsyncClient]) -> None:
    client = client_class(api_key="k", base_url="http://h/v1", max_retries=np.int64(4))
    assert client.max_retries == 4
    assert type(client.max_retries) is int
    assert type(client.with_options(max_retries=np.uint8(1)).max_retries) is int


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        (np.True_, "bool"),
        (True, "bool"),
        (np.float64(5.0), "float64"),
        (5.0, "float"),
        ("5", "str"),
        (np.array([5]), "ndarray"),
    ],
)
def test_bool_float_and_str_stay_type_errors(
    api: Api, store: FakeAnimalStore, value: object, type_name: str
) -> None:
    with pytest.raises(TypeError, match=rf"^limit must be an int, got {type_name}\b"):
        api.list_pets(limit=value)
    with pytest.raises(TypeError, match=rf"^category_id must be an int, got {type_name}\b"):
        api.create_pet(name="Rex", category_id=value)
    assert store.requests == []


@pytest.mark.parametrize("argument", ["limit", "category_id", "pet_id", "max_retries"])
@pytest.mark.parametrize("value", [np.True_, np.False_, np.array(True)], ids=repr)
def test_numpy_booleans_are_refused_where_deprecation_warnings_are_hidden(
    api: Api, store: FakeAnimalStore, argument: str, value: Any
) -> None:
    # numpy 2.2 (the newest for Python 3.10) still converts numpy.True_ to the index 1, with
    # only a DeprecationWarning, which Python hides by default: a mask value taken for a
    # number would be sent as `limit=1` or `pets/1`.
    expected = f"{argument} must be an int, got {type(value).__name__} {value!r}"
    calls: dict[str, Callable[[], object]] = {
        "limit": lambda: api.list_pets(limit=value),
        "category_id": lambda: api.create_pet(name="Rex", category_id=value),
        "pet_id": lambda: api.get_pet(value),
        "max_retries": lambda: api.target.with_options(max_retries=value),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(TypeError) as excinfo:
            calls[argument]()
    assert str(excinfo.value) == expected
    assert store.requests == []
    if argument == "max_retries":
        with pytest.raises(TypeError) as excinfo:
            type(api.target)(api_key="k", base_url="http://h/v1", max_retries=value)
        assert str(excinfo.value) == expected


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("limit", np.int64(0)),
        ("limit", np.uint64(101)),
        ("category_id", np.uint64(2**64 - 1)),
        ("pet_id", np.uint64(2**63)),
    ],
)
def test_numpy_integers_out_of_range_name_the_argument(
    api: Api, store: FakeAnimalStore, argument: str, value: Any
) -> None:
    with pytest.raises(ValueError, match=rf"^{argument} must be between .*, got {int(value)}$"):
        call(api, argument, value)
    assert store.requests == []


@pytest.mark.parametrize("argument", ["limit", "category_id", "pet_id", "max_retries"])
@pytest.mark.parametrize("sign", [1, -1])
def test_a_5000_digit_int_gives_the_usual_error_with_a_short_prefix(
    api: Api, store: FakeAnimalStore, argument: str, sign: int
) -> None:
    value = sign * (12345 * 10**4995 + 6789)  # 5000 digits: too long for str()
    with pytest.raises(ValueError, match=rf"^{argument} must be between") as excinfo:
        call(api, argument, value)
    message = str(excinfo.value)
    shown = message.split(", got ", 1)[1]
    assert shown == f"{'-' if sign < 0 else ''}1.234500e+4999 (approximately; too long to show)"
    assert len(message) < 150
    assert store.requests == []


def call(api: Api, argument: str, value: Any) -> None:
    if argument == "max_retries":
        Client(api_key="k", base_url="http://h/v1", max_retries=value)
    elif argument == "limit":
        api.list_pets(limit=value)
    elif argument == "category_id":
        api.create_pet(name="Rex", category_id=value)
    else:
        api.get_pet(value)  # refused before it warns: warnings are errors here


@pytest.mark.parametrize(
    "seconds", [np.int64(7), np.int32(7), np.float32(7.0), np.float64(7.0)], ids=repr
)
def test_numpy_numbers_are_timeouts_in_seconds(api: Api, seconds: Any) -> None:
    client = api.target.with_options(timeout=seconds)

    assert client.timeout == httpx.Timeout(7.0)
    assert all(type(phase) is float for phase in client.timeout.as_dict().values())
    assert len(Api(client, api._loop).list_pets(timeout=seconds)) == 7


def test_a_long_int_just_below_a_power_of_ten_is_shown_without_a_mantissa_of_ten() -> None:
    value = 99_999_999 * 10**4992  # its logarithm rounds up to the next power of ten
    with pytest.raises(ValueError, match=r"^limit must be between") as excinfo:
        Client(api_key="k", base_url="http://h/v1").list_pets(limit=value)
    assert str(excinfo.value).endswith(", got 1.000000e+5000 (approximately; too long to show)")


def test_from_dict_takes_the_numpy_values_create_pet_takes() -> None:
    # A row read back from a DataFrame: numpy strings and integers where create_pet takes them.
    row = {
        "id": np.int64(7),
        "name": np.str_("Rex"),
        "category_id": np.int32(3),
        "status": np.str_("sold"),
    }
    pet = Pet.from_dict(row)
    assert pet == Pet(id=7, name="Rex", category_id=3, status=PetStatus.SOLD)
    assert type(pet.name) is str
    assert type(pet.id) is int
    assert Pet.from_dict({**row, "status": np.str_("lost")}).status == "lost"
    with pytest.raises(WireFormatError, match="name"):
        Pet.from_dict({**row, "name": np.float64(1.5)})
