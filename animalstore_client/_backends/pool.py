"""The connection pools behind the clients: who owns one, and where it may be used.

A pool is shared by a client and its ``with_options`` copies. The SDK's own pools are plain
``httpx`` clients built without an explicit transport, so that httpx honours the proxy
variables (``HTTP_PROXY``, ``NO_PROXY`` ...) exactly as it does for anyone. Their sockets
belong to one process and, for ``AsyncClient``, to one event loop:

* After ``os.fork()`` the child starts new pools on first use. It never closes the ones it
  inherited: they hold the parent's sockets, and closing can write to them (a TLS
  ``close_notify``). It keeps them, unused, until it exits.
* An async pool is opened in the running loop on first use there, and closed by that loop's
  own shutdown (``asyncio.run`` closes open async generators before it closes the loop), or by
  ``aclose()``. A client used from a new loop opens a new pool; the old one is never touched
  from another loop, where closing could only fail.

A pool passed in as ``http_client`` is the caller's: it is used as it is and never closed.

Each pool hands out the backend's sender that the client drives.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import AsyncGenerator
from typing import Any, ClassVar, Generic, TypeVar

import httpx

from animalstore_client._backends import eventloop
from animalstore_client._backends.defaults import DefaultAsyncHttpxClient, DefaultHttpxClient
from animalstore_client._backends.httpx import AsyncHttpxSender, SyncHttpxSender, family
from animalstore_client._core.wire import AsyncSender, SyncSender

S = TypeVar("S", SyncSender, AsyncSender)

__all__ = ["AsyncPool", "BorrowedPool", "SyncPool"]

#: Every pool the SDK owns in this process, for the fork handler.
_owned: weakref.WeakSet[SyncPool | AsyncPool] = weakref.WeakSet()
#: Pools inherited through fork(), kept so that nothing ever closes (or finalizes) them here.
_inherited: list[object] = []


class BorrowedPool(Generic[S]):
    """A pool the caller passed in as ``http_client``: used as it is, never closed.

    Args:
        sender: the backend's sender over the caller's client.
    """

    __slots__ = ("sender",)

    #: Whether the client closes it: never.
    owned: ClassVar[bool] = False

    def __init__(self, sender: S) -> None:
        self.sender: S = sender

    @property
    def closed(self) -> bool:
        """Whether the caller closed it."""
        return self.sender.closed

    def current(self) -> S:
        """Return the sender."""
        return self.sender

    def close(self) -> None:
        """Do nothing: the caller owns it."""

    async def aclose(self) -> None:
        """Do nothing: the caller owns it."""


class SyncPool:
    """The SDK's own ``httpx.Client``: opened on first use, again in a forked child."""

    __slots__ = ("__weakref__", "_finalizer", "_lock", "closed", "sender")

    #: Whether the client closes it: always.
    owned: ClassVar[bool] = True

    def __init__(self) -> None:
        #: ``None`` until first use, and again in a forked child.
        self.sender: SyncHttpxSender | None = None
        self.closed = False
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()
        _owned.add(self)

    @property
    def http(self) -> httpx.Client | None:
        """The pool's ``httpx.Client``; ``None`` until first use."""
        return None if self.sender is None else self.sender.http

    def current(self) -> SyncHttpxSender | None:
        """Return the sender, or ``None`` if ``open()`` must make it."""
        return self.sender

    def open(self) -> SyncHttpxSender:
        """Return the pool's sender, opening the pool on first use (in this process)."""
        with self._lock:
            if self.sender is None:
                _watch_forks()
                http = DefaultHttpxClient()
                # Closed when the clients sharing it are all dropped without close().
                self._finalizer = weakref.finalize(self, http.close)
                self.sender = SyncHttpxSender(http, family(httpx))
            return self.sender

    def close(self) -> None:
        """Close the pool; idempotent."""
        self.closed = True
        if self._finalizer is not None:
            self._finalizer()

    def _forget_after_fork(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            _inherited.append(self.sender)
        self.sender = self._finalizer = None
        self._lock = threading.Lock()  # it may have been held by another thread at fork time


class AsyncPool:
    """The SDK's own ``httpx.AsyncClient``s: one for the event loop (asyncio or trio) last used."""

    __slots__ = ("__weakref__", "_guard", "_loop", "closed", "sender")

    #: Whether the client closes it: always.
    owned: ClassVar[bool] = True

    def __init__(self) -> None:
        self.sender: AsyncHttpxSender | None = None
        self.closed = False
        self._loop: object = None
        self._guard: AsyncGenerator[None, None] | None = None
        _owned.add(self)

    @property
    def http(self) -> httpx.AsyncClient | None:
        """The ``httpx.AsyncClient`` of the loop last used; ``None`` before first use."""
        return None if self.sender is None else self.sender.http

    def current(self) -> AsyncHttpxSender | None:
        """Return the running loop's sender, or ``None`` if ``open()`` must make it."""
        return self.sender if self._loop is eventloop.current_loop() else None

    async def open(self) -> AsyncHttpxSender:
        """Open a pool for the running loop and tie its closing to the loop's end."""
        _watch_forks()
        http = DefaultAsyncHttpxClient()
        guard = _closed_with_the_loop(http)
        # Runs to the generator's first `yield` without suspending, so concurrent first
        # calls in a new loop cannot interleave here. Started in this loop, the generator is
        # one the loop closes at shutdown (asyncio.run, and trio.run, finalize the async
        # generators still open): with it, the pool.
        await guard.__anext__()
        # The previous loop's pool is left to that loop: dropping its guard lets that loop
        # close it if it still runs.
        sender = AsyncHttpxSender(http, family(httpx))
        self.sender, self._loop, self._guard = sender, eventloop.current_loop(), guard
        return sender

    async def aclose(self) -> None:
        """Close the running loop's pool; a pool of another loop is left to that loop."""
        self.closed = True
        guard, self._guard = self._guard, None
        if guard is not None and self._loop is eventloop.current_loop():
            await guard.aclose()
        self.sender = self._loop = None

    def _forget_after_fork(self) -> None:
        if self._guard is not None:
            _inherited.append((self.sender, self._guard))
        self.sender = self._loop = self._guard = None


async def _closed_with_the_loop(http: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    pid = os.getpid()
    try:
        yield
    finally:
        # In a forked child this generator is a copy whose sockets are the parent's.
        if os.getpid() == pid:
            await http.aclose()


def _after_fork_in_child() -> None:
    for pool in list(_owned):
        pool._forget_after_fork()


_watching_forks = False


def _watch_forks() -> None:
    """Register the fork handler, once, when the first pool opens.

    Not at import: a registered handler costs every process a few milliseconds at exit, which
    a program that imports the SDK without calling it should not pay.
    """
    global _watching_forks
    # Two threads opening their first pools at once may both register: the handler is
    # idempotent (a pool already forgotten has nothing left to forget).
    if not _watching_forks:
        _watching_forks = True
        os.register_at_fork(after_in_child=_after_fork_in_child)
