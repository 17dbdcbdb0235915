"""Lowering the shortest wait a ``Retry-After`` gets, for a test whose faults ask for less."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from animalstore_client._core import retries

__all__ = ["retry_floor"]


@contextlib.contextmanager
def retry_floor(seconds: float) -> Iterator[None]:
    """Let every client in this process wait as little as ``seconds`` when a ``Retry-After`` asks.

    Whatever an answer's ``Retry-After`` says, a client waits at least 0.3 s
    (``MIN_RETRY_WAIT``) before the retry it allows, so that no server can make it retry in a
    tight loop. A test that scripts a quick ``Retry-After`` (``Fault.error(503,
    retry_after=0.01)``) and wants it honoured as written lowers that floor for its duration.
    The computed backoff (0.5 s, 1 s ...), which applies without a usable ``Retry-After``, is
    unchanged. The previous floor is restored on exit, whatever happens inside.

    Example::

        with retry_floor(0.0), store.client() as client:
            client.list_pets()  # a 503 with Retry-After: 0.01 is retried after 0.01 s

    Args:
        seconds: the new floor, 0 or more.

    Yields:
        Nothing; the floor holds until the block ends.

    Raises:
        TypeError: ``seconds`` is not a number (a bool is not one).
        ValueError: ``seconds`` is negative, NaN or infinite.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"seconds must be a number, got {type(seconds).__name__}")
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"seconds must be 0 or more and finite, got {seconds!r}")
    previous = retries.set_retry_floor(float(seconds))
    try:
        yield
    finally:
        retries.set_retry_floor(previous)
