"""AsyncClient under trio (``trio.run`` and anyio's trio backend) on its httpx backend, and on
httpx2's, over real sockets: calls, retries and their waits, a Retry-After that holds back the
other tasks, the deadline, the connection gate;
and aiohttp, which needs asyncio, refused with a clear error.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import httpx
import pytest
import trio

from animalstore_client import (
    APITimeoutError,
    AsyncClient,
    DefaultAioHttpClient,
    DefaultAsyncHttpxClient,
    Pet,
    RateLimitError,
)
from animalstore_client._backends import deadline
from animalstore_client._backends.deadline import send_within_async
from animalstore_client.testing import FakeAnimalStore, retry_floor
from tests.reliability.conftest import NO_HTTPX2
from tests.reliability.faultserver import Action, FaultServer, Hangup, Reply

KEY = "sk-trio-SECRET-1c2d"
#: The async backends that run under trio: the SDK's own pool (httpx), and a user's httpx2.
TRIO_BACKENDS = [
    "httpx",
    pytest.param("httpx2", marks=pytest.mark.skipif(NO_HTTPX2 is not None, reason=str(NO_HTTPX2))),
]


def http_client(backend: str) -> Any:
    """``None`` for the SDK's own pool, or a user's ``httpx2.AsyncClient``; made in the loop."""
    if backend == "httpx":
        return None
    from animalstore_client import DefaultAsyncHttpx2Client

    return DefaultAsyncHttpx2Client()


def test_the_sdks_own_pool_works_under_trio_run() -> None:
    store = FakeAnimalStore(api_keys=[KEY])

    async def main(url: str) -> tuple[Pet, list[Pet]]:
        async with AsyncClient(api_key=KEY, base_url=url) as client:
            created = await client.create_pet(name="Rex", category_id=3, status="available")
            return created, await client.list_pets(status="available")

    with store.serve() as url:
        created, listed = trio.run(main, url)

    assert created == Pet(id=1, name="Rex", category_id=3, status="available")
    assert listed == [created]


def test_a_client_used_in_one_trio_run_after_another_opens_a_pool_in_each() -> None:
    store = FakeAnimalStore(api_keys=[KEY])
    with store.serve() as url:
        client = AsyncClient(api_key=KEY, base_url=url)

        async def call() -> list[Pet]:
            return await client.list_pets()

        assert trio.run(call) == []
        assert trio.run(call) == []  # a pool bound to the first run would fail here
        trio.run(client.aclose)


#: A Retry-After the tests honour as written (under ``retry_floor(0)``), slept for real: long
#: enough to be seen, short enough to cost nothing.
PAUSE = 0.05


@pytest.mark.parametrize("http", TRIO_BACKENDS)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_retries_wait_the_running_librarys_way(backend: str, http: str) -> None:
    with retry_floor(0.0), FaultServer() as server:
        server.script(
            Reply(
                503,
                json={"code": "busy", "message": "busy", "status": 503},
                headers={"Retry-After": f"{PAUSE}"},
            ),
            Reply(200, json=[]),
        )

        async def main() -> tuple[list[Pet], float]:
            own = http_client(http)
            async with AsyncClient(
                api_key=KEY, base_url=server.base_url, http_client=own
            ) as client:
                started = anyio.current_time()
                pets = await client.list_pets()
            if own is not None:
                await own.aclose()
            return pets, anyio.current_time() - started

        pets, took = anyio.run(main, backend=backend)

        assert pets == []
        assert len(server.requests) == 2
        assert took >= PAUSE  # the Retry-After wait was slept, not skipped


@pytest.mark.parametrize("http", TRIO_BACKENDS)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_one_calls_retry_after_holds_back_the_tasks_that_start_later(
    backend: str, http: str
) -> None:
    with retry_floor(0.0), FaultServer(default=Reply(200, json=[])) as server:
        server.script(Reply(429, json={}, headers={"Retry-After": f"{PAUSE}"}))

        async def main() -> list[list[Pet]]:
            own = http_client(http)
            results: list[list[Pet]] = []
            async with AsyncClient(
                api_key=KEY, base_url=server.base_url, http_client=own
            ) as client:
                with pytest.raises(RateLimitError):
                    await client.with_options(max_retries=0).list_pets()

                async def one() -> None:
                    results.append(await client.list_pets())

                async with anyio.create_task_group() as group:
                    for _ in range(5):
                        group.start_soon(one)
            if own is not None:
                await own.aclose()
            return results

        assert anyio.run(main, backend=backend) == [[]] * 5
        limited, *later = server.requests
        assert len(later) == 5
        assert min(request.received_at for request in later) >= limited.received_at + PAUSE


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_gate_holds_calls_beyond_the_pool_and_lets_all_through(backend: str) -> None:
    with FaultServer(default=Reply(200, json=[], delay=0.01)) as server:

        async def main() -> list[list[Pet]]:
            results: list[list[Pet]] = []
            async with (
                DefaultAsyncHttpxClient(limits=httpx.Limits(max_connections=1)) as http,
                AsyncClient(api_key=KEY, base_url=server.base_url, http_client=http) as client,
            ):

                async def one() -> None:
                    results.append(await client.list_pets())

                async with anyio.create_task_group() as group:
                    for _ in range(6):
                        group.start_soon(one)
            return results

        assert anyio.run(main, backend=backend) == [[]] * 6
        assert len(server.requests) == 6
        assert len({request.connection for request in server.requests}) == 1


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("ending", ["fails", "times-out", "is-cancelled"])
def test_a_call_that_ends_badly_gives_its_gate_slot_back(backend: str, ending: str) -> None:
    # One connection: a gate of one place. Three calls that end badly, then three that must
    # still get in within the pool timeout: a call that kept its place would leave none.
    endings: dict[str, Action] = {
        "fails": Hangup(),
        "times-out": Reply(200, json=[], delay=1.0),
        "is-cancelled": Reply(200, json=[], delay=1.0),
    }
    bad = endings[ending]
    with FaultServer() as server:
        server.script(bad, bad, bad)
        server.default = Reply(200, json=[])

        async def main() -> list[Any]:
            outcomes: list[Any] = []
            async with (
                DefaultAsyncHttpxClient(
                    limits=httpx.Limits(max_connections=1), timeout=httpx.Timeout(5.0, pool=0.5)
                ) as http,
                AsyncClient(
                    api_key=KEY, base_url=server.base_url, http_client=http, max_retries=0
                ) as client,
            ):
                for sent in range(1, 4):
                    if ending == "is-cancelled":
                        # Cancelled once the server has its request: it holds its place then.
                        async with anyio.create_task_group() as group:
                            group.start_soon(client.list_pets)
                            arrived = await anyio.to_thread.run_sync(
                                server.wait_for_requests, sent, 5.0
                            )
                            group.cancel_scope.cancel()
                        outcomes.append("cancelled" if arrived else "never sent")
                        continue
                    try:
                        await client.list_pets(timeout=0.05 if ending == "times-out" else 5.0)
                    except Exception as exc:
                        outcomes.append(type(exc).__name__)
                for _ in range(3):
                    outcomes.append(await client.list_pets())
            return outcomes

        outcomes = anyio.run(main, backend=backend)

    assert outcomes[3:] == [[], [], []]
    expected = {
        "fails": "APIConnectionError",
        "times-out": "APITimeoutError",
        "is-cancelled": "cancelled",
    }[ending]
    assert outcomes[:3] == [expected] * 3


def test_aiohttp_under_trio_is_refused_saying_why() -> None:
    loop = asyncio.new_event_loop()

    async def make() -> Any:
        return DefaultAioHttpClient()

    session = loop.run_until_complete(make())

    async def main() -> None:
        AsyncClient(api_key=KEY, base_url="http://127.0.0.1:9/v1", http_client=session)

    with pytest.raises(RuntimeError) as caught:
        trio.run(main)
    loop.run_until_complete(session.close())
    loop.close()

    assert str(caught.value).startswith(
        "an AsyncClient on aiohttp needs asyncio: aiohttp does not run under trio."
    )


#: The deadline of a call that a server holds: long enough for the request to reach it.
DEADLINE = 0.2


@pytest.mark.parametrize("http", TRIO_BACKENDS)
@pytest.mark.parametrize("mode", ["headers", "silent"])
def test_the_deadline_cuts_a_call_off_under_trio(
    mode: str, http: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.reliability.test_bounded_cost import DripServer

    # What the attempt is given: how long before it is cancelled, and each phase's timeout.
    granted: list[tuple[float, dict[str, float | None]]] = []

    async def bounded(seconds: float, send: Any, request: Any) -> Any:
        granted.append((seconds, dict(request.timeout)))
        return await send_within_async(seconds, send, request)

    monkeypatch.setattr(deadline, "send_within_async", bounded)
    server = DripServer(mode)

    async def main() -> tuple[BaseException, float]:
        own = http_client(http)
        async with AsyncClient(
            api_key=KEY, base_url=server.base_url, timeout=5.0, deadline=DEADLINE, http_client=own
        ) as client:
            started = trio.current_time()
            try:
                await client.list_pets()
            except Exception as exc:
                return exc, trio.current_time() - started
            finally:
                if own is not None:
                    await own.aclose()
            raise AssertionError("the call returned")

    try:
        error, elapsed = trio.run(main)
    finally:
        server.close()
    # The server drips a byte every 0.1 s ("headers"), within every per-phase timeout, or
    # says nothing: the call ends only because the deadline cancels its one attempt.
    assert type(error) is APITimeoutError
    assert f"deadline={DEADLINE:g} s passed before the call was done" in str(error)
    assert len(granted) == 1
    seconds, timeouts = granted[0]
    assert 0 < seconds <= DEADLINE
    assert all(phase is not None and 0 < phase <= DEADLINE for phase in timeouts.values())
    assert elapsed >= 0.9 * DEADLINE  # not cut off before its time
    assert server.requests == 1
