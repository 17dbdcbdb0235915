"""Many event loops: one ``AsyncClient`` used from successive loops, dropped clients, and retry
waits that leave the loop free. Real sockets, real loops, real sleeps (short ones)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from animalstore_client import AsyncClient
from animalstore_client._backends.httpx import AsyncHttpxSender
from animalstore_client.testing import FakeAnimalStore, retry_floor
from tests.field import run_script
from tests.reliability.faultserver import FaultServer, Reply

KEY = "sk-loops-test"


@pytest.fixture
def store() -> FakeAnimalStore:
    store = FakeAnimalStore(api_keys={KEY})
    store.add_pet("Rex", 3, "available")
    return store


@pytest.fixture
def base_url(store: FakeAnimalStore) -> Iterator[str]:
    with store.serve() as url:
        yield url


def test_one_client_works_in_each_of_successive_asyncio_runs(
    store: FakeAnimalStore, base_url: str
) -> None:
    client = AsyncClient(KEY, base_url=base_url, max_retries=0)

    async def first_call() -> object:
        assert [pet.name for pet in await client.list_pets()] == ["Rex"]
        return client._pool.http

    pools = [asyncio.run(first_call()) for _ in range(3)]

    assert len(store.requests) == 3
    assert len({id(pool) for pool in pools}) == 3  # one pool per loop
    # Each loop's pool was closed by that loop's own shutdown, not left to leak.
    assert all(pool.is_closed for pool in pools)  # type: ignore[attr-defined]
    asyncio.run(client.aclose())


def test_a_loop_closed_without_shutdown_does_not_break_the_next_one(
    store: FakeAnimalStore, base_url: str
) -> None:
    client = AsyncClient(KEY, base_url=base_url, max_retries=0)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(client.list_pets())
    http = client._pool.http

    async def close_in_its_loop() -> None:
        # Here the test closes what the loop left open, as the loop's owner should have.
        await http.aclose()

    loop.run_until_complete(close_in_its_loop())
    loop.close()

    assert asyncio.run(client.list_pets())[0].name == "Rex"
    assert len(store.requests) == 2
    asyncio.run(client.aclose())


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ("dropped_after_its_loop_ended", {"ok": True}),
        ("dropped_while_its_loop_runs", {"closed": True}),
        ("successive_loops_with_shutdown", {"closed_after_each": [True, True, True]}),
    ],
)
def test_nothing_is_printed_about_pools_and_loops(
    base_url: str, scenario: str, expected: dict[str, object]
) -> None:
    # Nothing on stderr: no "Task exception was never retrieved", no "Event loop is closed",
    # no ResourceWarning (all warnings are shown).
    printed = run_script(
        "loops_script.py", base_url, KEY, scenario, python_options=("-W", "always")
    )
    assert json.loads(printed) == expected


#: A Retry-After honoured as written (under ``retry_floor(0)``) and slept for real.
PAUSE = 0.05


def test_a_retry_wait_leaves_the_event_loop_free(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each wait of the client's sender: how long it was asked for, when it began and ended.
    waits: list[tuple[float, float, float]] = []
    real_sleep = AsyncHttpxSender.sleep

    async def timed_sleep(delay: float) -> None:
        began = time.monotonic()
        await real_sleep(delay)
        waits.append((delay, began, time.monotonic()))

    monkeypatch.setattr(AsyncHttpxSender, "sleep", staticmethod(timed_sleep))
    with retry_floor(0.0), FaultServer() as server:
        server.script(
            Reply(
                503,
                json={"code": "busy", "message": "busy", "status": 503},
                headers=(("Retry-After", f"{PAUSE}"),),
            ),
            Reply(200, json=[]),
        )
        ticks: list[float] = []

        async def tick() -> None:
            while True:  # runs whenever the loop is free
                ticks.append(time.monotonic())
                await asyncio.sleep(0)

        async def main() -> float:
            async with AsyncClient(KEY, base_url=server.base_url, max_retries=1) as client:
                ticker = asyncio.create_task(tick())
                await asyncio.sleep(0)
                started = time.monotonic()
                assert await client.list_pets() == []
                elapsed = time.monotonic() - started
                ticker.cancel()
                return elapsed

        elapsed = asyncio.run(main())

    assert len(server.requests) == 2
    assert elapsed >= PAUSE
    [(delay, began, ended)] = waits
    assert delay == PAUSE
    assert ended - began >= PAUSE  # slept for real
    # The loop ran its other task during the wait: a blocking sleep would have stopped it for
    # the whole of it (whatever the machine's load: the ticker is always ready to run).
    assert any(began < at < ended for at in ticks)


def test_aclose_from_another_loop_leaves_the_running_loops_pool_to_that_loop() -> None:
    import threading

    from tests.reliability.faultserver import FaultServer, Reply

    errors: list[dict[str, object]] = []
    with FaultServer(default=Reply(200, json=[])) as server:
        client = AsyncClient(api_key="k", base_url=server.base_url)
        first = asyncio.new_event_loop()
        first.set_exception_handler(lambda loop, context: errors.append(context))
        runner = threading.Thread(target=first.run_forever)
        runner.start()
        try:
            asyncio.run_coroutine_threadsafe(client.list_pets(), first).result(10)
            assert server.open_connections == 1
            asyncio.run(client.aclose())  # from another loop, while the first one runs
            # The first loop closes its own pool, in its own time: not the other loop, where
            # closing could only fail or leave the connection open.
            assert server.wait_until_closed(timeout=5.0)
            asyncio.run_coroutine_threadsafe(first.shutdown_asyncgens(), first).result(10)
        finally:
            first.call_soon_threadsafe(first.stop)
            runner.join()
            first.close()
    assert errors == []
