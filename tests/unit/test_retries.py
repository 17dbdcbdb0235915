"""Which failures are retried, how often, how long the client waits, and that no write
happens twice.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
import respx

from animalstore_client import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    InternalServerError,
    Pet,
    RateLimitError,
)
from animalstore_client._core import retries as _retries
from animalstore_client._core.retry_policy import DEFAULT_RETRY
from animalstore_client.testing import retry_floor
from tests.conftest import Api

PET = {"id": 1, "name": "Rex", "categoryId": 3}


def error_response(status: int, **headers: str) -> httpx.Response:
    body = {"code": "failed", "message": f"status {status}", "status": status}
    return httpx.Response(status, json=body, headers=headers)


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_a_get_is_retried_on_retryable_statuses(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], status: int
) -> None:
    route = mock_api.get("/pets").mock(
        side_effect=[error_response(status), error_response(status), httpx.Response(200, json=[])]
    )

    raw = api.with_raw_response.list_pets()

    assert raw.parse() == []
    assert raw.retries_taken == 2
    assert route.call_count == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 501])
def test_other_statuses_are_not_retried(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], status: int
) -> None:
    route = mock_api.get("/pets").mock(return_value=error_response(status))

    with pytest.raises(APIStatusError):
        api.list_pets()

    assert route.call_count == 1
    assert sleeps == []


def test_retries_stop_at_max_retries_and_raise_the_last_error(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    api = make_api(max_retries=3)
    route = mock_api.get("/pets").mock(return_value=error_response(503))

    with pytest.raises(InternalServerError) as caught:
        api.list_pets()

    assert caught.value.status_code == 503
    assert route.call_count == 4
    assert len(sleeps) == 3


def test_max_retries_zero_sends_exactly_one_request(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    api = make_api(max_retries=0)
    route = mock_api.get("/pets").mock(side_effect=httpx.ConnectError("refused"))

    with pytest.raises(APIConnectionError):
        api.list_pets()

    assert route.call_count == 1
    assert sleeps == []


@pytest.mark.parametrize(
    "error",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.ReadError("reset"),
        httpx.RemoteProtocolError("disconnected"),
    ],
)
def test_a_get_is_retried_after_transport_failures(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], error: Exception
) -> None:
    route = mock_api.get("/pets").mock(side_effect=[error, httpx.Response(200, json=[PET])])

    assert api.list_pets() == [Pet(id=1, name="Rex", category_id=3)]
    assert route.call_count == 2
    assert len(sleeps) == 1


@pytest.mark.parametrize("status", [408, 500, 502, 504])
def test_a_create_is_never_retried_when_it_may_have_been_processed(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], status: int
) -> None:
    route = mock_api.post("/pets").mock(return_value=error_response(status))

    with pytest.raises(APIStatusError) as caught:
        api.create_pet(name="Rex", category_id=3)

    assert caught.value.status_code == status
    assert route.call_count == 1
    assert sleeps == []


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (httpx.ReadTimeout("slow"), APITimeoutError),
        (httpx.WriteTimeout("slow"), APITimeoutError),
        (httpx.ReadError("reset"), APIConnectionError),
        (httpx.RemoteProtocolError("disconnected"), APIConnectionError),
    ],
)
def test_a_create_is_not_retried_after_a_failure_once_sent(
    api: Api,
    mock_api: respx.MockRouter,
    sleeps: list[float],
    error: Exception,
    expected: type[Exception],
) -> None:
    route = mock_api.post("/pets").mock(side_effect=error)

    with pytest.raises(expected):
        api.create_pet(name="Rex", category_id=3)

    assert route.call_count == 1
    assert sleeps == []


@pytest.mark.parametrize(
    "first",
    [
        error_response(429),
        error_response(503),
        httpx.ConnectError("refused"),
        httpx.ConnectTimeout("slow"),
        httpx.PoolTimeout("busy"),
    ],
    ids=["429", "503", "connect-error", "connect-timeout", "pool-timeout"],
)
def test_a_create_is_retried_with_the_same_key_when_provably_not_processed(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], first: httpx.Response | Exception
) -> None:
    route = mock_api.post("/pets").mock(side_effect=[first, httpx.Response(201, json=PET)])

    assert api.create_pet(name="Rex", category_id=3) == Pet(id=1, name="Rex", category_id=3)

    assert route.call_count == 2
    keys = [call.request.headers["idempotency-key"] for call in route.calls]
    assert keys[0] == keys[1]
    assert [call.request.content for call in route.calls] == [route.calls[0].request.content] * 2
    assert len(sleeps) == 1


def test_retry_after_in_seconds_is_honoured(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    mock_api.get("/pets").mock(
        side_effect=[
            error_response(429, **{"Retry-After": "3"}),
            error_response(503, **{"Retry-After": "0.75"}),
            httpx.Response(200, json=[]),
        ]
    )

    api.list_pets()

    assert sleeps == [3.0, 0.75]


def test_retry_after_as_an_http_date_is_honoured(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    when = datetime.now(timezone.utc) + timedelta(seconds=10)
    mock_api.get("/pets").mock(
        side_effect=[
            error_response(503, **{"Retry-After": format_datetime(when, usegmt=True)}),
            httpx.Response(200, json=[]),
        ]
    )

    api.list_pets()

    assert len(sleeps) == 1
    assert 8.0 < sleeps[0] <= 10.0


@pytest.mark.parametrize("value", ["3600", "86400000", "Fri, 01 Jan 2100 00:00:00 GMT"])
def test_an_absurd_retry_after_is_capped(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], value: str
) -> None:
    mock_api.get("/pets").mock(
        side_effect=[error_response(429, **{"Retry-After": value}), httpx.Response(200, json=[])]
    )

    api.list_pets()

    assert sleeps == [_retries.MAX_RETRY_AFTER] == [60.0]


@pytest.mark.parametrize(
    "value",
    [
        "soon",
        "",
        "nan",
        "0",
        "0.0",
        "-5",
        "-inf",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "Thu, 12 Jan 1970 13:46:40 GMT",  # exactly `now`
        "Mon, 1 Jan 99999999999999999999 00:00:00 GMT",
        "Mon, 1 Jan 1000 00:00:00 GMT",
        "Sat, 01 Jan 0050 00:00:00 GMT",  # the year 50, which email.utils reads as 2050
        "Mon, 32 Jan 2030 00:00:00 GMT",
        "Mon, 1 Jan 2030 25:00:00 GMT",
        "Thu, 01 Jan 1970 00:00:00 -0000",
    ],
)
def test_an_unusable_zero_or_past_retry_after_falls_back_to_backoff(value: str) -> None:
    assert _retries.retry_after(httpx.Headers({"Retry-After": value}), now=1_000_000.0) is None


@pytest.mark.parametrize("value", ["0", "-1", "Thu, 01 Jan 1970 00:00:00 GMT"])
def test_a_zero_or_past_retry_after_waits_the_computed_backoff(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float], value: str
) -> None:
    api = make_api(max_retries=3)
    route = mock_api.get("/pets").mock(return_value=error_response(503, **{"Retry-After": value}))

    with pytest.raises(InternalServerError):
        api.list_pets()

    assert route.call_count == 4
    assert len(sleeps) == 3
    for retries_taken, wait in enumerate(sleeps):
        full = DEFAULT_RETRY.initial_delay * 2**retries_taken
        assert 0.75 * full <= wait <= full


def test_backoff_doubles_from_half_a_second_to_a_cap_of_eight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.0)
    assert [_retries.backoff(DEFAULT_RETRY, n) for n in range(7)] == [
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        8.0,
        8.0,
    ]
    monkeypatch.setattr(random, "random", lambda: 0.999999)
    jittered = [_retries.backoff(DEFAULT_RETRY, n) for n in range(7)]
    assert all(
        0.75 * full <= wait < full
        for wait, full in zip(jittered, [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0], strict=True)
    )


def test_backoff_grows_between_attempts_and_stays_under_the_cap(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    api = make_api(max_retries=6)
    mock_api.get("/pets").mock(return_value=error_response(500))

    with pytest.raises(InternalServerError):
        api.list_pets()

    assert len(sleeps) == 6
    assert all(earlier < later for earlier, later in itertools.pairwise(sleeps[:5]))
    assert all(0.375 <= wait <= 8.0 for wait in sleeps)
    assert sleeps[-1] >= 6.0


def test_rate_limit_exhausted_raises_rate_limit_error(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    api = make_api(max_retries=1)
    route = mock_api.post("/pets").mock(return_value=error_response(429, **{"Retry-After": "1"}))

    with pytest.raises(RateLimitError):
        api.create_pet(name="Rex", category_id=3)

    assert route.call_count == 2
    assert sleeps == [1.0]


# -- what Retry-After may say, and the floor under it -----------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "1_0",  # int() and float() read it as 10
        "\u0665",  # ARABIC-INDIC DIGIT FIVE: int() reads it as 5
        "\uff15",  # FULLWIDTH DIGIT FIVE
        "\u0661\u0660",
        "+5",
        "5e1",
        "0x10",
        "inf",
        "infinity",
        "1.",
        ".5",
        "1,5",
        "5 s",
    ],
)
def test_retry_after_is_ascii_digits_or_an_http_date_nothing_else(value: str) -> None:
    assert _retries.retry_after({"retry-after": value}, now=1_000_000.0) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("10", 10.0), ("007", 7.0), ("1.5", 1.5), (" 2 ", 2.0), ("0.3", 0.3), ("60", 60.0)],
)
def test_retry_after_in_ascii_digits_is_read(value: str, seconds: float) -> None:
    assert _retries.retry_after({"retry-after": value}) == seconds


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("Thu, 12 Jan 1970 13:46:44 GMT", 4.0),  # `now` is 13:46:40 that day
        ("Thursday, 12-Jan-70 13:47:40 GMT", 60.0),
        ("Thu, 12 Jan 1970 13:50:00 GMT", 60.0),  # 200 s: the cap
    ],
)
def test_retry_after_as_an_http_date_counts_from_the_given_now(value: str, seconds: float) -> None:
    assert _retries.retry_after({"retry-after": value}, now=1_000_000.0) == seconds


@pytest.fixture(
    params=[("JST-9", -9 * 3600), ("HST10", 10 * 3600), ("UTC0", 0)], ids=lambda zone: zone[0]
)
def local_zone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The process's local time zone for one test: Tokyo's (UTC+9), Hawaii's (UTC-10), GMT.

    POSIX rules, which need no zone database, so the zone is the one asked for on any machine.
    """
    zone, offset = request.param
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", zone)
        time.tzset()
        try:
            assert time.timezone == offset  # the zone really changed
            yield zone
        finally:
            patch.undo()
            time.tzset()


