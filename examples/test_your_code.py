"""How to test YOUR code that uses the SDK: against FakeAnimalStore, with no server and no mocks.

The fake store implements the whole API in memory. Hand your code a client from
`store.client()` (or `store.async_client()`), then assert on what it did: `store.pets` is
what is stored, `store.requests` every request received (method, path, headers, body).

    python -m pytest examples/test_your_code.py
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from animalstore_client import AsyncClient, AuthenticationError, Client, Pet, PetStatus
from animalstore_client.testing import FakeAnimalStore

# -- your code ------------------------------------------------------------------------------


def restock(client: Client, names: list[str], category_id: int) -> list[int]:
    """Add one available animal per name, in order; return their ids."""
    return [
        client.create_pet(name=name, category_id=category_id, status=PetStatus.AVAILABLE).id
        for name in names
    ]


async def restock_async(client: AsyncClient, names: list[str], category_id: int) -> list[int]:
    """The same, sending the creates concurrently."""
    pets = await asyncio.gather(
        *(
            client.create_pet(name=name, category_id=category_id, status="available")
            for name in names
        )
    )
    return [pet.id for pet in pets]


# -- its tests ------------------------------------------------------------------------------

API_KEY = "test-key"


@pytest.fixture
def store() -> FakeAnimalStore:
    """A fresh, empty store for each test: ids start at 1."""
    return FakeAnimalStore(api_keys={API_KEY})


@pytest.fixture
def client(store: FakeAnimalStore) -> Iterator[Client]:
    with store.client(max_retries=0) as client:
        yield client


def test_restock_stores_one_available_pet_per_name(store: FakeAnimalStore, client: Client) -> None:
    ids = restock(client, ["Rex", "Tom"], category_id=3)

    assert ids == [1, 2]
    assert store.pets == [
        Pet(id=1, name="Rex", category_id=3, status=PetStatus.AVAILABLE),
        Pet(id=2, name="Tom", category_id=3, status=PetStatus.AVAILABLE),
    ]


def test_restock_sends_one_authenticated_post_per_name(
    store: FakeAnimalStore, client: Client
) -> None:
    restock(client, ["Rex"], category_id=3)

    [request] = store.requests
    assert (request.method, request.path) == ("POST", "/v1/pets")
    assert request.json() == {"name": "Rex", "categoryId": 3, "status": "available"}
    assert request.headers["authorization"] == f"Bearer {API_KEY}"  # names are lower-cased
    assert request.headers["content-type"] == "application/json"


def test_restock_with_no_names_sends_nothing(store: FakeAnimalStore, client: Client) -> None:
    assert restock(client, [], category_id=3) == []
    assert store.requests == []


def test_restock_adds_to_existing_stock(store: FakeAnimalStore, client: Client) -> None:
    store.add_pet("Old Tom", 3, "sold")  # seed data directly, without a request

    assert restock(client, ["Rex"], category_id=3) == [2]
    assert [pet.name for pet in store.pets] == ["Old Tom", "Rex"]


def test_restock_with_a_revoked_key_raises_and_stores_nothing(store: FakeAnimalStore) -> None:
    with store.client(api_key="revoked-key") as client, pytest.raises(AuthenticationError):
        restock(client, ["Rex"], category_id=3)

    assert store.pets == []
    assert store.requests[0].headers["authorization"] == "Bearer revoked-key"


def test_restock_async_creates_every_pet(store: FakeAnimalStore) -> None:
    async def scenario() -> list[int]:
        async with store.async_client(max_retries=0) as client:
            return await restock_async(client, ["Rex", "Tom", "Kit"], category_id=5)

    ids = asyncio.run(scenario())

    assert sorted(ids) == [1, 2, 3]
    assert sorted(pet.name for pet in store.pets) == ["Kit", "Rex", "Tom"]
    assert {request.method for request in store.requests} == {"POST"}
