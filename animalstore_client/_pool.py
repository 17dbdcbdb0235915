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
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

import httpx

from animalstore_client._http_clients import DefaultAsyncHttpxClient, DefaultHttpxClient

if TYPE_CHECKING:
    import asyncio

__all__ = ["AsyncPool", "BorrowedPool", "SyncPool"]

#: Every pool the SDK owns in this process, for the fork handler.
_owned: weakref.WeakSet[SyncPool | AsyncPool] = weakref.WeakSet()
#: Pools inherited through fork(), kept so that nothing ever closes (or finalizes) them here.
_inherited: list[object] = []


class BorrowedPool:
    """A pool the caller passed in as ``http_client``: used as it is, never closed."""

    __slots__ = ("http",)

    def __init__(self, http: httpx.Client | httpx.AsyncClient) -> None:
        self.http: Any = http

    @property
    def closed(self) -> bool:
        """Whether the caller closed it."""
        return bool(self.http.is_closed)

    def current(self) -> Any:
        """Return the ``httpx`` client."""
        return self.http

    def close(self) -> None:
        """Do nothing: the caller owns it."""

    async def aclose(self) -> None:
        """Do nothing: the caller owns it."""


class SyncPool:
    """The SDK's own ``httpx.Client``: opened on first use, again in a forked child."""

    __slots__ = ("__weakref__", "_finalizer", "_lock", "closed", "http")

    def __init__(self) -> None:
        #: ``None`` until first use, and again in a forked child.
        self.http: httpx.Client | None = None
        self.closed = False
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()
        _owned.add(self)

    def open(self) -> httpx.Client:
        """Return the pool, opening it on first use (in this process)."""
        with self._lock:
            if self.http is None:
                _watch_forks()
                http = DefaultHttpxClient()
                # Closed when the clients sharing it are all dropped without close().
                self._finalizer = weakref.finalize(self, http.close)
                self.http = http
            return self.http

    def close(self) -> None:
        """Close the pool; idempotent."""
        self.closed = True
        if self._finalizer is not None:
            self._finalizer()

    def _forget_after_fork(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            _inherited.append(self.http)
        self.http = self._finalizer = None
        self._lock = threading.Lock()  # it may have been held by another thread at fork time


class AsyncPool:
    """The SDK's own ``httpx.AsyncClient``s: one for the event loop last used."""

    __slots__ = ("__weakref__", "_guard", "_loop", "closed", "http")

    def __init__(self) -> None:
        self.http: httpx.AsyncClient | None = None
        self.closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard: AsyncGenerator[None, None] | None = None
        _owned.add(self)

    def current(self) -> httpx.AsyncClient | None:
        """Return the pool of the running loop, or ``None`` if ``open()`` must make it."""
        return self.http if self._loop is _running_loop() else None

    async def open(self) -> httpx.AsyncClient:
        """Open a pool for the running loop and tie its closing to the loop's shutdown."""
        _watch_forks()
        http = DefaultAsyncHttpxClient()
        guard = _closed_with_the_loop(http)
        # Runs to the generator's first `yield` without suspending, so concurrent first
        # calls in a new loop cannot interleave here. Started in this loop, the generator is
        # one the loop closes at shutdown: with it, the pool.
        await guard.__anext__()
        # The previous loop's pool is left to that loop: dropping its guard lets that loop
        # close it if it still runs.
        self.http, self._loop, self._guard = http, _running_loop(), guard
        return http

    async def aclose(self) -> None:
        """Close the running loop's pool; a pool of another loop is left to that loop."""
        self.closed = True
        guard, self._guard = self._guard, None
        if guard is not None and self._loop is _running_loop():
            await guard.aclose()
        self.http = self._loop = None

    def _forget_after_fork(self) -> None:
        if self._guard is not None:
            _inherited.append((self.http, self._guard))
        self.http = self._loop = self._guard = None


async def _closed_with_the_loop(http: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    pid = os.getpid()
    try:
        yield
    finally:
        # In a forked child this generator is a copy whose sockets are the parent's.
        if os.getpid() == pid:
            await http.aclose()


_get_running_loop: Callable[[], asyncio.AbstractEventLoop] | None = None


def _running_loop() -> asyncio.AbstractEventLoop:
    global _get_running_loop
    if _get_running_loop is None:
        import asyncio  # loaded by any running event loop; kept out of the package's import

        _get_running_loop = asyncio.get_running_loop
    return _get_running_loop()


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
