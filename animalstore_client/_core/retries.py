"""When to retry a failed attempt and how long to wait first; no I/O.

A write must never happen twice, so a non-idempotent request (``POST``) is retried only when
it provably was not processed: the connection was never made, or the service answered 429 or
503, both of which say the request was turned away. Such an answer's ``Retry-After`` holds
back every call of the client family (``Pause``), not only the one that got it.
"""

from __future__ import annotations

import functools
import math
import random
import re
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from animalstore_client._core.dates import http_date
from animalstore_client._core.retry_policy import RetryPolicy
from animalstore_client._core.wire import Answer, Failure, SendFailure

if TYPE_CHECKING:
    from contextvars import ContextVar

__all__ = [
    "MAX_RETRY_AFTER",
    "MIN_RETRY_WAIT",
    "LoweredFloor",
    "Pause",
    "backoff",
    "current_floor",
    "retry_after",
    "retry_delay",
]

MAX_RETRY_AFTER = 60.0
#: The shortest wait a ``Retry-After`` gets, of the order of the first backoff: no answer can
#: make a client retry in a tight loop. Tests may lower it (``testing.retry_floor``).
MIN_RETRY_WAIT = 0.3
#: RFC 9110's delay-seconds, ASCII digits (``int()`` and ``float()`` also take ``1_0``, other
#: scripts' digits, signs, spaces, exponents, ``inf`` and ``nan``), with a decimal fraction
#: (``0.5``), which servers send and the store's faults write.
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def backoff(policy: RetryPolicy, retries_taken: int) -> float:
    """Return the wait before retry number ``retries_taken + 1``, in seconds.

    Exponential from the policy's ``initial_delay``, doubling up to its ``max_delay``, less a
    random part of up to its ``jitter``, so that many clients do not retry in lockstep. With
    the default jitter (a quarter), each wait is still longer than the one before, until the
    cap.
    """
    return policy.backoff(retries_taken, random.random())


@functools.cache
def _lowered() -> ContextVar[tuple[LoweredFloor, ...]]:
    """Return the context variable of the lowered floors open here, innermost last.

    A context variable, not a global: each thread and task has its own, so overlapping blocks
    in different threads or tasks never see, let alone undo, each other's (a global restored on
    exit was left at whichever value the block that exited last had found). Made on first use:
    ``contextvars`` is an import of its own, which only a ``Retry-After`` or a test needs.
    """
    from contextvars import ContextVar

    return ContextVar("animalstore_retry_floor", default=())


class LoweredFloor:
    """A shorter floor for ``Retry-After`` waits, in force in the context that opened it.

    Opened (``with``), it holds for the calls made in the thread or task that opened it, and
    in the tasks and context copies made there while it is open, until it closes. Closing it
    ends it everywhere, those tasks included, whatever other floors opened and closed
    meanwhile, in whatever order.

    Args:
        seconds: the floor, 0 or more (checked by ``testing.retry_floor``).
    """

    __slots__ = ("_open", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._open = False

    def __enter__(self) -> None:
        self._open = True
        _lowered().set((*_lowered().get(), self))

    def __exit__(self, *exc_info: object) -> None:
        # The flag reaches the tasks that copied this context; the tuple is this context's.
        self._open = False
        lowered = _lowered().get()
        if self in lowered:
            _lowered().set(tuple(floor for floor in lowered if floor is not self))


def current_floor() -> float:
    """Return the shortest wait a ``Retry-After`` gets in this thread or task.

    Returns:
        The seconds of the innermost ``LoweredFloor`` open here, else ``MIN_RETRY_WAIT``.
    """
    for floor in reversed(_lowered().get()):
        if floor._open:
            return floor.seconds
    return MIN_RETRY_WAIT


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Return the wait a ``Retry-After`` header asks for, within the floor and the cap.

    Args:
        headers: the response headers.
        now: the current time as a Unix timestamp, for an HTTP-date value; ``time.time()``
            when ``None``.

    Returns:
        Seconds to wait: at least the floor (``MIN_RETRY_WAIT``, 0.3 s, unless lowered in this
        thread or task: ``current_floor()``), at most
        ``MAX_RETRY_AFTER``; ``None`` when the header is absent, is neither seconds in ASCII
        digits nor an HTTP date, or asks for no wait at all (0, a date in the past), so that
        the computed backoff applies: a server cannot make the client retry in a tight loop.
    """
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        seconds = float(value)
    else:
        seconds = _seconds_until(value, time.time() if now is None else now)
    # NaN compares false both ways, so it is refused here too.
    if not seconds > 0.0:
        return None
    return min(max(seconds, current_floor()), MAX_RETRY_AFTER)


def _seconds_until(value: str, now: float) -> float:
    """Return the seconds from ``now`` to an HTTP date; NaN when it is not a usable date."""
    try:
        return http_date(value).timestamp() - now
    # The parser's answer to years like 99999999999999999999 is an OverflowError.
    except (TypeError, ValueError, OverflowError, IndexError):
        return math.nan


def retry_delay(
    outcome: Answer | SendFailure,
    *,
    idempotent: bool,
    retries_taken: int,
    policy: RetryPolicy,
) -> float | None:
    """Decide whether to retry after one attempt, and how long to wait first.

    Args:
        outcome: the attempt's answer, or what stopped it.
        idempotent: whether sending the request twice is harmless (every method but ``POST``).
        retries_taken: retries already made for this call.
        policy: the call's retry policy.

    Returns:
        Seconds to wait before the next attempt, or ``None`` not to retry. A request that is
        not idempotent is retried only after a connection that was never made, or an answer
        that says it was not processed (429, 503) and that the policy lists.
    """
    if retries_taken >= policy.max_retries:
        return None
    if isinstance(outcome, Answer):
        statuses = policy.statuses if idempotent else policy.write_statuses
        if outcome.status_code not in statuses:
            return None
        wait = retry_after(outcome.headers)
        return backoff(policy, retries_taken) if wait is None else wait
    failure = outcome.failure
    if failure is Failure.NOT_SENT or (idempotent and failure is Failure.MAYBE_SENT):
        return backoff(policy, retries_taken)
    return None


class Pause:
    """Until when a client and its copies start no attempt: the service asked them to wait.

    A 429 or 503 with ``Retry-After`` to any call holds back every call of the client family
    that starts or retries later, instead of each one meeting the limit alone. Extended under
    a lock (threads share a ``Client``), read without one.
    """

    __slots__ = ("_lock", "_until")

    def __init__(self) -> None:
        self._until = 0.0  # time.monotonic(); 0.0 for never paused, the common case
        self._lock = threading.Lock()

    def extend(self, seconds: float) -> None:
        """Start no attempt for ``seconds`` from now, unless held back longer already."""
        until = time.monotonic() + seconds
        with self._lock:
            self._until = max(self._until, until)

    def left(self) -> float:
        """Return the seconds the pause still lasts; 0.0 or less when it is over."""
        until = self._until
        return until - time.monotonic() if until else 0.0
