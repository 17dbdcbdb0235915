"""How to test YOUR code that uses the SDK: against the built-in store, failures included.

Run it with pytest (it is a test module, not a script):

    python -m pytest examples/test_your_code.py

Installing the SDK gives pytest the fixtures used here, with no conftest.py: a fresh
`animalstore_store` per test, and `animalstore_client` (an SDK Client wired to it in process,
no socket). Assert on what your code did: `store.pets` is what is stored, `store.requests`
every request that reached the store. Script what goes wrong with `store.inject(Fault...)`:
error answers, slow answers, dropped connections, malformed bodies (docs/testing.md).
"""

from __future__ import annotations

import asyncio

import pytest

from animalstore_client import (
    APIConnectionError,
    APITimeoutError,
    AsyncClient,
    AuthenticationError,
    BadRequestError,
    Client,
    Pet,
    PetStatus,
)
from animalstore_client.testing import FakeAnimalStore, Fault, retry_floor

# -- your code ------------------------------------------------------------------------------


def restock(client: Client, names: list[str], category_id: int) -> list[int]:
    """Add one available animal per name, in order; return their ids."""
    return [
        client.create_pet(name=name, category_id=category_id, status=PetStatus.AVAILABLE).id
        for name in names
    ]


def add_or_report(client: Client, name: str) -> str:
    """Add one animal; say what happened, in words, whatever the service answered."""
    try:
        pet = client.create_pet(name=name, category_id=3, deadline=0.5)
    except BadRequestError as exc:
        return f"rejected: {exc.message}"
    except APITimeoutError:
        return "too slow, try later"
    return f"added #{pet.id}"


def add_once(client: Client, name: str, request_key: str) -> Pet:
    """Add an animal; on a lost answer, try once more with the same idempotency key."""
    try:
        return client.create_pet(name=name, category_id=3, idempotency_key=request_key)
    except APIConnectionError:  # maybe sent: only a repeat with the same key is safe
        return client.create_pet(name=name, category_id=3, idempotency_key=request_key)


async def restock_async(client: AsyncClient, names: list[str], category_id: int) -> list[int]:
    """The same as restock, sending the creates concurrently."""
    pets = await asyncio.gather(
        *(client.create_pet(name=name, category_id=category_id) for name in names)
    )
    return [pet.id for pet in pets]


# -- its tests ------------------------------------------------------------------------------


def test_restock_stores_one_available_pet_per_name(
    animalstore_store: FakeAnimalStore, animalstore_client: Client
) -> None:
    assert restock(animalstore_client, ["Rex", "Tom"], category_id=3) == [1, 2]
    assert animalstore_store.pets == [
        Pet(id=1, name="Rex", category_id=3, status=PetStatus.AVAILABLE),
        Pet(id=2, name="Tom", category_id=3, status=PetStatus.AVAILABLE),
    ]
    request = animalstore_store.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/pets")
    assert request.json() == {"name": "Rex", "categoryId": 3, "status": "available"}


def test_a_503_is_retried_with_the_same_idempotency_key(
    animalstore_store: FakeAnimalStore, animalstore_client: Client
) -> None:
    animalstore_store.inject(Fault.error(503, retry_after=0.01, operation="create"))

    # A client waits at least 0.3 s whatever Retry-After says; this test's 0.01 s is enough.
    with retry_floor(0.0):
        assert restock(animalstore_client, ["Rex"], category_id=3) == [1]

    first, retry = animalstore_store.requests  # the 503, then the retry the SDK made
    assert first.headers["idempotency-key"] == retry.headers["idempotency-key"]


def test_a_400_is_reported(animalstore_store: FakeAnimalStore, animalstore_client: Client) -> None:
    animalstore_store.inject(Fault.error(400, "invalid_field", "name is taken"))

    assert add_or_report(animalstore_client, "Rex") == "rejected: name is taken"
    assert animalstore_store.pets == []


def test_a_slow_service_is_reported_within_the_deadline(
    animalstore_store: FakeAnimalStore, animalstore_client: Client
) -> None:
    animalstore_store.inject(Fault.delay(5.0))

    assert add_or_report(animalstore_client, "Rex") == "too slow, try later"


def test_a_lost_answer_does_not_create_a_duplicate(
    animalstore_store: FakeAnimalStore, animalstore_client: Client
) -> None:
    # The service stores the animal, then the connection drops: the answer is lost. Against
    # a service that honours Idempotency-Key, the repeat with the same key stores nothing new.
    animalstore_store.honour_idempotency_keys = True
    animalstore_store.inject(Fault.drop(processed=True, operation="create"))

    pet = add_once(animalstore_client, "Rex", request_key="restock-2030-01-rex")

    assert animalstore_store.pets == [pet]
    assert len(animalstore_store.requests) == 2  # the SDK itself did not resend the create


def test_restock_async_creates_every_pet(
    animalstore_store: FakeAnimalStore, animalstore_async_client: AsyncClient
) -> None:
    ids = asyncio.run(restock_async(animalstore_async_client, ["Rex", "Tom", "Kit"], 5))

    assert sorted(ids) == [1, 2, 3]
    assert sorted(pet.name for pet in animalstore_store.pets) == ["Kit", "Rex", "Tom"]


def test_a_revoked_key_is_not_caught(animalstore_store: FakeAnimalStore) -> None:
    # A client of the store's with other options, when the fixture's defaults do not fit.
    with (
        animalstore_store.client(api_key="revoked", max_retries=0) as client,
        pytest.raises(AuthenticationError),  # add_or_report lets a 401 through
    ):
        add_or_report(client, "Rex")
    assert animalstore_store.pets == []
