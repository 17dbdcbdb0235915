"""The pytest plugin's fixtures, used here as a user's tests use them.

What a user's test relies on without reading the plugin: the store creates what it is sent
(a key sent twice creates twice, as the spec's service may), and every client a fixture hands
out is closed once the test is over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from animalstore_client import AsyncClient, Client
from animalstore_client.testing import FakeAnimalStore


def test_the_store_fixture_does_not_deduplicate_by_key(
    animalstore_store: FakeAnimalStore, animalstore_client: Client
) -> None:
    # A user's test that a double create is guarded against must see the double.
    first = animalstore_client.create_pet(name="Rex", category_id=3, idempotency_key="k-1")
    second = animalstore_client.create_pet(name="Rex", category_id=3, idempotency_key="k-1")

    assert animalstore_store.honour_idempotency_keys is False
    assert first.id != second.id
    assert len(animalstore_store.pets) == 2


@pytest.fixture
def closed_after_the_test() -> Iterator[list[Client | AsyncClient]]:
    """Clients to check once the fixtures that made them are torn down.

    Requested before the client fixtures, it is set up before them, so torn down after them.
    """
    clients: list[Client | AsyncClient] = []
    yield clients
    for client in clients:
        with pytest.raises(RuntimeError, match="is closed"):
            list_with(client)


def list_with(client: Client | AsyncClient) -> None:
    if isinstance(client, AsyncClient):
        asyncio.run(client.list_pets())
    else:
        client.list_pets()


def test_the_client_fixtures_close_their_clients(
    closed_after_the_test: list[Client | AsyncClient],
    animalstore_client: Client,
    animalstore_async_client: AsyncClient,
) -> None:
    assert animalstore_client.list_pets() == []
    assert asyncio.run(animalstore_async_client.list_pets()) == []
    closed_after_the_test.extend([animalstore_client, animalstore_async_client])
