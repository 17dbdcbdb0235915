"""``RetryPolicy``: how many retries a call may make, after what, and how long it waits first.

Only the settings and their checks live here, so that the package can export the class without
loading the retry machinery (``_core.retries``), which reads a policy when a call fails.
"""

# No `from __future__ import annotations`: the class is published as `animalstore_client`'s,
# where `typing.get_type_hints` would look its annotations' names up; objects need no lookup.
import math
from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from attrs import frozen

from animalstore_client._core.safe_repr import tolerant_repr
from animalstore_client._core.validation import check_int, is_real

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_RETRY",
    "DEFAULT_RETRY_STATUSES",
    "NOT_PROCESSED_STATUSES",
    "RetryPolicy",
    "check_retry",
]

#: How many times a failed attempt is retried by default.
DEFAULT_MAX_RETRIES = 2

#: What the SDK retries by default: a timeout (408), a rate limit (429), and the server errors
#: that say the service may answer a moment later.
DEFAULT_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Statuses that say the request was turned away, not processed: the only answers after which
#: a create without a key of its own is ever sent again.
NOT_PROCESSED_STATUSES = frozenset({429, 503})
#: The longest wait a policy may set, as for a timeout: sleeps overflow a little above 9.2e9 s.
_MAX_SECONDS = 1e9


def _seconds(argument: str, value: object) -> float:
    if isinstance(value, bool) or not is_real(value):
        raise TypeError(f"{argument} must be a number of seconds, got {type(value).__name__}")
    seconds = float(value)  # type: ignore[arg-type]
    if not 0.0 <= seconds <= _MAX_SECONDS:  # NaN fails both
        raise ValueError(
            f"{argument} must be between 0 and {_MAX_SECONDS:g} seconds, got {seconds}"
        )
    return seconds


def _jitter(value: object) -> float:
    if isinstance(value, bool) or not is_real(value):
        raise TypeError(f"jitter must be a number from 0 to 1, got {type(value).__name__}")
    fraction = float(value)  # type: ignore[arg-type]
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"jitter must be from 0 to 1, got {fraction}")
    return fraction


def _statuses(value: object) -> frozenset[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"statuses must be a set of HTTP status codes, got {type(value).__name__}")
    statuses = frozenset(check_int("a status in statuses", status) for status in value)
    for status in sorted(statuses):
        if not 400 <= status <= 599:
            raise ValueError(f"statuses must hold error statuses, 400 to 599, got {status}")
    return statuses


@tolerant_repr
@frozen(repr=False)
class RetryPolicy:
    """How a failed attempt is retried: how often, after which answers, after how long.

    A call is retried after an answer whose status is in ``statuses``, or after a failure to
    get any answer (a connection that could not be made; for a request that is safe to repeat,
    also a connection lost or timed out after sending), until ``max_retries`` retries have been
    made. The wait before retry *n* (from 0) is ``min(initial_delay * 2**n, max_delay)``, less
    a random part of up to ``jitter`` of it, so that many clients do not retry in lockstep; an
    answer's ``Retry-After`` sets the wait instead (at least 0.3 s, at most 60 s), and holds
    back the client's other calls too.

    A policy can make a write's retries fewer, never riskier: ``create_pet`` is retried only
    after a 429 or 503 that ``statuses`` lists, or a connection that was never made, whatever
    else the policy lists; the other operations after any status it lists.

    Each field is also the constructor's argument of the same name, checked there.

    Attributes:
        max_retries: the most retries of one call, 0 or more (0: none).
        initial_delay: seconds before the first retry, before jitter; 0 or more.
        max_delay: the longest computed wait, in seconds; at least ``initial_delay``.
        jitter: the largest part of each wait taken off at random, from 0 (none) to 1.
        statuses: the answers' statuses that are retried, each from 400 to 599: a set (a
            ``frozenset`` once made; at run time any iterable of them is taken).

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: ``max_retries`` is negative, a delay is negative or above 1e9 seconds,
            ``max_delay`` is below ``initial_delay``, ``jitter`` is outside 0..1, or a status
            is outside 400..599.

    Example::

        patient = RetryPolicy(max_retries=5, initial_delay=1.0, max_delay=30.0)
        client = Client(retry=patient)
        client.list_pets(retry=RetryPolicy(max_retries=0))  # this call: no retry
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    statuses: AbstractSet[int] = DEFAULT_RETRY_STATUSES

    @property
    def write_statuses(self) -> frozenset[int]:
        """The listed statuses that say "not processed" (429, 503): a create's retries."""
        return NOT_PROCESSED_STATUSES & self.statuses

    def __attrs_post_init__(self) -> None:
        # Checked and kept in one form here, not by attrs' converters: type checkers would make
        # each converter a class of the public API's own, with no docstring.
        checked = {
            "max_retries": check_int("max_retries", self.max_retries, 0),
            "initial_delay": _seconds("initial_delay", self.initial_delay),
            "max_delay": _seconds("max_delay", self.max_delay),
            "jitter": _jitter(self.jitter),
            "statuses": _statuses(self.statuses),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # frozen: attrs' own way round it
        if self.max_delay < self.initial_delay:
            raise ValueError(
                f"max_delay ({self.max_delay}) must be at least initial_delay "
                f"({self.initial_delay})"
            )

    def __repr__(self) -> str:
        # The statuses in order: a set's own order depends on its history.
        return (
            f"RetryPolicy(max_retries={self.max_retries}, initial_delay={self.initial_delay}, "
            f"max_delay={self.max_delay}, jitter={self.jitter}, "
            f"statuses=frozenset({{{', '.join(map(str, sorted(self.statuses)))}}}))"
        )

    def backoff(self, retries_taken: int, draw: float) -> float:
        """Return the computed wait before retry number ``retries_taken + 1``, in seconds.

        Args:
            retries_taken: retries already made.
            draw: a random number in [0, 1), which picks the jitter.

        Returns:
            ``min(initial_delay * 2**retries_taken, max_delay)``, less ``draw * jitter`` of it.
        """
        try:
            delay = min(math.ldexp(self.initial_delay, retries_taken), self.max_delay)
        except OverflowError:  # past 2**1023 times the first wait: the cap, long since
            delay = self.max_delay
        return delay * (1.0 - self.jitter * draw)


def check_retry(argument: str, value: object) -> RetryPolicy:
    """Return ``value`` if it is a ``RetryPolicy``.

    Raises:
        TypeError: it is not one; the message names ``argument``.
    """
    if not isinstance(value, RetryPolicy):
        raise TypeError(f"{argument} must be a RetryPolicy, got {type(value).__name__}")
    return value


#: Today's behaviour, which ``max_retries=`` alone adjusts.
DEFAULT_RETRY = RetryPolicy()
