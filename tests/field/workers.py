"""Functions that ``ProcessPoolExecutor`` workers run in test_pickling.py and
test_client_pickle.py (importable by name)."""

from __future__ import annotations

import asyncio
import os

from animalstore_client import AsyncClient, Client
from animalstore_client._core.config import API_KEY_VARIABLE


def list_pets(base_url: str, api_key: str) -> int:
    """Make one real call from the worker; raise whatever SDK error it gets."""
    with Client(api_key, base_url=base_url, max_retries=0) as client:
        return len(client.list_pets())


def set_environment(variables: dict[str, str]) -> None:
    """A pool's initializer: the worker's own environment, whatever the parent's was."""
    os.environ.pop(API_KEY_VARIABLE, None)
    os.environ.update(variables)


def pet_ids(client: Client) -> list[int]:
    """List pets with a client that came pickled; its error, if any, travels back."""
    return [pet.id for pet in client.list_pets()]


def async_pet_ids(client: AsyncClient) -> list[int]:
    """``pet_ids`` for an ``AsyncClient``, on an event loop of the worker's own."""

    async def listed() -> list[int]:
        async with client:
            return [pet.id for pet in await client.list_pets()]

    return asyncio.run(listed())


def create(client: Client, name: str) -> int:
    """Create one pet with a client that came pickled; the pet's key is its name."""
    return client.create_pet(name=name, category_id=1, idempotency_key=f"pet-{name}").id


class KeyFile:
    """A key provider that reads the key from a file for each call: rotation by rewriting it.

    Pickled by reference to this class and the path: the key itself never travels.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self) -> str:
        with open(self.path, encoding="ascii") as file:
            return file.read().strip()
