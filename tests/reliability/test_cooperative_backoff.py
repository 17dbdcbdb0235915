"""Cooperative backoff: one call's 429 or 503 with ``Retry-After`` holds back every call of
the client (and its ``with_options`` copies) that starts or retries later, over real sockets,
on every backend.

Times are the fault server's ``time.monotonic()`` when each request arrived, so "nothing was
sent during the wait" is read where it happens, at the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from animalstore_client import (
    APIStatusError,
    APITimeoutError,
    InternalServerError,
    RateLimitError,
)
from tests.reliability.conftest import SYNC_KINDS, Api
from tests.reliability.faultserver import FaultServer, Reply

IN_FLIGHT = 50
LATER = 10
#: Long enough that the in-flight calls' 503s surely come after the 429 reached the client.
RETRY_AFTER = 2
EMPTY = Reply(200, json=[])


@pytest.fixture
def threads() -> Iterator[ThreadPoolExecutor]:
    """Threads for the sync kinds' concurrent calls (the loop's default pool has 6)."""
    with ThreadPoolExecutor(IN_FLIGHT + LATER) as executor:
        yield executor


def starter(kind: str, threads: ThreadPoolExecutor) -> Callable[[Callable[[], Any]], Any]:
    """Return ``start(call)``, which starts ``call()`` on the running loop (in a thread for a
    sync client) and returns its future."""

    def start(call: Callable[[], Any]) -> Any:
        if kind in SYNC_KINDS:
            return asyncio.get_running_loop().run_in_executor(threads, call)
        return asyncio.ensure_future(call())

    return start


def test_a_retry_after_holds_back_the_calls_in_flight_and_those_that_start_later(
    kind: str,
    make_server: Callable[..., FaultServer],
    make_client: Callable[..., Api],
    aloop: asyncio.AbstractEventLoop,
    threads: ThreadPoolExecutor,
) -> None:
    server = make_server(default=EMPTY, max_connections=2 * (IN_FLIGHT + LATER))
    # The calls in flight get a 503 without Retry-After a little later, and would retry after
    # their own backoff (0.375 s to 0.5 s); the one that starts after them gets the 429.
    server.script(
        *[Reply(503, json={}, delay=0.5)] * IN_FLIGHT,
        Reply(429, json={}, headers=[("Retry-After", str(RETRY_AFTER))]),
    )
    client = make_client(server).target
    start = starter(kind, threads)

    async def scenario() -> tuple[list[Any], float]:
        in_flight = [start(client.list_pets) for _ in range(IN_FLIGHT)]
        assert await asyncio.to_thread(server.wait_for_requests, IN_FLIGHT, 10.0)
        # A copy, without retries: it shares the pause, and its 429 comes back at once.
        with pytest.raises(RateLimitError):
            await start(client.with_options(max_retries=0).list_pets)
        started_later = asyncio.get_running_loop().time()
        later = [start(client.list_pets) for _ in range(LATER)]
        return list(await asyncio.gather(*in_flight, *later)), started_later

    results, started_later = aloop.run_until_complete(scenario())

    assert results == [[]] * (IN_FLIGHT + LATER)
    requests = server.requests
    assert len(requests) == IN_FLIGHT + 1 + IN_FLIGHT + LATER  # 503s, 429, retries, later calls
    limited_at = requests[IN_FLIGHT].received_at
    # The later calls really started while the pause lasted (asyncio's clock is monotonic).
    assert started_later < limited_at + RETRY_AFTER
    arrivals = [request.received_at - limited_at for request in requests[IN_FLIGHT + 1 :]]
    assert min(arrivals) >= RETRY_AFTER


@pytest.mark.parametrize(
    ("status", "retry_after", "paused"),
    [
        (429, "30", True),
        (503, "30", True),
        (429, None, False),  # no Retry-After: only that call backs off, on its own schedule
        (500, "30", False),  # a 500 says nothing of the service turning requests away
    ],
)
@pytest.mark.parametrize("operation", ["list_pets", "create_pet"])
def test_which_answers_pause_the_client(
    kind: str,
    make_server: Callable[..., FaultServer],
    make_client: Callable[..., Api],
    operation: str,
    status: int,
    retry_after: str | None,
    paused: bool,
) -> None:
    server = make_server(default=EMPTY)
    headers = [] if retry_after is None else [("Retry-After", retry_after)]
    server.script(Reply(status, json={}, headers=headers))
    api = make_client(server, max_retries=0)
    with pytest.raises(APIStatusError) as refused:
        api.invoke(operation)
    assert refused.value.status_code == status

    # The next call's deadline is shorter than the 30 s asked for: paused, it fails at once
    # without sending anything; not paused, it is sent and answered.
    later = api.with_options(deadline=3.0)
    if paused:
        with pytest.raises(APITimeoutError, match=r"deadline=3 s leaves no time for the \d"):
            later.list_pets()
        assert len(server.requests) == 1
    else:
        assert later.list_pets() == []
        assert len(server.requests) == 2


def test_a_retry_that_another_calls_pause_outlasts_gives_its_own_last_error_at_once(
    kind: str,
    make_server: Callable[..., FaultServer],
    make_client: Callable[..., Api],
    aloop: asyncio.AbstractEventLoop,
    threads: ThreadPoolExecutor,
) -> None:
    server = make_server(default=EMPTY)
    # The call in flight gets a 503 (its own backoff: 0.5 s at most) after the other call's
    # 429 asked for 30 s, more than its deadline leaves.
    server.script(
        Reply(503, json={}, delay=0.5), Reply(429, json={}, headers=[("Retry-After", "30")])
    )
    client = make_client(server).target
    start = starter(kind, threads)

    async def scenario() -> BaseException:
        in_flight = start(client.with_options(deadline=5.0).list_pets)
        assert await asyncio.to_thread(server.wait_for_requests, 1, 10.0)
        with pytest.raises(RateLimitError):
            await start(client.with_options(max_retries=0).list_pets)
        with pytest.raises(APIStatusError) as caught:
            await in_flight
        return caught.value

    error = aloop.run_until_complete(scenario())

    # Its last answer's error, not APITimeoutError, and no retry: the wait does not fit.
    assert type(error) is InternalServerError
    assert len(server.requests) == 2
