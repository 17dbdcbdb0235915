"""Lowering the shortest wait a ``Retry-After`` gets, for a test whose faults ask for less."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from animalstore_client._core.retries import LoweredFloor

__all__ = ["retry_floor"]


@contextlib.contextmanager
def retry_floor(seconds: float) -> Iterator[None]:
    """Lower the floor under ``Retry-After`` waits to ``seconds``, in this thread or task.

    Whatever an answer's ``Retry-After`` says, a client waits at least 0.3 s
    (``MIN_RETRY_WAIT``) before the retry it allows, so that no server can make it retry in a
    tight loop. A test that scripts a quick ``Retry-After`` (``Fault.error(503,
    retry_after=0.01)``) and wants it honoured as written lowers that floor for its duration.
    The computed backoff (0.5 s, 1 s ...), which applies without a usable ``Retry-After``, is
    unchanged.

    Where the floor holds, while the block is open: every call made in the thread or the
    asyncio task that opened it (by any client, those your code makes itself included; a sync
    call with a ``deadline`` too, although its attempts run in a worker thread, as the wait is
    decided in the caller's thread), and in the tasks created there meanwhile (``create_task``,
    ``gather``, a ``TaskGroup``, ``asyncio.run`` itself, anyio's and trio's task groups) and
    anything else run in a copy of its context (``asyncio.to_thread``,
    ``contextvars.copy_context().run``). Not in other threads: a ``threading.Thread`` or a
    ``ThreadPoolExecutor`` worker starts without it (on Python 3.14, unless the interpreter
    copies contexts into new threads, as free-threaded builds do by default), nor in other
    tasks. When the block ends, the floor ends everywhere it held, the tasks it started
    included, whatever happens inside and whatever other blocks, in this or any thread or
    task, opened or ended meanwhile: overlapping blocks cannot change each other's floor nor
    leave one behind. Nested blocks: the innermost holds.

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
    with LoweredFloor(float(seconds)):
        yield
