"""Retries over real sockets: which answers are retried, how often, how long the client waits,
and that ``create_pet`` never reaches the service twice.
"""

from __future__ import annotations

import itertools
import math
import re
import time
import uuid
from collections.abc import Callable
from email.utils import formatdate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    InternalServerError,
    Pet,
    PetStatus,
    RateLimitError,
)
from animalstore_client._core import retries as _retries
from animalstore_client._core.retry_policy import DEFAULT_RETRY
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import VirtualClock, at_scale
from tests.reliability import faultserver
from tests.reliability.conftest import API_KEY, PET, Api, error_body, raised_exactly
from tests.reliability.faultserver import FaultServer, Forward, Hangup, Reply

REX = Pet(id=1, name="Rex", category_id=3, status=PetStatus.AVAILABLE)
RETRYABLE = [408, 429, 500, 502, 503, 504]
#: The exact class each status must raise once retries are used up.
STATUS_CLASS = {
    408: APIStatusError,
    429: RateLimitError,
    500: InternalServerError,
    502: InternalServerError,
    503: InternalServerError,
    504: InternalServerError,
}
SUCCESS = {"list_pets": Reply(200, json=[PET]), "get_pet": Reply(200, json=PET)}
PATHS = {"list_pets": "/v1/pets", "get_pet": "/v1/pets/1"}
RESULTS = {"list_pets": [REX], "get_pet": REX}


def failure(status: int, **headers: str) -> Reply:
    return Reply(status, json=error_body(status), headers=headers)


@pytest.fixture
def server_clock(clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    """The ``clock`` of the SDK's waits, which the fault server reads too: a request's
    ``received_at`` and ``received_at_wall`` are then on the SDK's clock, so a wait the SDK
    asked for shows between two requests without being slept."""
    monkeypatch.setattr(faultserver, "time", clock)
    return clock


@pytest.mark.parametrize("operation", ["list_pets", "get_pet"])
@pytest.mark.parametrize("status", RETRYABLE)
def test_a_retryable_status_then_success_gives_one_result(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    status: int,
    operation: str,
) -> None:
    server.script(failure(status), failure(status), SUCCESS[operation])
    api = make_client(server, max_retries=2)

    raw = api.raw.invoke(operation)

    assert raw.parse() == RESULTS[operation]
    assert raw.retries_taken == 2
    assert [(r.method, r.path) for r in server.requests] == [("GET", PATHS[operation])] * 3
    assert len(sleeps) == 2


@pytest.mark.parametrize("status", RETRYABLE)
def test_when_retries_are_used_up_the_typed_error_is_raised(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float], status: int
) -> None:
    server.script(*[failure(status)] * 3, Reply(200, json=[]))
    api = make_client(server, max_retries=2)

    with pytest.raises(APIStatusError) as caught:
        api.list_pets()

    assert type(caught.value) is STATUS_CLASS[status]
    assert caught.value.status_code == status
    assert caught.value.code == "failed"
    assert len(server.requests) == 3
    assert server.pending == 1  # the success was never asked for
    assert len(sleeps) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 418, 501, 505])
