"""The deadline in the sans-IO core (``Call``), without I/O: which outcome it reports.

The end-to-end behaviour (every backend against dripping servers) is in
``tests/reliability/test_bounded_cost.py``; these pin down what no real server can time
deterministically.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx
import pytest

from animalstore_client import APIStatusError, APITimeoutError, InternalServerError
from animalstore_client._backends.deadline import send_within, send_within_async
from animalstore_client._core import operations as ops
from animalstore_client._core.call import Call
from animalstore_client._core.config import resolve_options
from animalstore_client._core.retries import Pause
from animalstore_client._core.wire import Answer, Failure, Request, SendFailure, deadline_passed
from tests.conftest import StoppedClock, httpx_answer, stopped_clock


def options(*, timeout: float, deadline: float) -> Any:
    """Options with two retries and the given per-attempt timeout and deadline."""
    return resolve_options(
        "k",
        environment=None,
        base_url="http://api.test/v1",
        timeout=timeout,
        max_retries=2,
        default_headers=None,
        deadline=deadline,
        environ={},
    )


def list_call(*, timeout: float, deadline: float, pause: Pause | None = None) -> Call[Any]:
    """A ``list_pets`` call with ``options(timeout=..., deadline=...)``, its client family's
    ``pause`` if given."""
    return Call(
        ops.list_pets(limit=None, status=None),
        options(timeout=timeout, deadline=deadline),
        pause=pause,
    )


OPTIONS = options(timeout=30.0, deadline=0.05)


def read_timeout(call: Call[Any]) -> SendFailure:
    return SendFailure(
        Failure.MAYBE_SENT, "ReadTimeout: timed out", timeout=True, view=call.request.view()
    )


def test_each_attempt_waits_no_longer_than_the_time_left() -> None:
    call = Call(ops.list_pets(limit=None, status=None), OPTIONS)

    timeouts = call.begin().timeout

    assert set(timeouts) == {"connect", "read", "write", "pool"}
    assert all(seconds is not None and 0 < seconds <= 0.05 for seconds in timeouts.values())


def test_an_attempts_own_timeout_at_the_deadline_is_reported_as_the_deadline() -> None:
    # The attempt's read timeout was cut to the time left, so it fires with the deadline;
    # whichever of the two comes first, the call says the deadline passed, and is not retried.
    call = Call(ops.list_pets(limit=None, status=None), OPTIONS)
    call.begin()
    time.sleep(0.06)

    with pytest.raises(APITimeoutError, match=r"failed: deadline=0\.05 s passed"):
        call.after(read_timeout(call))
    assert call.retries == 0


def test_a_timeout_before_the_deadline_is_retried_as_usual() -> None:
    call = list_call(timeout=1.0, deadline=60)
    call.begin()

    step = call.after(read_timeout(call))

    assert step.done is False
    assert call.retries == 1


def test_a_retry_that_the_client_familys_pause_outlasts_is_refused_without_a_wait() -> None:
    # Another call's Retry-After paused the client for 30 s while this one was in flight. Its
    # own backoff (half a second) fits in its deadline, the pause does not: the call fails at
    # once with its own error, instead of sleeping its backoff to learn that.
    pause = Pause()
    call = list_call(timeout=1.0, deadline=10.0, pause=pause)
    call.begin()
    pause.extend(30.0)

    with pytest.raises(APITimeoutError, match="ReadTimeout: timed out"):
        call.after(read_timeout(call))
    assert call.retries == 0


# -- at the instant of the deadline, and after it --------------------------------------------
# With ``time.monotonic`` frozen, instants the real clock never hits to the nanosecond can be
# made to coincide: the deadline's own instant belongs to the past, not to the call.


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> StoppedClock:
    """``time.monotonic`` stopped: it moves only when the test moves it."""
    return stopped_clock(monkeypatch, time, "monotonic")


def unavailable(**headers: str) -> Answer:
    body = {"code": "unavailable", "message": "try later", "status": 503}
    return httpx_answer(httpx.Response(503, json=body, headers=headers))


def test_the_time_left_runs_down_to_nothing_at_the_deadline_and_stays_there(
    clock: StoppedClock,
) -> None:
    # What a client gives an attempt to finish in (``send_within``, anyio's ``move_on_after``).
    call = list_call(timeout=30.0, deadline=2.0)

    clock.now += 0.5
    assert call.remaining() == 1.5
    clock.now += 1.5
    assert call.remaining() == 0.0
    clock.now += 1.0
    assert call.remaining() == 0.0


def test_a_timeout_that_fires_at_the_very_instant_of_the_deadline_is_the_deadlines(
    clock: StoppedClock,
) -> None:
    call = list_call(timeout=30.0, deadline=2.0)
    call.begin()
    clock.now += 2.0

    with pytest.raises(APITimeoutError, match=r"failed: deadline=2 s passed"):
        call.after(read_timeout(call))
    assert call.retries == 0


def test_a_retry_that_would_start_at_the_very_instant_of_the_deadline_is_not_made(
    clock: StoppedClock,
) -> None:
    # It would have no time at all: the answer's own error, at once.
    call = list_call(timeout=30.0, deadline=2.0)
    call.begin()

    with pytest.raises(InternalServerError) as caught:
        call.after(unavailable(**{"retry-after": "2"}))
    assert caught.value.status_code == 503
    assert call.retries == 0


def test_a_pause_that_ends_at_the_very_instant_of_the_deadline_leaves_no_time(
    clock: StoppedClock,
) -> None:
    pause = Pause()
    call = list_call(timeout=30.0, deadline=2.0, pause=pause)
    pause.extend(2.0)

    with pytest.raises(APITimeoutError) as caught:
        call.wait()
    assert str(caught.value) == (
        "GET http://api.test/v1/pets failed: deadline=2 s leaves no time for the 2.0 s wait the "
        "service asked for (Retry-After)"
    )


def test_the_deadlines_outcome_is_a_fatal_timeout() -> None:
    request = Request("GET", "http://api.test/v1/pets", None, {}, None, {}, deadline=2.5)

    for failure in (
        deadline_passed(request, request.view()),
        deadline_passed(request, request.view(), 3.0),
    ):
        assert (failure.failure, failure.timeout) == (Failure.FATAL, True)
    assert repr(deadline_passed(request, request.view(), 3.0)) == (
        "<SendFailure fatal: deadline=2.5 s leaves no time for the 3.0 s wait the service asked "
        "for (Retry-After)>"
    )
    assert repr(deadline_passed(request, request.view())) == (
        "<SendFailure fatal: deadline=2.5 s passed before the call was done>"
    )


def test_a_retry_whose_sleep_overran_the_deadline_ends_in_the_deadlines_error(
    clock: StoppedClock,
) -> None:
    # The client drives the call as below. A retry fitted in the deadline, but its sleep
    # overran it (a busy machine): no pause holds the call back, so the attempt starts with
    # no time at all, the client sends nothing (``send_within(0)`` is ``None``), and the call
    # says the deadline passed, rather than blaming the answer a retry was due for.
    call = list_call(timeout=30.0, deadline=2.0)
    call.begin()
    step = call.after(unavailable())  # no Retry-After: the call's own backoff
    assert step.done is False
    clock.now += step.delay + 2.0  # past the deadline, whatever the backoff (0.5 s at most)

    assert call.wait() == 0.0
    assert call.begin().timeout == dict.fromkeys(("connect", "read", "write", "pool"), 0.0)
    assert call.remaining() == 0.0
    with pytest.raises(APITimeoutError, match=r"failed: deadline=2 s passed"):
        call.after(None)


def test_a_retry_that_a_later_pause_outlasts_gives_the_last_answers_error(
    clock: StoppedClock,
) -> None:
    # The retry was due after the call's own backoff when another call of the client family
    # got a 429 asking for 30 s, more than the deadline leaves: the call fails at once, with
    # the error of the answer it got, as when its own answer asks for too long a wait.
    pause = Pause()
    call = list_call(timeout=30.0, deadline=10.0, pause=pause)
    call.begin()
    assert call.after(unavailable()).done is False
    pause.extend(30.0)

    with pytest.raises(APIStatusError) as caught:
        call.wait()
    assert type(caught.value) is InternalServerError
    assert caught.value.status_code == 503


# -- running one attempt within the time left (_backends/deadline.py) --------------------------

#: Called with stand-ins for a request and an outcome, which they only pass through.
within: Any = send_within
within_async: Any = send_within_async


def test_a_sync_attempt_still_running_at_its_time_is_given_up_and_left_to_finish() -> None:
    release = threading.Event()
    finished = threading.Event()
    request = object()
    seen: list[object] = []

    def send(sent: Any) -> Any:
        seen.append(sent)
        # Held until the test has its answer, or for 1 s: a caller that waits longer gets it.
        release.wait(1)
        finished.set()
        return "late"

    assert within(0.02, send, request) is None
    assert seen == [request]
    assert not finished.is_set()  # not waited for: the caller got None first
    release.set()
    assert finished.wait(10)


def test_a_sync_attempt_done_in_time_gives_its_outcome_or_raises_its_error() -> None:
    assert within(10, lambda request: ("sent", request), "r") == ("sent", "r")

    def broken(request: Any) -> Any:
        raise KeyError(request)

    with pytest.raises(KeyError, match="r"):
        within(10, broken, "r")


@pytest.mark.parametrize("seconds", [0, -1.0])
def test_no_time_left_sends_nothing(seconds: float) -> None:
    sent: list[object] = []

    async def async_send(request: Any) -> Any:
        sent.append(request)

    assert within(seconds, sent.append, "r") is None
    assert asyncio.run(within_async(seconds, async_send, "r")) is None
    assert sent == []


def test_an_async_attempt_still_running_at_its_time_is_cancelled() -> None:
    cancelled: list[bool] = []

    async def send(request: Any) -> Any:
        try:
            await asyncio.Event().wait()  # never set: only the cancellation ends it
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def fast(request: Any) -> Any:
        return ("sent", request)

    assert asyncio.run(within_async(0.02, send, "r")) is None
    assert cancelled == [True]
    assert asyncio.run(within_async(10, fast, "r")) == ("sent", "r")
