"""``RetryPolicy``: its defaults, its checks, and where a client and a call take it.

What a policy does to the requests sent is proved on every backend in
tests/reliability/test_retry_policy.py; here, what it is and how it is refused.
"""

from __future__ import annotations

import logging
import math
import pickle
import warnings
from collections.abc import Callable

import attrs
import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client import DEFAULT_MAX_RETRIES, Client, InternalServerError, RetryPolicy
from animalstore_client._core import retries as _retries
from animalstore_client._core.wire import Answer, Failure, RequestView, SendFailure
from tests.conftest import API_KEY, BASE_URL, Api, httpx_answer

ERROR = {"code": "failed", "message": "down", "status": 503}


def test_the_defaults_are_the_sdk_s_behaviour_before_policies() -> None:
    policy = RetryPolicy()

    assert policy.max_retries == DEFAULT_MAX_RETRIES == 2
    assert (policy.initial_delay, policy.max_delay, policy.jitter) == (0.5, 8.0, 0.25)
    assert policy.statuses == frozenset({408, 429, 500, 502, 503, 504})
    assert policy.write_statuses == frozenset({429, 503})
    assert Client(api_key=API_KEY, base_url=BASE_URL).retry == policy


def test_the_backoff_doubles_to_the_cap_less_the_jitter_drawn() -> None:
    policy = RetryPolicy(initial_delay=0.2, max_delay=1.0, jitter=0.5)

    assert [policy.backoff(n, 0.0) for n in range(5)] == [0.2, 0.4, 0.8, 1.0, 1.0]
    assert [policy.backoff(n, 1.0) for n in range(4)] == [0.1, 0.2, 0.4, 0.5]
    # No overflow however many retries a policy allows (2.0**1024 raises), and the formula
    # holds however small the first wait is.
    assert RetryPolicy(max_retries=5000).backoff(4000, 0.0) == 8.0
    assert RetryPolicy(initial_delay=1e-300, max_delay=1.0).backoff(1000, 0.0) == 1.0
    assert RetryPolicy(initial_delay=1e-300, max_delay=1.0).backoff(65, 0.0) == 1e-300 * 2**65
    assert RetryPolicy(initial_delay=0, max_delay=0).backoff(3, 0.5) == 0.0
    assert RetryPolicy(initial_delay=0, max_delay=0).backoff(10**6, 0.5) == 0.0


def test_the_bounds_themselves_are_accepted() -> None:
    policy = RetryPolicy(initial_delay=1e9, max_delay=1e9, jitter=1.0, statuses={400, 599})

    assert (policy.initial_delay, policy.max_delay, policy.jitter) == (1e9, 1e9, 1.0)
    assert policy.statuses == frozenset({400, 599})
    assert RetryPolicy(max_retries=0, initial_delay=0, max_delay=0, jitter=0).max_retries == 0