def test_other_statuses_are_sent_once(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float], status: int
) -> None:
    server.script(failure(status), Reply(200, json=[]))
    api = make_client(server, max_retries=2)

    with pytest.raises(APIStatusError) as caught:
        api.list_pets()

    assert caught.value.status_code == status
    assert len(server.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize(
    ("fault", "error_class"),
    [
        (failure(503), InternalServerError),
        (failure(429), RateLimitError),
        (Hangup(), APIConnectionError),
    ],
    ids=["503", "429", "hangup"],
)
def test_max_retries_zero_sends_exactly_one_request(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    fault: Reply | Hangup,
    error_class: type[Exception],
) -> None:
    server.script(fault, Reply(200, json=[]))
    api = make_client(server, max_retries=0)

    raised_exactly(error_class, api.list_pets)

    assert len(server.requests) == 1
    assert sleeps == []


# -- Retry-After, on the SDK's clock (the server reads it too) ---------------------------------


@pytest.mark.parametrize(
    ("retry_after", "waited"),
    [
        pytest.param("1", 1.0, id="seconds"),  # the Retry-After, not the backoff (0.375-0.5 s)
        pytest.param("86400", 60.0, id="absurd: capped"),
    ],
)
def test_retry_after_in_seconds_is_honoured_up_to_the_cap(
    server: FaultServer,
    make_client: Callable[..., Api],
    server_clock: VirtualClock,
    retry_after: str,
    waited: float,
) -> None:
    server.script(failure(503, **{"Retry-After": retry_after}), Reply(200, json=[PET]))
    api = make_client(server, max_retries=1)

    assert api.list_pets() == [REX]

    assert server_clock.slept == [waited]
    assert _retries.MAX_RETRY_AFTER == 60.0
    first, second = server.requests
    assert second.received_at - first.received_at >= waited


def test_retry_after_as_an_http_date_is_honoured(
    server: FaultServer, make_client: Callable[..., Api], server_clock: VirtualClock
) -> None:
    api = make_client(server, max_retries=1)
    # Whole seconds (HTTP dates have no fraction): 2 to 3 s from now, so that the wait is over
    # a second however late in its second the test starts and however slow the first attempt
    # (+2 left under a second once, when the test began at x.999 s on a loaded machine).
    target = math.floor(server_clock.time()) + 3
    server.script(failure(429, **{"Retry-After": formatdate(target, usegmt=True)}))
    server.script(Reply(200, json=[PET]))

    assert api.list_pets() == [REX]

    first, second = server.requests
    (wait,) = server_clock.slept
    # The retry leaves at the date itself, not before; and the wait runs to the date from
    # after the first answer, without the backoff (at least 0.375 s) on top.
    assert second.received_at_wall >= target
    assert 1.0 <= wait <= target - first.received_at_wall


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", None),
        ("1.5", 1.5),
        ("60", 60.0),
        ("61", 60.0),
        ("86400", 60.0),
        ("9" * 400, 60.0),  # float() makes it inf
        ("1e400", None),  # not ASCII digits: RFC 9110's delay-seconds has no exponent
        ("-5", None),
        ("nan", None),
        ("soon", None),
        ("", None),
        (formatdate(1_000_000_030, usegmt=True), 30.0),
        (formatdate(1_000_000_000 + 86400, usegmt=True), 60.0),
        (formatdate(999_999_000, usegmt=True), None),
        (formatdate(1_000_000_000, usegmt=True), None),
        ("Mon, 1 Jan 99999999999999999999 00:00:00 GMT", None),
    ],
)
def test_retry_after_parsing_and_cap(value: str, expected: float | None) -> None:
    assert _retries.retry_after({"retry-after": value}, now=1_000_000_000.0) == expected


@pytest.mark.parametrize("examples", at_scale(100, 3000, "examples"))
def test_retry_after_never_fails_and_stays_within_the_cap(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None)
    @given(value=st.text(max_size=60) | st.from_regex(r"\s*-?[0-9.e+]{1,12}\s*", fullmatch=True))
    def check(value: str) -> None:
        wait = _retries.retry_after({"retry-after": value})
        assert wait is None or 0.0 < wait <= _retries.MAX_RETRY_AFTER

    check()


# -- backoff, recorded without sleeping -------------------------------------------------------


def test_backoff_grows_and_stays_under_its_cap(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(*[failure(503)] * 7)
    api = make_client(server, max_retries=6)

    with pytest.raises(InternalServerError):
        api.list_pets()

    assert len(server.requests) == 7
    assert len(sleeps) == 6
    for retry, delay in enumerate(sleeps):
        nominal = min(DEFAULT_RETRY.initial_delay * 2**retry, DEFAULT_RETRY.max_delay)
        assert 0.75 * nominal <= delay <= nominal
        assert delay <= DEFAULT_RETRY.max_delay
    # Strictly longer each time until the cap (8 s) is reached at the fifth wait.
    assert sleeps[0] < sleeps[1] < sleeps[2] < sleeps[3] < sleeps[4]
    assert min(sleeps[4:]) >= 0.75 * DEFAULT_RETRY.max_delay


def test_an_unparseable_retry_after_falls_back_to_backoff(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(429, **{"Retry-After": "whenever"}), Reply(200, json=[]))
    api = make_client(server, max_retries=1)

    assert api.list_pets() == []
    assert len(sleeps) == 1
    assert 0.375 <= sleeps[0] <= 0.5


def test_retry_after_replaces_backoff(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(
        failure(503, **{"Retry-After": "3"}),
        failure(429, **{"Retry-After": "0"}),
        Reply(200, json=[]),
    )
    api = make_client(server, max_retries=2)

    assert api.list_pets() == []
    assert len(server.requests) == 3
    # "0" asks for no wait at all: the second retry's computed backoff (1 s less jitter) applies.
    assert sleeps[0] == 3.0
    assert 0.75 <= sleeps[1] <= 1.0


# -- no duplicate writes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (500, InternalServerError),
        (502, InternalServerError),
        (504, InternalServerError),
        (408, APIStatusError),
    ],
)
def test_create_pet_is_sent_once_when_the_answer_may_mean_it_was_processed(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    status: int,
    error_class: type[APIStatusError],
) -> None:
    server.script(failure(status), Reply(201, json=PET))
    api = make_client(server, max_retries=3)

    with pytest.raises(APIStatusError) as caught:
        api.create_pet(name="Rex", category_id=3)

    assert type(caught.value) is error_class
    assert caught.value.status_code == status
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/v1/pets")]
    assert sleeps == []


