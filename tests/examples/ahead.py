"""Runs that a module's tests check, each started a little ahead of its test.

The examples' tests each run a process (an example, a documentation block, a user's pytest
run): mostly starting Python and waiting. ``RunsAhead`` runs them two at a time in the order of
the tests that will ask for them, from the first one asked for, so that while a test checks
its own outcome the next runs are already on their way, on the other core. Each run is the same
as its test would make alone: a fresh process of its own. Under pytest-xdist, where the other
worker may take the next tests, a run starts only when its own test asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

import pytest

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")

#: How many runs go at once.
AT_ONCE = 2


class RunsAhead(Generic[K, R]):
    """``run(key)`` for each key its test asks for; the keys after it queued behind it.

    Args:
        order: the keys in the order their tests will ask (only those the session runs).
        run: what makes the outcome of a key; called in a worker thread.
    """

    def __init__(self, order: Sequence[K], run: Callable[[K], R]) -> None:
        self._order = list(order)
        self._run = run
        self._ahead = not os.environ.get("PYTEST_XDIST_WORKER")
        self._pool = ThreadPoolExecutor(max_workers=AT_ONCE, thread_name_prefix="ahead")
        self._runs: dict[K, Future[R]] = {}

    def result(self, key: K) -> R:
        """The outcome of ``key``: started now, unless a test before asked ahead for it."""
        self._start(key)
        if self._ahead and key in self._order:
            for coming in self._order[self._order.index(key) + 1 :]:
                self._start(coming)  # queued: the pool runs AT_ONCE at a time, in order
        return self._runs[key].result()

    def _start(self, key: K) -> None:
        if key not in self._runs:
            self._runs[key] = self._pool.submit(self._run, key)

    def close(self) -> None:
        """Let what runs finish and start nothing more (a session stopped early, say)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def session_items(request: pytest.FixtureRequest) -> list[pytest.Function]:
    """The test functions this session runs, in their order."""
    return [item for item in request.session.items if isinstance(item, pytest.Function)]