def test_write_statuses_are_the_listed_statuses_that_say_not_processed() -> None:
    assert RetryPolicy(statuses={400, 500, 503}).write_statuses == frozenset({503})
    assert RetryPolicy(statuses=[429]).write_statuses == frozenset({429})  # type: ignore[arg-type]
    assert RetryPolicy(statuses=()).write_statuses == frozenset()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"max_retries": -1}, ValueError, "max_retries must be between 0 and"),
        ({"max_retries": 1.5}, TypeError, "max_retries must be an int, got float 1.5"),
        ({"max_retries": True}, TypeError, "max_retries must be an int, got bool True"),
        (
            {"initial_delay": -0.1},
            ValueError,
            "initial_delay must be between 0 and 1e+09 seconds, got -0.1",
        ),
        ({"initial_delay": math.nan}, ValueError, "initial_delay must be between 0 and 1e+09"),
        ({"max_delay": math.inf}, ValueError, "max_delay must be between 0 and 1e+09"),
        ({"max_delay": "8"}, TypeError, "max_delay must be a number of seconds, got str"),
        ({"initial_delay": False}, TypeError, "initial_delay must be a number of seconds"),
        (
            {"initial_delay": 2.0, "max_delay": 1.0},
            ValueError,
            "max_delay (1.0) must be at least initial_delay (2.0)",
        ),
        ({"max_delay": 0}, ValueError, "max_delay (0.0) must be at least initial_delay (0.5)"),
        ({"jitter": 1.5}, ValueError, "jitter must be from 0 to 1, got 1.5"),
        ({"jitter": -0.1}, ValueError, "jitter must be from 0 to 1, got -0.1"),
        ({"jitter": None}, TypeError, "jitter must be a number from 0 to 1, got NoneType"),
        ({"jitter": "0.5"}, TypeError, "jitter must be a number from 0 to 1, got str"),
        ({"statuses": 503}, TypeError, "statuses must be a set of HTTP status codes, got int"),
        ({"statuses": "503"}, TypeError, "statuses must be a set of HTTP status codes, got str"),
        ({"statuses": {200}}, ValueError, "statuses must hold error statuses, 400 to 599, got 200"),
        (
            {"statuses": {503, 600}},
            ValueError,
            "statuses must hold error statuses, 400 to 599, got 600",
        ),
        ({"statuses": {399}}, ValueError, "statuses must hold error statuses, 400 to 599, got 399"),
        ({"statuses": {"503"}}, TypeError, "a status in statuses must be an int, got str '503'"),
        ({"statuses": {True}}, TypeError, "a status in statuses must be an int, got bool True"),
    ],
)
def test_a_bad_policy_is_refused_at_construction_saying_what_was_wrong(
    arguments: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        RetryPolicy(**arguments)  # type: ignore[arg-type]
    assert type(caught.value) is error
    assert str(caught.value).startswith(message)


def test_a_policy_is_frozen_comparable_hashable_and_pickles() -> None:
    policy = RetryPolicy(max_retries=4, statuses=[503, 500])  # type: ignore[arg-type]

    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        policy.max_retries = 9  # type: ignore[misc]
    assert policy == RetryPolicy(max_retries=4, statuses={500, 503})
    assert policy != RetryPolicy(max_retries=4)
    assert len({policy, RetryPolicy(max_retries=4, statuses=(500, 503))}) == 1  # type: ignore[arg-type]
    assert pickle.loads(pickle.dumps(policy)) == policy
    assert attrs.evolve(policy, jitter=0).jitter == 0.0
    with pytest.raises(ValueError, match="jitter must be from 0 to 1"):
        attrs.evolve(policy, jitter=2)
    assert repr(policy) == (
        "RetryPolicy(max_retries=4, initial_delay=0.5, max_delay=8.0, jitter=0.25, "
        "statuses=frozenset({500, 503}))"
    )


def test_max_retries_is_the_shorthand_of_a_policy(make_api: Callable[..., Api]) -> None:
    api = make_api(max_retries=5)

    assert api.target.retry == RetryPolicy(max_retries=5)
    assert api.target.max_retries == 5
    patient = RetryPolicy(max_retries=1, initial_delay=2.0, max_delay=4.0)
    copy = api.target.with_options(retry=patient).with_options(max_retries=3)
    assert copy.retry == attrs.evolve(patient, max_retries=3)
    assert copy.max_retries == 3
    assert api.target.with_options(deadline=5.0).retry == RetryPolicy(max_retries=5)


def test_passing_both_max_retries_and_retry_is_an_error(make_api: Callable[..., Api]) -> None:
    message = (
        "pass either max_retries= or retry=, not both: max_retries= is the shorthand for "
        "retry=RetryPolicy(max_retries=...)"
    )
    with pytest.raises(ValueError, match="not both") as built:
        make_api(max_retries=1, retry=RetryPolicy())
    api = make_api()
    with pytest.raises(ValueError, match="not both") as copied:
        api.target.with_options(max_retries=1, retry=RetryPolicy())
    assert str(built.value) == str(copied.value) == message


def test_a_retry_that_is_not_a_policy_is_refused_before_anything_is_sent(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    route = mock_api.get("/pets").respond(200, json=[])
    with pytest.raises(TypeError, match=r"^retry must be a RetryPolicy, got int$"):
        make_api(retry=3)
    api = make_api()
    with pytest.raises(TypeError, match=r"^retry must be a RetryPolicy, got dict$"):
        api.target.with_options(retry={"max_retries": 1})
    calls: list[Callable[[], object]] = [
        lambda: api.list_pets(retry=0),
        lambda: api.create_pet(name="Rex", category_id=3, retry=None),
        lambda: api.with_raw_response.list_pets(retry="never"),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"^retry must be a RetryPolicy, got "):
            call()
    assert not route.calls


def test_the_retry_log_line_counts_attempts_by_the_call_s_policy(
    make_api: Callable[..., Api],
    mock_api: respx.MockRouter,
    sleeps: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    mock_api.get("/pets").respond(503, json=ERROR)
    api = make_api(max_retries=0)

    with (
        caplog.at_level(logging.INFO, logger="animalstore_client"),
        pytest.raises(InternalServerError),
    ):
        api.list_pets(retry=RetryPolicy(max_retries=3, initial_delay=0.1, jitter=0))

    retries = [record.getMessage() for record in caplog.records if record.levelno == logging.INFO]
    assert [line.rsplit("(", 1)[1] for line in retries] == [
        "attempt 2 of 4)",
        "attempt 3 of 4)",
        "attempt 4 of 4)",
    ]
    assert sleeps == pytest.approx([0.1, 0.2, 0.4])


OPERATIONS = {
    "list_pets": ("get", "/pets", 200, [], (), {}),
    "create_pet": (
        "post",
        "/pets",
        201,
        {"id": 1, "name": "Rex", "categoryId": 3},
        (),
        {"name": "Rex", "category_id": 3},
    ),
    "get_pet": ("get", "/pets/1", 200, {"id": 1, "name": "Rex", "categoryId": 3}, (1,), {}),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_every_operation_takes_a_policy_of_its_own_and_checks_it(
    make_api: Callable[..., Api],
    mock_api: respx.MockRouter,
    sleeps: list[float],
    operation: str,
) -> None:
    method, path, status, body, args, kwargs = OPERATIONS[operation]
    route = getattr(mock_api, method)(path).mock(
        side_effect=[httpx.Response(503, json=ERROR), httpx.Response(status, json=body)]
    )
    api = make_api(max_retries=0)
    raw = api.with_raw_response

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # get_pet's own
        answer = getattr(raw, operation)(
            *args, **kwargs, retry=RetryPolicy(max_retries=1, initial_delay=0.01, jitter=0)
        )
        with pytest.raises(TypeError) as caught:
            getattr(api, operation)(*args, **kwargs, retry="twice")

    assert answer.retries_taken == 1
    assert route.call_count == 2
    assert sleeps == [0.01]
    assert str(caught.value) == "retry must be a RetryPolicy, got str"


ERROR_STATUSES = st.integers(min_value=400, max_value=599)
POLICIES = st.builds(
    RetryPolicy,
    max_retries=st.integers(min_value=0, max_value=6),
    initial_delay=st.floats(min_value=0, max_value=100),
    max_delay=st.just(1e9),
    jitter=st.floats(min_value=0, max_value=1),
    statuses=st.frozensets(ERROR_STATUSES),
)


def failure(kind: Failure) -> SendFailure:
    return SendFailure(
        kind, "ConnectError: refused", timeout=False, view=RequestView("POST", BASE_URL, [], {})
    )


@settings(max_examples=300, deadline=None)
@given(
    policy=POLICIES,
    retries_taken=st.integers(min_value=0, max_value=8),
    outcome=st.one_of(
        ERROR_STATUSES.map(lambda status: httpx_answer(httpx.Response(status))),
        st.sampled_from(list(Failure)).map(failure),
    ),
    idempotent=st.booleans(),
)
def test_any_policy_retries_only_what_it_lists_and_a_write_never_more_than_the_safe_cases(
    policy: RetryPolicy, retries_taken: int, outcome: Answer | SendFailure, idempotent: bool
) -> None:
    delay = _retries.retry_delay(
        outcome, idempotent=idempotent, retries_taken=retries_taken, policy=policy
    )

    if isinstance(outcome, Answer):
        listed = outcome.status_code in policy.statuses
        safe = outcome.status_code in (429, 503)  # turned away: not processed
    else:
        listed = outcome.failure in (Failure.NOT_SENT, Failure.MAYBE_SENT)
        safe = outcome.failure is Failure.NOT_SENT  # the connection was never made
    allowed = retries_taken < policy.max_retries and listed and (idempotent or safe)
    assert (delay is not None) is allowed
    if delay is not None:
        # The computed backoff for this retry, jitter taken off, within the policy's bounds.
        nominal = min(policy.initial_delay * 2.0**retries_taken, policy.max_delay)
        assert nominal * (1 - policy.jitter) <= delay <= nominal