def test_create_pet_is_sent_once_when_the_server_stalls_past_the_timeout(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    # A call still waiting when the server hangs up (1 s) would raise APIConnectionError.
    server.script(Hangup(delay=1.0), Reply(201, json=PET))
    api = make_client(server, max_retries=3, timeout=0.05)

    started = time.monotonic()
    raised_exactly(APITimeoutError, lambda: api.create_pet(name="Rex", category_id=3))

    assert time.monotonic() - started >= 0.05
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [429, 503])
def test_create_pet_turned_away_is_retried_with_the_same_key_and_created_once(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    status: int,
) -> None:
    store = FakeAnimalStore(api_keys=[API_KEY])
    server.script(failure(status), failure(status), Forward(store))
    api = make_client(server, max_retries=2)

    created = api.create_pet(name="Rex", category_id=3, status="available")

    assert created == REX
    assert store.pets == [REX]
    requests = server.requests
    assert [(r.method, r.path, r.json()) for r in requests] == [
        ("POST", "/v1/pets", {"name": "Rex", "categoryId": 3, "status": "available"})
    ] * 3
    keys = {r.header("idempotency-key") for r in requests}
    assert len(keys) == 1
    (key,) = keys
    assert key is not None
    assert str(uuid.UUID(key)) == key
    assert len(sleeps) == 2


def test_each_create_pet_call_has_its_own_idempotency_key(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    store = FakeAnimalStore(api_keys=[API_KEY])
    server.script(Forward(store), Forward(store), Forward(store))
    api = make_client(server)

    api.create_pet(name="Rex", category_id=3)
    api.create_pet(name="Rex", category_id=3)
    api.list_pets()

    first, second, listing = server.requests
    keys = [first.header("idempotency-key"), second.header("idempotency-key")]
    assert keys[0] != keys[1]
    assert all(re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", k or "") for k in keys)
    assert listing.header("idempotency-key") is None
    assert [p.id for p in store.pets] == [1, 2]


def test_no_retry_after_makes_a_client_retry_in_a_tight_loop(
    server: FaultServer, make_client: Callable[..., Api], server_clock: VirtualClock
) -> None:
    """A server asking for a millionth of a second gets ``max_retries + 1`` attempts, each at
    least the floor (0.3 s) after the one before, on every backend."""
    server.script(*[failure(503, **{"Retry-After": "0.000001"})] * 10)
    api = make_client(server, max_retries=3)

    with pytest.raises(InternalServerError):
        api.list_pets()

    assert server_clock.slept == [_retries.MIN_RETRY_WAIT] * 3 == [0.3] * 3
    sent = [request.received_at for request in server.requests]
    assert len(sent) == 4
    gaps = [later - earlier for earlier, later in itertools.pairwise(sent)]
    assert min(gaps) >= _retries.MIN_RETRY_WAIT


def test_the_floor_of_a_retry_after_is_really_slept(
    server: FaultServer, make_client: Callable[..., Api]
) -> None:
    """The one real wait of this module, on each backend: its sleep (the thread's, or the
    event loop's) holds the retry back for the floor, over a real socket."""
    server.script(*[failure(503, **{"Retry-After": "0.000001"})] * 2)
    api = make_client(server, max_retries=1)

    with pytest.raises(InternalServerError):
        api.list_pets()

    first, second = server.requests
    assert second.received_at - first.received_at >= _retries.MIN_RETRY_WAIT == 0.3


@pytest.mark.parametrize(
    "value",
    [
        "1_0",  # int() reads it as 10
        "\u0665".encode().decode("latin-1"),  # ARABIC-INDIC DIGIT FIVE, as UTF-8 on the wire
        "\uff11\uff10".encode().decode("latin-1"),  # FULLWIDTH "10"
        "1e1",
    ],
    ids=["underscore", "arabic-indic", "fullwidth", "exponent"],
)
def test_a_retry_after_in_anything_but_ascii_digits_gets_the_backoff(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float], value: str
) -> None:
    server.script(failure(503, **{"Retry-After": value}), Reply(200, json=[PET]))
    api = make_client(server, max_retries=1)

    assert len(api.list_pets()) == 1

    assert len(server.requests) == 2
    (wait,) = sleeps
    assert 0.75 * DEFAULT_RETRY.initial_delay <= wait <= DEFAULT_RETRY.initial_delay
