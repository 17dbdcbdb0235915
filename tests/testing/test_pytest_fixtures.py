"""The pytest plugin's fixtures, used here as a user's tests use them.

What a user's test relies on without reading the plugin: the store creates what it is sent
(a key sent twice creates twice, as the spec's service may), and every client a fixture hands
out is closed once the test is over.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

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


USERS_TESTS = """
import socket
import urllib.parse

import pytest

from animalstore_client import AuthenticationError, Client

first = {}


def test_first(animalstore_store, animalstore_client, animalstore_base_url):
    animalstore_client.create_pet(name="Rex", category_id=3)
    with Client("test-key", base_url=animalstore_base_url, max_retries=0) as served:
        assert [pet.name for pet in served.list_pets()] == ["Rex"]
    with Client("another-key", base_url=animalstore_base_url, max_retries=0) as other:
        with pytest.raises(AuthenticationError):
            other.list_pets()
    first.update(store=animalstore_store, url=animalstore_base_url)


def test_second(animalstore_store, animalstore_client, animalstore_base_url):
    assert animalstore_store is not first["store"]
    assert animalstore_client.list_pets() == []
    assert animalstore_base_url != first["url"]
    address = urllib.parse.urlsplit(first["url"])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((address.hostname, address.port), timeout=10).close()
"""


def test_each_test_gets_a_store_and_a_server_of_its_own(tmp_path: Path) -> None:
    # As a user runs their tests: pytest in a process of its own, the plugin found by its entry
    # point. The second test sees none of the first's animals, and the first's server is gone.
    # (Without Hypothesis's plugin, which a user need not have: it imports all of Hypothesis at
    # the end of every run, a second or more.)
    (tmp_path / "test_users.py").write_text(USERS_TESTS, encoding="utf-8")
    completed = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-p", "no:hypothesispytest", "test_users.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "2 passed" in completed.stdout
