"""Cooperative backoff: one call's 429 or 503 with ``Retry-After`` holds back every call of
the client (and its ``with_options`` copies) that starts or retries later, over real sockets,
on every backend.

Times are the fault server's ``time.monotonic()`` when each request arrived, so "nothing was
sent during the wait" is read where it happens, at the server; the server reads the SDK's
clock (the ``clock`` fixture), so that the waits pass without being slept. Answers that must
come after another call's are held by the server until the test lets them go.
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
from tests.conftest import VirtualClock, at_scale, closed_after
from tests.reliability import faultserver
from tests.reliability.conftest import SYNC_KINDS, Api
from tests.reliability.faultserver import FaultServer, Reply
from tests.reliability.heldserver import Held, HoldingServer

#: Far longer than any backoff of the calls in flight (0.5 s at most, 25 s for all 50).
RETRY_AFTER = 30
EMPTY = Reply(200, json=[])


@pytest.fixture
def make_holding_server() -> Iterator[Callable[..., HoldingServer]]:
    def make(**options: Any) -> HoldingServer:
        server = HoldingServer(**options)
        server.start()
        return server

    yield from closed_after(make)


@pytest.fixture
def server_clock(clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    """The SDK's ``clock``, which the fault servers read too (``received_at``)."""
    monkeypatch.setattr(faultserver, "time", clock)
    return clock


@pytest.fixture
def threads() -> Iterator[ThreadPoolExecutor]:
    """Threads for the sync kinds' concurrent calls (the loop's default pool has 6)."""
    with ThreadPoolExecutor(60) as executor:
        yield executor


def starter(kind: str, threads: ThreadPoolExecutor) -> Callable[[Callable[[], Any]], Any]:
    """Return ``start(call)``, which starts ``call()`` on the running loop (in a thread for a
    sync client) and returns its future."""

    def start(call: Callable[[], Any]) -> Any:
        if kind in SYNC_KINDS:
            return asyncio.get_running_loop().run_in_executor(threads, call)
        return asyncio.ensure_future(call())

    return start


@pytest.mark.parametrize("in_flight", at_scale(20, 50, "in_flight"))
def test_a_retry_after_holds_back_the_calls_in_flight_and_those_that_start_later(
    in_flight: int,
    kind: str,
    make_holding_server: Callable[..., HoldingServer],
    make_client: Callable[..., Api],
    aloop: asyncio.AbstractEventLoop,
    threads: ThreadPoolExecutor,
    server_clock: VirtualClock,
) -> None:
    later_count = in_flight // 5
    server = make_holding_server(default=EMPTY, max_connections=2 * (in_flight + later_count))
    # The calls in flight get a 503 without Retry-After once the call that starts after them
    # got its 429, and would retry after their own backoff (0.375 s to 0.5 s). Then another
    # 429, and calls that start after it. (Two pauses, one after the other: the SDK's clock
    # moves on by each wait asked for, so the first pause is over once its waits are done.)
    too_many = Reply(429, json={}, headers=[("Retry-After", str(RETRY_AFTER))])
    server.script(*[Held(503, json={})] * in_flight, too_many)
    client = make_client(server).target
    start = starter(kind, threads)

    async def limited() -> float:
        # A copy, without retries: it shares the pause, and its 429 comes back at once.
        with pytest.raises(RateLimitError):
            await start(client.with_options(max_retries=0).list_pets)
        return server.requests[-1].received_at

    async def scenario() -> tuple[list[Any], list[float], float]:
        calls = [start(client.list_pets) for _ in range(in_flight)]
        assert await asyncio.to_thread(server.wait_for_requests, in_flight, 10.0)
        first_limited_at = await limited()
        server.release.set()
        results = list(await asyncio.gather(*calls))
        server.script(too_many)
        second_limited_at = await limited()
        started_later = server_clock.monotonic()
        later = [start(client.list_pets) for _ in range(later_count)]
        results += await asyncio.gather(*later)
        return results, [first_limited_at, second_limited_at], started_later

    results, limited_at, started_later = aloop.run_until_complete(scenario())

    assert results == [[]] * (in_flight + later_count)
    requests = server.requests
    # 503s, 429, retries, 429, later calls
    assert len(requests) == in_flight + 1 + in_flight + 1 + later_count
    retries = requests[in_flight + 1 : 2 * in_flight + 1]
    later_calls = requests[2 * in_flight + 2 :]
    assert [r.received_at for r in (requests[in_flight], requests[2 * in_flight + 1])] == limited_at
    assert min(r.received_at for r in retries) >= limited_at[0] + RETRY_AFTER
    # The later calls really started while the second pause lasted.
    assert started_later < limited_at[1] + RETRY_AFTER
    assert min(r.received_at for r in later_calls) >= limited_at[1] + RETRY_AFTER
    assert server_clock.slept  # every wait was asked of the clock, none slept for real


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
    make_holding_server: Callable[..., HoldingServer],
    make_client: Callable[..., Api],
    aloop: asyncio.AbstractEventLoop,
    threads: ThreadPoolExecutor,
    clock: VirtualClock,
) -> None:
    server = make_holding_server(default=EMPTY)
    # The call in flight gets a 503 (its own backoff: 0.5 s at most) after the other call's
    # 429 asked for 30 s, more than its deadline leaves.
    server.script(Held(503, json={}), Reply(429, json={}, headers=[("Retry-After", "30")]))
    client = make_client(server).target
    start = starter(kind, threads)

    async def scenario() -> BaseException:
        in_flight = start(client.with_options(deadline=5.0).list_pets)
        assert await asyncio.to_thread(server.wait_for_requests, 1, 10.0)
        with pytest.raises(RateLimitError):
            await start(client.with_options(max_retries=0).list_pets)
        server.release.set()
        with pytest.raises(APIStatusError) as caught:
            await in_flight
        return caught.value

    error = aloop.run_until_complete(scenario())

    # Its last answer's error, not APITimeoutError, and no retry: the wait does not fit.
    assert type(error) is InternalServerError
    assert len(server.requests) == 2
    assert clock.slept == []  # at once: no wait asked for