#: 1994-11-06 08:49:33 GMT and 2031-12-05 10:00:00 GMT, as Unix times.
NOW_1994, NOW_2031 = 784_111_773.0, 1_954_231_200.0


@pytest.mark.parametrize(
    ("value", "now"),
    [
        ("Sun, 06 Nov 1994 08:49:37 GMT", NOW_1994),  # IMF-fixdate
        ("Sunday, 06-Nov-94 08:49:37 GMT", NOW_1994),  # obsolete RFC 850 form
        ("Sun Nov  6 08:49:37 1994", NOW_1994),  # asctime's, which names no zone
        ("Fri, 05 Dec 2031 10:00:04 GMT", NOW_2031),
        ("Friday, 05-Dec-31 10:00:04 GMT", NOW_2031),
        ("Fri Dec  5 10:00:04 2031", NOW_2031),
        ("Fri, 05 Dec 2031 10:00:04 -0000", NOW_2031),  # "no zone given" in RFC 5322: GMT here
    ],
)
def test_every_http_date_form_is_read_in_gmt_whatever_the_local_zone(
    local_zone: str, value: str, now: float
) -> None:
    assert _retries.retry_after({"retry-after": value}, now=now) == 4.0


class FrozenTime:
    """The ``time`` module as the retry policy sees it, with ``time()`` stopped at ``now``."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def test_an_asctime_retry_after_is_waited_as_asked_in_any_local_zone(
    local_zone: str,
    api: Api,
    mock_api: respx.MockRouter,
    sleeps: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_retries, "time", FrozenTime(NOW_2031))
    mock_api.get("/pets").mock(
        side_effect=[
            error_response(503, **{"Retry-After": "Fri Dec  5 10:00:04 2031"}),
            httpx.Response(200, json=[]),
        ]
    )

    assert api.list_pets() == []

    assert sleeps == [4.0]


@pytest.mark.parametrize("value", ["0.000001", "0.01", "0.29", "0.2999999"])
def test_a_retry_after_below_the_floor_waits_the_floor(value: str) -> None:
    assert _retries.MIN_RETRY_WAIT == 0.3
    assert _retries.retry_after({"retry-after": value}) == _retries.MIN_RETRY_WAIT


def test_no_retry_after_makes_a_client_retry_in_a_tight_loop(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    api = make_api(max_retries=20)
    route = mock_api.get("/pets").mock(
        return_value=error_response(503, **{"Retry-After": "0.000001"})
    )

    with pytest.raises(InternalServerError):
        api.list_pets()

    assert route.call_count == 21
    assert sleeps == [0.3] * 20


def test_a_test_may_lower_the_floor_for_a_block(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    mock_api.get("/pets").mock(
        side_effect=[
            error_response(503, **{"Retry-After": "0.01"}),
            error_response(503, **{"Retry-After": "0.01"}),
            httpx.Response(200, json=[]),
        ]
    )

    with retry_floor(0.0):
        api.list_pets()
        assert _retries.retry_after({"retry-after": "0.000001"}) == 0.000001
    # Restored on exit, and after an error inside the block.
    assert _retries.retry_after({"retry-after": "0.01"}) == 0.3
    with pytest.raises(KeyError), retry_floor(0.05):
        raise KeyError("inside")
    assert _retries.retry_after({"retry-after": "0.01"}) == 0.3

    assert sleeps == [0.01, 0.01]


@pytest.mark.parametrize(
    ("seconds", "error", "match"),
    [
        (-0.1, ValueError, "0 or more"),
        (math.nan, ValueError, "nan"),
        (math.inf, ValueError, "inf"),
        (True, TypeError, "bool"),
        ("0", TypeError, "str"),
    ],
)
def test_the_floor_is_lowered_to_a_number_of_seconds_only(
    seconds: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match), retry_floor(seconds):  # type: ignore[arg-type]
        pass
    assert _retries.retry_after({"retry-after": "0.01"}) == 0.3


def floor_seen() -> float | None:
    """What a ``Retry-After: 0.01`` is waited in this thread or task: 0.01 under a floor of
    0.01 or less, else the floor."""
    return _retries.retry_after({"retry-after": "0.01"})


def test_overlapping_blocks_in_two_threads_each_keep_their_own_floor_and_leave_none(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    """A opens first and ends first, while B's block is still open: a process-wide floor,
    restored on exit to what each block found, was left at A's 0.0 for good."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, list[float | None]] = {"a": [], "b": []}

    def a() -> None:
        with retry_floor(0.0):
            a_in.set()
            assert b_in.wait(10)
            seen["a"].append(floor_seen())
        a_out.set()

    def b() -> None:
        assert a_in.wait(10)
        with retry_floor(0.05):
            b_in.set()
            assert a_out.wait(10)
            seen["b"].append(floor_seen())

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    assert seen == {"a": [0.01], "b": [0.05]}
    assert floor_seen() == 0.3
    mock_api.get("/pets").mock(
        side_effect=[error_response(503, **{"Retry-After": "0.01"}), httpx.Response(200, json=[])]
    )
    assert api.list_pets() == []
    assert sleeps == [0.3]


