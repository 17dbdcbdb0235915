"""A ``RetryPolicy`` the user sets, on every backend: which answers, how often, how long.

Each test scripts the fault server's answers and counts the requests that reached it; the
waits are recorded, never slept (``sleeps``). The policy of a call wins over its client's,
which wins over the defaults; a create without a key of its own is never sent again after a
failure that may have reached the service, whatever a policy lists.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from animalstore_client import (
    APIConnectionError,
    APIStatusError,
    BadRequestError,
    InternalServerError,
    RateLimitError,
    RetryPolicy,
)
from tests.reliability.conftest import PET, Api, error_body
from tests.reliability.faultserver import FaultServer, Hangup, Reply

NEW_PET = {"name": "Rex", "category_id": 3}


def failure(status: int, **headers: str) -> Reply:
    return Reply(status, json=error_body(status), headers=headers)


def test_only_the_listed_statuses_are_retried(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    # 503 and 429 are not listed: a policy without them does not retry them.
    policy = RetryPolicy(max_retries=3, statuses={500})
    server.script(failure(500), failure(503), Reply(200, json=[PET]))
    api = make_client(server, retry=policy)

    with pytest.raises(InternalServerError) as caught:
        api.list_pets()

    assert caught.value.status_code == 503
    assert len(server.requests) == 2
    assert server.pending == 1
    assert len(sleeps) == 1


def test_a_policy_may_retry_a_status_the_defaults_do_not(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(400), failure(400), Reply(200, json=[PET]))
    api = make_client(server, retry=RetryPolicy(max_retries=2, statuses={400}))

    raw = api.raw.list_pets()

    assert raw.retries_taken == 2
    assert [pet.id for pet in raw.parse()] == [PET["id"]]
    assert len(server.requests) == 3


def test_the_computed_waits_follow_the_policy(
    server: FaultServer,
    make_client: Callable[..., Api],
    sleeps: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = RetryPolicy(max_retries=4, initial_delay=0.1, max_delay=0.3, jitter=0.0)
    server.script(*[failure(502)] * 4, Reply(200, json=[PET]))
    api = make_client(server, retry=policy)

    api.list_pets()

    assert sleeps == pytest.approx([0.1, 0.2, 0.3, 0.3])
    assert len(server.requests) == 5


def test_a_retry_after_sets_the_wait_whatever_the_policy(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    # The floor and the cap of a Retry-After stay: 0.3 s at least, 60 s at most.
    policy = RetryPolicy(max_retries=3, initial_delay=0.0, max_delay=0.0, statuses={429})
    server.script(
        failure(429, **{"Retry-After": "2"}),
        failure(429, **{"Retry-After": "0.01"}),
        failure(429, **{"Retry-After": "900"}),
        Reply(200, json=[PET]),
    )
    api = make_client(server, retry=policy)

    api.list_pets()

    assert sleeps == pytest.approx([2.0, 0.3, 60.0])


def test_zero_waits_retry_at_once_within_max_retries(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(*[failure(500)] * 5)
    api = make_client(server, retry=RetryPolicy(max_retries=4, initial_delay=0, max_delay=0))

    with pytest.raises(InternalServerError):
        api.list_pets()

    assert sleeps == [0.0] * 4
    assert len(server.requests) == 5


def test_a_call_s_policy_wins_over_its_client_s(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(503), failure(503), Reply(200, json=[PET]), failure(503))
    api = make_client(server, retry=RetryPolicy(max_retries=0))

    with pytest.raises(InternalServerError):
        api.list_pets()
    assert len(api.list_pets(retry=RetryPolicy(max_retries=1))) == 1
    with pytest.raises(InternalServerError):
        api.list_pets()

    assert len(server.requests) == 4
    assert len(sleeps) == 1


def test_a_create_is_never_retried_on_a_status_that_may_have_been_processed(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    # The policy lists 500 and 400: a create may have happened behind either.
    server.script(failure(500), failure(400), Reply(201, json=PET))
    api = make_client(server, retry=RetryPolicy(max_retries=5, statuses={400, 500, 503}))

    with pytest.raises(InternalServerError):
        api.create_pet(**NEW_PET)
    with pytest.raises(BadRequestError):
        api.create_pet(**NEW_PET)

    assert len(server.requests) == 2
    assert sleeps == []


def test_a_create_is_retried_on_a_listed_503_with_the_same_key(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(503), Reply(201, json=PET))
    api = make_client(server, retry=RetryPolicy(max_retries=1, statuses={503}))

    api.create_pet(**NEW_PET)

    keys = [request.header("idempotency-key") for request in server.requests]
    assert len(keys) == 2
    assert keys[0] is not None
    assert keys[0] == keys[1]


def test_a_create_is_not_retried_on_a_429_the_policy_leaves_out(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(429), Reply(201, json=PET))
    api = make_client(server, retry=RetryPolicy(max_retries=3, statuses={500, 503}))

    with pytest.raises(RateLimitError):
        api.create_pet(**NEW_PET)

    assert len(server.requests) == 1


def test_a_create_whose_connection_dropped_after_sending_is_never_retried(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(Hangup(), Reply(201, json=PET))
    api = make_client(server, retry=RetryPolicy(max_retries=5, initial_delay=0, max_delay=0))

    with pytest.raises(APIConnectionError):
        api.create_pet(**NEW_PET)

    assert len(server.requests) == 1
    assert server.pending == 1


def test_a_read_whose_connection_dropped_is_retried_under_the_policy(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(Hangup(), Hangup(), Reply(200, json=[PET]))
    api = make_client(server, retry=RetryPolicy(max_retries=2, initial_delay=0.05, jitter=0))

    raw = api.raw.list_pets()

    assert raw.retries_taken == 2
    assert sleeps == pytest.approx([0.05, 0.1])


def test_with_options_copies_carry_their_own_policy(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(500), failure(500), Reply(200, json=[PET]))
    api = make_client(server, retry=RetryPolicy(max_retries=0))
    patient = Api(api.target.with_options(max_retries=2), api._loop, api.kind)

    assert patient.target.retry == RetryPolicy(max_retries=2)
    assert len(patient.list_pets()) == 1
    assert len(server.requests) == 3
    assert api.target.retry.max_retries == 0


def test_a_policy_that_retries_nothing_raises_the_first_answer(
    server: FaultServer, make_client: Callable[..., Api], sleeps: list[float]
) -> None:
    server.script(failure(503), Reply(200, json=[PET]))
    api = make_client(server, retry=RetryPolicy(statuses=()))  # type: ignore[arg-type]

    with pytest.raises(APIStatusError) as caught:
        api.list_pets()

    assert caught.value.status_code == 503
    assert len(server.requests) == 1
