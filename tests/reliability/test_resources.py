"""Resource hygiene: dropped clients, double closes, use after close; checked with warnings as
errors, ``gc.collect()``, and a ``-X dev -W error::ResourceWarning`` subprocess.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from animalstore_client import AsyncClient, Client, DefaultAioHttpClient, Pet
from tests.conftest import run_child, without_our_variables
from tests.contract.operations import METHOD_NAMES
from tests.reliability.conftest import (
    API_KEY,
    PET,
    SYNC_KINDS,
    Api,
    aclose_http_client,
    close_in,
    new_http_client,
    own_http_client,
)
from tests.reliability.dropped_client import use_and_drop
from tests.reliability.faultserver import FaultServer, Reply
from tests.reliability.heldserver import HoldingServer, Together, holding_server

REPO = Path(__file__).resolve().parents[2]
CLOSED = r"is closed; create a new one"


def test_a_client_dropped_without_close_does_not_warn(server: FaultServer, kind: str) -> None:
    server.default = Reply(200, json=[])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        use_and_drop(kind, server.base_url)
        gc.collect()

    assert [str(w.message) for w in caught] == []
    assert len(server.requests) == 1


def test_a_dropped_client_closes_its_own_pool_once_no_copy_shares_it(server: FaultServer) -> None:
    # Nothing else closes it before the process exits: its keep-alive connection would stay
    # open on the server for as long as the program runs.
    server.default = Reply(200, json=[])
    client = Client(api_key=API_KEY, base_url=server.base_url)
    copy = client.with_options(max_retries=0)
    client.list_pets()

    del client
    gc.collect()
    copy.list_pets()
    assert [request.connection for request in server.requests] == [0, 0]
    assert server.open_connections == 1

    del copy
    assert eventually(lambda: server.open_connections == 0)


def test_a_dropped_client_leaves_no_resourcewarning_in_dev_mode(
    server: FaultServer, kind: str
) -> None:
    server.default = Reply(200, json=[])
    completed = run_child(
        sys.executable,
        "-X",
        "dev",
        "-W",
        "error::ResourceWarning",
        "-m",
        "tests.reliability.dropped_client",  # the SDK only: no pytest, no fixtures
        kind,
        server.base_url,
        cwd=REPO,
        env=without_our_variables(PYTHONPATH=str(REPO)),
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "done\n"
    assert "ResourceWarning" not in completed.stderr, completed.stderr
    assert "Exception ignored" not in completed.stderr, completed.stderr
    assert len(server.requests) == 1


def test_closing_twice_is_harmless(server: FaultServer, make_client: Callable[..., Api]) -> None:
    server.default = Reply(200, json=[])
    api = make_client(server)
    assert api.list_pets() == []

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api.close()
        api.close()
        gc.collect()

    assert [str(w.message) for w in caught] == []


def test_a_context_manager_closes_and_a_later_close_is_harmless(
    server: FaultServer, kind: str
) -> None:
    server.default = Reply(200, json=[])
    if kind in SYNC_KINDS:
        http = own_http_client(kind)
        with Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client:
            client.list_pets()
        client.close()
        with pytest.raises(RuntimeError, match=CLOSED):
            client.list_pets()
        if http is not None:
            http.close()
    else:

        async def main() -> None:
            http = own_http_client(kind)
            async with AsyncClient(
                api_key=API_KEY, base_url=server.base_url, http_client=http
            ) as client:
                await client.list_pets()
            await client.aclose()
            with pytest.raises(RuntimeError, match=CLOSED):
                await client.list_pets()
            await aclose_http_client(http)

        asyncio.run(main())
    assert len(server.requests) == 1


@pytest.mark.parametrize("operation", METHOD_NAMES)
def test_a_closed_client_raises_a_clear_error_and_sends_nothing(
    server: FaultServer, make_client: Callable[..., Api], operation: str
) -> None:
    api = make_client(server)
    api.close()

    with pytest.raises(RuntimeError, match=CLOSED) as caught:
        api.invoke(operation)

    assert type(api.target).__name__ in str(caught.value)
    assert server.requests == []


def test_copies_and_raw_views_of_a_closed_client_refuse_too(
    server: FaultServer, make_client: Callable[..., Api], kind: str
) -> None:
    server.default = Reply(200, json=[PET])
    api = make_client(server)
    raw = api.raw
    copy = Api(api.target.with_options(max_retries=0), api._loop, api.kind)
    api.close()

    with pytest.raises(RuntimeError, match=CLOSED):
        raw.list_pets()
    with pytest.raises(RuntimeError, match=CLOSED):
        api.raw.create_pet(name="Rex", category_id=3)
    if kind not in ("sync", "async"):
        # A pool passed in as http_client (aiohttp's, httpx2's) is its owner's: closing the
        # client leaves it open, so a copy made with with_options() goes on working.
        assert copy.list_pets() == [Pet.from_dict(PET)]
        assert len(server.requests) == 1
    else:
        with pytest.raises(RuntimeError, match=CLOSED):
            copy.list_pets()
        assert server.requests == []


def test_closing_a_copy_leaves_the_original_working(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    server.default = Reply(200, json=[PET])
    api = make_client(server)
    copy = Api(api.target.with_options(timeout=2.0), api._loop, api.kind)
    copy.close()

    assert len(api.list_pets()) == 1
    with pytest.raises(RuntimeError, match=CLOSED):
        copy.list_pets()
    assert len(server.requests) == 1


def test_a_user_http_client_is_left_open_and_its_closing_is_noticed(
    server: FaultServer,
    make_client: Callable[..., Api],
    kind: str,
    aloop: asyncio.AbstractEventLoop,
) -> None:
    server.default = Reply(200, json=[])
    http = new_http_client(kind, aloop)
    api = make_client(server, http_client=http)
    api.list_pets()
    api.close()
    assert (http.closed if kind == "aiohttp" else http.is_closed) is False

    other = make_client(server, http_client=http)
    close_in(aloop, http)
    with pytest.raises(RuntimeError, match=CLOSED):
        other.list_pets()
    assert len(server.requests) == 1


@pytest.fixture
def holding() -> Iterator[HoldingServer]:
    with holding_server() as server:
        yield server


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def eventually(condition: Callable[[], bool], timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        gc.collect()
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
def test_aclose_releases_every_connection_and_file_descriptor(
    holding: HoldingServer, backend: str
) -> None:
    # No answer goes before all ten requests came: ten connections are open at once.
    server = holding
    server.default = Together(200, json=[], together=10)
    before = open_fds()

    async def main() -> tuple[int, int]:
        # The aiohttp backend is the caller's, closed by the caller right after the SDK client.
        http = DefaultAioHttpClient() if backend == "aiohttp" else None
        client = AsyncClient(api_key=API_KEY, base_url=server.base_url, http_client=http)
        await asyncio.gather(*(client.list_pets() for _ in range(10)))
        in_use = open_fds(), server.open_connections
        await client.aclose()
        if http is not None:
            await http.close()
        return in_use

    fds_in_use, connections_in_use = asyncio.run(main())

    assert connections_in_use == 10  # ten calls at once: ten connections, kept alive
    assert fds_in_use >= before + 10
    assert eventually(lambda: server.open_connections == 0)
    assert eventually(lambda: open_fds() == before)
