"""The connection gate of ``DefaultAsyncHttpxClient``: requests beyond the pool wait here.

httpx's async pool rescans its whole queue, against every connection, whenever a connection
frees up, so with 1,000 requests queued for 100 connections it spends its time scanning
(encode/httpx issue 3215). Here at most ``max_connections`` requests are inside httpx at a
time; the others wait on a semaphore, which wakes them one by one, in order. Letting in twice
the pool's size, so that httpx hands a freed connection straight to a queued request, was
slower: its scan of every connection for each queued request cost more than the wake-up here
(measured over loopback with 100 connections kept alive, warm pool, median of 6 rounds: 200
calls in flight 2.95 s against 3.18 s; 1,000 calls 2.61 s against 3.81 s). The semaphore is
anyio's, which httpx already uses, so that the gate works under asyncio and trio alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx

from animalstore_client._backends.eventloop import current_loop

__all__ = ["ConnectionGate", "HeldUntilClosed"]


class ConnectionGate:
    """Admits at most ``size`` requests at a time, in order of arrival, per event loop.

    A client may be used from one event loop after another (two ``asyncio.run`` calls): each
    loop gets its own semaphore, made in it, so no waiter is ever bound to a closed loop.

    Args:
        size: how many requests may be inside at once.
    """

    __slots__ = ("_loop", "_semaphore", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._loop: object = None
        self._semaphore: anyio.Semaphore | None = None

    async def enter(self, request: httpx.Request) -> anyio.Semaphore:
        """Wait for a place, for at most the request's ``pool`` timeout.

        Returns:
            The semaphore to ``release()`` once the request is done (the one of this loop).

        Raises:
            httpx.PoolTimeout: no place became free in time; nothing was sent.
        """
        loop = current_loop()
        semaphore = self._semaphore
        if semaphore is None or loop is not self._loop:
            self._loop, semaphore = loop, anyio.Semaphore(self.size)
            self._semaphore = semaphore
        try:
            semaphore.acquire_nowait()  # a free place costs no turn of the loop
        except anyio.WouldBlock:
            pass
        else:
            return semaphore
        timeout = request.extensions.get("timeout", {}).get("pool")
        try:
            with anyio.fail_after(timeout):
                await semaphore.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout(
                f"no connection became free within the pool timeout ({timeout} s)",
                request=request,
            ) from None
        return semaphore


class HeldUntilClosed(httpx.AsyncByteStream):
    """A streamed response's body that keeps its place in the gate until it is closed.

    With ``send(stream=True)`` the connection stays busy until the body is read or the
    response closed, not just until the headers come: the place in the gate must too, or
    more requests than connections would queue inside httpx.

    Args:
        stream: the response's own stream.
        semaphore: the gate's semaphore to release once, when the stream is closed.
    """

    def __init__(self, stream: httpx.AsyncByteStream, semaphore: anyio.Semaphore) -> None:
        self._stream = stream
        self._semaphore: anyio.Semaphore | None = semaphore

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        """Close the response's own stream, then give the place back."""
        try:
            await self._stream.aclose()
        finally:
            semaphore, self._semaphore = self._semaphore, None
            if semaphore is not None:
                semaphore.release()
