"""pytest fixtures for testing code that uses ``animalstore_client``: no configuration needed.

Installing the SDK registers this module with pytest (the ``pytest11`` entry point
``animalstore``), so these fixtures are there in every test, with no ``conftest.py`` and no
``pytest_plugins`` line:

* ``animalstore_store``: a fresh ``FakeAnimalStore`` (keys ``{"test-key"}``) for the test.
* ``animalstore_client``: an SDK ``Client`` wired to that store in process, closed after.
* ``animalstore_async_client``: an SDK ``AsyncClient`` wired to it in process, closed after;
  a plain fixture, so that it works with pytest-asyncio, anyio's plugin (asyncio or trio) or
  a test's own ``asyncio.run``.
* ``animalstore_base_url``: the store served on 127.0.0.1 for the test,
  ``"http://127.0.0.1:<port>/v1"``.

All four share the test's one store: faults scripted with ``animalstore_store.inject(...)``
apply to each. The clients keep the SDK's defaults (2 retries); pass other options by making
your own from the store (``animalstore_store.client(max_retries=0)``). Like every client, they
wait at least 0.3 s before a retry whatever ``Retry-After`` says; a test lowers that floor with
``animalstore_client.testing.retry_floor``.

This module lives outside the ``animalstore_client`` package so that loading it costs pytest
next to nothing: it imports the SDK only when a test asks for one of its fixtures. Turn it off
with ``-p no:animalstore``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from animalstore_client import AsyncClient, Client
    from animalstore_client.testing import FakeAnimalStore

__all__ = [
    "animalstore_async_client",
    "animalstore_base_url",
    "animalstore_client",
    "animalstore_store",
]


@pytest.fixture
def animalstore_store() -> FakeAnimalStore:
    """Give each test a fresh, empty in-memory animal store, accepting the key ``test-key``.

    Returns:
        The store: seed it (``add_pet``), script faults (``inject``), read what it received
        (``requests``) and what it holds (``pets``).
    """
    from animalstore_client.testing import FakeAnimalStore

    return FakeAnimalStore(api_keys=("test-key",))


@pytest.fixture
def animalstore_client(animalstore_store: FakeAnimalStore) -> Iterator[Client]:
    """Give an SDK ``Client`` that talks to ``animalstore_store`` in process, closed after.

    Yields:
        The client, with the SDK's default options.
    """
    with animalstore_store.client() as client:
        yield client


@pytest.fixture
def animalstore_async_client(animalstore_store: FakeAnimalStore) -> Iterator[AsyncClient]:
    """Give an SDK ``AsyncClient`` that talks to ``animalstore_store`` in process.

    A plain (not async) fixture, so any async test runner can use it. It needs no event loop
    to be closed: its in-process transport holds no connection.

    Yields:
        The client, with the SDK's default options.
    """
    client = animalstore_store.async_client()
    yield client
    import asyncio

    # The in-process transport has nothing to release; this marks the client closed.
    asyncio.run(client.aclose())


@pytest.fixture
def animalstore_base_url(animalstore_store: FakeAnimalStore) -> Iterator[str]:
    """Serve ``animalstore_store`` over HTTP on 127.0.0.1 for the duration of the test.

    Yields:
        The base URL, ``"http://127.0.0.1:<port>/v1"``, for code that takes a URL (with the
        API key ``"test-key"``).
    """
    with animalstore_store.serve() as base_url:
        yield base_url
