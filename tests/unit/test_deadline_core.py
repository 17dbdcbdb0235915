"""The deadline in the sans-IO core (``Call``), without I/O: which outcome it reports.

The end-to-end behaviour (every backend against dripping servers) is in
``tests/reliability/test_bounded_cost.py``; these pin down what no real server can time
deterministically.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from animalstore_client import APITimeoutError
from animalstore_client._core import operations as ops
from animalstore_client._core.call import Call
from animalstore_client._core.config import resolve_options
from animalstore_client._core.retries import Pause
from animalstore_client._core.wire import Failure, SendFailure


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
    call = Call(ops.list_pets(limit=None, status=None), options(timeout=1.0, deadline=60))
    call.begin()

    delay = call.after(read_timeout(call))

    assert delay is not None
    assert call.retries == 1


def test_a_retry_that_the_client_familys_pause_outlasts_is_refused_without_a_wait() -> None:
    # Another call's Retry-After paused the client for 30 s while this one was in flight. Its
    # own backoff (half a second) fits in its deadline, the pause does not: the call fails at
    # once with its own error, instead of sleeping its backoff to learn that.
    pause = Pause()
    call = Call(
        ops.list_pets(limit=None, status=None), options(timeout=1.0, deadline=10.0), pause=pause
    )
    call.begin()
    pause.extend(30.0)

    with pytest.raises(APITimeoutError, match="ReadTimeout: timed out"):
        call.after(read_timeout(call))
    assert call.retries == 0