def test_overlapping_blocks_in_two_tasks_each_keep_their_own_floor_and_leave_none(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    async def main() -> dict[str, list[float | None]]:
        a_in, b_in, a_out = asyncio.Event(), asyncio.Event(), asyncio.Event()
        seen: dict[str, list[float | None]] = {"a": [], "b": []}

        async def a() -> None:
            with retry_floor(0.0):
                a_in.set()
                await b_in.wait()
                seen["a"].append(floor_seen())
            a_out.set()

        async def b() -> None:
            await a_in.wait()
            with retry_floor(0.05):
                b_in.set()
                await a_out.wait()
                seen["b"].append(floor_seen())

        await asyncio.gather(a(), b())
        seen["main"] = [floor_seen()]
        return seen

    assert asyncio.run(main()) == {"a": [0.01], "b": [0.05], "main": [0.3]}
    assert floor_seen() == 0.3
    mock_api.get("/pets").mock(
        side_effect=[error_response(503, **{"Retry-After": "0.01"}), httpx.Response(200, json=[])]
    )
    assert api.list_pets() == []
    assert sleeps == [0.3]


def test_a_thread_without_a_block_keeps_the_floor_while_another_threads_block_is_open(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    mock_api.get("/pets").mock(
        side_effect=[error_response(503, **{"Retry-After": "0.01"}), httpx.Response(200, json=[])]
    )
    seen: list[float | None] = []

    def other() -> None:
        seen.append(floor_seen())
        seen.append(len(api.list_pets()))

    with retry_floor(0.0):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(10)
        assert floor_seen() == 0.01

    assert seen == [0.3, 0]
    assert sleeps == [0.3]


def test_a_task_started_in_a_block_has_its_floor_until_the_block_ends() -> None:
    async def main() -> list[float | None]:
        started, block_ended = asyncio.Event(), asyncio.Event()

        async def child() -> list[float | None]:
            seen = [floor_seen()]
            started.set()
            await block_ended.wait()
            return [*seen, floor_seen()]

        with retry_floor(0.0):
            task = asyncio.create_task(child())
            await started.wait()
        block_ended.set()
        return await task

    assert asyncio.run(main()) == [0.01, 0.3]


def test_blocks_of_one_thread_ended_out_of_order_leave_the_floor_as_it_was() -> None:
    outer, inner = retry_floor(0.0), retry_floor(0.05)
    outer.__enter__()
    inner.__enter__()
    assert floor_seen() == 0.05  # the innermost holds
    outer.__exit__(None, None, None)
    assert floor_seen() == 0.05
    inner.__exit__(None, None, None)
    assert floor_seen() == 0.3


def test_the_floor_holds_for_a_sync_call_whose_attempts_run_in_a_worker_thread(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    api = make_api(deadline=30.0)  # the sync client sends each attempt from a worker thread
    mock_api.get("/pets").mock(
        side_effect=[error_response(503, **{"Retry-After": "0.01"}), httpx.Response(200, json=[])]
    )

    with retry_floor(0.0):
        assert api.list_pets() == []

    assert sleeps == [0.01]


# -- the client family's pause ------------------------------------------------------------------


def test_a_later_shorter_retry_after_does_not_cut_a_longer_pause_short() -> None:
    pause = _retries.Pause()
    pause.extend(60.0)
    pause.extend(1.0)
    assert 59.0 < pause.left() <= 60.0


def test_threads_extending_one_pause_at_once_keep_the_longest_wait() -> None:
    """Thread A has read the pause's end and not yet written its own (shorter) one when thread
    B extends it: B must wait for A (the lock), not write in between and be overwritten.

    The interleaving is forced, not left to timing: A stops right after reading, until B has
    either asked for the lock (then A goes on, and B reads what A wrote) or, with no lock,
    written its end (then A writes its stale choice over it)."""
    b_got_in = threading.Event()
    a_reading = threading.Event()
    threads: dict[str, threading.Thread] = {}
    slot: Any = vars(_retries.Pause)["_until"]  # where Pause keeps the end of the pause

    class SteppedPause(_retries.Pause):
        __slots__ = ()

        @property
        def _until(self) -> float:
            value: float = slot.__get__(self)
            if threading.current_thread() is threads["a"]:
                a_reading.set()
                assert b_got_in.wait(10)
            return value

        @_until.setter
        def _until(self, value: float) -> None:
            slot.__set__(self, value)
            if threading.current_thread() is threads.get("b"):
                b_got_in.set()

    class AnnouncingLock:
        """The pause's lock, which says when B asks for it."""

        def __init__(self) -> None:
            self._lock = threading.Lock()

        def __enter__(self) -> None:
            if threading.current_thread() is threads.get("b"):
                b_got_in.set()
            self._lock.acquire()

        def __exit__(self, *exc_info: object) -> None:
            self._lock.release()

    pause = SteppedPause()
    pause._lock = AnnouncingLock()  # type: ignore[assignment]
    threads["a"] = threading.Thread(target=pause.extend, args=(10.0,))
    threads["a"].start()
    assert a_reading.wait(10)
    threads["b"] = threading.Thread(target=pause.extend, args=(60.0,))
    threads["b"].start()
    for thread in threads.values():
        thread.join(10)

    assert 59.0 < pause.left() <= 60.0


def test_a_closed_floor_leaves_its_context() -> None:
    # Closed floors would otherwise pile up in a context that opens one per test or per call,
    # and every call would look through them all.
    from animalstore_client._core import retries

    def opened() -> tuple[object, ...]:
        return retries._lowered().get()

    before = opened()
    for seconds in (0.0, 0.01, 0.02):
        with retry_floor(seconds):
            with retry_floor(0.05):
                assert len(opened()) == len(before) + 2
            assert len(opened()) == len(before) + 1
    assert opened() == before
